//! TCP Hybla: C. Caini and R. Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
//! networks", Int. J. Satellite Commun. Netw. 22(5), 2004. Growth is scaled by
//! ρ = RTT / RTT0 so that a long-RTT flow's window grows in time as a reference flow's
//! with RTT0 = 25 ms would. Loss response is Reno's.

use super::{CcState, CongestionControl, Reno};

/// Reference RTT of the paper and of Linux's `rtt0` module parameter: 25 ms.
const RTT0_NS: f64 = 25_000_000.0;
/// Linux caps the slow-start exponent at 16 so that 2^ρ stays representable.
const MAX_RHO_EXPONENT: f64 = 16.0;

#[derive(Debug, Default)]
pub struct Hybla {
    /// Fractional segments of growth not yet added.
    carry: f64,
}

impl Hybla {
    /// ρ = max(RTT / RTT0, 1), from the smallest RTT seen (as Linux, which uses min SRTT).
    fn rho(s: &CcState) -> f64 {
        let rtt = s.min_rtt.or(s.srtt).unwrap_or(0) as f64;
        (rtt / RTT0_NS).max(1.0)
    }
}

impl CongestionControl for Hybla {
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64 {
        Reno::default().ssthresh_after_loss(s)
    }

    /// Per ACK: slow start adds 2^ρ − 1 segments, congestion avoidance ρ²/cwnd.
    fn on_ack(&mut self, s: &CcState, _acked: u64) -> u64 {
        let rho = Self::rho(s);
        let cwnd = s.cwnd as f64 / s.mss as f64;
        let increment = if s.cwnd < s.ssthresh {
            rho.min(MAX_RHO_EXPONENT).exp2() - 1.0
        } else {
            rho * rho / cwnd
        };
        let mut next = cwnd + increment + self.carry / s.mss as f64;
        if s.cwnd < s.ssthresh {
            // Slow start does not jump past ssthresh.
            next = next.min((s.ssthresh as f64 / s.mss as f64).max(cwnd + 1.0));
        }
        let bytes = next * s.mss as f64;
        self.carry = bytes.fract();
        bytes as u64
    }
}

#[cfg(test)]
mod tests {
    use super::super::state;
    use super::*;

    fn at_rtt(cwnd: u64, ssthresh: u64, rtt_ms: u64) -> CcState {
        CcState {
            min_rtt: Some(rtt_ms * 1_000_000),
            ..state(cwnd, ssthresh, 0)
        }
    }

    #[test]
    fn short_rtt_behaves_like_reno() {
        let mut h = Hybla::default();
        assert_eq!(h.on_ack(&at_rtt(10, 100, 20), 1000), 11_000);
        assert_eq!(h.on_ack(&at_rtt(20, 10, 25), 1000), 20_050);
    }

    #[test]
    fn rho_scales_growth_on_a_geo_path() {
        // RTT 550 ms: ρ = 22. Congestion avoidance adds ρ²/cwnd = 484/100 segments per ACK.
        let mut h = Hybla::default();
        assert_eq!(h.on_ack(&at_rtt(100, 10, 550), 1000), 104_840);
        // RTT 100 ms: ρ = 4, slow start adds 2^4 − 1 = 15 segments per ACK.
        assert_eq!(
            Hybla::default().on_ack(&at_rtt(10, 1000, 100), 1000),
            25_000
        );
    }

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut h = Hybla::default();
        assert_eq!(h.on_ack(&at_rtt(10, 30, 550), 1000), 30_000);
    }
}
