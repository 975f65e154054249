//! Reno's window arithmetic, RFC 5681 §3.1. Tahoe, Reno and NewReno share it; they differ
//! only in loss recovery.

use super::{slow_start, CcState, CongestionControl};

pub struct Reno;

impl CongestionControl for Reno {
    /// RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2·SMSS).
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64 {
        (s.flight / 2).max(2 * s.mss)
    }

    fn on_ack(&mut self, s: &CcState, acked: u64) -> u64 {
        if s.cwnd < s.ssthresh {
            slow_start(s, acked)
        } else {
            // RFC 5681 eq. (3): about one SMSS per RTT, at least one byte per ACK.
            s.cwnd + (s.mss * s.mss / s.cwnd).max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::state;
    use super::*;

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let s = state(10, u64::MAX, 0);
        assert_eq!(Reno.on_ack(&s, 2000), 11_000);
        assert_eq!(Reno.on_ack(&s, 100), 10_100);
    }

    #[test]
    fn congestion_avoidance_adds_mss_squared_over_cwnd() {
        assert_eq!(Reno.on_ack(&state(20, 10, 0), 1000), 20_050);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_segments() {
        assert_eq!(Reno.ssthresh_after_loss(&state(40, 100, 0)), 20_000);
        assert_eq!(Reno.ssthresh_after_loss(&state(1, 100, 0)), 2000);
    }
}
