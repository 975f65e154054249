//! CUBIC, RFC 9438. Windows are kept in segments as floating point, as the RFC writes
//! them; the sender's byte window is derived from them on every update.
//! HyStart++ (RFC 9406) is not modelled: slow start is standard slow start (§4.10).

use super::{slow_start, CcState, CongestionControl};
use crate::engine::NS_PER_S;

/// RFC 9438 §5.1: C = 0.4 segments/s³.
const C: f64 = 0.4;
/// RFC 9438 §4.6: β_cubic = 0.7.
const BETA: f64 = 0.7;
/// RFC 9438 §4.3: α_cubic = 3(1 − β)/(1 + β), so that CUBIC and Reno share bandwidth in
/// the Reno-friendly region.
const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

#[derive(Debug, Default)]
pub struct Cubic {
    /// Window just before the last reduction (segments); None before any congestion event.
    w_max: Option<f64>,
    /// cwnd just before the last reduction (segments), for the Reno-friendly estimate.
    cwnd_prior: f64,
    /// Start of the current congestion-avoidance stage (ns) and K (s) for it.
    epoch: Option<(u64, f64)>,
    /// Reno-friendly window estimate W_est (segments), §4.3.
    w_est: f64,
    /// Fractional bytes of growth not yet added to the byte window.
    carry: f64,
}

impl Cubic {
    /// W_cubic(t) = C·(t − K)³ + W_max, §4.2 eq. (1).
    fn w_cubic(&self, t: f64, k: f64, w_max: f64) -> f64 {
        C * (t - k).powi(3) + w_max
    }

    fn start_epoch(&mut self, s: &CcState) -> (u64, f64) {
        let cwnd = s.cwnd as f64 / s.mss as f64;
        // §4.2 eq. (2); without an earlier congestion event (or after a timeout, §4.8)
        // W_max is the window at the start of the stage, so K = 0.
        let w_max = *self.w_max.get_or_insert(cwnd);
        let k = ((w_max - cwnd).max(0.0) / C).cbrt();
        self.w_est = cwnd;
        self.epoch = Some((s.now, k));
        (s.now, k)
    }
}

impl CongestionControl for Cubic {
    /// §4.6–4.7: ssthresh = cwnd·β; W_max with fast convergence.
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64 {
        let cwnd = s.cwnd as f64 / s.mss as f64;
        self.cwnd_prior = cwnd;
        self.w_max = Some(match self.w_max {
            // Fast convergence: a flow whose W_max keeps shrinking releases bandwidth.
            Some(previous) if cwnd < previous => cwnd * (1.0 + BETA) / 2.0,
            _ => cwnd,
        });
        self.epoch = None;
        ((s.cwnd as f64 * BETA) as u64).max(2 * s.mss)
    }

    fn on_ack(&mut self, s: &CcState, acked: u64) -> u64 {
        if s.cwnd < s.ssthresh {
            return slow_start(s, acked);
        }
        let (start, k) = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(s),
        };
        let w_max = self.w_max.unwrap_or(0.0);
        let mss = s.mss as f64;
        let cwnd = s.cwnd as f64 / mss;
        let segments_acked = acked as f64 / mss;
        let t = s.now.saturating_sub(start) as f64 / NS_PER_S as f64;
        let rtt = s.srtt.unwrap_or(0) as f64 / NS_PER_S as f64;

        // §4.3: the Reno-friendly estimate; α becomes 1 once W_est reaches cwnd_prior.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            ALPHA
        };
        self.w_est += alpha * segments_acked / cwnd;

        let target = if self.w_cubic(t, k, w_max) < self.w_est {
            self.w_est // Reno-friendly region
        } else {
            // §4.4–4.5: aim at W_cubic one RTT ahead, between cwnd and 1.5·cwnd.
            self.w_cubic(t + rtt, k, w_max).clamp(cwnd, 1.5 * cwnd)
        };
        // Per segment acknowledged, (target − cwnd)/cwnd (§4.4); an ACK that covers more
        // than a window (the cumulative ACK after a timeout's go-back-N) stops at the target.
        let grow_segments = ((target - cwnd) / cwnd * segments_acked).min(target - cwnd);
        let grow_bytes = grow_segments.max(0.0) * mss + self.carry;
        self.carry = grow_bytes.fract();
        s.cwnd + grow_bytes as u64
    }

    /// §4.8: after a timeout the next stage starts with K = 0 and W_max = its cwnd.
    fn on_timeout(&mut self, _s: &CcState) {
        self.w_max = None;
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::state;
    use super::*;

    const S: u64 = NS_PER_S;

    #[test]
    fn loss_sets_ssthresh_to_beta_cwnd_and_remembers_w_max() {
        let mut c = Cubic::default();
        assert_eq!(c.ssthresh_after_loss(&state(100, 1000, 0)), 70_000);
        assert_eq!(c.w_max, Some(100.0));
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_it_shrinks() {
        let mut c = Cubic::default();
        c.ssthresh_after_loss(&state(100, 1000, 0));
        c.ssthresh_after_loss(&state(80, 1000, 0));
        assert_eq!(c.w_max, Some(80.0 * 1.7 / 2.0));
    }

    #[test]
    fn k_is_the_time_to_regrow_to_w_max() {
        // After a loss at W_max = 100 segments, cwnd restarts at 70: K = ∛(30 / 0.4) s.
        let mut c = Cubic::default();
        c.ssthresh_after_loss(&state(100, 1000, 0));
        let (_, k) = c.start_epoch(&state(70, 70, 0));
        assert!((k - (30.0f64 / 0.4).cbrt()).abs() < 1e-12);
        assert!((c.w_cubic(k, k, 100.0) - 100.0).abs() < 1e-9);
    }

    /// Drives CUBIC with one ACK per segment for `seconds` of congestion avoidance at a
    /// fixed RTT, the window measured once per RTT.
    fn grow(c: &mut Cubic, mut cwnd: u64, seconds: f64, rtt_ns: u64) -> Vec<(f64, f64)> {
        let mut now = 0;
        let mut out = Vec::new();
        while (now as f64) < seconds * S as f64 {
            let segments = cwnd / 1000;
            for _ in 0..segments {
                let s = CcState {
                    cwnd,
                    ssthresh: 0,
                    srtt: Some(rtt_ns),
                    ..state(0, 0, now)
                };
                cwnd = c.on_ack(&s, 1000);
            }
            now += rtt_ns;
            out.push((now as f64 / S as f64, cwnd as f64 / 1000.0));
        }
        out
    }

    #[test]
    fn window_follows_the_cubic_curve_back_to_w_max() {
        // A long RTT keeps CUBIC out of the Reno-friendly region: W(t) tracks the cubic.
        let mut c = Cubic::default();
        c.ssthresh_after_loss(&state(1000, 10_000, 0));
        let k = (300.0f64 / C).cbrt(); // ≈ 9.09 s
        let rtt = 100_000_000;
        let samples = grow(&mut c, 700_000, 2.0 * k, rtt);
        for &(t, w) in &samples {
            let expected = c.w_cubic(t, k, 1000.0);
            assert!(
                (w - expected).abs() / expected < 0.02,
                "t={t} w={w} W(t)={expected}"
            );
        }
        // Concave below W_max, plateau near K, convex above.
        let at = |x: f64| samples.iter().find(|(t, _)| *t >= x).unwrap().1;
        assert!(at(k) > 990.0 && at(k) < 1010.0);
        assert!(at(2.0 * k - 0.5) > 1200.0);
    }

    #[test]
    fn reno_friendly_region_grows_at_least_like_reno() {
        // Short RTT, small window: W_cubic grows slower than the Reno estimate, so cwnd
        // follows W_est: α = 0.53 segments per RTT while below cwnd_prior.
        let mut c = Cubic::default();
        c.ssthresh_after_loss(&state(20, 10_000, 0));
        let samples = grow(&mut c, 14_000, 0.1, 1_000_000);
        let growth = samples.last().unwrap().1 - 14.0;
        let rtts = samples.len() as f64;
        let per_rtt = growth / rtts;
        assert!(per_rtt > 0.45 && per_rtt < 1.0, "{per_rtt}");
    }

    #[test]
    fn timeout_restarts_with_k_zero() {
        // The sender's order on a timeout: the reduction (which records W_max), then the
        // timeout hook, which must leave the next stage with K = 0 (RFC 9438 §4.8).
        let mut c = Cubic::default();
        c.ssthresh_after_loss(&state(100, 1000, 0));
        let at_timeout = state(80, 1000, 0);
        c.ssthresh_after_loss(&at_timeout);
        c.on_timeout(&at_timeout);
        let (_, k) = c.start_epoch(&state(50, 50, 0));
        assert_eq!(k, 0.0);
        assert_eq!(c.w_max, Some(50.0));
    }

    #[test]
    fn an_ack_of_many_windows_grows_cwnd_no_further_than_the_target() {
        // After a timeout, go-back-N's cumulative ACK can cover the whole buffer the
        // receiver held (here 3000 segments against a cwnd of 2): cwnd stops at the
        // Reno-friendly target instead of growing by the target's step 3000 times.
        let mut c = Cubic::default();
        c.ssthresh_after_loss(&state(100, 1000, 0));
        c.on_timeout(&state(100, 1000, 0));
        let s = CcState {
            ssthresh: 2000,
            ..state(2, 2, S)
        };
        let cwnd = c.on_ack(&s, 3_000_000);
        assert!(cwnd < 2_000_000, "{cwnd}");
    }

    #[test]
    fn slow_start_is_standard_below_ssthresh() {
        let mut c = Cubic::default();
        assert_eq!(c.on_ack(&state(10, 100, 0), 1000), 11_000);
    }
}
