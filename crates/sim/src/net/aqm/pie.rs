//! PIE, Proportional Integral controller Enhanced (RFC 8033). Every t_update the drop
//! probability moves by alpha times the queue delay's distance from target plus beta times
//! its change since the last update (§4.2), both scaled down while the probability is small
//! (the auto-tuning of §4.2); arrivals are dropped at random with that probability (§4.1),
//! except during a burst allowance (§4.4). The queue delay is the sojourn time of the last
//! packet to leave (§4.3's timestamp method, Linux's default). Linux: net/sched/sch_pie.c,
//! net/sched/pie.c.

use super::{Fifo, Stamped, MTU_BYTES};
use crate::engine::{Nanos, RngStream, NS_PER_S};
use crate::net::Queued;
use crate::plan::QueuePlan;

#[derive(Debug, Clone, Copy)]
pub struct PieParams {
    /// QDELAY_REF, §4.2: 15 ms.
    pub target_ns: Nanos,
    /// T_UPDATE, §4.2: 15 ms.
    pub t_update_ns: Nanos,
    /// §4.2: 0.125 Hz.
    pub alpha: f64,
    /// §4.2: 1.25 Hz.
    pub beta: f64,
    /// MAX_BURST, §4.4: 150 ms.
    pub max_burst_ns: Nanos,
    pub ecn: bool,
}

/// §5.1: above this drop probability even ECN-capable packets are dropped.
const MARK_ECN_THRESHOLD: f64 = 0.1;
/// Linux's pie.c: a queue delay above 250 ms raises the probability by 2 % per update.
const HIGH_DELAY_NS: Nanos = 250_000_000;

pub struct Pie<T> {
    pub(super) fifo: Fifo<T>,
    limit: QueuePlan,
    params: PieParams,
    drop_prob: f64,
    /// The sojourn time of the last packet to leave; 0 once the queue is empty.
    qdelay_ns: Nanos,
    qdelay_old_ns: Nanos,
    burst_allowance_ns: Nanos,
    /// §5.4 de-randomization: the probability accumulated since the last drop.
    accu_prob: f64,
    /// When the next probability update is due.
    next_update: Nanos,
    rng: RngStream,
}

impl<T: Queued> Pie<T> {
    pub fn new(limit: QueuePlan, params: PieParams, rng: RngStream) -> Self {
        Self {
            fifo: Fifo::default(),
            limit,
            params,
            drop_prob: 0.0,
            qdelay_ns: 0,
            qdelay_old_ns: 0,
            burst_allowance_ns: params.max_burst_ns,
            accu_prob: 0.0,
            next_update: params.t_update_ns,
            rng,
        }
    }

    /// Runs the updates due by `now`. An update that finds the controller at rest (no
    /// probability, no delay, full burst allowance) changes nothing, so a long idle spell
    /// skips the rest of its updates at once.
    fn catch_up(&mut self, now: Nanos) {
        while self.next_update <= now {
            if self.drop_prob == 0.0
                && self.qdelay_ns == 0
                && self.qdelay_old_ns == 0
                && self.burst_allowance_ns == self.params.max_burst_ns
            {
                let behind = (now - self.next_update) / self.params.t_update_ns;
                self.next_update += (behind + 1) * self.params.t_update_ns;
                return;
            }
            self.update();
            self.next_update += self.params.t_update_ns;
        }
    }

    /// §4.2: one update of the drop probability.
    fn update(&mut self) {
        let p = self.params;
        let secs = |ns: Nanos| ns as f64 / NS_PER_S as f64;
        let (qdelay, old) = (self.qdelay_ns, self.qdelay_old_ns);
        let mut delta =
            p.alpha * (secs(qdelay) - secs(p.target_ns)) + p.beta * (secs(qdelay) - secs(old));
        // §4.2 auto-tuning: while the probability is small its steps are scaled down, so
        // that a light load is controlled as finely as a heavy one.
        let scale = [
            (0.000_001, 2048.0),
            (0.000_01, 512.0),
            (0.000_1, 128.0),
            (0.001, 32.0),
            (0.01, 8.0),
            (0.1, 2.0),
        ]
        .iter()
        .find(|(below, _)| self.drop_prob < *below)
        .map_or(1.0, |(_, by)| *by);
        delta /= scale;
        // §5.5: at 10 % and more, one step raises it by 2 % at most.
        if self.drop_prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        if qdelay > HIGH_DELAY_NS {
            delta += 0.02;
        }
        self.drop_prob = (self.drop_prob + delta).clamp(0.0, 1.0);
        // §4.2: with no queue for two updates the probability decays.
        if qdelay == 0 && old == 0 {
            self.drop_prob *= 0.98;
        }
        // §4.4: the burst allowance runs down, and is restored once the queue is calm.
        self.burst_allowance_ns = self.burst_allowance_ns.saturating_sub(p.t_update_ns);
        if self.drop_prob == 0.0 && qdelay < p.target_ns / 2 && old < p.target_ns / 2 {
            self.burst_allowance_ns = p.max_burst_ns;
        }
        self.qdelay_old_ns = qdelay;
    }

    /// §4.1 with §5.4: whether the arrival is dropped (or marked) early.
    fn drop_early(&mut self) -> bool {
        let p = self.params;
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        if self.burst_allowance_ns > 0 {
            return false;
        }
        // A small queue or a light probability with a short queue: no early drop.
        if self.qdelay_old_ns < p.target_ns / 2 && self.drop_prob < 0.2 {
            return false;
        }
        if self.fifo.bytes() <= 2 * MTU_BYTES {
            return false;
        }
        // §5.4: drops neither too close together nor too far apart.
        self.accu_prob += self.drop_prob;
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 || self.rng.chance(self.drop_prob) {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }

    pub fn enqueue(&mut self, now: Nanos, mut item: Stamped<T>) -> Option<T> {
        self.catch_up(now);
        if self.drop_early() {
            // §5.1: mark an ECN-capable packet while the probability is moderate.
            if !(self.params.ecn && item.ect && self.drop_prob <= MARK_ECN_THRESHOLD) {
                return Some(item.packet);
            }
            item.ce = true;
        }
        if !self.fifo.fits(self.limit, item.ip_bytes()) {
            return Some(item.packet);
        }
        self.fifo.push(item);
        None
    }

    pub fn dequeue(&mut self, now: Nanos) -> Option<Stamped<T>> {
        self.catch_up(now);
        let item = self.fifo.pop()?;
        // §4.3: the queue delay is the sojourn time of the packet leaving.
        self.qdelay_ns = if self.fifo.is_empty() {
            0
        } else {
            now - item.enqueued_ns
        };
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::aqm::{Arrival, Discipline};
    use crate::plan::AqmPlan;

    const MS: Nanos = 1_000_000;

    fn pie() -> Pie<u32> {
        let params = PieParams {
            target_ns: 15 * MS,
            t_update_ns: 15 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst_ns: 150 * MS,
            ecn: false,
        };
        Pie::new(QueuePlan::Packets(1000), params, RngStream::new(1, "t"))
    }

    fn stamped(i: u32, at: Nanos, ect: bool) -> Stamped<u32> {
        Stamped {
            packet: i,
            enqueued_ns: at,
            ect,
            ce: false,
        }
    }

    #[test]
    fn the_probability_moves_by_alpha_and_beta_scaled_while_small() {
        // §4.2: p += alpha (qdelay - target) + beta (qdelay - qdelay_old), divided by 8
        // while p < 1 %, by 2 while p < 10 %.
        let mut q = pie();
        q.qdelay_ns = 35 * MS;
        q.qdelay_old_ns = 25 * MS;
        q.drop_prob = 0.005;
        q.update();
        let step = 0.125 * 0.020 + 1.25 * 0.010;
        assert!((q.drop_prob - (0.005 + step / 8.0)).abs() < 1e-12);
        q.drop_prob = 0.05;
        q.qdelay_old_ns = 25 * MS;
        q.update();
        assert!((q.drop_prob - (0.05 + step / 2.0)).abs() < 1e-12);
        // §4.2: at a tiny probability the step is divided by 2048.
        q.drop_prob = 0.0;
        q.qdelay_old_ns = 25 * MS;
        q.update();
        assert!((q.drop_prob - step / 2048.0).abs() < 1e-15);
    }

    #[test]
    fn a_large_probability_rises_by_at_most_two_percent_per_update() {
        // §5.5.
        let mut q = pie();
        q.drop_prob = 0.3;
        q.qdelay_ns = 200 * MS;
        q.update();
        assert!((q.drop_prob - 0.32).abs() < 1e-12);
    }

    #[test]
    fn an_empty_queue_decays_the_probability() {
        // §4.2: qdelay and qdelay_old both 0: p *= 0.98 after the (negative) step.
        let mut q = pie();
        q.drop_prob = 0.5;
        q.update();
        let expect = (0.5 - 0.125 * 0.015) * 0.98;
        assert!((q.drop_prob - expect).abs() < 1e-12);
    }

    #[test]
    fn the_burst_allowance_lets_a_burst_through_then_runs_out() {
        // §4.4: no early drop for max_burst after the queue was calm, however long it is.
        let mut q = pie();
        q.drop_prob = 0.9;
        q.qdelay_old_ns = 100 * MS;
        for i in 0..100 {
            assert_eq!(q.enqueue(0, stamped(i, 0, false)), None);
        }
        // Ten updates (150 ms) use up the allowance; from then on arrivals are dropped
        // at random.
        q.qdelay_ns = 100 * MS;
        q.catch_up(150 * MS);
        assert_eq!(q.burst_allowance_ns, 0);
        let dropped = (0..100)
            .filter(|&i| {
                q.enqueue(150 * MS, stamped(1000 + i, 150 * MS, false))
                    .is_some()
            })
            .count();
        assert!(dropped > 50, "{dropped}");
    }

    #[test]
    fn a_short_queue_is_never_dropped_from() {
        // §4.1: with delay under half the target and p < 20 %, or two packets or fewer
        // queued, the arrival stays.
        let mut q = pie();
        q.burst_allowance_ns = 0;
        q.drop_prob = 0.15;
        q.qdelay_old_ns = 5 * MS;
        for i in 0..50 {
            assert_eq!(q.enqueue(0, stamped(i, 0, false)), None);
        }
        let mut q = pie();
        q.burst_allowance_ns = 0;
        q.drop_prob = 1.0;
        q.qdelay_old_ns = 100 * MS;
        assert_eq!(q.enqueue(0, stamped(0, 0, false)), None);
        assert_eq!(q.enqueue(0, stamped(1, 0, false)), None);
    }

    #[test]
    fn derandomization_spaces_drops_by_the_accumulated_probability() {
        // §5.4: no drop until the probability accumulated since the last one reaches 0.85,
        // a sure drop at 8.5: with p = 0.1 the gaps are 9 to 86 arrivals (sums of 0.1 round down).
        let mut q = pie();
        q.burst_allowance_ns = 0;
        q.drop_prob = 0.1;
        q.qdelay_old_ns = 100 * MS;
        for i in 0..3 {
            q.fifo.push(stamped(i, 0, false));
        }
        let mut since = 0;
        for i in 0..5000 {
            since += 1;
            if q.drop_early() {
                assert!((9..=86).contains(&since), "gap {since} at {i}");
                since = 0;
            }
        }
    }

    #[test]
    fn ecn_capable_packets_are_marked_while_the_probability_is_moderate() {
        // §5.1: mark at p <= 10 %, drop above.
        let plan = AqmPlan::Pie {
            target_ns: 15 * MS,
            t_update_ns: 15 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst_ns: 0,
            ecn: true,
        };
        let mut q: Discipline<u32> = Discipline::new(
            QueuePlan::Packets(1000),
            Some(&plan),
            1_000_000,
            RngStream::new(1, "t"),
        );
        let Discipline::Pie(pie) = &mut q else {
            unreachable!()
        };
        pie.drop_prob = 0.1;
        pie.qdelay_old_ns = 100 * MS;
        pie.next_update = u64::MAX;
        let ect = Arrival { flow: 0, ect: true };
        let lost = (0..200).filter(|&i| q.enqueue(0, i, ect).is_some()).count();
        assert_eq!(lost, 0);
        let marked = std::iter::from_fn(|| q.dequeue(0, &mut |_| {}))
            .filter(|d| d.ce)
            .count();
        assert!(marked > 5, "{marked}");
    }

    #[test]
    fn updates_follow_t_update_and_an_idle_queue_skips_them() {
        let mut q = pie();
        q.catch_up(10 * 3600 * NS_PER_S);
        assert_eq!(q.next_update % (15 * MS), 0);
        assert!(q.next_update > 10 * 3600 * NS_PER_S);
    }
}
