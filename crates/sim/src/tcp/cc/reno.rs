//! Reno's window arithmetic, RFC 5681 §3.1. Tahoe, Reno and NewReno share it; they differ
//! only in loss recovery.

use super::{slow_start, CcState, CongestionControl};

#[derive(Debug, Default)]
pub struct Reno {
    /// RFC 3465 §2.1 bytes_acked: with byte counting, cwnd grows by one SMSS each time a
    /// full cwnd of data has been acknowledged.
    bytes_acked: u64,
}

impl CongestionControl for Reno {
    /// RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2·SMSS).
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64 {
        self.bytes_acked = 0;
        (s.flight / 2).max(2 * s.mss)
    }

    fn on_ack(&mut self, s: &CcState, acked: u64) -> u64 {
        if s.cwnd < s.ssthresh {
            slow_start(s, acked)
        } else if s.abc {
            self.bytes_acked += acked;
            if self.bytes_acked >= s.cwnd {
                self.bytes_acked -= s.cwnd;
                s.cwnd + s.mss
            } else {
                s.cwnd
            }
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
        assert_eq!(Reno::default().on_ack(&s, 2000), 11_000);
        assert_eq!(Reno::default().on_ack(&s, 100), 10_100);
    }

    #[test]
    fn congestion_avoidance_adds_mss_squared_over_cwnd() {
        assert_eq!(Reno::default().on_ack(&state(20, 10, 0), 1000), 20_050);
    }

    #[test]
    fn byte_counting_slow_start_credits_up_to_two_segments_per_ack() {
        let s = CcState {
            abc: true,
            ..state(10, u64::MAX, 0)
        };
        assert_eq!(Reno::default().on_ack(&s, 2000), 12_000);
        assert_eq!(Reno::default().on_ack(&s, 5000), 12_000);
    }

    #[test]
    fn byte_counting_avoidance_adds_one_segment_per_window_acknowledged() {
        let mut reno = Reno::default();
        let mut cwnd = 4000;
        for _ in 0..4 {
            let s = CcState {
                abc: true,
                cwnd,
                ..state(0, 1, 0)
            };
            cwnd = reno.on_ack(&s, 1000);
        }
        assert_eq!(cwnd, 5000);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_segments() {
        assert_eq!(
            Reno::default().ssthresh_after_loss(&state(40, 100, 0)),
            20_000
        );
        assert_eq!(Reno::default().ssthresh_after_loss(&state(1, 100, 0)), 2000);
    }
}
