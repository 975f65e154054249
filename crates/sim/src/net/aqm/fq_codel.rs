//! FQ-CoDel (RFC 8290): packets are hashed by flow into one of `flows` queues, each with
//! its own CoDel state; a deficit round robin with a `quantum` of bytes serves the queues,
//! flows that have just become active (the new list) before the others (the old list).
//! Linux: net/sched/sch_fq_codel.c.

use std::collections::VecDeque;

use super::codel::CodelVars;
use super::{CodelParams, Fifo, Stamped};
use crate::engine::{Nanos, RngStream};
use crate::net::Queued;
use crate::plan::QueuePlan;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    New,
    Old,
}

struct FlowQueue<T> {
    fifo: Fifo<T>,
    codel: CodelVars,
    deficit: i64,
    /// The list the queue is on, if any (RFC 8290 §4: a queue is on at most one).
    list: Option<List>,
}

pub struct FqCodel<T> {
    queues: Vec<FlowQueue<T>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    params: CodelParams,
    quantum: i64,
    limit: QueuePlan,
    /// RFC 8290 §4.1.1: a random perturbation of the hash, so that which flows share a
    /// queue cannot be predicted from outside; drawn from the queue's named stream.
    perturbation: u64,
    packets: u64,
    bytes: u64,
}

/// SplitMix64's finaliser: a well-spread hash of the flow identifier.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<T: Queued> FqCodel<T> {
    pub fn new(
        limit: QueuePlan,
        params: CodelParams,
        flows: u32,
        quantum: u32,
        mut rng: RngStream,
    ) -> Self {
        Self {
            queues: (0..flows)
                .map(|_| FlowQueue {
                    fifo: Fifo::default(),
                    codel: CodelVars::default(),
                    deficit: 0,
                    list: None,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            params,
            quantum: i64::from(quantum),
            limit,
            perturbation: (rng.uniform() * (u64::MAX as f64)) as u64,
            packets: 0,
            bytes: 0,
        }
    }

    /// RFC 8290 §4.1.1: the queue of a flow, by a hash of its 5-tuple scaled onto the
    /// queues (as Linux's reciprocal_scale).
    fn queue_of(&self, flow: u64) -> usize {
        let hash = mix(flow ^ self.perturbation) >> 32;
        ((hash * self.queues.len() as u64) >> 32) as usize
    }

    /// RFC 8290 §4.1: the packet joins its flow's queue; a queue that was on no list joins
    /// the new list with a full quantum. Over the limit, the head of the queue with the
    /// most bytes is dropped (not the arrival, which may belong to a thin flow).
    pub fn enqueue(&mut self, item: Stamped<T>, flow: u64) -> Option<T> {
        let q = self.queue_of(flow);
        let bytes = item.ip_bytes();
        let queue = &mut self.queues[q];
        queue.fifo.push(item);
        if queue.list.is_none() {
            queue.list = Some(List::New);
            queue.deficit = self.quantum;
            self.new_flows.push_back(q as u32);
        }
        self.packets += 1;
        self.bytes += bytes;
        let over = match self.limit {
            QueuePlan::Packets(n) => self.packets > n,
            QueuePlan::Bytes(n) => self.bytes > n,
        };
        if !over {
            return None;
        }
        let fattest = (0..self.queues.len())
            .max_by_key(|&i| (self.queues[i].fifo.bytes(), std::cmp::Reverse(i)))
            .expect("FQ-CoDel has at least one queue");
        let head = self.queues[fattest]
            .fifo
            .pop()
            .expect("the fattest queue holds the packet that overflowed at least");
        self.packets -= 1;
        self.bytes -= head.ip_bytes();
        Some(head.packet)
    }

    /// RFC 8290 §4.2: serves the first queue of the new list, else of the old list. A
    /// queue whose deficit is spent gets another quantum and goes to the end of the old
    /// list; a new queue found empty goes to the old list too (so that a flow cannot stay
    /// new by sending one packet at a time), an old one leaves the lists.
    pub fn dequeue(&mut self, now: Nanos, dropped: &mut impl FnMut(T)) -> Option<Stamped<T>> {
        // Each pass either returns, or moves a queue to the old list with a quantum more
        // (after at most max packet / quantum + 1 such moves per queue it can send), or
        // takes a queue off the lists.
        loop {
            let (list, q) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&q), _) => (List::New, q as usize),
                (None, Some(&q)) => (List::Old, q as usize),
                (None, None) => return None,
            };
            let queue = &mut self.queues[q];
            if queue.deficit <= 0 {
                queue.deficit += self.quantum;
                queue.list = Some(List::Old);
                self.pop_front(list);
                self.old_flows.push_back(q as u32);
                continue;
            }
            let (packets, bytes) = (queue.fifo.len(), queue.fifo.bytes());
            let out = queue
                .codel
                .dequeue(&self.params, &mut queue.fifo, now, dropped);
            self.packets -= (packets - queue.fifo.len()) as u64;
            self.bytes -= bytes - queue.fifo.bytes();
            match out {
                Some(item) => {
                    queue.deficit -= item.ip_bytes() as i64;
                    return Some(item);
                }
                None => {
                    self.pop_front(list);
                    if list == List::New && !self.old_flows.is_empty() {
                        self.queues[q].list = Some(List::Old);
                        self.old_flows.push_back(q as u32);
                    } else {
                        self.queues[q].list = None;
                    }
                }
            }
        }
    }

    fn pop_front(&mut self, list: List) {
        match list {
            List::New => self.new_flows.pop_front(),
            List::Old => self.old_flows.pop_front(),
        };
    }

    pub fn packets(&self) -> u64 {
        self.packets
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::aqm::{Arrival, Discipline};
    use crate::plan::AqmPlan;

    const MS: Nanos = 1_000_000;

    fn fq(limit: u64) -> Discipline<u32> {
        let plan = AqmPlan::FqCodel {
            target_ns: 5 * MS,
            interval_ns: 100 * MS,
            flows: 1024,
            // One test packet (1500 bytes) per quantum, so that the rounds are easy to see.
            quantum: 1500,
            ecn: true,
        };
        Discipline::new(
            QueuePlan::Packets(limit),
            Some(&plan),
            10_000_000,
            RngStream::new(1, "t"),
        )
    }

    fn arrival(flow: u64) -> Arrival {
        Arrival { flow, ect: false }
    }

    /// Packets are numbered flow * 1000 + i.
    fn order(q: &mut Discipline<u32>, now: Nanos) -> Vec<u32> {
        std::iter::from_fn(|| q.dequeue(now, &mut |_| panic!("no drop expected")))
            .map(|d| d.packet)
            .collect()
    }

    #[test]
    fn flows_share_the_line_packet_by_packet_when_packets_fill_a_quantum() {
        // §4.2: DRR with a quantum of one packet alternates between backlogged flows.
        let mut q = fq(100);
        for i in 0..3 {
            q.enqueue(0, i, arrival(1));
        }
        for i in 0..3 {
            q.enqueue(0, 2000 + i, arrival(2));
        }
        assert_eq!(order(&mut q, MS), vec![0, 2000, 1, 2001, 2, 2002]);
    }

    #[test]
    fn a_new_flow_is_served_before_the_old_ones() {
        // §4.2: a queue that becomes active joins the new list, served first.
        let mut q = fq(100);
        for i in 0..4 {
            q.enqueue(0, i, arrival(1));
        }
        assert_eq!(q.dequeue(MS, &mut |_| {}).unwrap().packet, 0);
        assert_eq!(q.dequeue(MS, &mut |_| {}).unwrap().packet, 1);
        // Flow 1 has spent its quantum and sits on the old list; flow 2's packet goes next.
        q.enqueue(MS, 2000, arrival(2));
        assert_eq!(order(&mut q, MS), vec![2000, 2, 3]);
    }

    #[test]
    fn overflow_drops_from_the_fattest_queue() {
        // §4.1: over the limit, the head of the queue with the most bytes goes, not the
        // arrival of a thin flow.
        let mut q = fq(4);
        for i in 0..4 {
            assert_eq!(q.enqueue(0, i, arrival(1)), None);
        }
        assert_eq!(q.enqueue(0, 2000, arrival(2)), Some(0));
        assert_eq!(q.packets(), 4);
        assert_eq!(order(&mut q, MS), vec![1, 2000, 2, 3]);
    }

    #[test]
    fn each_flow_has_its_own_codel() {
        // §4 / §5: a bulk flow's standing queue is dropped by its CoDel, while a sparse
        // flow in its own queue sees no drop.
        let mut q = fq(1000);
        for i in 0..200 {
            q.enqueue(0, i, arrival(1));
        }
        let mut drops = Vec::new();
        q.dequeue(10 * MS, &mut |p| drops.push(p));
        q.enqueue(109 * MS, 2000, arrival(2));
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(q.dequeue(110 * MS, &mut |p| drops.push(p)).unwrap().packet);
        }
        // Flow 1 has spent its quantum: the sparse flow's packet (new list) goes first,
        // then flow 1's CoDel enters its dropping state and drops one packet.
        assert_eq!(got, vec![2000, 2, 3]);
        assert_eq!(drops, vec![1]);
    }

    #[test]
    fn the_hash_spreads_flows_over_the_queues() {
        // §4.1.1: 1024 flows over 1024 queues collide as a random assignment would
        // (expected occupied share 1 - 1/e = 63.2 %).
        let plan = CodelParams {
            target_ns: 5 * MS,
            interval_ns: 100 * MS,
            ecn: false,
        };
        let q = FqCodel::<u32>::new(
            QueuePlan::Packets(10),
            plan,
            1024,
            1514,
            RngStream::new(1, "t"),
        );
        let mut used = vec![false; 1024];
        for flow in 0..1024 {
            used[q.queue_of(flow)] = true;
        }
        let occupied = used.iter().filter(|&&u| u).count();
        assert!((600..=690).contains(&occupied), "{occupied}");
    }
}
