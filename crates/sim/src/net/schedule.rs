//! A link direction that changes over the run (docs/models/schedules.md): its rate, delay,
//! error model and up/down state follow tables of (time, value), or its rate follows a
//! mahimahi delivery trace. The simulator's channel and the emulator's hop ask it the same
//! two questions, so both backends run this one mechanism:
//!
//! - `finish`: a frame's first bit goes onto the line at `start`; when has its last? The
//!   line carries ∫ rate dt bits, nothing while it is down: a frame that is partly sent
//!   when the line goes down or the rate changes finishes at the new pace.
//! - `depart`: a frame's last bit left at `t`; when does it reach the far end, and which
//!   error model does it meet? It takes the delay and error model of the moment it left,
//!   and arrives no earlier than the frame before it, so the line stays FIFO when the
//!   delay falls.
//!
//! Times are the caller's clock; the schedule's time 0 is `origin` on it (0 in the
//! simulator, the start of the measurement in the emulator). Before the origin, the line
//! holds its values of time 0.

use crate::engine::{serialization_ns, Nanos, NS_PER_S};
use crate::plan::{ChannelPlan, DeliveryTracePlan, ErrorPlan, SeriesPlan};

/// Values from each time on; a time that appears twice takes its later value.
#[derive(Debug, Clone)]
struct Steps<T> {
    points: Vec<(Nanos, T)>,
}

impl<T: Copy> Steps<T> {
    /// A table, or one value throughout where the plan gives none.
    fn new(points: &[(Nanos, T)], otherwise: T) -> Self {
        let points = if points.is_empty() {
            vec![(0, otherwise)]
        } else {
            points.to_vec()
        };
        Self { points }
    }

    /// The index of the point in force at `t`.
    fn index(&self, t: Nanos) -> usize {
        self.points.partition_point(|p| p.0 <= t).max(1) - 1
    }

    fn at(&self, t: Nanos) -> T {
        self.points[self.index(t)].1
    }

    /// The first time after `t` at which a point takes over.
    fn next_after(&self, t: Nanos) -> Option<Nanos> {
        self.points.get(self.index(t) + 1).map(|p| p.0)
    }
}

/// A numeric table, stepped or piecewise linear.
#[derive(Debug, Clone)]
struct Series {
    steps: Steps<u64>,
    linear: bool,
}

impl Series {
    fn new(plan: Option<&SeriesPlan>, otherwise: u64) -> Self {
        match plan {
            Some(p) => Self {
                steps: Steps::new(&p.points, otherwise),
                linear: p.linear,
            },
            None => Self {
                steps: Steps::new(&[], otherwise),
                linear: false,
            },
        }
    }

    /// The value at `t`, and at the end of the piece `t` lies in (the value just before
    /// the next point), or None after the last point.
    fn piece(&self, t: Nanos) -> (f64, Option<(Nanos, f64)>) {
        let i = self.steps.index(t);
        let (t0, v0) = self.steps.points[i];
        match self.steps.points.get(i + 1) {
            None => (v0 as f64, None),
            Some(&(t1, v1)) if self.linear => {
                let slope = (v1 as f64 - v0 as f64) / (t1 - t0) as f64;
                (v0 as f64 + slope * (t - t0) as f64, Some((t1, v1 as f64)))
            }
            Some(&(t1, _)) => (v0 as f64, Some((t1, v0 as f64))),
        }
    }

    /// The value at `t`, rounded to the nearest integer in a linear piece.
    fn at(&self, t: Nanos) -> u64 {
        let i = self.steps.index(t);
        let (t0, v0) = self.steps.points[i];
        match self.steps.points.get(i + 1) {
            Some(&(t1, v1)) if self.linear => {
                // Integer interpolation, so that a delay series gives the same ns everywhere.
                let (dv, dt) = (i128::from(v1) - i128::from(v0), i128::from(t1 - t0));
                let offset = (dv * i128::from(t - t0) + dt / 2).div_euclid(dt);
                (i128::from(v0) + offset) as u64
            }
            _ => v0,
        }
    }
}

/// mahimahi's delivery opportunities, repeating (its LinkQueue): each delivers up to
/// `bytes_each` from the head of the line; a frame larger than what is left of one goes on
/// in the next, and what an idle line does not use is lost.
#[derive(Debug, Clone)]
struct DeliveryTrace {
    opportunities: Vec<Nanos>,
    period: Nanos,
    bytes_each: u64,
    /// The opportunity (counted from the origin over all periods) the last frame ended in,
    /// and the bytes it has left.
    partial: Option<(u64, u64)>,
}

impl DeliveryTrace {
    fn new(plan: &DeliveryTracePlan) -> Self {
        Self {
            period: *plan
                .opportunities_ns
                .last()
                .expect("a validated trace has opportunities"),
            opportunities: plan.opportunities_ns.clone(),
            bytes_each: plan.bytes_per_opportunity,
            partial: None,
        }
    }

    fn time(&self, k: u64) -> Nanos {
        let n = self.opportunities.len() as u64;
        (k / n) * self.period + self.opportunities[(k % n) as usize]
    }

    /// The first opportunity at or after `t`.
    fn first_from(&self, t: Nanos) -> u64 {
        let n = self.opportunities.len() as u64;
        let cycle = t / self.period;
        let within = t - cycle * self.period;
        // `within` < period = the last opportunity, so one of this period's is at or after it.
        cycle * n + self.opportunities.partition_point(|&o| o < within) as u64
    }

    fn finish(&mut self, start: Nanos, bytes: u64) -> Nanos {
        let mut need = bytes;
        let mut first = self.first_from(start);
        if let Some((k, left)) = self.partial {
            if self.time(k) == start && left > 0 {
                if need <= left {
                    self.partial = Some((k, left - need));
                    return start;
                }
                need -= left;
            }
            first = first.max(k + 1);
        }
        let count = need.div_ceil(self.bytes_each);
        let last = first + count - 1;
        self.partial = Some((last, count * self.bytes_each - need));
        self.time(last)
    }

    /// The mean rate, for the time before the origin.
    fn rate_bps(&self) -> u64 {
        let bits = self.opportunities.len() as u128 * u128::from(self.bytes_each) * 8;
        (bits * u128::from(NS_PER_S) / u128::from(self.period)).max(1) as u64
    }
}

#[derive(Debug, Clone)]
enum Serializer {
    Rate { rate_bps: Series, up: Steps<bool> },
    Trace(DeliveryTrace),
}

#[derive(Debug, Clone)]
pub struct Schedule {
    origin: Nanos,
    serializer: Serializer,
    delay_ns: Series,
    error: Steps<ErrorPlan>,
    /// When the last frame to leave reaches the far end.
    last_arrival: Nanos,
}

impl Schedule {
    /// The schedule of a channel whose plan has one.
    pub fn new(plan: &ChannelPlan) -> Option<Self> {
        let s = plan.schedule.as_ref()?;
        let serializer = match &s.trace {
            Some(trace) => Serializer::Trace(DeliveryTrace::new(trace)),
            None => Serializer::Rate {
                rate_bps: Series::new(s.rate_bps.as_ref(), plan.rate_bps),
                up: Steps::new(&s.up, true),
            },
        };
        Some(Self {
            origin: 0,
            serializer,
            delay_ns: Series::new(s.delay_ns.as_ref(), plan.delay_ns),
            error: Steps::new(&s.error, plan.error),
            last_arrival: 0,
        })
    }

    /// Puts the schedule's time 0 at `origin` on the caller's clock.
    pub fn start_at(&mut self, origin: Nanos) {
        self.origin = origin;
    }

    /// When a frame of `wire_bytes` whose first bit goes onto the line at `start` has sent
    /// its last; `Nanos::MAX` if the line never carries it (down or stopped for good).
    pub fn finish(&mut self, start: Nanos, wire_bytes: u64) -> Nanos {
        let Some(from) = start.checked_sub(self.origin) else {
            // Before the origin the line runs at its rate of time 0.
            let rate = match &self.serializer {
                Serializer::Rate { rate_bps, .. } => rate_bps.at(0),
                Serializer::Trace(trace) => trace.rate_bps(),
            };
            return start + serialization_ns(wire_bytes, rate);
        };
        let done = match &mut self.serializer {
            Serializer::Trace(trace) => trace.finish(from, wire_bytes),
            Serializer::Rate { rate_bps, up } => sent_by(rate_bps, up, from, wire_bytes),
        };
        done.saturating_add(self.origin)
    }

    /// The frame whose last bit left the line at `t`: when it reaches the far end, and the
    /// error model it meets.
    pub fn depart(&mut self, t: Nanos) -> (Nanos, ErrorPlan) {
        let at = t.saturating_sub(self.origin);
        let arrival = t
            .saturating_add(self.delay_ns.at(at))
            .max(self.last_arrival);
        self.last_arrival = arrival;
        (arrival, self.error.at(at))
    }
}

/// When a line whose rate follows `rate_bps` while `up` says so has carried `bytes` that
/// began at `start`. Work is counted in bit·ns/s (bits × 10⁹), so that a constant piece is
/// exact in integers; a linear piece solves its quadratic in f64, rounded up to the ns.
fn sent_by(rate_bps: &Series, up: &Steps<bool>, start: Nanos, bytes: u64) -> Nanos {
    let mut need = u128::from(bytes) * 8 * u128::from(NS_PER_S);
    let mut t = start;
    loop {
        let (r0, rate_end) = rate_bps.piece(t);
        let end = match (rate_end.map(|e| e.0), up.next_after(t)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if !up.at(t) {
            match end {
                Some(end) => {
                    t = end;
                    continue;
                }
                None => return Nanos::MAX,
            }
        }
        let r1 = match rate_end {
            // The rate at `end`, on this piece's line.
            Some((t1, v1)) if rate_bps.linear => {
                let end = end.expect("a piece with an end");
                r0 + (v1 - r0) * (end - t) as f64 / (t1 - t) as f64
            }
            _ => r0,
        };
        if r0 == r1 {
            let rate = r0 as u128;
            let capacity = end.map(|e| rate * u128::from(e - t));
            match capacity {
                Some(c) if c < need => {
                    need -= c;
                    t = end.expect("capacity has an end");
                }
                _ => return t + need.div_ceil(rate) as Nanos,
            }
            continue;
        }
        let end = end.expect("a changing rate has an end");
        let span = (end - t) as f64;
        let capacity = (r0 + r1) / 2.0 * span;
        if capacity < need as f64 {
            need -= capacity as u128;
            t = end;
            continue;
        }
        // r0·x + (r1 − r0)/(2·span)·x² = need, for the root in [0, span].
        let k = (r1 - r0) / span;
        let x = (-r0 + (r0 * r0 + 2.0 * k * need as f64).sqrt()) / k;
        return t + (x.ceil() as Nanos).min(end - t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{FramingPlan, QueuePlan, SchedulePlan};

    const MS: u64 = 1_000_000;
    const S: u64 = NS_PER_S;

    fn schedule(s: SchedulePlan) -> Schedule {
        let plan = ChannelPlan {
            rate_bps: 1_000_000,
            delay_ns: 10 * MS,
            queue: QueuePlan::Packets(10),
            error: ErrorPlan::None,
            framing: FramingPlan {
                overhead_bytes: 0,
                min_payload_bytes: 0,
            },
            atm: None,
            aqm: None,
            schedule: Some(s),
        };
        Schedule::new(&plan).unwrap()
    }

    fn series(linear: bool, points: &[(u64, u64)]) -> Option<SeriesPlan> {
        Some(SeriesPlan {
            linear,
            points: points.to_vec(),
        })
    }

    #[test]
    fn a_frame_that_straddles_a_rate_step_finishes_at_the_new_rate() {
        // 1 Mb/s until 4 ms, then 2 Mb/s. 1000 bytes = 8000 bits: 4000 bits by 4 ms, the
        // other 4000 at 2 Mb/s take 2 ms.
        let mut s = schedule(SchedulePlan {
            rate_bps: series(false, &[(0, 1_000_000), (4 * MS, 2_000_000)]),
            ..Default::default()
        });
        assert_eq!(s.finish(0, 1000), 6 * MS);
        assert_eq!(s.finish(6 * MS, 1000), 10 * MS);
    }

    #[test]
    fn a_down_line_pauses_the_frame_it_is_sending() {
        // 1 Mb/s, down from 2 ms to 5 ms: 1000 bytes take 8 ms of up time.
        let mut s = schedule(SchedulePlan {
            up: vec![(0, true), (2 * MS, false), (5 * MS, true)],
            ..Default::default()
        });
        assert_eq!(s.finish(0, 1000), 11 * MS);
        // A frame offered while it is down starts when it comes back up.
        assert_eq!(s.finish(3 * MS, 125), 6 * MS);
        // Down for good: the frame never finishes.
        let mut gone = schedule(SchedulePlan {
            up: vec![(0, true), (MS, false)],
            ..Default::default()
        });
        assert_eq!(gone.finish(0, 1000), Nanos::MAX);
    }

    #[test]
    fn a_linear_ramp_carries_the_integral_of_its_rate() {
        // 1 → 3 Mb/s over 4 ms carries (1 + 3) / 2 · 4 ms = 8000 bits: exactly 1000 bytes.
        let mut s = schedule(SchedulePlan {
            rate_bps: series(true, &[(0, 1_000_000), (4 * MS, 3_000_000)]),
            ..Default::default()
        });
        assert_eq!(s.finish(0, 1000), 4 * MS);
        // Then 3 Mb/s: 375 bytes take 1 ms.
        assert_eq!(s.finish(4 * MS, 375), 5 * MS);
        // Half the ramp (1 → 2 Mb/s over 2 ms) carries 3000 bits = 375 bytes.
        let mut s = schedule(SchedulePlan {
            rate_bps: series(true, &[(0, 1_000_000), (4 * MS, 3_000_000)]),
            ..Default::default()
        });
        assert_eq!(s.finish(0, 375), 2 * MS);
    }

    #[test]
    fn a_frame_keeps_the_delay_of_the_moment_it_left_and_the_line_stays_fifo() {
        let mut s = schedule(SchedulePlan {
            delay_ns: series(false, &[(0, 50 * MS), (S, 10 * MS)]),
            ..Default::default()
        });
        assert_eq!(s.depart(S - 1).0, S - 1 + 50 * MS);
        // Left after the step, but may not overtake the frame before it.
        assert_eq!(s.depart(S).0, S - 1 + 50 * MS);
        assert_eq!(s.depart(S + 100 * MS).0, S + 110 * MS);
    }

    #[test]
    fn a_linear_delay_is_interpolated_to_the_nanosecond() {
        let s = schedule(SchedulePlan {
            delay_ns: series(true, &[(0, 10 * MS), (S, 20 * MS), (S, 40 * MS)]),
            ..Default::default()
        });
        assert_eq!(s.delay_ns.at(S / 2), 15 * MS);
        assert_eq!(s.delay_ns.at(S / 3), 13_333_333);
        // Two points at one time: a step to the later value.
        assert_eq!(s.delay_ns.at(S), 40 * MS);
        assert_eq!(s.delay_ns.at(5 * S), 40 * MS);
    }

    #[test]
    fn the_error_model_is_the_one_in_force_when_the_frame_left() {
        let mut s = schedule(SchedulePlan {
            error: vec![(0, ErrorPlan::None), (S, ErrorPlan::Loss { p: 0.5 })],
            ..Default::default()
        });
        assert!(matches!(s.depart(S - 1).1, ErrorPlan::None));
        assert!(matches!(s.depart(S).1, ErrorPlan::Loss { p } if p == 0.5));
    }

    fn trace(opportunities_ms: &[u64]) -> Schedule {
        schedule(SchedulePlan {
            trace: Some(DeliveryTracePlan {
                opportunities_ns: opportunities_ms.iter().map(|ms| ms * MS).collect(),
                bytes_per_opportunity: 1500,
            }),
            ..Default::default()
        })
    }

    #[test]
    fn a_trace_delivers_a_full_frame_per_opportunity_and_loops() {
        let mut s = trace(&[1, 1, 4]);
        assert_eq!(s.finish(0, 1500), MS);
        assert_eq!(s.finish(MS, 1500), MS); // the second opportunity at 1 ms
        assert_eq!(s.finish(MS, 1500), 4 * MS);
        // The trace repeats every 4 ms: next at 5, 5, 8 ms.
        assert_eq!(s.finish(4 * MS, 1500), 5 * MS);
        // An idle line wastes the opportunities it does not use.
        assert_eq!(s.finish(20 * MS, 1500), 21 * MS);
    }

    #[test]
    fn small_frames_share_an_opportunity_and_large_ones_span_two() {
        let mut s = trace(&[2, 4, 6]);
        assert_eq!(s.finish(0, 1000), 2 * MS);
        assert_eq!(s.finish(2 * MS, 500), 2 * MS); // the 500 bytes left of it
        assert_eq!(s.finish(2 * MS, 40), 4 * MS); // none left: the next
        assert_eq!(s.finish(4 * MS, 2000), 6 * MS); // 1460 left at 4 ms, 540 at 6 ms
        assert_eq!(s.finish(6 * MS, 960), 6 * MS);
    }

    #[test]
    fn before_the_origin_the_line_holds_its_values_of_time_zero() {
        let mut s = schedule(SchedulePlan {
            rate_bps: series(false, &[(0, 2_000_000), (MS, 1_000_000)]),
            ..Default::default()
        });
        s.start_at(100 * MS);
        // 1000 bytes at 2 Mb/s.
        assert_eq!(s.finish(10 * MS, 1000), 14 * MS);
        // From the origin on, the table: 250 bytes by 101 ms, 750 at 1 Mb/s take 6 ms.
        assert_eq!(s.finish(100 * MS, 1000), 107 * MS);
        assert_eq!(trace(&[4]).finish(0, 1500), 4 * MS);
        let mut before = trace(&[4]);
        before.start_at(S);
        // 1500 bytes every 4 ms is 3 Mb/s.
        assert_eq!(before.finish(0, 1500), 4 * MS);
    }
}
