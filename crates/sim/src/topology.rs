//! The network as a graph: hosts and routers joined by full-duplex links, and the route a
//! flow's packets take. Link i's forward direction (from its first node to its second) is
//! channel 2i, its reverse 2i + 1.

use std::collections::VecDeque;

pub struct Network {
    /// Nodes 0..hosts are hosts, the rest routers.
    hosts: usize,
    /// Per node: (neighbour, channel towards it), in link order.
    adjacent: Vec<Vec<(usize, usize)>>,
    /// The same, routers only: what a route's search goes through. A dumbbell's router has
    /// a link to each of its thousand hosts and one to the other router.
    adjacent_routers: Vec<Vec<(usize, usize)>>,
}

impl Network {
    pub fn new(hosts: usize, nodes: usize, links: Vec<[usize; 2]>) -> Self {
        let mut adjacent = vec![Vec::new(); nodes];
        for (i, [a, b]) in links.into_iter().enumerate() {
            adjacent[a].push((b, 2 * i));
            adjacent[b].push((a, 2 * i + 1));
        }
        let adjacent_routers = adjacent
            .iter()
            .map(|next| next.iter().copied().filter(|&(n, _)| n >= hosts).collect())
            .collect();
        Self {
            hosts,
            adjacent,
            adjacent_routers,
        }
    }

    /// The channels from host `src` to host `dst` along a path with the fewest hops, which
    /// only routers forward on (a host is an end system, RFC 1122 §1.1.1). Breadth-first
    /// search in link order, so equal-length paths are chosen the same way every run: the
    /// first node reached that has a link to `dst` ends the route, by the first of its
    /// links there. Only routers are searched through, so a route costs its routers' links
    /// between routers and `dst`'s own, not a pass over every host (a dumbbell of a
    /// thousand flows asks for thousands of routes).
    pub fn route(&self, src: usize, dst: usize) -> Option<Vec<usize>> {
        if src == dst {
            return Some(Vec::new());
        }
        let router = |node: usize| node.checked_sub(self.hosts);
        // Per router, the node and channel it was first reached by.
        let mut came_by: Vec<Option<(usize, usize)>> = vec![None; self.adjacent.len() - self.hosts];
        let mut frontier = VecDeque::from([src]);
        while let Some(node) = frontier.pop_front() {
            // `dst`'s links are in link order too, so its first to `node` is `node`'s first
            // to it.
            if let Some(&(_, back)) = self.adjacent[dst].iter().find(|&&(n, _)| n == node) {
                let mut channels = vec![back ^ 1];
                let mut at = node;
                while let Some((from, channel)) = router(at).and_then(|r| came_by[r]) {
                    channels.push(channel);
                    at = from;
                }
                channels.reverse();
                return Some(channels);
            }
            for &(next, channel) in &self.adjacent_routers[node] {
                let r = next - self.hosts;
                if next != src && came_by[r].is_none() {
                    came_by[r] = Some((node, channel));
                    frontier.push_back(next);
                }
            }
        }
        None
    }
}

/// The way back along a route: the same links in reverse order, each in its other direction.
pub fn reverse(route: &[usize]) -> Vec<usize> {
    route.iter().rev().map(|&channel| channel ^ 1).collect()
}

/// The node channel `channel` leads to, given each link's two nodes: a forward channel
/// (even) reaches the link's second node, a reverse one its first.
pub fn reached(link_nodes: &[[usize; 2]], channel: usize) -> usize {
    link_nodes[channel / 2][1 - channel % 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sources on access links into router 4, a shared link to router 5, two sinks:
    /// the dumbbell of a shared bottleneck (and of seed 001's ATM model, switches for
    /// routers).
    fn dumbbell() -> Network {
        Network::new(4, 6, vec![[0, 4], [1, 4], [4, 5], [5, 2], [5, 3]])
    }

    #[test]
    fn routes_cross_the_shared_link() {
        let net = dumbbell();
        assert_eq!(net.route(0, 2), Some(vec![0, 4, 6]));
        assert_eq!(net.route(1, 3), Some(vec![2, 4, 8]));
        assert_eq!(net.route(2, 0), Some(vec![7, 5, 1]));
        assert_eq!(reverse(&[0, 4, 6]), vec![7, 5, 1]);
    }

    #[test]
    fn a_channel_reaches_the_far_end_of_its_link() {
        let links = [[0, 4], [4, 5]];
        assert_eq!(reached(&links, 2), 5);
        assert_eq!(reached(&links, 3), 4);
        assert_eq!(reached(&links, 1), 0);
    }

    #[test]
    fn hosts_do_not_forward() {
        // a - b - c with b a host: no route from a to c.
        let net = Network::new(3, 3, vec![[0, 1], [1, 2]]);
        assert_eq!(net.route(0, 2), None);
        assert_eq!(net.route(0, 1), Some(vec![0]));
    }

    /// The rule stated plainly: breadth-first over every node in link order, hosts other
    /// than `src` not forwarded through, the first time `dst` is seen ends the route.
    fn route_by_every_link(net: &Network, src: usize, dst: usize) -> Option<Vec<usize>> {
        if src == dst {
            return Some(Vec::new());
        }
        let mut came_by = vec![None; net.adjacent.len()];
        let mut frontier = VecDeque::from([src]);
        while let Some(node) = frontier.pop_front() {
            for &(next, channel) in &net.adjacent[node] {
                if next == dst {
                    let mut channels = vec![channel];
                    let mut at = node;
                    while let Some((from, channel)) = came_by[at] {
                        channels.push(channel);
                        at = from;
                    }
                    channels.reverse();
                    return Some(channels);
                }
                if next >= net.hosts && next != src && came_by[next].is_none() {
                    came_by[next] = Some((node, channel));
                    frontier.push_back(next);
                }
            }
        }
        None
    }

    #[test]
    fn routes_are_those_of_a_search_over_every_link() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(14);
        for _ in 0..2_000 {
            let hosts = rng.gen_range(2..6);
            let nodes = hosts + rng.gen_range(0..6);
            // Parallel links and links between hosts included: ties must break the same way.
            let links = (0..rng.gen_range(1..14))
                .map(|_| [rng.gen_range(0..nodes), rng.gen_range(0..nodes)])
                .filter(|[a, b]| a != b)
                .collect::<Vec<_>>();
            let net = Network::new(hosts, nodes, links.clone());
            for src in 0..hosts {
                for dst in 0..hosts {
                    let want = route_by_every_link(&net, src, dst);
                    assert_eq!(net.route(src, dst), want, "{links:?} {src} -> {dst}");
                }
            }
        }
    }

    #[test]
    fn the_fewest_hops_win_and_ties_go_to_the_first_link() {
        // 0 -> r2 -> 1 directly, or 0 -> r3 -> r4 -> 1; and a parallel 0 -> r5 -> 1.
        let net = Network::new(
            2,
            6,
            vec![[0, 3], [3, 4], [4, 1], [0, 2], [2, 1], [0, 5], [5, 1]],
        );
        assert_eq!(net.route(0, 1), Some(vec![6, 8]));
    }
}
