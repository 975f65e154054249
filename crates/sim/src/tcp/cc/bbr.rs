//! BBR version 1: N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh, V. Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016, and
//! draft-cardwell-iccrg-bbr-congestion-control-00 (2017), as Linux 4.9's tcp_bbr.c runs
//! it: a model of the path (the windowed-max delivery rate and the windowed-min RTT) sets
//! the pacing rate and cwnd; loss does not reduce the model.

use std::collections::VecDeque;

use super::{CcState, CongestionControl, RateSample};
use crate::engine::{Nanos, NS_PER_S};

/// 2/ln 2: the smallest gain that doubles the sending rate each round in Startup (draft §4.3.2.1).
const HIGH_GAIN: f64 = 2.885;
const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// ProbeBW's cwnd gain: room for two BDPs in flight (draft §4.3.3.3).
const CWND_GAIN: f64 = 2.0;
/// ProbeBW's pacing-gain cycle, one phase per min RTT (draft §4.3.3.6).
const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// The bandwidth filter's window, in round trips (draft §4.1.1.4).
const BW_WINDOW_ROUNDS: u64 = 10;
/// The min-RTT filter's window (draft §4.1.2.3): 10 s.
const MIN_RTT_WINDOW_NS: Nanos = 10 * NS_PER_S;
/// Time spent at the minimal cwnd in ProbeRTT (draft §4.3.4.4): 200 ms.
const PROBE_RTT_DURATION_NS: Nanos = 200_000_000;
/// Smallest cwnd, in segments (draft §4.2.3.1).
const MIN_CWND_SEGMENTS: u64 = 4;
/// Startup ends when the bandwidth grew less than 25 % in three rounds (draft §4.3.2.2).
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;
/// Linux paces 1 % below the estimate to drain queues it may have built.
const PACING_MARGIN: f64 = 0.99;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

#[derive(Debug, Default)]
pub struct Bbr {
    mode: Mode,
    /// The largest delivery rate (bytes/s) of each of the last BW_WINDOW_ROUNDS rounds.
    bw_samples: VecDeque<(u64, f64)>,
    min_rtt: Option<(Nanos, Nanos)>,
    round: u64,
    next_round_delivered: u64,
    round_start: bool,
    full_bw: f64,
    full_bw_rounds: u32,
    filled_pipe: bool,
    cycle_index: usize,
    cycle_start: Nanos,
    probe_rtt_done: Option<Nanos>,
    probe_rtt_round_done: bool,
    prior_cwnd: u64,
    packet_conservation: bool,
    was_in_recovery: bool,
    pacing_rate: Option<f64>,
}

impl Bbr {
    fn max_bw(&self) -> f64 {
        self.bw_samples
            .iter()
            .map(|&(_, bw)| bw)
            .fold(0.0, f64::max)
    }

    fn pacing_gain(&self) -> f64 {
        match self.mode {
            Mode::Startup => HIGH_GAIN,
            Mode::Drain => DRAIN_GAIN,
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

    /// The bandwidth-delay product times `gain`, plus three segments for the send
    /// quantum (draft §4.2.3.2), or None before both filters have a sample.
    fn target_inflight(&self, gain: f64, mss: u64) -> Option<u64> {
        let (min_rtt, _) = self.min_rtt?;
        let bw = self.max_bw();
        (bw > 0.0).then(|| (gain * bw * min_rtt as f64 / NS_PER_S as f64) as u64 + 3 * mss)
    }

    fn update_model(&mut self, s: &CcState, rs: &RateSample) {
        // Round trips are counted in delivered data (draft §4.1.1.3).
        self.round_start = rs.prior_delivered >= self.next_round_delivered;
        if self.round_start {
            self.next_round_delivered = s.delivered;
            self.round += 1;
        }
        let bw = rs.rate();
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
        let expired = self
            .min_rtt
            .is_some_and(|(_, at)| s.now > at + MIN_RTT_WINDOW_NS);
        if self.min_rtt.is_none_or(|(rtt, _)| rs.rtt_ns <= rtt) || expired {
            self.min_rtt = Some((rs.rtt_ns, s.now));
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.prior_cwnd = s.cwnd;
            self.probe_rtt_done = None;
        }
        if !self.filled_pipe && self.round_start && !rs.app_limited {
            let max_bw = self.max_bw();
            if max_bw >= self.full_bw * FULL_BW_GROWTH {
                self.full_bw = max_bw;
                self.full_bw_rounds = 0;
            } else {
                self.full_bw_rounds += 1;
                self.filled_pipe = self.full_bw_rounds >= FULL_BW_ROUNDS;
            }
        }
    }

    fn update_mode(&mut self, s: &CcState) {
        let inflight = s.flight;
        match self.mode {
            Mode::Startup if self.filled_pipe => self.mode = Mode::Drain,
            Mode::Drain
                if self
                    .target_inflight(1.0, s.mss)
                    .is_some_and(|bdp| inflight <= bdp) =>
            {
                self.enter_probe_bw(s.now);
            }
            Mode::ProbeBw => {
                let min_rtt = self.min_rtt.map_or(0, |(rtt, _)| rtt);
                let full_phase = s.now.saturating_sub(self.cycle_start) > min_rtt;
                let gain = self.pacing_gain();
                let target = |g| self.target_inflight(g, s.mss).unwrap_or(0);
                // draft §4.3.3.6: a probing phase lasts until it has put gain × BDP in
                // flight (or met loss); a draining phase ends early once at one BDP.
                let next = if gain > 1.0 {
                    full_phase && (s.in_recovery || inflight >= target(gain))
                } else if gain < 1.0 {
                    full_phase || inflight <= target(1.0)
                } else {
                    full_phase
                };
                if next {
                    self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
                    self.cycle_start = s.now;
                }
            }
            Mode::ProbeRtt => {
                if self.probe_rtt_done.is_none() && inflight <= MIN_CWND_SEGMENTS * s.mss {
                    self.probe_rtt_done = Some(s.now + PROBE_RTT_DURATION_NS);
                    self.probe_rtt_round_done = false;
                    self.next_round_delivered = s.delivered;
                } else if let Some(done) = self.probe_rtt_done {
                    self.probe_rtt_round_done |= self.round_start;
                    if self.probe_rtt_round_done && s.now >= done {
                        self.min_rtt = self.min_rtt.map(|(rtt, _)| (rtt, s.now));
                        if self.filled_pipe {
                            self.enter_probe_bw(s.now);
                        } else {
                            self.mode = Mode::Startup;
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn enter_probe_bw(&mut self, now: Nanos) {
        self.mode = Mode::ProbeBw;
        // Start anywhere but the draining phase, as Linux does with a random phase; here
        // deterministically at the first cruising phase.
        self.cycle_index = 2;
        self.cycle_start = now;
    }

    fn update_pacing_rate(&mut self, s: &CcState) {
        let bw = self.max_bw();
        let rate = if bw > 0.0 {
            self.pacing_gain() * bw * PACING_MARGIN
        } else {
            // Before a sample: the initial window over the RTT (draft §4.2.1).
            let rtt = s.srtt.unwrap_or(1_000_000) as f64 / NS_PER_S as f64;
            HIGH_GAIN * s.cwnd as f64 / rtt
        };
        // In Startup the rate only grows, so an early low sample cannot slow the search.
        if self.filled_pipe || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    fn cwnd(&mut self, s: &CcState, acked: u64) -> u64 {
        let floor = MIN_CWND_SEGMENTS * s.mss;
        let mut cwnd = s.cwnd;
        // Packet conservation in the first round of recovery (draft §4.2.3.4), then the
        // cwnd from before the loss is restored when recovery ends.
        if s.in_recovery && !self.was_in_recovery {
            self.prior_cwnd = cwnd;
            self.packet_conservation = true;
            cwnd = s.flight + acked;
        } else if !s.in_recovery && self.was_in_recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.was_in_recovery = s.in_recovery;
        if self.packet_conservation && self.round_start {
            self.packet_conservation = false;
        }
        match self.target_inflight(self.cwnd_gain(), s.mss) {
            _ if self.packet_conservation => cwnd = cwnd.max(s.flight + acked),
            Some(target) if self.filled_pipe => cwnd = (cwnd + acked).min(target),
            Some(target) if cwnd < target => cwnd += acked,
            None => cwnd += acked,
            _ => {}
        }
        cwnd = cwnd.max(floor);
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(floor);
        }
        cwnd
    }
}

impl CongestionControl for Bbr {
    /// BBR keeps its model through loss: recovery starts from the current window, and
    /// the first round's packet conservation happens in `on_rate_sample`.
    fn ssthresh_after_loss(&mut self, s: &CcState) -> u64 {
        s.cwnd
    }

    /// Before the first delivery-rate sample, cwnd grows as in slow start.
    fn on_ack(&mut self, s: &CcState, acked: u64) -> u64 {
        s.cwnd + acked
    }

    fn on_timeout(&mut self, s: &CcState) {
        self.prior_cwnd = s.cwnd;
        self.was_in_recovery = false;
        self.packet_conservation = false;
    }

    fn on_rate_sample(&mut self, s: &CcState, rs: &RateSample) -> Option<u64> {
        if rs.interval_ns > 0 {
            self.update_model(s, rs);
            self.update_mode(s);
        }
        self.update_pacing_rate(s);
        Some(self.cwnd(s, rs.acked))
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

    /// A sender driven by BBR on a path of 1 MB/s.
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
                bbr: Bbr::default(),
                now: 0,
                delivered: 0,
                cwnd: 10_000,
            }
        }

        /// One round trip of ACKs at RTT `rtt` ms. In flight is what the cwnd and the
        /// pacing rate allow over the round.
        fn round(&mut self, rtt: u64) {
            let paced = self.bbr.pacing_rate().map_or(u64::MAX, |r| r * rtt / 1000);
            let flight = self.cwnd.min(paced);
            let acks = (flight / 1000).max(1);
            let per_ack = (BW * rtt as f64 / 1e3 / acks as f64).min(1000.0) as u64;
            for _ in 0..acks {
                self.now += rtt * MS / acks;
                let prior = self.delivered;
                self.delivered += per_ack;
                let s = CcState {
                    now: self.now,
                    cwnd: self.cwnd,
                    flight,
                    delivered: self.delivered,
                    ..state(0, u64::MAX, self.now)
                };
                let rs = RateSample {
                    prior_delivered: prior.saturating_sub(flight),
                    delivered: (BW * rtt as f64 / 1e3) as u64,
                    interval_ns: rtt * MS,
                    rtt_ns: rtt * MS,
                    app_limited: false,
                    acked: per_ack,
                };
                self.cwnd = self.bbr.on_rate_sample(&s, &rs).unwrap();
            }
        }

        fn rounds(&mut self, n: usize, rtt: u64) {
            for _ in 0..n {
                self.round(rtt);
            }
        }
    }

    #[test]
    fn startup_paces_at_high_gain_and_finds_the_bandwidth() {
        let mut h = Harness::new();
        h.rounds(30, 100);
        // 1 MB/s is found; the pipe counts as full after three rounds without 25 % growth.
        assert!((h.bbr.max_bw() - BW).abs() < 1.0);
        assert!(h.bbr.filled_pipe);
        assert_ne!(h.bbr.mode, Mode::Startup);
    }

    #[test]
    fn probe_bw_cwnd_is_two_bdp_plus_the_send_quantum() {
        let mut h = Harness::new();
        h.rounds(60, 100);
        assert_eq!(h.bbr.mode, Mode::ProbeBw);
        // BDP = 1 MB/s × 100 ms = 100 kB.
        assert_eq!(h.bbr.target_inflight(CWND_GAIN, 1000), Some(203_000));
        assert!(h.cwnd <= 203_000);
        let rate = h.bbr.pacing_rate().unwrap() as f64;
        let gain = h.bbr.pacing_gain();
        assert!((rate - gain * 990_000.0).abs() < 1.0, "{rate}");
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
                assert_eq!(h.cwnd, MIN_CWND_SEGMENTS * 1000);
                return;
            }
        }
        panic!("BBR never entered ProbeRTT");
    }

    #[test]
    fn loss_does_not_shrink_the_model() {
        let mut bbr = Bbr::default();
        let s = state(100, 1000, 0);
        assert_eq!(bbr.ssthresh_after_loss(&s), 100_000);
    }
}
