//! The network as a graph: hosts and routers joined by full-duplex links, and the route a
//! flow's packets take. Link i's forward direction (from its first node to its second) is
//! channel 2i, its reverse 2i + 1.

use std::collections::VecDeque;

pub struct Network {
    /// Nodes 0..hosts are hosts, the rest routers.
    hosts: usize,
    /// Per node: (neighbour, channel towards it), in link order.
    adjacent: Vec<Vec<(usize, usize)>>,
}

impl Network {
    pub fn new(hosts: usize, nodes: usize, links: Vec<[usize; 2]>) -> Self {
        let mut adjacent = vec![Vec::new(); nodes];
        for (i, [a, b]) in links.into_iter().enumerate() {
            adjacent[a].push((b, 2 * i));
            adjacent[b].push((a, 2 * i + 1));
        }
        Self { hosts, adjacent }
    }

    /// The channels from host `src` to host `dst` along a path with the fewest hops, which
    /// only routers forward on (a host is an end system, RFC 1122 §1.1.1). Breadth-first
    /// search in link order, so equal-length paths are chosen the same way every run. Hosts
    /// other than `dst` are dead ends and are not searched through: a route costs its
    /// routers' links, not a pass over every host (a dumbbell of a thousand flows asks for
    /// thousands of routes).
    pub fn route(&self, src: usize, dst: usize) -> Option<Vec<usize>> {
        if src == dst {
            return Some(Vec::new());
        }
        let router = |node: usize| node.checked_sub(self.hosts);
        // Per router, the node and channel it was first reached by.
        let mut came_by: Vec<Option<(usize, usize)>> = vec![None; self.adjacent.len() - self.hosts];
        let mut frontier = VecDeque::from([src]);
        while let Some(node) = frontier.pop_front() {
            for &(next, channel) in &self.adjacent[node] {
                if next == dst {
                    let mut channels = vec![channel];
                    let mut at = node;
                    while let Some((from, channel)) = router(at).and_then(|r| came_by[r]) {
                        channels.push(channel);
                        at = from;
                    }
                    channels.reverse();
                    return Some(channels);
                }
                if let Some(r) = router(next) {
                    if next != src && came_by[r].is_none() {
                        came_by[r] = Some((node, channel));
                        frontier.push_back(next);
                    }
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
