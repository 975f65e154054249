//! Proportional Rate Reduction, RFC 6937, in the form Linux uses (tcp_input.c
//! `tcp_cwnd_reduction`): during recovery each ACK lets out data in proportion to what it
//! reports delivered, so that the flight falls smoothly to ssthresh instead of stopping
//! for half a round trip (Reno) or bursting (RFC 6675), and once the flight is below
//! ssthresh it grows back by at most one segment more than was delivered (PRR-SSRB).
//! Counted in segments, as Linux counts.

#[derive(Debug, Default, Clone, Copy)]
pub struct Prr {
    /// RecoverFS: cwnd when the reduction began.
    prior_cwnd: u64,
    /// prr_delivered and prr_out (RFC 6937 §3).
    delivered: u64,
    out: u64,
}

impl Prr {
    /// RFC 6937 §3 initialisation at the start of recovery (Linux
    /// `tcp_init_cwnd_reduction`).
    pub fn start(cwnd: u64) -> Self {
        Self {
            prior_cwnd: cwnd.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// Segments sent while the reduction lasts.
    pub fn on_sent(&mut self, segments: u64) {
        self.out += segments;
    }

    /// The new cwnd, in segments, on an ACK that reports `delivered` segments newly
    /// delivered, with `in_flight` segments in the network and `ssthresh` the target;
    /// `una_advanced` with `newly_lost == 0` allows PRR-SSRB's extra segment. None when the
    /// ACK delivered nothing (Linux leaves cwnd alone then).
    pub fn cwnd(
        &mut self,
        delivered: u64,
        in_flight: u64,
        ssthresh: u64,
        una_advanced: bool,
        newly_lost: u64,
    ) -> Option<u64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let sndcnt = if in_flight > ssthresh {
            // Proportional part: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out.
            (self.delivered * ssthresh)
                .div_ceil(self.prior_cwnd)
                .saturating_sub(self.out)
        } else {
            // Slow-start reduction bound: catch up with what was delivered, plus one.
            let bonus = u64::from(una_advanced && newly_lost == 0);
            (self.delivered.saturating_sub(self.out).max(delivered) + bonus)
                .min(ssthresh - in_flight)
        };
        // The first ACK of recovery always lets the fast retransmit out.
        let sndcnt = sndcnt.max(u64::from(self.out == 0));
        Some(in_flight + sndcnt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flight_above_ssthresh_sends_in_proportion_to_deliveries() {
        // RFC 6937 §3 with RecoverFS = 20, ssthresh = 14: 0.7 segments per delivery.
        let mut prr = Prr::start(20);
        // First ACK: one delivered, the fast retransmit goes out whatever the proportion.
        assert_eq!(prr.cwnd(1, 19, 14, false, 1), Some(20));
        prr.on_sent(1);
        // After 10 deliveries ceil(10 · 14 / 20) = 7 may have been sent.
        let mut cwnd = 0;
        for _ in 0..9 {
            cwnd = prr.cwnd(1, 16, 14, false, 0).unwrap();
        }
        assert_eq!(cwnd, 16 + 7 - 1);
    }

    #[test]
    fn flight_below_ssthresh_grows_by_at_most_one_more_than_delivered() {
        // PRR-SSRB (RFC 6937 §3): sndcnt = min(ssthresh − pipe, max(prr_delivered − prr_out,
        // delivered) + 1) when the cumulative ACK advanced and nothing new was lost.
        let mut prr = Prr::start(20);
        prr.on_sent(5);
        assert_eq!(prr.cwnd(2, 8, 14, true, 0), Some(8 + 3));
        assert_eq!(prr.cwnd(2, 13, 14, true, 0), Some(14));
        assert_eq!(prr.cwnd(0, 13, 14, true, 0), None);
    }
}
