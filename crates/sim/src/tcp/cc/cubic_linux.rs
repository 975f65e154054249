//! CUBIC as Linux's tcp_cubic.c computes it (`bictcp_update`, `cubictcp_recalc_ssthresh`,
//! `tcp_cong_avoid_ai`), in whole segments and kernel ticks, where it departs from RFC 9438
//! (`cubic.rs`):
//!
//! - the curve is followed through a per-ACK counter: cwnd grows by one segment every
//!   `cnt` segments acknowledged, `cnt` recomputed at most once per tick;
//! - time on the curve is measured from the epoch plus the minimum RTT (RFC 9438 aims one
//!   smoothed RTT ahead);
//! - until the first loss (no W_max yet) cwnd grows at least 5 % per round trip
//!   (`cnt` ≤ 20), so CUBIC after HyStart's early exit keeps probing;
//! - never faster than 1.5× per round trip (`cnt` ≥ 2);
//! - the Reno-friendly estimate grows by one segment per 8·cwnd/(3·(1+β)/(1−β)) segments
//!   acknowledged (`beta_scale`).
//!
//! β = 717/1024, C = 41/1024·10 (`bic_scale`), fast convergence and TCP friendliness on: the
//! module parameters of this machine's kernel (`/sys/module/tcp_cubic/parameters`).

use super::linux_growth::LinuxGrowth;
use super::{CcState, CongestionControl};
use crate::engine::Nanos;

const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
const BIC_SCALE: u64 = 41;
/// `cube_rtt_scale`: C · 2^10 per second³ in the kernel's fixed point.
const CUBE_RTT_SCALE: u64 = BIC_SCALE * 10;
/// Time on the curve is kept in 2^-10 s units (`BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;
/// `beta_scale`: 8·(1024 + β)/3/(1024 − β), the Reno-friendly growth factor.
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// The kernel's tick (CONFIG_HZ = 250 on this machine's kernel: /proc/config.gz).
pub const JIFFY_NS: Nanos = 4_000_000; /* 4 ms */
const HZ: u64 = 250;

#[derive(Debug, Default)]
pub struct LinuxCubic {
    cnt: u64,
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: Option<u64>,
    origin_point: u64,
    /// K in 2^-10 s units.
    k: u64,
    /// Epoch start in ticks; None at the start of a congestion-avoidance stage.
    epoch_start: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u64,
    growth: LinuxGrowth,
}

fn jiffies(now: Nanos) -> u64 {
    now / JIFFY_NS
}

impl LinuxCubic {
    /// `bictcp_update` for `cwnd` segments, `acked` segments just acknowledged.
    fn update(&mut self, cwnd: u64, acked: u64, now: Nanos, min_rtt: Nanos) {
        let tick = jiffies(now);
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && self.last_time.is_some_and(|t| tick - t <= HZ / 32) {
            return;
        }
        if self.epoch_start.is_none() || self.last_time != Some(tick) {
            self.last_cwnd = cwnd;
            self.last_time = Some(tick);
            let epoch_start = *self.epoch_start.get_or_insert_with(|| {
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
                    self.k = ((cube_factor * (self.last_max_cwnd - cwnd)) as f64).cbrt() as u64;
                    self.origin_point = self.last_max_cwnd;
                }
                tick
            });
            let t = ((tick - epoch_start + min_rtt.div_ceil(JIFFY_NS)) << BICTCP_HZ) / HZ;
            let offs = t.abs_diff(self.k);
            let delta = (CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
            let target = if t < self.k {
                self.origin_point.saturating_sub(delta)
            } else {
                self.origin_point + delta
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 {
                self.cnt = self.cnt.min(20);
            }
        }
        let delta = (cwnd * FRIENDLY_SCALE) >> 3;
        while delta > 0 && self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
        self.cnt = self.cnt.max(2);
    }
}

impl CongestionControl for LinuxCubic {
    /// `cubictcp_recalc_ssthresh`: W_max with fast convergence, ssthresh = β·cwnd.
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64 {
        let cwnd = s.cwnd / s.mss;
        self.epoch_start = None;
        self.growth.clear();
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd * BETA / BETA_SCALE).max(2) * s.mss
    }

    /// `cubictcp_cong_avoid`: slow start up to ssthresh (`tcp_slow_start` counts every
    /// segment acknowledged), the rest along the curve.
    fn on_ack(&mut self, s: &CcState, acked: u64) -> u64 {
        let (cwnd, acked) = match self.growth.slow_start(s, acked) {
            Ok(rest) => rest,
            Err(cwnd) => return cwnd * s.mss,
        };
        self.update(cwnd, acked, s.now, s.min_rtt.unwrap_or(0));
        self.growth.additive_increase(cwnd, self.cnt, acked) * s.mss
    }

    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`: after an idle (application-limited)
    /// spell the epoch moves on by its length, so that cwnd resumes on the curve where it
    /// left it instead of jumping to where time has carried the curve.
    fn on_transmit_start(&mut self, s: &CcState, idle: Nanos, _app_limited: bool) {
        if let Some(epoch_start) = self.epoch_start.as_mut() {
            let now = jiffies(s.now);
            let delta = now - jiffies(s.now - idle);
            *epoch_start = (*epoch_start + delta).min(now);
        }
    }

    /// `cubictcp_state(TCP_CA_Loss)` → `bictcp_reset`: a timeout forgets W_max and the
    /// epoch, so the next stage starts with K = 0.
    fn on_timeout(&mut self, _s: &CcState) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::super::state;
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn loss_sets_ssthresh_to_717_1024_of_cwnd_and_remembers_w_max() {
        let mut c = LinuxCubic::default();
        assert_eq!(c.ssthresh_after_loss(&state(100, 1000, 0)), 70_000);
        assert_eq!(c.last_max_cwnd, 100);
        // Fast convergence: a smaller W_max is lowered further, to (1 + β)/2 of cwnd.
        c.ssthresh_after_loss(&state(80, 1000, 0));
        assert_eq!(c.last_max_cwnd, 80 * 1741 / 2048);
    }

    /// From 100 segments in congestion avoidance, 100 ACKs of one segment each, 1 ms apart
    /// from `start`; the cwnd after them.
    fn ack_one_by_one(c: &mut LinuxCubic, start: Nanos) -> u64 {
        let mut cwnd = 100_000;
        for i in 0..100 {
            let s = CcState {
                cwnd,
                ssthresh: 50_000,
                ..state(0, 0, start + i * MS)
            };
            cwnd = c.on_ack(&s, 1000);
        }
        cwnd
    }

    #[test]
    fn before_any_loss_cwnd_grows_at_least_five_percent_per_round_trip() {
        // No W_max: cnt is capped at 20, so 100 segments acknowledged one by one add 5.
        let mut c = LinuxCubic::default();
        let cwnd = ack_one_by_one(&mut c, 1000 * MS);
        assert!((105_000..=106_000).contains(&cwnd), "{cwnd}");
    }

    #[test]
    fn growth_is_at_most_one_segment_per_two_acknowledged() {
        // Far below W_max the curve asks for more; cnt ≥ 2 caps it at 1.5× per round trip.
        let mut c = LinuxCubic::default();
        c.ssthresh_after_loss(&state(1000, 10_000, 0));
        let cwnd = ack_one_by_one(&mut c, 20_000 * MS);
        assert!(cwnd <= 150_000, "{cwnd}");
    }

    #[test]
    fn an_idle_spell_moves_the_epoch_on_by_its_length() {
        // Linux cubictcp_cwnd_event(CA_EVENT_TX_START): 1 s idle moves the epoch 250
        // ticks on, never past now; without an epoch nothing moves.
        let mut c = LinuxCubic::default();
        c.on_transmit_start(&state(10, 5, 2000 * MS), 1000 * MS, false);
        assert_eq!(c.epoch_start, None);
        c.epoch_start = Some(jiffies(500 * MS));
        c.on_transmit_start(&state(10, 5, 2000 * MS), 1000 * MS, false);
        assert_eq!(c.epoch_start, Some(jiffies(1500 * MS)));
        c.on_transmit_start(&state(10, 5, 2100 * MS), 1000 * MS, false);
        assert_eq!(c.epoch_start, Some(jiffies(2100 * MS)));
    }

    #[test]
    fn a_reduction_clears_the_credit_towards_the_next_segment() {
        // Linux `tcp_init_cwnd_reduction` (and `tcp_enter_loss`) set snd_cwnd_cnt = 0 when
        // they ask for ssthresh: segments acknowledged at the old window count for nothing.
        let mut c = LinuxCubic::default();
        let s = CcState {
            cwnd: 10_000,
            ssthresh: 12_000,
            ..state(0, 0, 0)
        };
        c.on_ack(&s, 5000);
        assert_eq!(c.growth.cwnd_cnt, 3);
        c.ssthresh_after_loss(&state(12, 1000, 0));
        assert_eq!(c.growth.cwnd_cnt, 0);
    }

    #[test]
    fn slow_start_counts_every_segment_up_to_ssthresh_then_follows_the_curve() {
        let mut c = LinuxCubic::default();
        let s = CcState {
            cwnd: 10_000,
            ssthresh: 12_000,
            ..state(0, 0, 0)
        };
        // Five segments acknowledged: two in slow start, three counted towards the curve.
        assert_eq!(c.on_ack(&s, 5000), 12_000);
        assert_eq!(c.growth.cwnd_cnt, 3);
    }
}
