//! Transaction latencies of request/response flows, summarised as netperf's TCP_RR
//! reports them: the rate, the mean, and percentiles.

use schemars::JsonSchema;
use serde::Serialize;

use crate::engine::{Nanos, NS_PER_S};

#[derive(Debug, Serialize, JsonSchema)]
pub struct LatencySummary {
    pub transactions: u64,
    pub transactions_per_s: f64,
    pub latency_mean_s: f64,
    pub latency_p50_s: f64,
    pub latency_p90_s: f64,
    pub latency_p99_s: f64,
    pub latency_max_s: f64,
}

/// The nearest-rank percentile (the smallest value with at least p % of the samples at
/// or below it; Hyndman & Fan's definition 1) of sorted samples.
fn percentile(sorted: &[Nanos], p: u64) -> Nanos {
    let rank = (p * sorted.len() as u64).div_ceil(100).max(1);
    sorted[rank as usize - 1]
}

impl LatencySummary {
    /// None without a completed transaction.
    pub fn of(mut latencies: Vec<Nanos>, elapsed: Nanos) -> Option<Self> {
        if latencies.is_empty() {
            return None;
        }
        latencies.sort_unstable();
        let s = |t: Nanos| t as f64 / NS_PER_S as f64;
        let n = latencies.len();
        let total: u128 = latencies.iter().map(|&t| u128::from(t)).sum();
        Some(Self {
            transactions: n as u64,
            transactions_per_s: n as f64 / s(elapsed.max(1)),
            latency_mean_s: total as f64 / n as f64 / NS_PER_S as f64,
            latency_p50_s: s(percentile(&latencies, 50)),
            latency_p90_s: s(percentile(&latencies, 90)),
            latency_p99_s: s(percentile(&latencies, 99)),
            latency_max_s: s(latencies[n - 1]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let ms: Vec<Nanos> = (1..=10).map(|k| k * 1_000_000).collect();
        let s = LatencySummary::of(ms, 2 * NS_PER_S).unwrap();
        assert_eq!(s.transactions, 10);
        assert_eq!(s.transactions_per_s, 5.0);
        assert!((s.latency_mean_s - 0.0055).abs() < 1e-12);
        assert_eq!(s.latency_p50_s, 0.005);
        assert_eq!(s.latency_p90_s, 0.009);
        assert_eq!(s.latency_p99_s, 0.010);
        assert_eq!(s.latency_max_s, 0.010);
        assert!(LatencySummary::of(Vec::new(), NS_PER_S).is_none());
    }
}
