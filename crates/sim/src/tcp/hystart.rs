//! HyStart++, RFC 9406: leave slow start when the round trip's minimum RTT grows, through a
//! few rounds of Conservative Slow Start (CSS) that a spurious rise can undo.

use crate::engine::Nanos;

/// RFC 9406 §4.3 constants.
const MIN_RTT_THRESH_NS: Nanos = 4_000_000; /* 4 ms */
const MAX_RTT_THRESH_NS: Nanos = 16_000_000; /* 16 ms */
const MIN_RTT_DIVISOR: u64 = 8;
const N_RTT_SAMPLE: u32 = 8;
/// CSS grows cwnd at a quarter of slow start's rate.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    SlowStart,
    /// Conservative Slow Start, with the round's minimum RTT it began at.
    Css {
        baseline_min_rtt: Nanos,
        rounds: u32,
    },
    /// Slow start is over: the caller sets ssthresh = cwnd (RFC 9406 §4.2).
    Done,
}

#[derive(Debug, Clone)]
pub struct HyStartPlusPlus {
    phase: Phase,
    /// The round ends when this byte is acknowledged (SND.NXT when it began).
    window_end: Option<u64>,
    last_round_min_rtt: Option<Nanos>,
    current_round_min_rtt: Option<Nanos>,
    rtt_samples: u32,
}

impl Default for HyStartPlusPlus {
    fn default() -> Self {
        Self {
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_samples: 0,
        }
    }
}

impl HyStartPlusPlus {
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// An ACK in slow start acknowledging up to `ack`, with an RTT sample if it gave one;
    /// `snd_nxt` starts the next round when this one ends. Returns the phase afterwards.
    pub fn on_ack(&mut self, ack: u64, snd_nxt: u64, rtt: Option<Nanos>) -> Phase {
        if self.window_end.is_none_or(|end| ack >= end) {
            self.end_round(snd_nxt);
        }
        if let Some(rtt) = rtt {
            self.current_round_min_rtt =
                Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_samples += 1;
        }
        if self.phase == Phase::SlowStart && self.rtt_samples >= N_RTT_SAMPLE {
            if let (Some(current), Some(last)) =
                (self.current_round_min_rtt, self.last_round_min_rtt)
            {
                // §4.2: a delay increase of at least RttThresh means a queue is building.
                let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_NS, MAX_RTT_THRESH_NS);
                if current >= last + thresh {
                    self.phase = Phase::Css {
                        baseline_min_rtt: current,
                        rounds: 0,
                    };
                }
            }
        }
        self.phase
    }

    fn end_round(&mut self, snd_nxt: u64) {
        if let Phase::Css {
            baseline_min_rtt,
            rounds,
        } = self.phase
        {
            if self
                .current_round_min_rtt
                .is_some_and(|m| m < baseline_min_rtt)
                && self.rtt_samples >= N_RTT_SAMPLE
            {
                // §4.2: the RTT fell back below the baseline: the rise was spurious.
                self.phase = Phase::SlowStart;
            } else if rounds + 1 >= CSS_ROUNDS {
                self.phase = Phase::Done;
            } else {
                self.phase = Phase::Css {
                    baseline_min_rtt,
                    rounds: rounds + 1,
                };
            }
        }
        self.window_end = Some(snd_nxt);
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = None;
        self.rtt_samples = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// Feeds one round of `n` ACKs with RTT `rtt_ms`; the round covers `n` kB, and the
    /// data sent meanwhile ends where the next round's first ACK will point.
    fn round(h: &mut HyStartPlusPlus, start: u64, n: u64, rtt_ms: u64) -> (u64, Phase) {
        let mut phase = h.phase();
        for i in 1..=n {
            phase = h.on_ack(start + i * 1000, start + (n + 1) * 1000, Some(rtt_ms * MS));
        }
        (start + n * 1000, phase)
    }

    #[test]
    fn a_flat_rtt_keeps_slow_start() {
        let mut h = HyStartPlusPlus::default();
        let mut at = 0;
        for _ in 0..10 {
            let (next, phase) = round(&mut h, at, 16, 100);
            assert_eq!(phase, Phase::SlowStart);
            at = next;
        }
    }

    #[test]
    fn a_delay_rise_of_the_threshold_enters_css_then_ends_slow_start() {
        // Base 100 ms: RttThresh = clamp(100/8, 4, 16) = 12.5 ms.
        let mut h = HyStartPlusPlus::default();
        let (at, _) = round(&mut h, 0, 16, 100);
        let (at, _) = round(&mut h, at, 16, 100);
        let (mut at, phase) = round(&mut h, at, 16, 113);
        assert!(matches!(phase, Phase::Css { .. }));
        for _ in 0..CSS_ROUNDS {
            let (next, _) = round(&mut h, at, 16, 113);
            at = next;
        }
        assert_eq!(h.on_ack(at + 1000, at + 2000, Some(113 * MS)), Phase::Done);
    }

    #[test]
    fn a_rise_below_the_threshold_does_not_count() {
        let mut h = HyStartPlusPlus::default();
        let (at, _) = round(&mut h, 0, 16, 100);
        let (_, phase) = round(&mut h, at, 16, 112);
        assert_eq!(phase, Phase::SlowStart);
    }

    #[test]
    fn css_returns_to_slow_start_when_the_rtt_falls_back() {
        let mut h = HyStartPlusPlus::default();
        let (at, _) = round(&mut h, 0, 16, 100);
        let (at, phase) = round(&mut h, at, 16, 120);
        assert!(matches!(phase, Phase::Css { .. }));
        let (at, _) = round(&mut h, at, 16, 100);
        let (_, phase) = round(&mut h, at, 16, 100);
        assert_eq!(phase, Phase::SlowStart);
    }
}
