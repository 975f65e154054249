//! Random Early Detection (Floyd & Jacobson 1993, "Random Early Detection Gateways for
//! Congestion Avoidance", §4 and Figure 2; recommended by RFC 2309 §5). At each arrival the
//! queue's average (an EWMA of its length) is compared with two thresholds: below min_th
//! nothing happens, between them the arrival is dropped (or marked) with a probability
//! rising linearly to max_p, spread out by the count of packets since the last drop; above
//! max_th every arrival is dropped. Floyd's gentle variant (2000) ramps from max_p to 1
//! between max_th and 2·max_th instead.

use super::{Fifo, Stamped};
use crate::engine::{Nanos, RngStream};
use crate::net::Queued;
use crate::plan::QueuePlan;

#[derive(Debug, Clone, Copy)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub ecn: bool,
    /// Transmission time of a typical packet: an idle period counts as this many
    /// arrivals of an empty queue (§4, "m = f(time - q_time)").
    pub idle_packet_ns: Nanos,
}

pub struct Red<T> {
    pub(super) fifo: Fifo<T>,
    limit: QueuePlan,
    params: RedParams,
    /// The average queue size, in the limit's unit (packets or bytes).
    avg: f64,
    /// Packets since the last marked or dropped one; -1 below min_th (Figure 2).
    count: i64,
    /// When the queue last went empty; None while it holds packets.
    idle_since: Option<Nanos>,
    rng: RngStream,
}

/// What the average says about an arrival.
#[derive(Debug, PartialEq)]
enum Verdict {
    Enqueue,
    Signal,
}

impl<T: Queued> Red<T> {
    pub fn new(limit: QueuePlan, params: RedParams, rng: RngStream) -> Self {
        Self {
            fifo: Fifo::default(),
            limit,
            params,
            avg: 0.0,
            count: -1,
            idle_since: Some(0),
            rng,
        }
    }

    fn size(&self) -> f64 {
        match self.limit {
            QueuePlan::Packets(_) => self.fifo.len() as f64,
            QueuePlan::Bytes(_) => self.fifo.bytes() as f64,
        }
    }

    /// Figure 2: the average at an arrival, and whether the arrival is marked.
    fn judge(&mut self, now: Nanos) -> Verdict {
        let p = self.params;
        match self.idle_since {
            // An empty queue decays the average as if m small packets had arrived to
            // find it empty.
            Some(since) => {
                let m = (now - since) / p.idle_packet_ns;
                let m = i32::try_from(m).unwrap_or(i32::MAX);
                self.avg *= (1.0 - p.w_q).powi(m);
            }
            None => self.avg = (1.0 - p.w_q) * self.avg + p.w_q * self.size(),
        }
        let avg = self.avg;
        let pb = if avg < p.min_th {
            self.count = -1;
            return Verdict::Enqueue;
        } else if avg < p.max_th {
            p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
        } else if p.gentle && avg < 2.0 * p.max_th {
            p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
        } else {
            self.count = 0;
            return Verdict::Signal;
        };
        self.count += 1;
        // Spreading the drops: pa grows with the packets since the last one, so that the
        // gaps are uniform rather than geometric.
        let spread = 1.0 - self.count as f64 * pb;
        let pa = if spread > 0.0 { pb / spread } else { 1.0 };
        if self.rng.chance(pa) {
            self.count = 0;
            Verdict::Signal
        } else {
            Verdict::Enqueue
        }
    }

    pub fn enqueue(&mut self, now: Nanos, mut item: Stamped<T>) -> Option<T> {
        if self.judge(now) == Verdict::Signal {
            // RFC 3168 §5/§7: an ECN-capable packet is marked instead (Linux marks above
            // max_th too unless told `harddrop`).
            if !(self.params.ecn && item.ect) {
                return Some(item.packet);
            }
            item.ce = true;
        }
        if !self.fifo.fits(self.limit, item.ip_bytes()) {
            return Some(item.packet);
        }
        self.fifo.push(item);
        self.idle_since = None;
        None
    }

    pub fn dequeue(&mut self, now: Nanos) -> Option<Stamped<T>> {
        let item = self.fifo.pop();
        if self.fifo.is_empty() {
            self.idle_since.get_or_insert(now);
        }
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::aqm::{Arrival, Discipline};
    use crate::plan::AqmPlan;

    fn red(gentle: bool, ecn: bool) -> Discipline<u32> {
        let plan = AqmPlan::Red {
            min_th: 5,
            max_th: 15,
            max_p: 0.1,
            w_q: 0.002,
            gentle,
            mean_packet_bytes: 1000,
            ecn,
        };
        // 8 Mb/s: a 1000-byte packet takes 1 ms.
        Discipline::new(
            QueuePlan::Packets(1000),
            Some(&plan),
            8_000_000,
            RngStream::new(1, "links.0.forward.queue"),
        )
    }

    fn state(q: &Discipline<u32>) -> (f64, i64) {
        match q {
            Discipline::Red(r) => (r.avg, r.count),
            _ => unreachable!(),
        }
    }

    fn set_avg(q: &mut Discipline<u32>, avg: f64) {
        if let Discipline::Red(r) = q {
            r.avg = avg;
            r.idle_since = None;
        }
    }

    /// Keeps the average where the test sets it.
    fn freeze(q: &mut Discipline<u32>) {
        if let Discipline::Red(r) = q {
            r.params.w_q = 0.0;
        }
    }

    fn take(q: &mut Discipline<u32>) -> Option<crate::net::aqm::Departure<u32>> {
        q.dequeue(0, &mut |_| unreachable!("RED drops at enqueue"))
    }

    const A: Arrival = Arrival {
        flow: 0,
        ect: false,
    };

    #[test]
    fn the_average_is_an_ewma_of_the_queue_at_arrivals() {
        // §4: avg <- (1 - w_q) avg + w_q q at each arrival to a non-empty queue.
        let mut q = red(false, false);
        q.enqueue(0, 0, A); // to an empty queue: avg stays 0
        q.enqueue(0, 1, A); // q = 1
        q.enqueue(0, 2, A); // q = 2
        let expect = 0.002 * 2.0 + 0.998 * 0.002;
        assert!((state(&q).0 - expect).abs() < 1e-12);
    }

    #[test]
    fn an_idle_queue_decays_the_average_per_packet_time() {
        // §4: after an idle period, avg <- (1 - w_q)^m avg with m the packets the line
        // could have sent.
        let mut q = red(false, false);
        set_avg(&mut q, 10.0);
        take(&mut q);
        q.enqueue(100_000_000, 0, A); // 100 ms idle = 100 packet times
        assert!((state(&q).0 - 10.0 * 0.998f64.powi(100)).abs() < 1e-9);
    }

    #[test]
    fn below_min_th_nothing_is_dropped_and_above_max_th_everything_is() {
        let mut q = red(false, false);
        set_avg(&mut q, 4.0);
        assert_eq!(q.enqueue(0, 0, A), None);
        assert_eq!(state(&q).1, -1);
        set_avg(&mut q, 16.0);
        assert_eq!(q.enqueue(0, 1, A), Some(1));
        assert_eq!(state(&q).1, 0);
    }

    #[test]
    fn between_the_thresholds_drops_come_about_every_1_over_pb_packets() {
        // Figure 2: pb = max_p (avg - min_th)/(max_th - min_th) = 0.05 at avg 10; with
        // pa = pb / (1 - count pb), count counted from 1 after a drop, the gap between
        // drops is uniform on 1..1/pb - 1: mean 10 arrivals (geometric drops: 20).
        let mut q = red(false, false);
        freeze(&mut q);
        set_avg(&mut q, 10.0);
        let mut drops = 0;
        let n = 20_000;
        for i in 0..n {
            if q.enqueue(0, i, A).is_some() {
                drops += 1;
            }
            take(&mut q);
        }
        let mean_gap = f64::from(n) / f64::from(drops);
        assert!((9.5..10.5).contains(&mean_gap), "{mean_gap}");
    }

    #[test]
    fn gentle_ramps_from_max_p_to_one_between_max_th_and_twice_it() {
        let mut q = red(true, false);
        freeze(&mut q);
        // At 2·max_th and above, every arrival goes.
        set_avg(&mut q, 30.0);
        assert_eq!(q.enqueue(0, 0, A), Some(0));
        // Just above max_th the probability is near max_p, so most arrivals stay.
        let mut kept = 0;
        for i in 0..1000 {
            set_avg(&mut q, 15.01);
            if q.enqueue(0, i, A).is_none() {
                kept += 1;
            }
            take(&mut q);
        }
        // Drops spread uniformly at pb = 0.1006: a share of 2 pb / (1 + pb) = 18 %.
        assert!((750..900).contains(&kept), "{kept}");
    }

    #[test]
    fn ecn_capable_packets_are_marked_and_kept() {
        // RFC 3168 §5: mark CE instead of dropping an ECT packet.
        let mut q = red(false, true);
        set_avg(&mut q, 16.0);
        let ect = Arrival { flow: 0, ect: true };
        assert_eq!(q.enqueue(0, 7, ect), None);
        assert!(take(&mut q).unwrap().ce);
        set_avg(&mut q, 16.0);
        assert_eq!(q.enqueue(0, 8, A), Some(8));
    }

    #[test]
    fn the_same_seed_drops_the_same_packets() {
        let run = || {
            let mut q = red(false, false);
            (0..2000)
                .map(|i| {
                    set_avg(&mut q, 12.0);
                    let dropped = q.enqueue(0, i, A).is_some();
                    take(&mut q);
                    dropped
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
