//! Measurements taken during a run: per-interval delivered bytes, sampled sender state,
//! the time the sender spent limited by each cause, fairness, transaction latencies and
//! each link direction's queue.

mod fairness;
mod latency;
mod queue;

pub use fairness::jain_index;
pub use latency::LatencySummary;
pub use queue::{QueueMeter, QueueSeries};

use schemars::JsonSchema;
use serde::Serialize;

use crate::columns::{Column, Table, Uints, Values};
use crate::engine::{Nanos, NS_PER_S};
use crate::tcp::{Limit, Sender};

fn seconds(t: Nanos) -> f64 {
    t as f64 / NS_PER_S as f64
}

/// Bytes delivered to the receiving application per interval. Intervals are closed on the
/// right, (k·I, (k+1)·I], so a delivery at exactly k·I counts in interval k − 1.
pub struct IntervalSeries {
    interval: Nanos,
    buckets: Vec<u64>,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct SeriesOut {
    pub t_s: Vec<f64>,
    pub interval_bytes: Vec<u64>,
}

impl SeriesOut {
    pub fn table(self) -> Table {
        Table {
            name: "series",
            columns: vec![
                Column::new("t_s", Values::F64(self.t_s)),
                Column::new("interval_bytes", Values::U64(self.interval_bytes)),
            ],
        }
    }
}

impl IntervalSeries {
    pub fn new(interval: Nanos) -> Self {
        Self {
            interval,
            buckets: Vec::new(),
        }
    }

    pub fn add(&mut self, at: Nanos, bytes: u64) {
        let k = (at.saturating_sub(1) / self.interval) as usize;
        if self.buckets.len() <= k {
            self.buckets.resize(k + 1, 0);
        }
        self.buckets[k] += bytes;
    }

    /// The series up to `end`, with a last partial interval when `end` is not a multiple.
    pub fn finish(mut self, end: Nanos) -> SeriesOut {
        let n = end.div_ceil(self.interval) as usize;
        self.buckets.resize(n, 0);
        let t_s = (1..=n as u64)
            .map(|k| seconds((k * self.interval).min(end)))
            .collect();
        SeriesOut {
            t_s,
            interval_bytes: self.buckets,
        }
    }
}

/// What the trace takes of one connection, as of its client's last turn. The simulation
/// keeps these in one array, updated as each turn ends (`Traced::update`), so that a sample
/// reads a few contiguous lines, not three cold lines of every sender: with a thousand
/// connections and the default 10 ms trace there are as many samples as segments.
#[derive(Debug, Clone, Copy, Default)]
pub struct Traced {
    /// Whether the connection is TCP: a media flow over UDP has no row.
    pub traced: bool,
    flow: u32,
    segment: u32,
    cwnd: u32,
    ssthresh: u32,
    flight: u32,
    rwnd: u32,
    retransmits: u32,
    srtt_ns: Nanos,
    /// The sequence space counts data bytes from 0 (the SYN takes none).
    acked: u64,
}

impl Traced {
    /// Connection `segment` of scenario flow `flow`, whose client sends with `tcp`, if TCP.
    pub fn new(flow: usize, segment: usize, tcp: Option<&Sender>) -> Self {
        let mut row = Self {
            traced: tcp.is_some(),
            flow: flow as u32,
            segment: segment as u32,
            ..Self::default()
        };
        if let Some(tcp) = tcp {
            row.update(tcp);
        }
        row
    }

    pub fn update(&mut self, tcp: &Sender) {
        self.cwnd = saturating_u32(tcp.cwnd());
        self.ssthresh = saturating_u32(tcp.ssthresh());
        self.srtt_ns = tcp.rto().srtt().unwrap_or(0);
        self.flight = saturating_u32(tcp.in_flight());
        self.rwnd = saturating_u32(tcp.rwnd());
        self.acked = tcp.snd_una();
        self.retransmits = saturating_u32(tcp.stats.retransmits);
    }
}

/// Sender state sampled at a fixed period, one row per TCP connection and sampling instant
/// (the instants in time order, each instant's connections in flow order). Window byte
/// counts saturate at 2^32 − 1 (an infinite ssthresh reads so; a window can reach at most
/// 2^30 bytes, RFC 7323 §2.3); the two running totals, bytes acknowledged and retransmitted
/// segments, let a reader take any interval's difference (iperf3's per-interval bytes and
/// retransmits). Each integer column is kept in the narrowest width its values need so far
/// (crate::columns::Uints), SRTT as integer nanoseconds, and the time once per instant: a
/// row takes 9 to 44 bytes and an instant 12 (the 1,000-flow dumbbell's rows 25), not 52 as
/// in plain columns.
#[derive(Debug, Default)]
pub struct Trace {
    /// Each sampling instant (s) and the rows taken up to it (the end of its run of rows).
    t_s: Vec<f64>,
    ends: Vec<u32>,
    flow: Uints,
    segment: Uints,
    cwnd_bytes: Uints,
    ssthresh_bytes: Uints,
    srtt_ns: Uints,
    flight_bytes: Uints,
    rwnd_bytes: Uints,
    acked_bytes: Uints,
    retransmits: Uints,
}

/// The trace as the JSON result holds it (and its schema): every column a list with a value
/// per row.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Trace")]
struct TraceRows {
    flow: Vec<u32>,
    /// Which TCP connection of the flow: 0 from its source, 1, 2, ... onwards from each
    /// PEP that splits it (the `segments` rows' numbering).
    segment: Vec<u32>,
    t_s: Vec<f64>,
    cwnd_bytes: Vec<u32>,
    ssthresh_bytes: Vec<u32>,
    srtt_s: Vec<f64>,
    flight_bytes: Vec<u32>,
    rwnd_bytes: Vec<u32>,
    acked_bytes: Vec<u64>,
    retransmits: Vec<u32>,
}

fn saturating_u32(bytes: u64) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

impl Trace {
    pub fn with_capacity(samples: usize) -> Self {
        Self {
            t_s: Vec::new(),
            ends: Vec::new(),
            flow: Uints::with_capacity(samples),
            segment: Uints::with_capacity(samples),
            cwnd_bytes: Uints::with_capacity(samples),
            ssthresh_bytes: Uints::with_capacity(samples),
            srtt_ns: Uints::with_capacity(samples),
            flight_bytes: Uints::with_capacity(samples),
            rwnd_bytes: Uints::with_capacity(samples),
            acked_bytes: Uints::with_capacity(samples),
            retransmits: Uints::with_capacity(samples),
        }
    }

    /// One row per connection `traced` marks, in their order, written a column at a time.
    pub fn sample(&mut self, now: Nanos, connections: &[Traced]) {
        let rows = connections.iter().filter(|c| c.traced);
        let count = rows.clone().count() as u32;
        if count == 0 {
            return;
        }
        self.flow.extend(rows.clone().map(|c| c.flow.into()));
        self.segment.extend(rows.clone().map(|c| c.segment.into()));
        self.cwnd_bytes.extend(rows.clone().map(|c| c.cwnd.into()));
        self.ssthresh_bytes
            .extend(rows.clone().map(|c| c.ssthresh.into()));
        self.srtt_ns.extend(rows.clone().map(|c| c.srtt_ns));
        self.flight_bytes
            .extend(rows.clone().map(|c| c.flight.into()));
        self.rwnd_bytes.extend(rows.clone().map(|c| c.rwnd.into()));
        self.acked_bytes.extend(rows.clone().map(|c| c.acked));
        self.retransmits.extend(rows.map(|c| c.retransmits.into()));
        let t_s = seconds(now);
        if self.t_s.last() != Some(&t_s) {
            self.t_s.push(t_s);
            self.ends.push(self.ends.last().copied().unwrap_or(0));
        }
        *self.ends.last_mut().expect("an instant is open") += count;
    }

    pub fn table(self) -> Table {
        let column = Column::new;
        Table {
            name: "trace",
            columns: vec![
                column("flow", self.flow.into_values()),
                column("segment", self.segment.into_values()),
                Column {
                    run_ends: Some(self.ends),
                    ..column("t_s", Values::F64(self.t_s))
                },
                column("cwnd_bytes", self.cwnd_bytes.into_values()),
                column("ssthresh_bytes", self.ssthresh_bytes.into_values()),
                Column {
                    divisor: Some(NS_PER_S),
                    ..column("srtt_s", self.srtt_ns.into_values())
                },
                column("flight_bytes", self.flight_bytes.into_values()),
                column("rwnd_bytes", self.rwnd_bytes.into_values()),
                column("acked_bytes", self.acked_bytes.into_values()),
                column("retransmits", self.retransmits.into_values()),
            ],
        }
    }

    fn rows(&self) -> TraceRows {
        fn unsigned(c: &Uints) -> Vec<u64> {
            c.values().unsigned().expect("an unsigned column")
        }
        // Window counts and retransmits were pushed saturated at 2^32 − 1.
        let narrow = |c: &Uints| unsigned(c).into_iter().map(saturating_u32).collect();
        let mut t_s = Vec::new();
        let mut start = 0;
        for (&t, &end) in self.t_s.iter().zip(&self.ends) {
            t_s.extend(std::iter::repeat_n(t, (end - start) as usize));
            start = end;
        }
        TraceRows {
            flow: narrow(&self.flow),
            segment: narrow(&self.segment),
            t_s,
            cwnd_bytes: narrow(&self.cwnd_bytes),
            ssthresh_bytes: narrow(&self.ssthresh_bytes),
            srtt_s: unsigned(&self.srtt_ns).into_iter().map(seconds).collect(),
            flight_bytes: narrow(&self.flight_bytes),
            rwnd_bytes: narrow(&self.rwnd_bytes),
            acked_bytes: unsigned(&self.acked_bytes),
            retransmits: narrow(&self.retransmits),
        }
    }
}

impl Serialize for Trace {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.rows().serialize(serializer)
    }
}

impl JsonSchema for Trace {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        TraceRows::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        TraceRows::json_schema(generator)
    }
}

/// Accumulates how long the sender stayed in each `Limit` state.
#[derive(Default)]
pub struct LimitClock {
    state: Option<(Limit, Nanos)>,
    rwnd: Nanos,
    sndbuf: Nanos,
    cwnd: Nanos,
    app: Nanos,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct LimitShares {
    pub rwnd: f64,
    pub sndbuf: f64,
    pub cwnd: f64,
    pub app: f64,
}

impl LimitClock {
    /// Closes the current state at `now` and enters `next` (None: not counting).
    pub fn enter(&mut self, now: Nanos, next: Option<Limit>) {
        if let Some((limit, since)) = self.state {
            let span = now - since;
            match limit {
                Limit::Rwnd => self.rwnd += span,
                Limit::SndBuf => self.sndbuf += span,
                Limit::Cwnd => self.cwnd += span,
                Limit::App => self.app += span,
            }
        }
        self.state = next.map(|l| (l, now));
    }

    /// Adds another connection's time, so that shares weigh each by its duration.
    pub fn absorb(&mut self, other: &LimitClock) {
        self.rwnd += other.rwnd;
        self.sndbuf += other.sndbuf;
        self.cwnd += other.cwnd;
        self.app += other.app;
    }

    pub fn shares(&self) -> LimitShares {
        let total = (self.rwnd + self.sndbuf + self.cwnd + self.app).max(1) as f64;
        LimitShares {
            rwnd: self.rwnd as f64 / total,
            sndbuf: self.sndbuf as f64 / total,
            cwnd: self.cwnd as f64 / total,
            app: self.app as f64 / total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deliveries_fall_in_right_closed_intervals() {
        let mut s = IntervalSeries::new(NS_PER_S);
        s.add(NS_PER_S, 10); // exactly at 1 s: first interval
        s.add(NS_PER_S + 1, 5);
        let out = s.finish(2_500_000_000);
        assert_eq!(out.interval_bytes, vec![10, 5, 0]);
        assert_eq!(out.t_s, vec![1.0, 2.0, 2.5]);
    }

    #[test]
    fn limit_shares_split_the_counted_time() {
        let mut c = LimitClock::default();
        c.enter(0, Some(Limit::Cwnd));
        c.enter(30, Some(Limit::Rwnd));
        c.enter(100, None);
        c.enter(500, Some(Limit::Rwnd));
        c.enter(500, None);
        let s = c.shares();
        assert!((s.cwnd - 0.3).abs() < 1e-12 && (s.rwnd - 0.7).abs() < 1e-12);
    }
}
