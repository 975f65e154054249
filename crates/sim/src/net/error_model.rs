//! Link error models, applied once per frame as it finishes crossing the link: the frame
//! used the line either way, and the receiver discards it (a failed FCS or CRC).

use crate::engine::RngStream;
use crate::plan::ErrorPlan;

pub struct ErrorProcess {
    model: ErrorPlan,
    /// Gilbert–Elliott: whether the chain is in its bad state.
    bad: bool,
    rng: RngStream,
}

impl ErrorProcess {
    pub fn new(model: ErrorPlan, rng: RngStream) -> Self {
        Self {
            model,
            bad: false,
            rng,
        }
    }

    /// Probability that a frame of `wire_bytes` is hit by at least one of independent bit
    /// errors: 1 − (1 − BER)^bits, computed through ln_1p so tiny BERs keep their precision.
    pub fn frame_error_probability(ber: f64, wire_bytes: u64) -> f64 {
        let bits = (wire_bytes * 8) as f64;
        -(bits * (-ber).ln_1p()).exp_m1()
    }

    /// Decides whether this frame is lost.
    pub fn corrupts(&mut self, wire_bytes: u64) -> bool {
        self.corrupts_under(self.model, wire_bytes)
    }

    /// Decides whether this frame is lost under `model`, the one a schedule puts in force
    /// (net/schedule.rs), drawing from this process's stream.
    pub fn corrupts_under(&mut self, model: ErrorPlan, wire_bytes: u64) -> bool {
        match model {
            ErrorPlan::None => false,
            ErrorPlan::Loss { p } => self.rng.chance(p),
            ErrorPlan::Ber { ber } => {
                let p = Self::frame_error_probability(ber, wire_bytes);
                self.rng.chance(p)
            }
            // Gilbert (1960) / Elliott (1963) two-state chain, stepped once per frame: the
            // frame sees the loss probability of the current state, then the chain moves.
            ErrorPlan::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => {
                let lost = self.rng.chance(if self.bad { loss_bad } else { loss_good });
                let flip = self.rng.chance(if self.bad { p_bg } else { p_gb });
                self.bad ^= flip;
                lost
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(model: ErrorPlan) -> ErrorProcess {
        ErrorProcess::new(model, RngStream::new(42, "test"))
    }

    fn loss_rate(p: &mut ErrorProcess, n: usize, wire: u64) -> f64 {
        (0..n).filter(|_| p.corrupts(wire)).count() as f64 / n as f64
    }

    #[test]
    fn frame_error_probability_follows_the_bit_formula() {
        // 1502 bytes at BER 1e-6: 1 − (1 − 1e-6)^12016 ≈ 0.011944.
        let p = ErrorProcess::frame_error_probability(1e-6, 1502);
        assert!((p - 0.011_944).abs() < 1e-5, "{p}");
        assert_eq!(ErrorProcess::frame_error_probability(0.0, 1502), 0.0);
    }

    #[test]
    fn bernoulli_loss_matches_p() {
        let rate = loss_rate(&mut process(ErrorPlan::Loss { p: 0.01 }), 200_000, 1500);
        assert!((rate - 0.01).abs() < 0.001, "{rate}");
    }

    #[test]
    fn ber_loss_matches_the_frame_error_probability() {
        let mut p = process(ErrorPlan::Ber { ber: 1e-5 });
        let rate = loss_rate(&mut p, 100_000, 1502);
        let expected = ErrorProcess::frame_error_probability(1e-5, 1502);
        assert!((rate - expected).abs() < 0.005, "{rate} vs {expected}");
    }

    #[test]
    fn gilbert_elliott_loses_at_its_stationary_rate_and_in_bursts() {
        // π_B = p_gb / (p_gb + p_bg) = 0.01 / 0.11; loss = π_B · 1.0 ≈ 0.0909.
        let model = ErrorPlan::GilbertElliott {
            p_gb: 0.01,
            p_bg: 0.1,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut p = process(model);
        let draws: Vec<bool> = (0..400_000).map(|_| p.corrupts(1500)).collect();
        let rate = draws.iter().filter(|&&l| l).count() as f64 / draws.len() as f64;
        assert!((rate - 0.0909).abs() < 0.005, "{rate}");
        // Mean burst length is 1 / p_bg = 10 frames.
        let bursts = draws.windows(2).filter(|w| w[1] && !w[0]).count() as f64;
        let mean_burst = draws.iter().filter(|&&l| l).count() as f64 / bursts;
        assert!((mean_burst - 10.0).abs() < 0.7, "{mean_burst}");
    }
}
