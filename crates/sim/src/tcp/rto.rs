//! Retransmission timeout per RFC 6298.

use crate::engine::{Nanos, NS_PER_S};

/// RFC 6298 §2.1: RTO before the first RTT sample.
pub const INITIAL_RTO_NS: Nanos = NS_PER_S; /* 1 s */
/// RFC 6298 §2.5: an upper bound of at least 60 s may be placed on RTO.
pub const MAX_RTO_NS: Nanos = 60 * NS_PER_S; /* 60 s */
/// RFC 6298 §5.7: RTO once data flows after a SYN had to be retransmitted.
pub const RTO_AFTER_SYN_TIMEOUT_NS: Nanos = 3 * NS_PER_S; /* 3 s */
/// Clock granularity G of RFC 6298 §2.2–2.3 (ns-3 and Linux both tick at 1 ms or finer).
pub const CLOCK_GRANULARITY_NS: Nanos = 1_000_000; /* 1 ms */

#[derive(Debug, Clone)]
pub struct RtoEstimator {
    srtt: Option<Nanos>,
    rttvar: Nanos,
    rto: Nanos,
    min_rto: Nanos,
    min_rtt: Option<Nanos>,
}

impl RtoEstimator {
    pub fn new(min_rto: Nanos) -> Self {
        Self {
            srtt: None,
            rttvar: 0,
            rto: INITIAL_RTO_NS,
            min_rto,
            min_rtt: None,
        }
    }

    /// Folds in one RTT measurement R (RFC 6298 §2.2–2.3, α = 1/8, β = 1/4, K = 4) and
    /// recomputes RTO, which also ends any back-off (Karn: only unambiguous samples get here).
    pub fn sample(&mut self, r: Nanos) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        let srtt = self.srtt.unwrap_or(r);
        let rto = srtt + CLOCK_GRANULARITY_NS.max(4 * self.rttvar);
        // §2.4 gives a 1 s floor; the floor is the scenario's `min_rto` (Linux uses 200 ms).
        self.rto = rto.clamp(self.min_rto, MAX_RTO_NS);
    }

    /// RFC 6298 §5.5: double the timer after it expires.
    pub fn back_off(&mut self) {
        self.rto = (self.rto * 2).min(MAX_RTO_NS);
    }

    /// RFC 6298 §5.7.
    pub fn after_syn_timeout(&mut self) {
        if self.srtt.is_none() {
            self.rto = self.rto.max(RTO_AFTER_SYN_TIMEOUT_NS);
        }
    }

    pub fn rto(&self) -> Nanos {
        self.rto
    }

    pub fn srtt(&self) -> Option<Nanos> {
        self.srtt
    }

    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn rto_starts_at_one_second() {
        assert_eq!(RtoEstimator::new(200 * MS).rto(), NS_PER_S);
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        // RFC 6298 §2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4·RTTVAR) = 3R.
        let mut e = RtoEstimator::new(0);
        e.sample(550 * MS);
        assert_eq!(e.srtt(), Some(550 * MS));
        assert_eq!(e.rto(), 1650 * MS);
    }

    #[test]
    fn later_samples_are_smoothed() {
        // §2.3: RTTVAR = 3/4·275 + 1/4·|550 − 450| = 231.25 ms; SRTT = 7/8·550 + 1/8·450.
        let mut e = RtoEstimator::new(0);
        e.sample(550 * MS);
        e.sample(450 * MS);
        assert_eq!(e.srtt(), Some(537_500_000));
        assert_eq!(e.rto(), 537_500_000 + 925 * MS);
    }

    #[test]
    fn rto_is_floored_at_min_rto() {
        let mut e = RtoEstimator::new(200 * MS);
        for _ in 0..50 {
            e.sample(MS);
        }
        assert_eq!(e.rto(), 200 * MS);
    }

    #[test]
    fn back_off_doubles_up_to_sixty_seconds() {
        let mut e = RtoEstimator::new(200 * MS);
        e.back_off();
        assert_eq!(e.rto(), 2 * NS_PER_S);
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), MAX_RTO_NS);
        // A fresh sample recomputes RTO and so ends the back-off.
        e.sample(100 * MS);
        assert_eq!(e.rto(), 300 * MS);
    }

    #[test]
    fn syn_timeout_raises_rto_to_three_seconds_without_a_sample() {
        let mut e = RtoEstimator::new(200 * MS);
        e.after_syn_timeout();
        assert_eq!(e.rto(), 3 * NS_PER_S);
    }
}
