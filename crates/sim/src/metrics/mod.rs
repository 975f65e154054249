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

use crate::columns::{Column, Table, Values};
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
                Column {
                    name: "t_s",
                    values: Values::F64(self.t_s),
                },
                Column {
                    name: "interval_bytes",
                    values: Values::U64(self.interval_bytes),
                },
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

/// Sender state sampled at a fixed period. Window byte counts are 32-bit, saturating at
/// 2^32 − 1 (an infinite ssthresh reads so; a window can reach at most 2^30 bytes, RFC 7323
/// §2.3); the two running totals, bytes acknowledged (64-bit: a long run passes 4 GiB) and
/// retransmitted segments, let a reader take any interval's difference (iperf3's
/// per-interval bytes and retransmits); a sample is 52 bytes (crate::columns).
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Trace {
    pub flow: Vec<u32>,
    /// Which TCP connection of the flow: 0 from its source, 1, 2, ... onwards from each
    /// PEP that splits it (the `segments` rows' numbering).
    pub segment: Vec<u32>,
    pub t_s: Vec<f64>,
    pub cwnd_bytes: Vec<u32>,
    pub ssthresh_bytes: Vec<u32>,
    pub srtt_s: Vec<f64>,
    pub flight_bytes: Vec<u32>,
    pub rwnd_bytes: Vec<u32>,
    pub acked_bytes: Vec<u64>,
    pub retransmits: Vec<u32>,
}

fn saturating_u32(bytes: u64) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

impl Trace {
    pub fn with_capacity(samples: usize) -> Self {
        Self {
            flow: Vec::with_capacity(samples),
            segment: Vec::with_capacity(samples),
            t_s: Vec::with_capacity(samples),
            cwnd_bytes: Vec::with_capacity(samples),
            ssthresh_bytes: Vec::with_capacity(samples),
            srtt_s: Vec::with_capacity(samples),
            flight_bytes: Vec::with_capacity(samples),
            rwnd_bytes: Vec::with_capacity(samples),
            acked_bytes: Vec::with_capacity(samples),
            retransmits: Vec::with_capacity(samples),
        }
    }

    pub fn sample(&mut self, flow: usize, segment: usize, now: Nanos, tcp: &Sender) {
        self.flow
            .push(u32::try_from(flow).expect("fewer than 2^32 flows"));
        self.segment
            .push(u32::try_from(segment).expect("fewer than 2^32 PEPs"));
        self.t_s.push(seconds(now));
        self.cwnd_bytes.push(saturating_u32(tcp.cwnd()));
        self.ssthresh_bytes.push(saturating_u32(tcp.ssthresh()));
        self.srtt_s.push(tcp.rto().srtt().map_or(0.0, seconds));
        self.flight_bytes.push(saturating_u32(tcp.in_flight()));
        self.rwnd_bytes.push(saturating_u32(tcp.rwnd()));
        // The sequence space counts data bytes from 0 (the SYN takes none).
        self.acked_bytes.push(tcp.snd_una());
        self.retransmits.push(saturating_u32(tcp.stats.retransmits));
    }

    pub fn table(self) -> Table {
        let column = |name, values| Column { name, values };
        Table {
            name: "trace",
            columns: vec![
                column("flow", Values::U32(self.flow)),
                column("segment", Values::U32(self.segment)),
                column("t_s", Values::F64(self.t_s)),
                column("cwnd_bytes", Values::U32(self.cwnd_bytes)),
                column("ssthresh_bytes", Values::U32(self.ssthresh_bytes)),
                column("srtt_s", Values::F64(self.srtt_s)),
                column("flight_bytes", Values::U32(self.flight_bytes)),
                column("rwnd_bytes", Values::U32(self.rwnd_bytes)),
                column("acked_bytes", Values::U64(self.acked_bytes)),
                column("retransmits", Values::U32(self.retransmits)),
            ],
        }
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
