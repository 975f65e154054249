//! BBR version 1 as Linux runs it (net/ipv4/tcp_bbr.c in Linux 6.x): a model of the path
//! (the windowed-max delivery rate and the windowed-min RTT) sets the pacing rate and
//! cwnd (N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh, V. Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016;
//! draft-cardwell-iccrg-bbr-congestion-control-00). On top of the draft, Linux's:
//! - cwnd set on every ACK by the algorithm alone (`cong_control`): packet conservation in
//!   the first round of recovery, then slow start toward the target, minus what each ACK
//!   marked lost (`bbr_set_cwnd_to_recover_or_restore`), the cwnd from before recovery
//!   restored when it ends;
//! - the target's quantization budget (three TSO bursts, an even number of segments, two
//!   more in the probing phase) and the ACK-aggregation allowance (`bbr_extra_acked`);
//! - long-term bandwidth sampling, which takes a policer's rate when two loss-heavy
//!   intervals deliver the same (`bbr_lt_bw_sampling`);
//! - ProbeBW entered at a random phase of the gain cycle, any but the draining one
//!   (`bbr_reset_probe_bw_mode`), drawn from the connection's own seeded stream, so that
//!   flows sharing a path do not probe in lockstep;
//! - gain-cycling phases ended on what will be in the network at the next departure time
//!   (`bbr_packets_in_net_at_edt`), and an RTO treated as the end of a round
//!   (`bbr_set_state`).
//!
//! Windows and rates are in bytes; Linux counts segments, so every rounding to whole
//! segments is kept. Left out: the delayed-ACK exception of the min-RTT filter and
//! marking samples app-limited during ProbeRTT.

use std::collections::VecDeque;

use super::{CaState, CcState, CongestionControl, RateSample};
use crate::engine::{Nanos, RngStream, NS_PER_S};
use crate::tcp::sender::tso::{GSO_MAX_SIZE, PACING_SHIFT};

/// Linux's gains are fixed point with 8 fractional bits (BBR_SCALE).
const UNIT: f64 = 256.0;
/// 2/ln 2, the smallest gain that doubles the sending rate each round in Startup:
/// `BBR_UNIT * 2885 / 1000 + 1`.
const HIGH_GAIN: f64 = 739.0 / UNIT;
/// `BBR_UNIT * 1000 / 2885`: drains Startup's queue in one round.
const DRAIN_GAIN: f64 = 88.0 / UNIT;
/// ProbeBW's cwnd gain: room for two BDPs in flight.
const CWND_GAIN: f64 = 2.0;
/// ProbeBW's pacing-gain cycle, one phase per min RTT.
const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// `bbr_cycle_rand`: ProbeBW starts at one of this many phases, all but the draining one.
const CYCLE_RAND: usize = 7;
/// The bandwidth filter's window, in round trips (`bbr_bw_rtts` = CYCLE_LEN + 2).
const BW_WINDOW_ROUNDS: u64 = 10;
/// The min-RTT filter's window (`bbr_min_rtt_win_sec`).
const MIN_RTT_WINDOW_NS: Nanos = 10 * NS_PER_S;
/// Time spent at the minimal cwnd in ProbeRTT (`bbr_probe_rtt_mode_ms`).
const PROBE_RTT_DURATION_NS: Nanos = 200_000_000;
/// Smallest cwnd, in segments (`bbr_cwnd_min_target`).
const MIN_CWND_SEGMENTS: u64 = 4;
/// cwnd before the first RTT sample, in segments (TCP_INIT_CWND).
const INIT_CWND_SEGMENTS: u64 = 10;
/// Startup ends when the bandwidth grew less than 25 % in three rounds.
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
/// Linux paces 1 % below the estimate (`bbr_pacing_margin_percent`).
const PACING_MARGIN: f64 = 0.99;
/// Below this pacing rate (1.2 Mbit/s, `bbr_min_tso_rate`, in bytes/s) a TSO burst is
/// one segment, else at least two.
const MIN_TSO_RATE: f64 = 150_000.0;
/// A TSO burst holds about 1 ms of data at the pacing rate (`sk_pacing_shift`), at
/// most GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER bytes and 127 segments.
const MAX_BURST_BYTES: u64 = GSO_MAX_SIZE - 1 - 320;
const MAX_BURST_SEGMENTS: u64 = 127;
/// Long-term sampling (`bbr_lt_*`): intervals of 4 to 16 rounds; one is lossy when at
/// least 50/256 of what it delivered was lost; two lossy intervals are consistent when
/// their rates differ by at most 1/8 or 4 kbit/s; the long-term rate is then used for 48
/// rounds.
const LT_INTERVAL_MIN_ROUNDS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
const LT_BW_DIFF: f64 = 4000.0 / 8.0;
const LT_BW_MAX_ROUNDS: u32 = 48;
/// ACK aggregation: the extra data ACKed beyond the estimated rate, a max over windows of
/// five rounds, capped at 100 ms of data at that rate; an epoch restarts after 2^20
/// segments.
const EXTRA_ACKED_WINDOW_ROUNDS: u32 = 5;
const EXTRA_ACKED_MAX_NS: Nanos = 100_000_000;
const ACK_EPOCH_RESET_SEGMENTS: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Debug)]
pub struct Bbr {
    /// The connection's stream for the first phase of each ProbeBW.
    rng: RngStream,
    mode: Mode,
    /// The largest delivery rate (bytes/s) of each of the last BW_WINDOW_ROUNDS rounds.
    bw_samples: VecDeque<(u64, f64)>,
    /// The windowed-min RTT and when it was taken; from the connection's min RTT at the
    /// first ACK (Linux reads `tcp_min_rtt` at init).
    min_rtt: Option<Nanos>,
    min_rtt_stamp: Nanos,
    started: bool,
    round: u64,
    next_round_delivered: u64,
    round_start: bool,
    full_bw: f64,
    full_bw_rounds: u32,
    full_bw_reached: bool,
    cycle_index: usize,
    cycle_stamp: Nanos,
    probe_rtt_done: Option<Nanos>,
    probe_rtt_round_done: bool,
    /// Sending resumed after an application-limited idle spell, and no data has been
    /// acknowledged since (Linux `idle_restart`).
    idle_restart: bool,
    /// cwnd to restart from once ProbeRTT ends (Linux sets `snd_cwnd` there).
    restored_cwnd: Option<u64>,
    /// ssthresh for the sender once Startup ends (Linux sets `snd_ssthresh` there).
    drain_ssthresh: Option<u64>,
    prior_cwnd: u64,
    prev_ca_state: CaState,
    packet_conservation: bool,
    pacing_rate: Option<f64>,
    lt: LongTerm,
    aggregation: AckAggregation,
}

/// Long-term ("LT") bandwidth sampling state (bytes, bytes/s).
#[derive(Debug, Default)]
struct LongTerm {
    is_sampling: bool,
    use_bw: bool,
    bw: f64,
    rounds: u32,
    last_stamp: Nanos,
    last_delivered: u64,
    last_lost: u64,
}

#[derive(Debug, Default)]
struct AckAggregation {
    epoch_stamp: Nanos,
    epoch_acked: u64,
    window_rounds: u32,
    window: usize,
    extra_acked: [u64; 2],
}

impl Bbr {
    /// A connection's BBR, drawing its random choices from `rng`.
    pub fn new(rng: RngStream) -> Self {
        Self {
            rng,
            mode: Default::default(),
            bw_samples: Default::default(),
            min_rtt: Default::default(),
            min_rtt_stamp: Default::default(),
            started: Default::default(),
            round: Default::default(),
            next_round_delivered: Default::default(),
            round_start: Default::default(),
            full_bw: Default::default(),
            full_bw_rounds: Default::default(),
            full_bw_reached: Default::default(),
            cycle_index: Default::default(),
            cycle_stamp: Default::default(),
            probe_rtt_done: Default::default(),
            probe_rtt_round_done: Default::default(),
            idle_restart: Default::default(),
            restored_cwnd: Default::default(),
            drain_ssthresh: Default::default(),
            prior_cwnd: Default::default(),
            prev_ca_state: Default::default(),
            packet_conservation: Default::default(),
            pacing_rate: Default::default(),
            lt: Default::default(),
            aggregation: Default::default(),
        }
    }

    fn max_bw(&self) -> f64 {
        self.bw_samples
            .iter()
            .map(|&(_, bw)| bw)
            .fold(0.0, f64::max)
    }

    /// The rate the model runs on: the long-term rate while a policer is assumed.
    fn bw(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw()
        }
    }

    fn pacing_gain(&self) -> f64 {
        match self.mode {
            Mode::Startup => HIGH_GAIN,
            Mode::Drain => DRAIN_GAIN,
            Mode::ProbeBw if self.lt.use_bw => 1.0,
            Mode::ProbeBw => PACING_GAIN_CYCLE[self.cycle_index],
            Mode::ProbeRtt => 1.0,
        }
    }

    fn cwnd_gain(&self) -> f64 {
        match self.mode {
            Mode::Startup | Mode::Drain => HIGH_GAIN,
            Mode::ProbeBw => CWND_GAIN,
            Mode::ProbeRtt => 1.0,
        }
    }

    /// Segments of one TSO burst at the current pacing rate (`bbr_tso_segs_goal`).
    fn burst_segments(&self, mss: u64) -> u64 {
        let rate = self.pacing_rate.unwrap_or(0.0);
        let bytes = ((rate as u64) >> PACING_SHIFT).min(MAX_BURST_BYTES);
        let least = if rate < MIN_TSO_RATE { 1 } else { 2 };
        (bytes / mss).max(least).min(MAX_BURST_SEGMENTS)
    }

    /// `gain` bandwidth-delay products, rounded up to whole segments (`bbr_bdp`); the
    /// initial window before any RTT sample.
    fn bdp(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        let Some(min_rtt) = self.min_rtt else {
            return INIT_CWND_SEGMENTS * mss;
        };
        let bytes = bw * min_rtt as f64 / NS_PER_S as f64 * gain;
        (bytes / mss as f64).ceil() as u64 * mss
    }

    /// Room for three TSO bursts in flight, an even number of segments (fewer delayed
    /// ACKs), and two more in the probing phase so that small BDPs still probe
    /// (`bbr_quantization_budget`).
    fn quantization_budget(&self, cwnd: u64, mss: u64) -> u64 {
        let segments = (cwnd.div_ceil(mss) + 3 * self.burst_segments(mss) + 1) & !1;
        let probing = self.mode == Mode::ProbeBw && self.cycle_index == 0;
        (segments + if probing { 2 } else { 0 }) * mss
    }

    /// `bbr_inflight`: the in-flight target for `gain`.
    fn inflight(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain, mss), mss)
    }

    /// What will still be in the network when the next segment departs under pacing
    /// (`bbr_packets_in_net_at_edt`).
    fn in_net_at_departure(&self, s: &CcState, inflight_now: u64) -> u64 {
        let wait = s.next_send_at.saturating_sub(s.now);
        let delivered = (self.bw() * wait as f64 / NS_PER_S as f64) as u64;
        let mut at_departure = inflight_now;
        if self.pacing_gain() > 1.0 {
            at_departure += self.burst_segments(s.mss) * s.mss;
        }
        at_departure.saturating_sub(delivered)
    }

    fn update_model(&mut self, s: &CcState, rs: &RateSample) {
        self.update_bw(s, rs);
        self.update_ack_aggregation(s, rs);
        self.update_cycle_phase(s, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(s);
        self.update_min_rtt(s, rs);
    }

    fn update_bw(&mut self, s: &CcState, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_ns == 0 {
            return; // not a valid observation
        }
        // Round trips are counted in delivered data.
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = s.delivered;
            self.round += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(s, rs);
        let bw = rs.rate();
        // An application-limited sample counts only if it shows at least the model's rate.
        if !rs.app_limited || bw >= self.max_bw() {
            match self.bw_samples.back_mut() {
                Some((round, max)) if *round == self.round => *max = max.max(bw),
                _ => self.bw_samples.push_back((self.round, bw)),
            }
        }
        while self
            .bw_samples
            .front()
            .is_some_and(|&(r, _)| r + BW_WINDOW_ROUNDS <= self.round)
        {
            self.bw_samples.pop_front();
        }
    }

    /// `bbr_lt_bw_sampling`: a token-bucket policer shows as consistent throughput with
    /// heavy loss in two intervals in a row; its rate is then used instead of the max
    /// filter's, for LT_BW_MAX_ROUNDS rounds.
    fn lt_bw_sampling(&mut self, s: &CcState, rs: &RateSample) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rounds += 1;
                if self.lt.rounds >= LT_BW_MAX_ROUNDS {
                    self.reset_lt_bw_sampling(s);
                    self.reset_probe_bw_mode(s.now);
                }
            }
            return;
        }
        // Sampling starts at the first loss, once the policer's tokens are spent.
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_interval(s);
            self.lt.is_sampling = true;
        }
        if rs.app_limited {
            self.reset_lt_bw_sampling(s);
            return;
        }
        if self.round_start {
            self.lt.rounds += 1;
        }
        if self.lt.rounds < LT_INTERVAL_MIN_ROUNDS {
            return;
        }
        if self.lt.rounds > 4 * LT_INTERVAL_MIN_ROUNDS {
            self.reset_lt_bw_sampling(s);
            return;
        }
        // The interval ends at a loss, when the tokens are exhausted.
        if rs.losses == 0 {
            return;
        }
        let lost = s.lost - self.lt.last_lost;
        let delivered = s.delivered - self.lt.last_delivered;
        if delivered == 0 || lost * (UNIT as u64) < LT_LOSS_THRESH * delivered {
            return;
        }
        let elapsed = s.now.saturating_sub(self.lt.last_stamp);
        if elapsed < 1_000_000 {
            return; // Linux times the interval in whole milliseconds
        }
        let bw = delivered as f64 * NS_PER_S as f64 / elapsed as f64;
        self.lt_interval_done(s, bw);
    }

    fn lt_interval_done(&mut self, s: &CcState, bw: f64) {
        if self.lt.bw > 0.0 {
            let diff = (bw - self.lt.bw).abs();
            if diff <= LT_BW_RATIO * self.lt.bw || diff * PACING_MARGIN <= LT_BW_DIFF {
                self.lt.bw = (bw + self.lt.bw) / 2.0;
                self.lt.use_bw = true;
                self.lt.rounds = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_interval(s);
    }

    fn reset_lt_interval(&mut self, s: &CcState) {
        self.lt.last_stamp = s.now;
        self.lt.last_delivered = s.delivered;
        self.lt.last_lost = s.lost;
        self.lt.rounds = 0;
    }

    fn reset_lt_bw_sampling(&mut self, s: &CcState) {
        self.lt.bw = 0.0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.reset_lt_interval(s);
    }

    /// `bbr_update_ack_aggregation`: how much more was ACKed in an epoch than the
    /// estimated rate delivers in it.
    fn update_ack_aggregation(&mut self, s: &CcState, rs: &RateSample) {
        if rs.acked == 0 || rs.interval_ns == 0 {
            return;
        }
        let bw = self.bw();
        let round_start = self.round_start;
        let a = &mut self.aggregation;
        if round_start {
            a.window_rounds = (a.window_rounds + 1).min(0x1f);
            if a.window_rounds >= EXTRA_ACKED_WINDOW_ROUNDS {
                a.window_rounds = 0;
                a.window = 1 - a.window;
                a.extra_acked[a.window] = 0;
            }
        }
        let epoch = s.now.saturating_sub(a.epoch_stamp);
        let mut expected = (bw * epoch as f64 / NS_PER_S as f64) as u64;
        let limit = ACK_EPOCH_RESET_SEGMENTS * s.mss;
        if a.epoch_acked <= expected || a.epoch_acked + rs.acked >= limit {
            a.epoch_acked = 0;
            a.epoch_stamp = s.now;
            expected = 0;
        }
        a.epoch_acked = (a.epoch_acked + rs.acked).min(limit - s.mss);
        let extra = a.epoch_acked.saturating_sub(expected).min(s.cwnd);
        a.extra_acked[a.window] = a.extra_acked[a.window].max(extra);
    }

    /// cwnd for the data ACKed in bursts, once Startup is over (`bbr_ack_aggregation_cwnd`).
    fn aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let cap = (self.bw() * EXTRA_ACKED_MAX_NS as f64 / NS_PER_S as f64) as u64;
        let extra = self.aggregation.extra_acked;
        extra[0].max(extra[1]).min(cap)
    }

    /// `bbr_is_next_cycle_phase`: a probing phase lasts a min RTT and until gain × BDP is
    /// in flight or a loss shows it will not fit; a draining phase ends early at one BDP.
    fn update_cycle_phase(&mut self, s: &CcState, rs: &RateSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let min_rtt = self.min_rtt.unwrap_or(0);
        let full_length = s.now.saturating_sub(self.cycle_stamp) > min_rtt;
        let gain = self.pacing_gain();
        let next = if gain == 1.0 {
            full_length
        } else {
            let inflight = self.in_net_at_departure(s, rs.prior_in_flight);
            let bw = self.max_bw();
            if gain > 1.0 {
                full_length && (rs.losses > 0 || inflight >= self.inflight(bw, gain, s.mss))
            } else {
                full_length || inflight <= self.inflight(bw, 1.0, s.mss)
            }
        };
        if next {
            self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
            self.cycle_stamp = s.now;
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        let max_bw = self.max_bw();
        if max_bw >= self.full_bw * FULL_BW_GROWTH {
            self.full_bw = max_bw;
            self.full_bw_rounds = 0;
            return;
        }
        self.full_bw_rounds += 1;
        self.full_bw_reached = self.full_bw_rounds >= FULL_BW_ROUNDS;
    }

    fn check_drain(&mut self, s: &CcState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            // bbr_check_drain: ssthresh becomes the estimated BDP, so the connection is
            // out of slow start (tcp_in_slow_start) from here on; BBR never changes it again.
            self.drain_ssthresh = Some(self.inflight(self.max_bw(), 1.0, s.mss));
        }
        if self.mode == Mode::Drain
            && self.in_net_at_departure(s, s.flight) <= self.inflight(self.max_bw(), 1.0, s.mss)
        {
            self.reset_probe_bw_mode(s.now); // the queue is estimated drained
        }
    }

    /// Linux `bbr_reset_probe_bw_mode`: the phase before a random one of the last
    /// `CYCLE_RAND` (`CYCLE_LEN - 1 - get_random_u32_below(bbr_cycle_rand)`), then one
    /// step on (`bbr_advance_cycle_phase`): any phase but the draining 0.75, equally likely.
    fn reset_probe_bw_mode(&mut self, now: Nanos) {
        self.mode = Mode::ProbeBw;
        let len = PACING_GAIN_CYCLE.len();
        let draw = ((self.rng.uniform() * CYCLE_RAND as f64) as usize).min(CYCLE_RAND - 1);
        self.cycle_index = (len - draw) % len;
        self.cycle_stamp = now;
    }

    fn update_min_rtt(&mut self, s: &CcState, rs: &RateSample) {
        let expired = s.now > self.min_rtt_stamp + MIN_RTT_WINDOW_NS;
        if let Some(rtt) = rs.rtt_ns {
            if self.min_rtt.is_none_or(|min| rtt <= min) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = s.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(s.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            // At most MIN_CWND_SEGMENTS in flight for 200 ms and a round trip.
            if self.probe_rtt_done.is_none() && s.flight <= MIN_CWND_SEGMENTS * s.mss {
                self.probe_rtt_done = Some(s.now + PROBE_RTT_DURATION_NS);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = s.delivered;
            } else if self.probe_rtt_done.is_some() {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(s);
                }
            }
        }
        // The restart after idle ends with the first sample that delivered data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_check_probe_rtt_done`: ProbeRTT's 200 ms are over; back to the cwnd before it.
    fn check_probe_rtt_done(&mut self, s: &CcState) {
        if self.probe_rtt_done.is_none_or(|done| s.now <= done) {
            return;
        }
        self.min_rtt_stamp = s.now;
        self.restored_cwnd = Some(s.cwnd.max(self.prior_cwnd));
        if self.full_bw_reached {
            self.reset_probe_bw_mode(s.now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_save_cwnd`: the last cwnd known good, kept through recovery and ProbeRTT.
    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_set_pacing_rate`: gain × the model's rate; in Startup it only grows.
    fn update_pacing_rate(&mut self) {
        let rate = self.pacing_gain() * self.bw() * PACING_MARGIN;
        if self.full_bw_reached || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: deduct what this ACK marked lost; conserve
    /// packets in the first round of recovery; restore the cwnd from before recovery when
    /// it ends. Returns the cwnd and whether packet conservation decides it.
    fn recover_or_restore(&mut self, s: &CcState, rs: &RateSample, cwnd: u64) -> (u64, bool) {
        let (prev, state) = (self.prev_ca_state, s.ca_state);
        let mut cwnd = cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(s.mss);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_round_delivered = s.delivered; // the round starts now
            cwnd = s.flight + rs.acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(s.flight + rs.acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: slow start toward the target (or snap down to it once the pipe is
    /// full); at least MIN_CWND_SEGMENTS, at most that in ProbeRTT.
    fn set_cwnd(&mut self, s: &CcState, rs: &RateSample) -> u64 {
        let mut cwnd = self.restored_cwnd.take().unwrap_or(s.cwnd);
        if rs.acked > 0 {
            let (recovering, conserving) = self.recover_or_restore(s, rs, cwnd);
            cwnd = recovering;
            if !conserving {
                let bdp = self.bdp(self.bw(), self.cwnd_gain(), s.mss);
                let target = self.quantization_budget(bdp + self.aggregation_cwnd(), s.mss);
                if self.full_bw_reached {
                    cwnd = (cwnd + rs.acked).min(target);
                } else if cwnd < target || s.delivered < INIT_CWND_SEGMENTS * s.mss {
                    cwnd += rs.acked;
                }
                cwnd = cwnd.max(MIN_CWND_SEGMENTS * s.mss);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(MIN_CWND_SEGMENTS * s.mss);
        }
        cwnd
    }
}

impl CongestionControl for Bbr {
    /// `bbr_ssthresh`: BBR keeps its model through loss and only notes the cwnd to come
    /// back to. The RACK sender leaves cwnd to BBR; for the classic senders, which set
    /// cwnd from ssthresh, ssthresh stays at the current cwnd.
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64 {
        self.save_cwnd(s.cwnd);
        s.cwnd
    }

    fn take_ssthresh(&mut self) -> Option<u64> {
        self.drain_ssthresh.take()
    }

    /// cwnd changes only through `on_rate_sample`, as Linux calls BBR's `cong_control`
    /// instead of `cong_avoid`.
    fn on_ack(&mut self, s: &CcState, _acked: u64) -> u64 {
        s.cwnd
    }

    /// `bbr_set_state(TCP_CA_Loss)`: a timeout ends the round, restarts the search for the
    /// full bandwidth and counts as a loss for long-term sampling.
    fn on_timeout(&mut self, s: &CcState) {
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        let loss = RateSample {
            losses: s.mss,
            ..RateSample::invalid(s.delivered, 0, s.flight)
        };
        self.lt_bw_sampling(s, &loss);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)` when application-limited: a restart from idle.
    /// The ACK-aggregation epoch starts over; in ProbeBW pacing drops to the estimated
    /// rate itself (no need to probe for more when the application is what limits), and a
    /// ProbeRTT whose 200 ms are over ends.
    fn on_transmit_start(&mut self, s: &CcState, _idle: Nanos, app_limited: bool) {
        if !app_limited || !self.started {
            return;
        }
        self.idle_restart = true;
        self.aggregation.epoch_stamp = s.now;
        self.aggregation.epoch_acked = 0;
        match self.mode {
            Mode::ProbeBw => {
                let rate = self.bw() * PACING_MARGIN;
                if self.full_bw_reached || self.pacing_rate.is_none_or(|r| rate > r) {
                    self.pacing_rate = Some(rate);
                }
            }
            Mode::ProbeRtt => self.check_probe_rtt_done(s),
            Mode::Startup | Mode::Drain => {}
        }
    }

    /// `bbr_undo_cwnd`: a spurious slow-down restarts the search for the full bandwidth
    /// and long-term sampling; cwnd stays BBR's own.
    fn undo_cwnd(&mut self, s: &CcState, _prior_cwnd: u64) -> u64 {
        self.full_bw = 0.0;
        self.full_bw_rounds = 0;
        self.reset_lt_bw_sampling(s);
        s.cwnd
    }

    fn on_rate_sample(&mut self, s: &CcState, rs: &RateSample) -> Option<u64> {
        if !self.started {
            // Linux's `bbr_init` at the end of the handshake.
            self.started = true;
            self.min_rtt = s.min_rtt;
            self.min_rtt_stamp = s.now;
            self.aggregation.epoch_stamp = s.now;
            self.reset_lt_interval(s);
            // `bbr_init_pacing_rate_from_rtt`: the initial window over the RTT, at high gain.
            let rtt = s.srtt.filter(|&r| r > 0).unwrap_or(1_000_000) as f64 / NS_PER_S as f64;
            self.pacing_rate = Some(HIGH_GAIN * s.cwnd as f64 / rtt * PACING_MARGIN);
        }
        self.update_model(s, rs);
        self.update_pacing_rate();
        Some(self.set_cwnd(s, rs))
    }

    fn sets_cwnd_itself(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.pacing_rate.map(|r| r as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::state;
    use super::*;

    const MS: Nanos = 1_000_000;
    const MSS: u64 = 1000;

    /// A sender driven by BBR on a path of 1 MB/s and `rtt` ms, one ACK per segment.
    struct Harness {
        bbr: Bbr,
        now: Nanos,
        delivered: u64,
        cwnd: u64,
    }

    const BW: f64 = 1_000_000.0;

    impl Harness {
        fn new() -> Self {
            Self {
                bbr: Bbr::new(RngStream::new(1, "bbr")),
                now: 0,
                delivered: 0,
                cwnd: INIT_CWND_SEGMENTS * MSS,
            }
        }

        fn state(&self, flight: u64) -> CcState {
            CcState {
                now: self.now,
                cwnd: self.cwnd,
                flight,
                delivered: self.delivered,
                next_send_at: self.now,
                ..state(0, u64::MAX, self.now)
            }
        }

        /// One round trip of ACKs at RTT `rtt` ms. In flight is what cwnd and the pacing
        /// rate allow over the round; the path delivers at most BW.
        fn round(&mut self, rtt: u64) {
            let paced = self.bbr.pacing_rate().map_or(u64::MAX, |r| r * rtt / 1000);
            let flight = self.cwnd.min(paced).min((BW * rtt as f64 / 1e3) as u64 * 3);
            let acks = (flight / MSS).max(1);
            let per_ack = MSS.min(flight);
            let round_start_delivered = self.delivered;
            for _ in 0..acks {
                self.now += rtt * MS / acks;
                self.delivered += per_ack;
                let rs = RateSample {
                    prior_delivered: round_start_delivered,
                    delivered: ((BW * rtt as f64 / 1e3) as u64).min(flight),
                    interval_ns: rtt * MS,
                    rtt_ns: Some(rtt * MS),
                    app_limited: false,
                    acked: per_ack,
                    losses: 0,
                    prior_in_flight: flight,
                };
                let s = self.state(flight - per_ack);
                self.cwnd = self.bbr.on_rate_sample(&s, &rs).unwrap();
            }
        }

        fn rounds(&mut self, n: usize, rtt: u64) {
            for _ in 0..n {
                self.round(rtt);
            }
        }
    }

    /// An ACK of one segment without a valid rate sample, that marked `losses` lost.
    fn invalid_sample(delivered: u64, losses: u64, prior_in_flight: u64) -> RateSample {
        RateSample {
            losses,
            ..RateSample::invalid(delivered, MSS, prior_in_flight)
        }
    }

    #[test]
    fn startup_paces_at_high_gain_and_finds_the_bandwidth() {
        let mut h = Harness::new();
        h.rounds(30, 100);
        // 1 MB/s is found; the pipe counts as full after three rounds without 25 % growth.
        assert!((h.bbr.max_bw() - BW).abs() < 1.0);
        assert!(h.bbr.full_bw_reached);
        assert_ne!(h.bbr.mode, Mode::Startup);
    }

    #[test]
    fn leaving_startup_sets_ssthresh_to_the_estimated_bdp_once() {
        // tcp_bbr.c bbr_check_drain: snd_ssthresh = bbr_inflight(max_bw, BBR_UNIT) as the
        // mode turns to Drain; the kernel reports it in tcpi_snd_ssthresh from then on.
        let mut h = Harness::new();
        let mut taken = Vec::new();
        for _ in 0..30 {
            h.round(100);
            taken.extend(h.bbr.take_ssthresh());
        }
        assert!(h.bbr.full_bw_reached);
        // 1 MB/s x 100 ms = 100 segments, and the quantization budget of three bursts of
        // two segments each at Drain's pacing rate (bbr_quantization_budget).
        assert_eq!(h.bbr.bdp(h.bbr.max_bw(), 1.0, MSS), 100 * MSS);
        assert_eq!(taken, vec![106 * MSS]);
    }

    #[test]
    fn startup_cwnd_stops_at_the_high_gain_target() {
        // tcp_bbr.c bbr_set_cwnd: before the pipe is full, cwnd grows only while below
        // high_gain x BDP (plus the quantization budget), however many ACKs arrive.
        let mut bbr = Bbr::new(RngStream::new(1, "bbr"));
        let mut s = state(400, u64::MAX, 0);
        s.min_rtt = Some(100 * MS);
        s.srtt = Some(100 * MS);
        s.delivered = 100 * MSS;
        let rs = RateSample {
            prior_delivered: 0,
            delivered: 100 * MSS,
            interval_ns: 100 * MS,
            rtt_ns: Some(100 * MS),
            app_limited: false,
            acked: MSS,
            losses: 0,
            prior_in_flight: 300 * MSS,
        };
        // Not cut before the pipe is full, however far above the target.
        s.cwnd = 400 * MSS;
        assert_eq!(bbr.on_rate_sample(&s, &rs), Some(400 * MSS));
        // 1 MB/s x 100 ms = 100 segments; 739/256 of it is 289 (rounded up); the budget
        // adds three bursts (11 segments each at the initial pacing rate, high gain x 400
        // segments per 100 ms: 11.4 MB/s) and rounds to even: 322. Below it, cwnd grows by
        // what each ACK acknowledges.
        assert_eq!(bbr.burst_segments(MSS), 11);
        assert_eq!(bbr.inflight(BW, HIGH_GAIN, MSS), 322 * MSS);
        s.cwnd = 300 * MSS;
        assert_eq!(bbr.on_rate_sample(&s, &rs), Some(301 * MSS));
        s.cwnd = 322 * MSS;
        assert_eq!(bbr.on_rate_sample(&s, &rs), Some(322 * MSS));
    }

    #[test]
    fn probe_bw_cwnd_is_two_bdp_plus_the_quantization_budget() {
        let mut h = Harness::new();
        h.rounds(60, 100);
        assert_eq!(h.bbr.mode, Mode::ProbeBw);
        // BDP = 1 MB/s x 100 ms = 100 segments; two of them plus 3 bursts of 2 (about
        // 1 ms of data at ~1 MB/s is less than a segment; the floor is two), and two more
        // in the probing phase.
        let probing = if h.bbr.cycle_index == 0 { 2 } else { 0 };
        let target = h.bbr.inflight(BW, CWND_GAIN, MSS);
        assert_eq!(target, (206 + probing) * MSS);
        assert!(h.cwnd <= target + h.bbr.aggregation_cwnd());
        let rate = h.bbr.pacing_rate().unwrap() as f64;
        let gain = h.bbr.pacing_gain();
        assert!((rate - gain * 990_000.0).abs() < 1.0, "{rate}");
    }

    #[test]
    fn a_restart_from_idle_paces_probe_bw_at_the_estimated_rate() {
        // Linux bbr_cwnd_event(CA_EVENT_TX_START) when app-limited: gain 1 in ProbeBW,
        // whatever the cycle's phase; not when the sender has more to send.
        let mut h = Harness::new();
        h.rounds(30, 100);
        h.bbr.cycle_index = 0;
        h.bbr.update_pacing_rate();
        let probing = h.bbr.pacing_rate().unwrap();
        h.bbr.on_transmit_start(&h.state(0), 500 * MS, false);
        assert_eq!(h.bbr.pacing_rate(), Some(probing));
        h.bbr.on_transmit_start(&h.state(0), 500 * MS, true);
        let restart = h.bbr.pacing_rate().unwrap() as f64;
        assert!((restart - 990_000.0).abs() < 1.0, "{restart}");
        assert!(h.bbr.idle_restart);
    }

    #[test]
    fn no_probe_rtt_on_restart_from_idle_until_data_is_acknowledged() {
        // Linux bbr_update_min_rtt: an expired min RTT waits while idle_restart is set,
        // which the first sample that delivered data clears.
        for restart in [false, true] {
            let mut h = Harness::new();
            h.rounds(30, 100);
            h.bbr.on_transmit_start(&h.state(0), 500 * MS, restart);
            h.now += 11_000 * MS;
            let nothing = RateSample::invalid(h.delivered, 0, 0);
            h.bbr.on_rate_sample(&h.state(0), &nothing);
            assert_eq!(h.bbr.mode == Mode::ProbeRtt, !restart);
            assert_eq!(h.bbr.idle_restart, restart);
            h.round(100);
            assert!(!h.bbr.idle_restart);
        }
    }

    #[test]
    fn probe_rtt_after_ten_seconds_without_a_lower_rtt() {
        // The path's RTT rises from 100 to 120 ms: the 100 ms sample expires after 10 s.
        let mut h = Harness::new();
        h.rounds(20, 100);
        for _ in 0..180 {
            h.round(120);
            if h.bbr.mode == Mode::ProbeRtt {
                assert!(h.now > MIN_RTT_WINDOW_NS);
                assert_eq!(h.cwnd, MIN_CWND_SEGMENTS * MSS);
                return;
            }
        }
        panic!("BBR never entered ProbeRTT");
    }

    #[test]
    fn recovery_conserves_packets_then_restores_the_cwnd() {
        // bbr_set_cwnd_to_recover_or_restore: the first ACK in Recovery sets cwnd to what
        // is in flight plus what it ACKed, minus nothing more; leaving Recovery restores
        // the cwnd saved when it began.
        let mut h = Harness::new();
        h.rounds(40, 100);
        let before = h.cwnd;
        h.bbr.ssthresh_after_loss(&h.state(before));
        let mut s = h.state(50 * MSS);
        s.ca_state = CaState::Recovery;
        let rs = invalid_sample(h.delivered, 3 * MSS, 54 * MSS);
        assert_eq!(h.bbr.on_rate_sample(&s, &rs), Some(51 * MSS));
        // Leaving recovery: back to the saved cwnd, as far as the target allows.
        s.ca_state = CaState::Open;
        s.cwnd = 51 * MSS;
        let open = RateSample { losses: 0, ..rs };
        let bdp = h.bbr.bdp(h.bbr.bw(), h.bbr.cwnd_gain(), MSS);
        let target = h
            .bbr
            .quantization_budget(bdp + h.bbr.aggregation_cwnd(), MSS);
        assert_eq!(
            h.bbr.on_rate_sample(&s, &open),
            Some((before + MSS).min(target))
        );
        assert!(before > 51 * MSS);
    }

    #[test]
    fn losses_are_deducted_from_cwnd() {
        // tcp_bbr.c: "An ACK for P pkts should release at most 2*P packets": the ACK's
        // newly lost segments come off cwnd before it grows by what was ACKed.
        let mut h = Harness::new();
        h.rounds(40, 100);
        let cwnd = h.cwnd;
        let mut s = h.state(cwnd);
        s.ca_state = CaState::Disorder;
        let rs = invalid_sample(h.delivered, 5 * MSS, cwnd);
        assert_eq!(h.bbr.on_rate_sample(&s, &rs), Some(cwnd - 4 * MSS));
    }

    #[test]
    fn a_policer_is_detected_from_two_lossy_intervals() {
        // bbr_lt_bw_sampling: two intervals of at least four rounds each losing over 20 %
        // at the same delivery rate make that rate the model's.
        let mut bbr = Bbr::new(RngStream::new(1, "bbr"));
        let mut s = state(100, u64::MAX, 0);
        s.min_rtt = Some(100 * MS);
        let mut rs = RateSample {
            prior_delivered: 0,
            delivered: 50 * MSS,
            interval_ns: 100 * MS,
            rtt_ns: Some(100 * MS),
            app_limited: false,
            acked: MSS,
            losses: MSS,
            prior_in_flight: 100 * MSS,
        };
        for round in 1..=12u64 {
            // 50 segments delivered and 20 lost per 100 ms round: 500 kB/s.
            s.now = round * 100 * MS;
            s.delivered = round * 50 * MSS;
            s.lost = round * 20 * MSS;
            rs.prior_delivered = s.delivered;
            bbr.on_rate_sample(&s, &rs);
        }
        assert!(bbr.lt.use_bw);
        assert!((bbr.lt.bw - 500_000.0).abs() < 1.0, "{}", bbr.lt.bw);
    }

    #[test]
    fn probe_bw_starts_at_a_random_phase_but_never_the_draining_one() {
        // tcp_bbr.c bbr_reset_probe_bw_mode: cycle_idx = CYCLE_LEN - 1 -
        // get_random_u32_below(bbr_cycle_rand), then bbr_advance_cycle_phase: the seven
        // phases other than 1 (gain 0.75), equally likely.
        let mut bbr = Bbr::new(RngStream::new(1, "flows.0.0.client.cc"));
        let mut counts = [0u32; 8];
        for _ in 0..7_000 {
            bbr.reset_probe_bw_mode(0);
            counts[bbr.cycle_index] += 1;
        }
        assert_eq!(counts[1], 0);
        for (phase, &n) in counts.iter().enumerate().filter(|&(p, _)| p != 1) {
            assert!((850..1150).contains(&n), "phase {phase}: {n}");
        }
        // Two connections draw from their own streams: not in lockstep.
        let first = |name: &str| {
            let mut b = Bbr::new(RngStream::new(1, name));
            (0..8)
                .map(|_| {
                    b.reset_probe_bw_mode(0);
                    b.cycle_index
                })
                .collect::<Vec<_>>()
        };
        assert_ne!(first("flows.0.0.client.cc"), first("flows.1.0.client.cc"));
    }

    #[test]
    fn ack_aggregation_adds_the_excess_acked_to_the_target() {
        // bbr_update_ack_aggregation: 20 segments ACKed at once where 1 MB/s explains 10
        // adds 10 to the target once the pipe is full.
        let mut h = Harness::new();
        h.rounds(40, 100);
        assert!(h.bbr.full_bw_reached);
        let base = h.bbr.aggregation_cwnd();
        h.bbr.aggregation.epoch_stamp = h.now;
        h.bbr.aggregation.epoch_acked = 0;
        h.now += 10 * MS;
        let s = h.state(100 * MSS);
        let rs = RateSample {
            prior_delivered: 0,
            delivered: 100 * MSS,
            interval_ns: 100 * MS,
            rtt_ns: Some(100 * MS),
            app_limited: false,
            acked: 20 * MSS,
            losses: 0,
            prior_in_flight: 120 * MSS,
        };
        h.bbr.update_ack_aggregation(&s, &rs);
        assert!(h.bbr.aggregation_cwnd() >= base.max(10 * MSS));
    }
}
