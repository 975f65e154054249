//! Reno's window arithmetic, RFC 5681 §3.1 (NewReno, RFC 6582, changes only recovery).

use super::CongestionControl;

pub struct Reno;

impl CongestionControl for Reno {
    /// RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2·SMSS).
    fn ssthresh_after_loss(&mut self, flight: u64, mss: u64) -> u64 {
        (flight / 2).max(2 * mss)
    }

    fn on_ack(&mut self, cwnd: &mut u64, ssthresh: u64, acked: u64, mss: u64) {
        if *cwnd < ssthresh {
            // RFC 5681 eq. (2): slow start grows by min(N, SMSS) per ACK.
            *cwnd += acked.min(mss);
        } else {
            // RFC 5681 eq. (3): about one SMSS per RTT, at least one byte per ACK.
            *cwnd += (mss * mss / *cwnd).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut cwnd = 10 * 1460;
        Reno.on_ack(&mut cwnd, u64::MAX, 2 * 1460, 1460);
        assert_eq!(cwnd, 11 * 1460);
        Reno.on_ack(&mut cwnd, u64::MAX, 100, 1460);
        assert_eq!(cwnd, 11 * 1460 + 100);
    }

    #[test]
    fn congestion_avoidance_adds_mss_squared_over_cwnd() {
        let mut cwnd = 20 * 1460;
        Reno.on_ack(&mut cwnd, 10 * 1460, 1460, 1460);
        assert_eq!(cwnd, 20 * 1460 + 73);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_segments() {
        assert_eq!(Reno.ssthresh_after_loss(40 * 1460, 1460), 20 * 1460);
        assert_eq!(Reno.ssthresh_after_loss(1460, 1460), 2 * 1460);
    }
}
