//! Reno as Linux's tcp_cong.c computes it (`tcp_reno_ssthresh`, `tcp_reno_cong_avoid`), in
//! whole segments, where it departs from RFC 5681 (`reno.rs`): ssthresh is half of cwnd,
//! not of the flight, rounded down to a segment; congestion avoidance adds one segment per
//! cwnd segments acknowledged, with the credit a reduction clears.

use super::linux_growth::LinuxGrowth;
use super::{CcState, CongestionControl};

#[derive(Debug, Default)]
pub struct LinuxReno {
    growth: LinuxGrowth,
}

impl CongestionControl for LinuxReno {
    /// `tcp_reno_ssthresh`: max(cwnd / 2, 2) segments.
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64 {
        self.growth.clear();
        (s.cwnd / s.mss / 2).max(2) * s.mss
    }

    /// `tcp_reno_cong_avoid`: slow start up to ssthresh, the rest of the ACK one segment per
    /// cwnd acknowledged (`tcp_cong_avoid_ai`).
    fn on_ack(&mut self, s: &CcState, acked: u64) -> u64 {
        let (cwnd, acked) = match self.growth.slow_start(s, acked) {
            Ok(rest) => rest,
            Err(cwnd) => return cwnd * s.mss,
        };
        self.growth.additive_increase(cwnd, cwnd, acked) * s.mss
    }
}

#[cfg(test)]
mod tests {
    use super::super::state;
    use super::*;

    #[test]
    fn ssthresh_is_half_of_cwnd_in_whole_segments() {
        // tcp_reno_ssthresh: 335 >> 1 = 167, whatever is in flight; at least 2.
        let mut r = LinuxReno::default();
        let s = CcState {
            flight: 300_000,
            ..state(335, 1000, 0)
        };
        assert_eq!(r.ssthresh_after_loss(&s), 167_000);
        assert_eq!(r.ssthresh_after_loss(&state(3, 1000, 0)), 2000);
    }

    #[test]
    fn avoidance_adds_one_segment_per_window_acknowledged() {
        let mut r = LinuxReno::default();
        let mut cwnd = 10_000;
        for _ in 0..10 {
            cwnd = r.on_ack(
                &CcState {
                    cwnd,
                    ..state(0, 5, 0)
                },
                1000,
            );
        }
        assert_eq!(cwnd, 11_000);
    }

    #[test]
    fn a_reduction_clears_the_credit() {
        let mut r = LinuxReno::default();
        r.on_ack(&state(10, 5, 0), 9000);
        r.ssthresh_after_loss(&state(10, 5, 0));
        // Nine segments of credit are gone: ten more are needed at cwnd 10.
        assert_eq!(r.on_ack(&state(10, 5, 0), 9000), 10_000);
    }
}
