//! The emulator's own timing error: for every packet written to a TUN device, how late it
//! was against its scheduled delivery time, kept in a fixed histogram (no allocation per
//! packet) of 1 µs buckets up to 100 ms, with the exact maximum beside it.

use serde::Serialize;

const BUCKETS: usize = 100_000; // 1 µs each: 0 to 100 ms

pub struct LatenessHistogram {
    counts: Vec<u64>,
    overflow: u64,
    total: u64,
    sum_ns: u128,
    max_ns: u64,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct TimingReport {
    pub packets: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl Default for LatenessHistogram {
    fn default() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            overflow: 0,
            total: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl LatenessHistogram {
    pub fn record(&mut self, late_ns: u64) {
        let bucket = (late_ns / 1_000) as usize;
        match self.counts.get_mut(bucket) {
            Some(count) => *count += 1,
            None => self.overflow += 1,
        }
        self.total += 1;
        self.sum_ns += u128::from(late_ns);
        self.max_ns = self.max_ns.max(late_ns);
    }

    /// The upper edge (µs) of the bucket holding the q-quantile; the maximum if it lies
    /// beyond the histogram.
    fn quantile_us(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (bucket, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return ((bucket + 1) as f64).min(self.max_ns as f64 / 1e3);
            }
        }
        self.max_ns as f64 / 1e3
    }

    pub fn report(&self) -> TimingReport {
        TimingReport {
            packets: self.total,
            mean_us: if self.total == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.total as f64 / 1e3
            },
            p50_us: self.quantile_us(0.5),
            p99_us: self.quantile_us(0.99),
            max_us: self.max_ns as f64 / 1e3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_bucket_edges_capped_at_the_maximum() {
        let mut h = LatenessHistogram::default();
        for late_ns in (0..100).map(|i| i * 1_000 + 500) {
            h.record(late_ns);
        }
        let r = h.report();
        assert_eq!(r.packets, 100);
        assert_eq!(r.p50_us, 50.0);
        assert_eq!(r.p99_us, 99.0);
        assert_eq!(r.max_us, 99.5);
        assert!((r.mean_us - 50.0).abs() < 1e-9);
    }

    #[test]
    fn lateness_beyond_the_histogram_still_counts() {
        let mut h = LatenessHistogram::default();
        h.record(5);
        h.record(2_000_000_000);
        let r = h.report();
        assert_eq!(r.p50_us, 1.0);
        assert_eq!(r.p99_us, 2_000_000.0);
    }

    #[test]
    fn an_empty_histogram_reports_zeros() {
        let r = LatenessHistogram::default().report();
        assert_eq!(r.packets, 0);
        assert_eq!(r.max_us, 0.0);
    }
}
