//! A link direction's queue per interval (docs/models/aqm.md): the occupancy averaged over
//! time and at its peak, and the sojourn times of the packets that left it for the line.
//! Intervals are closed on the right, (k·I, (k+1)·I], as the goodput series'.

use schemars::JsonSchema;
use serde::Serialize;

use super::seconds;
use crate::columns::{direction_labels, Column, Table, Values};
use crate::engine::Nanos;

/// Every link direction's queue per interval, as columns: one row per direction and
/// interval.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct QueueSeries {
    pub t_s: Vec<f64>,
    pub link: Vec<usize>,
    pub direction: Vec<&'static str>,
    /// IP bytes waiting, averaged over the interval (the frame on the line excluded).
    pub bytes_mean: Vec<f64>,
    pub bytes_max: Vec<u64>,
    pub packets_max: Vec<u64>,
    /// Packets that left the queue for the line (an arrival at an idle drop-tail line
    /// counts, with no wait).
    pub departures: Vec<u64>,
    /// Their mean and longest wait; 0 without departures.
    pub sojourn_mean_s: Vec<f64>,
    pub sojourn_max_s: Vec<f64>,
}

impl QueueSeries {
    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }

    pub fn table(self) -> Table {
        let link = self.link.into_iter().map(|l| l as u64).collect();
        let column = Column::new;
        Table {
            name: "queue",
            columns: vec![
                column("t_s", Values::F64(self.t_s)),
                column("link", Values::U64(link)),
                column("direction", direction_labels(&self.direction)),
                column("bytes_mean", Values::F64(self.bytes_mean)),
                column("bytes_max", Values::U64(self.bytes_max)),
                column("packets_max", Values::U64(self.packets_max)),
                column("departures", Values::U64(self.departures)),
                column("sojourn_mean_s", Values::F64(self.sojourn_mean_s)),
                column("sojourn_max_s", Values::F64(self.sojourn_max_s)),
            ],
        }
    }
}

/// One interval's figures as they accumulate.
#[derive(Debug, Default, Clone, Copy)]
struct Interval {
    /// Byte-nanoseconds of occupancy.
    area: u128,
    bytes_max: u64,
    packets_max: u64,
    /// Set when the interval closes (`QueueMeter::roll`).
    departures: u64,
    sojourn_sum: u128,
    sojourn_max: Nanos,
}

/// Measures one queue. The owner reports every change of occupancy (`level`) and every
/// departure's wait (`departure`), in time order, each with the packets that have left the
/// queue for the line so far (`departed`, its own count of them): an interval's departures
/// are the difference across it, so that a packet crossing an idle line past an empty
/// queue reads only the interval's end here, which comes first. With a thousand
/// connections each on access links of their own, a meter is cold when a packet comes.
#[derive(Debug)]
#[repr(C)]
pub struct QueueMeter {
    /// End of the interval being measured.
    end: Nanos,
    /// The occupancy since `since`.
    bytes: u64,
    packets: u64,
    /// `departed` when the interval being measured began.
    departed_before: u64,
    current: Interval,
    since: Nanos,
    interval_ns: Nanos,
    closed: Vec<Interval>,
}

impl QueueMeter {
    pub fn new(interval_ns: Nanos) -> Self {
        Self {
            interval_ns,
            end: interval_ns,
            since: 0,
            bytes: 0,
            packets: 0,
            departed_before: 0,
            current: Interval::default(),
            closed: Vec::new(),
        }
    }

    /// Closes the intervals that end before `now` (one row each, so the loop is as long as
    /// the series).
    fn roll(&mut self, now: Nanos, departed: u64) {
        while now > self.end {
            self.current.area += u128::from(self.bytes) * u128::from(self.end - self.since);
            self.current.departures = departed - self.departed_before;
            self.departed_before = departed;
            self.closed.push(self.current);
            self.current = Interval {
                bytes_max: self.bytes,
                packets_max: self.packets,
                ..Interval::default()
            };
            self.since = self.end;
            self.end += self.interval_ns;
        }
    }

    /// The queue holds `bytes` in `packets` from `now` on.
    pub fn level(&mut self, now: Nanos, bytes: u64, packets: u64, departed: u64) {
        self.roll(now, departed);
        if bytes == 0 && packets == 0 && self.bytes == 0 && self.packets == 0 {
            // Empty before and after: no area, no new peak, and `since` matters only once
            // the queue holds something.
            return;
        }
        self.current.area += u128::from(self.bytes) * u128::from(now - self.since);
        self.since = now;
        self.bytes = bytes;
        self.packets = packets;
        self.current.bytes_max = self.current.bytes_max.max(bytes);
        self.current.packets_max = self.current.packets_max.max(packets);
    }

    /// A packet left for the line at `now` after waiting `sojourn_ns`; `departed` does not
    /// count it yet.
    pub fn departure(&mut self, now: Nanos, sojourn_ns: Nanos, departed: u64) {
        self.roll(now, departed);
        if sojourn_ns > 0 {
            self.current.sojourn_sum += u128::from(sojourn_ns);
            self.current.sojourn_max = self.current.sojourn_max.max(sojourn_ns);
        }
    }

    /// Appends the rows up to `stop` (the last interval ends there) for `link`, `direction`.
    pub fn finish(
        &mut self,
        stop: Nanos,
        departed: u64,
        link: usize,
        direction: &'static str,
        out: &mut QueueSeries,
    ) {
        self.roll(stop, departed);
        if stop > self.end - self.interval_ns {
            self.current.area += u128::from(self.bytes) * u128::from(stop - self.since);
            self.current.departures = departed - self.departed_before;
            self.closed.push(self.current);
        }
        let interval = self.interval_ns;
        for (k, i) in std::mem::take(&mut self.closed).iter().enumerate() {
            let start = k as u64 * interval;
            let end = (start + interval).min(stop);
            out.t_s.push(seconds(end));
            out.link.push(link);
            out.direction.push(direction);
            out.bytes_mean
                .push(i.area as f64 / (end - start).max(1) as f64);
            out.bytes_max.push(i.bytes_max);
            out.packets_max.push(i.packets_max);
            out.departures.push(i.departures);
            let mean = if i.departures > 0 {
                i.sojourn_sum as f64 / i.departures as f64
            } else {
                0.0
            };
            out.sojourn_mean_s.push(mean / 1e9);
            out.sojourn_max_s.push(seconds(i.sojourn_max));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn occupancy_is_averaged_over_time_and_peaks_kept_per_interval() {
        let mut m = QueueMeter::new(100 * MS);
        // 3000 bytes for the first quarter of interval 0, 1000 for the rest.
        m.level(0, 3000, 2, 0);
        m.level(25 * MS, 1000, 1, 0);
        m.departure(25 * MS, 4 * MS, 0);
        m.departure(30 * MS, 8 * MS, 1);
        // Interval 1: empty from 150 ms.
        m.level(150 * MS, 0, 0, 2);
        let mut out = QueueSeries::default();
        m.finish(250 * MS, 2, 3, "reverse", &mut out);
        assert_eq!(out.t_s, vec![0.1, 0.2, 0.25]);
        assert_eq!(out.bytes_mean, vec![1500.0, 500.0, 0.0]);
        assert_eq!(out.bytes_max, vec![3000, 1000, 0]);
        assert_eq!(out.packets_max, vec![2, 1, 0]);
        assert_eq!(out.departures, vec![2, 0, 0]);
        assert!((out.sojourn_mean_s[0] - 0.006).abs() < 1e-12);
        assert_eq!(out.sojourn_max_s, vec![0.008, 0.0, 0.0]);
        assert_eq!(out.link, vec![3, 3, 3]);
    }

    #[test]
    fn departures_are_the_owners_count_across_each_interval() {
        // Three packets cross an idle line (no wait) in interval 0, one in interval 2; the
        // owner counts them, the meter takes the differences at each interval's end.
        let mut m = QueueMeter::new(100 * MS);
        for (k, t) in [10, 20, 30].into_iter().enumerate() {
            m.departure(t * MS, 0, k as u64);
        }
        m.departure(250 * MS, 0, 3);
        let mut out = QueueSeries::default();
        m.finish(300 * MS, 4, 0, "forward", &mut out);
        assert_eq!(out.departures, vec![3, 0, 1]);
        assert_eq!(out.sojourn_max_s, vec![0.0, 0.0, 0.0]);
    }

    #[test]
    fn an_idle_queue_still_has_a_row_per_interval() {
        let mut m = QueueMeter::new(100 * MS);
        let mut out = QueueSeries::default();
        m.finish(300 * MS, 0, 0, "forward", &mut out);
        assert_eq!(out.t_s, vec![0.1, 0.2, 0.3]);
        assert!(out.bytes_mean.iter().all(|&b| b == 0.0));
    }
}
