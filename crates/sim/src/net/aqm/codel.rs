//! CoDel, Controlled Delay (RFC 8289): a queue is judged by the sojourn time of the packets
//! leaving it. Once the sojourn time has stayed above `target` for a whole `interval`, the
//! queue enters the dropping state and drops (or marks) a packet at dequeue, the next one
//! `interval / sqrt(count)` later (the control law, §3.3), until a packet leaves below
//! target. Linux: include/net/codel_impl.h.

use super::{Fifo, Stamped, MTU_BYTES};
use crate::engine::Nanos;
use crate::net::Queued;
use crate::plan::QueuePlan;

#[derive(Debug, Clone, Copy)]
pub struct CodelParams {
    /// RFC 8289 §4.4: 5 ms.
    pub target_ns: Nanos,
    /// RFC 8289 §4.3: 100 ms, a worst-case round trip.
    pub interval_ns: Nanos,
    /// Mark ECN-capable packets instead of dropping them (RFC 8289 §5.1).
    pub ecn: bool,
}

/// The state CoDel keeps per queue (RFC 8289 §5.2).
#[derive(Debug, Default, Clone, Copy)]
pub struct CodelVars {
    /// Drops (or marks) since the dropping state was entered.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
    /// When the sojourn time will have been above target for an interval; None while it
    /// is below.
    first_above: Option<Nanos>,
    /// When the next drop is due in the dropping state.
    drop_next: Nanos,
}

/// RFC 8289 §3.3: the next drop comes interval / sqrt(count) after `t`, so the drop rate
/// grows as the square root of the drops, which makes TCP's window shrink linearly.
fn control_law(t: Nanos, interval_ns: Nanos, count: u32) -> Nanos {
    t + (interval_ns as f64 / f64::from(count.max(1)).sqrt()) as Nanos
}

impl CodelVars {
    /// Takes the head of `fifo` and says whether it may be dropped: its sojourn time has
    /// been above target for at least an interval (RFC 8289 §5.6 `dodequeue`).
    fn take<T: Queued>(
        &mut self,
        p: &CodelParams,
        fifo: &mut Fifo<T>,
        now: Nanos,
    ) -> (Option<Stamped<T>>, bool) {
        let Some(item) = fifo.pop() else {
            self.first_above = None;
            return (None, false);
        };
        let sojourn = now - item.enqueued_ns;
        // Below target, or no more than one packet left: the queue is not standing.
        if sojourn < p.target_ns || fifo.bytes() <= MTU_BYTES {
            self.first_above = None;
            return (Some(item), false);
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + p.interval_ns);
                (Some(item), false)
            }
            Some(at) => (Some(item), now >= at),
        }
    }

    /// Drops the packet or, where ECN is on and it is ECN-capable, marks it; returns it
    /// back when marked (it then leaves for the line).
    fn signal<T>(
        p: &CodelParams,
        mut item: Stamped<T>,
        dropped: &mut impl FnMut(T),
    ) -> Option<Stamped<T>> {
        if p.ecn && item.ect {
            item.ce = true;
            return Some(item);
        }
        dropped(item.packet);
        None
    }

    /// RFC 8289 §5.5: the packet that leaves `fifo` at `now`, after the drops CoDel makes.
    pub fn dequeue<T: Queued>(
        &mut self,
        p: &CodelParams,
        fifo: &mut Fifo<T>,
        now: Nanos,
        dropped: &mut impl FnMut(T),
    ) -> Option<Stamped<T>> {
        let (item, ok_to_drop) = self.take(p, fifo, now);
        let Some(head) = item else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time went below target: leave the dropping state.
                self.dropping = false;
                return Some(head);
            }
            // Each pass signals one packet and takes the next, so the queue bounds it.
            let mut current = head;
            while now >= self.drop_next {
                self.count += 1;
                if let Some(marked) = Self::signal(p, current, dropped) {
                    // A marked packet leaves; the next signal follows the control law.
                    self.drop_next = control_law(self.drop_next, p.interval_ns, self.count);
                    return Some(marked);
                }
                let (next, ok_to_drop) = self.take(p, fifo, now);
                let Some(next) = next else {
                    self.dropping = false;
                    return None;
                };
                current = next;
                if !ok_to_drop {
                    self.dropping = false;
                    return Some(current);
                }
                self.drop_next = control_law(self.drop_next, p.interval_ns, self.count);
            }
            return Some(current);
        }
        if !ok_to_drop {
            return Some(head);
        }
        // Entering the dropping state: signal this packet.
        let mut out = Self::signal(p, head, dropped);
        if out.is_none() {
            out = self.take(p, fifo, now).0;
        }
        self.dropping = true;
        // RFC 8289 §5.5: re-entering soon after leaving, start from the drop rate that
        // controlled the queue last time (the drops beyond the count it entered with)
        // rather than from 1. drop_next is at most an interval after the last drop, so
        // now - drop_next approximates the time since it.
        let delta = self.count.wrapping_sub(self.lastcount);
        self.count = if delta > 1 && now.saturating_sub(self.drop_next) < 16 * p.interval_ns {
            delta
        } else {
            1
        };
        self.lastcount = self.count;
        self.drop_next = control_law(now, p.interval_ns, self.count);
        out
    }
}

/// A single CoDel queue under a packet or byte limit (Linux's sch_codel: tail drop when
/// full).
pub struct Codel<T> {
    pub(super) fifo: Fifo<T>,
    limit: QueuePlan,
    params: CodelParams,
    vars: CodelVars,
}

impl<T: Queued> Codel<T> {
    pub fn new(limit: QueuePlan, params: CodelParams) -> Self {
        Self {
            fifo: Fifo::default(),
            limit,
            params,
            vars: CodelVars::default(),
        }
    }

    pub fn enqueue(&mut self, item: Stamped<T>) -> Option<T> {
        if !self.fifo.fits(self.limit, item.ip_bytes()) {
            return Some(item.packet);
        }
        self.fifo.push(item);
        None
    }

    pub fn dequeue(&mut self, now: Nanos, dropped: &mut impl FnMut(T)) -> Option<Stamped<T>> {
        self.vars
            .dequeue(&self.params, &mut self.fifo, now, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::aqm::Arrival;
    use crate::net::aqm::Discipline;
    use crate::plan::AqmPlan;

    const MS: Nanos = 1_000_000;

    fn codel(ecn: bool) -> Discipline<u32> {
        let plan = AqmPlan::Codel {
            target_ns: 5 * MS,
            interval_ns: 100 * MS,
            ecn,
        };
        Discipline::new(
            QueuePlan::Packets(1000),
            Some(&plan),
            1_000_000,
            crate::engine::RngStream::new(1, "t"),
        )
    }

    /// Fills the queue with `n` 1500-byte packets at time 0, numbered from `first`.
    fn fill(q: &mut Discipline<u32>, first: u32, n: u32, ect: bool) {
        for i in 0..n {
            assert_eq!(q.enqueue(0, first + i, Arrival { flow: 0, ect }), None);
        }
    }

    /// Dequeues at `now`; returns the packet and the drops made on the way.
    fn take(q: &mut Discipline<u32>, now: Nanos) -> (Option<u32>, Vec<u32>) {
        let mut drops = Vec::new();
        let out = q.dequeue(now, &mut |p| drops.push(p));
        (out.map(|d| d.packet), drops)
    }

    #[test]
    fn below_target_nothing_is_dropped() {
        // §3.2: a sojourn time under target is good queue.
        let mut q = codel(false);
        fill(&mut q, 0, 100, false);
        for i in 0..100 {
            assert_eq!(take(&mut q, 4 * MS), (Some(i), vec![]));
        }
    }

    #[test]
    fn above_target_for_less_than_an_interval_is_tolerated() {
        // §3.3/§5.6: the first packet above target only starts the interval clock.
        let mut q = codel(false);
        fill(&mut q, 0, 100, false);
        assert_eq!(take(&mut q, 10 * MS), (Some(0), vec![]));
        assert_eq!(take(&mut q, 109 * MS), (Some(1), vec![]));
        // A whole interval above target: the packet leaving is dropped, the next one goes.
        assert_eq!(take(&mut q, 110 * MS), (Some(3), vec![2]));
    }

    #[test]
    fn the_control_law_spaces_drops_by_interval_over_sqrt_count() {
        // §3.3: entering the dropping state (count 1) the next drop is an interval later,
        // then 100/sqrt(2) = 70.71 ms, then 100/sqrt(3) = 57.73 ms.
        let mut q = codel(false);
        fill(&mut q, 0, 500, false);
        take(&mut q, 10 * MS);
        let (_, first) = take(&mut q, 110 * MS);
        assert_eq!(first.len(), 1);
        assert_eq!(take(&mut q, 180 * MS).1, Vec::<u32>::new());
        assert_eq!(take(&mut q, 210 * MS - 1).1, Vec::<u32>::new());
        assert_eq!(take(&mut q, 210 * MS).1.len(), 1);
        let at2 = 210 * MS + 70_710_678;
        assert_eq!(take(&mut q, at2 - 1).1, Vec::<u32>::new());
        assert_eq!(take(&mut q, at2).1.len(), 1);
        let at3 = at2 + 57_735_026;
        assert_eq!(take(&mut q, at3 - 1).1, Vec::<u32>::new());
        assert_eq!(take(&mut q, at3).1.len(), 1);
    }

    #[test]
    fn a_packet_below_target_ends_the_dropping_state() {
        let mut q = codel(false);
        fill(&mut q, 0, 10, false);
        take(&mut q, 10 * MS);
        assert_eq!(take(&mut q, 110 * MS).1.len(), 1);
        // New packets enqueued later leave below target: dropping ends, nothing more drops.
        let mut q2 = q;
        while take(&mut q2, 111 * MS).0.is_some() {}
        fill(&mut q2, 100, 5, false);
        for _ in 0..5 {
            assert_eq!(take(&mut q2, MS).1, Vec::<u32>::new());
        }
    }

    #[test]
    fn one_packet_left_is_never_dropped() {
        // §5.6: with at most an MTU in the queue there is no standing queue to drain.
        let mut q = codel(false);
        fill(&mut q, 0, 2, false);
        assert_eq!(take(&mut q, 10 * MS), (Some(0), vec![]));
        assert_eq!(take(&mut q, 500 * MS), (Some(1), vec![]));
    }

    #[test]
    fn re_entry_soon_after_leaving_resumes_the_last_drop_rate() {
        // §5.5: count restarts at count - lastcount when the state is re-entered within
        // 16 intervals of the last drop, else at 1.
        let mut vars = CodelVars {
            count: 7,
            lastcount: 3,
            dropping: false,
            first_above: Some(0),
            drop_next: 1000 * MS,
        };
        let p = CodelParams {
            target_ns: 5 * MS,
            interval_ns: 100 * MS,
            ecn: false,
        };
        let mut fifo = Fifo::default();
        for i in 0..10u32 {
            fifo.push(Stamped {
                packet: i,
                enqueued_ns: 0,
                ect: false,
                ce: false,
            });
        }
        let mut drops = 0;
        vars.dequeue(&p, &mut fifo, 1200 * MS, &mut |_| drops += 1);
        assert_eq!(drops, 1);
        assert!(vars.dropping);
        assert_eq!((vars.count, vars.lastcount), (4, 4));
        // 50 ms after the control law's 100/sqrt(4) = 50 ms.
        assert_eq!(vars.drop_next, 1250 * MS);
        // Long after (more than 16 intervals): count starts again at 1.
        vars.dropping = false;
        vars.count = 9;
        let mut drops = 0;
        vars.dequeue(&p, &mut fifo, 4000 * MS, &mut |_| drops += 1);
        assert_eq!((vars.count, drops), (1, 1));
    }

    #[test]
    fn an_ecn_capable_packet_is_marked_instead_of_dropped() {
        // RFC 8289 §5.1 with RFC 3168 §5: mark CE where the packet's transport understands it.
        let mut q = codel(true);
        fill(&mut q, 0, 100, true);
        take(&mut q, 10 * MS);
        let mut drops = Vec::new();
        let d = q.dequeue(110 * MS, &mut |p| drops.push(p)).unwrap();
        assert_eq!((d.packet, d.ce, drops.len()), (1, true, 0));
        // Not ECN-capable: dropped even with ECN on.
        let mut q = codel(true);
        fill(&mut q, 0, 100, false);
        take(&mut q, 10 * MS);
        assert_eq!(take(&mut q, 110 * MS), (Some(2), vec![1]));
    }
}
