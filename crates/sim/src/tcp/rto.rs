//! Retransmission timeout per RFC 6298, with its minimum applied as RFC 6298 §2.4 says (to
//! the whole RTO) or as Linux applies it (`tcp_set_rto`: to the variance term).

use serde::Deserialize;

use crate::engine::{Nanos, NS_PER_S};

/// Where `min_rto` applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtoForm {
    /// RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)), RFC 6298 §2.2–2.4.
    #[default]
    Rfc6298,
    /// Linux's estimator (`tcp_rtt_estimator`, `tcp_set_rto`): RTO = SRTT + RTTVAR, where
    /// RTTVAR is at least min_rto, jumps at once to the largest 4·mdev of the current
    /// round trip and falls by a quarter of the excess per round trip; an RTT below SRTT
    /// moves mdev with an eighth of the usual gain. The timer never fires sooner than
    /// min_rto after the smoothed RTT.
    Linux,
}

/// RFC 6298 §2.1: RTO before the first RTT sample.
pub const INITIAL_RTO_NS: Nanos = NS_PER_S; /* 1 s */
/// RFC 6298 §2.5: an upper bound of at least 60 s may be placed on RTO.
pub const MAX_RTO_NS: Nanos = 60 * NS_PER_S; /* 60 s */
/// Linux TCP_RTO_MAX (`net.ipv4.tcp_rto_max_ms` = 120000 by default).
pub const LINUX_MAX_RTO_NS: Nanos = 120 * NS_PER_S; /* 120 s */
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
    form: RtoForm,
    min_rtt: Option<Nanos>,
    /// Linux's 4·mdev, its largest value this round trip, and the `snd_nxt` that ends the
    /// round trip (`mdev_us`, `mdev_max_us`, `rtt_seq`).
    mdev4: Nanos,
    mdev4_max: Nanos,
    rtt_seq: u64,
}

impl RtoEstimator {
    pub fn new(min_rto: Nanos, form: RtoForm) -> Self {
        Self {
            srtt: None,
            rttvar: 0,
            rto: INITIAL_RTO_NS,
            min_rto,
            form,
            min_rtt: None,
            mdev4: 0,
            mdev4_max: 0,
            rtt_seq: 0,
        }
    }

    /// Folds in one RTT measurement R taken when the cumulative ACK stood at `snd_una`
    /// with `snd_nxt` sent, and recomputes RTO, which also ends any back-off (Karn: only
    /// unambiguous samples get here).
    pub fn sample(&mut self, r: Nanos, snd_una: u64, snd_nxt: u64) {
        if self.form == RtoForm::Linux {
            self.sample_linux(r, snd_una, snd_nxt);
        } else {
            self.sample_rfc6298(r);
        }
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    /// Linux `tcp_rtt_estimator` and `tcp_set_rto`.
    fn sample_linux(&mut self, r: Nanos, snd_una: u64, snd_nxt: u64) {
        let Some(srtt) = self.srtt else {
            self.srtt = Some(r);
            self.mdev4 = 2 * r;
            self.rttvar = self.mdev4.max(self.min_rto);
            self.mdev4_max = self.rttvar;
            self.rtt_seq = snd_nxt;
            self.rto = (r + self.rttvar).min(self.max_rto());
            return;
        };
        let err = r as i128 - srtt as i128;
        self.srtt = Some((srtt as i128 + err / 8) as Nanos);
        let mut m = err.abs() - (self.mdev4 / 4) as i128;
        if err < 0 && m > 0 {
            // Eifel-like: a falling RTT raises mdev only with gain 1/32.
            m /= 8;
        }
        self.mdev4 = (self.mdev4 as i128 + m).max(0) as Nanos;
        if self.mdev4 > self.mdev4_max {
            self.mdev4_max = self.mdev4;
            self.rttvar = self.rttvar.max(self.mdev4_max);
        }
        if snd_una > self.rtt_seq {
            if self.mdev4_max < self.rttvar {
                self.rttvar -= (self.rttvar - self.mdev4_max) / 4;
            }
            self.rtt_seq = snd_nxt;
            self.mdev4_max = self.min_rto;
        }
        self.rto = (self.srtt.unwrap_or(r) + self.rttvar).min(self.max_rto());
    }

    /// RFC 6298 §2.2–2.3 (α = 1/8, β = 1/4, K = 4).
    fn sample_rfc6298(&mut self, r: Nanos) {
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
        let srtt = self.srtt.unwrap_or(r);
        // §2.4 gives a 1 s floor; the floor is the scenario's `min_rto`.
        self.rto =
            (srtt + CLOCK_GRANULARITY_NS.max(4 * self.rttvar)).clamp(self.min_rto, MAX_RTO_NS);
    }

    /// RFC 6298 §5.5: double the timer after it expires.
    pub fn back_off(&mut self) {
        self.rto = (self.rto * 2).min(self.max_rto());
    }

    /// The RTO's ceiling: RFC 6298 §2.5's 60 s, or Linux's 120 s (`tcp_bound_rto`, the
    /// back-off in `tcp_retransmit_timer`).
    fn max_rto(&self) -> Nanos {
        match self.form {
            RtoForm::Rfc6298 => MAX_RTO_NS,
            RtoForm::Linux => LINUX_MAX_RTO_NS,
        }
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
        assert_eq!(
            RtoEstimator::new(200 * MS, RtoForm::Rfc6298).rto(),
            NS_PER_S
        );
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        // RFC 6298 §2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4·RTTVAR) = 3R.
        let mut e = RtoEstimator::new(0, RtoForm::Rfc6298);
        e.sample(550 * MS, 0, 0);
        assert_eq!(e.srtt(), Some(550 * MS));
        assert_eq!(e.rto(), 1650 * MS);
    }

    #[test]
    fn later_samples_are_smoothed() {
        // §2.3: RTTVAR = 3/4·275 + 1/4·|550 − 450| = 231.25 ms; SRTT = 7/8·550 + 1/8·450.
        let mut e = RtoEstimator::new(0, RtoForm::Rfc6298);
        e.sample(550 * MS, 0, 0);
        e.sample(450 * MS, 0, 0);
        assert_eq!(e.srtt(), Some(537_500_000));
        assert_eq!(e.rto(), 537_500_000 + 925 * MS);
    }

    #[test]
    fn rto_is_floored_at_min_rto() {
        let mut e = RtoEstimator::new(200 * MS, RtoForm::Rfc6298);
        for _ in 0..50 {
            e.sample(MS, 0, 0);
        }
        assert_eq!(e.rto(), 200 * MS);
    }

    #[test]
    fn linux_puts_min_rto_on_the_variance_term() {
        // tcp_set_rto: SRTT + RTTVAR with RTTVAR ≥ 200 ms: 50 + 200 ms for a steady 50 ms
        // path (one sample per round trip), where RFC 6298's floor gives 200 ms.
        let mut linux = RtoEstimator::new(200 * MS, RtoForm::Linux);
        let mut rfc = RtoEstimator::new(200 * MS, RtoForm::Rfc6298);
        for round in 0..50 {
            linux.sample(50 * MS, round, round + 1);
            rfc.sample(50 * MS, round, round + 1);
        }
        assert_eq!(linux.rto(), 250 * MS);
        assert_eq!(rfc.rto(), 200 * MS);
    }

    #[test]
    fn linux_rttvar_jumps_to_a_round_trip_s_largest_deviation_and_decays_slowly() {
        // tcp_rtt_estimator: a 250 ms spike on a 50 ms path lifts RTTVAR from its 200 ms
        // floor to 4·mdev ≈ 250 ms at once (RTO ≈ 81.25 + 250 ms); a steady round after it
        // keeps it there while SRTT falls back.
        let mut e = RtoEstimator::new(200 * MS, RtoForm::Linux);
        for round in 0..20 {
            e.sample(50 * MS, round, round + 1);
        }
        e.sample(300 * MS, 20, 21);
        let after_spike = e.rto();
        assert!((331 * MS..332 * MS).contains(&after_spike), "{after_spike}");
        e.sample(50 * MS, 21, 22);
        let next = e.rto();
        assert!(next < after_spike && next > 300 * MS, "{next}");
    }

    #[test]
    fn back_off_doubles_up_to_sixty_seconds() {
        let mut e = RtoEstimator::new(200 * MS, RtoForm::Rfc6298);
        e.back_off();
        assert_eq!(e.rto(), 2 * NS_PER_S);
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), MAX_RTO_NS);
        // A fresh sample recomputes RTO and so ends the back-off.
        e.sample(100 * MS, 0, 0);
        assert_eq!(e.rto(), 300 * MS);
    }

    #[test]
    fn linux_backs_off_up_to_two_minutes() {
        // Linux TCP_RTO_MAX: 1 s doubled seven times is 128 s, capped at 120.
        let mut e = RtoEstimator::new(200 * MS, RtoForm::Linux);
        for _ in 0..6 {
            e.back_off();
        }
        assert_eq!(e.rto(), 64 * NS_PER_S);
        e.back_off();
        assert_eq!(e.rto(), LINUX_MAX_RTO_NS);
    }

    #[test]
    fn syn_timeout_raises_rto_to_three_seconds_without_a_sample() {
        let mut e = RtoEstimator::new(200 * MS, RtoForm::Rfc6298);
        e.after_syn_timeout();
        assert_eq!(e.rto(), 3 * NS_PER_S);
    }
}
