//! The sending side of a connection: send buffer, segmentation with Nagle and sender-side
//! silly-window avoidance, congestion window, RFC 6298 retransmission timer, (in
//! `recovery`) fast retransmit and NewReno fast recovery, and (in `persist`) the persist
//! timer that probes a closed window.

mod ecn;
mod idle;
mod persist;
mod prr;
mod rack;
mod rack_recovery;
mod recovery;
mod reno_sack;
mod rtx_queue;
mod sack_recovery;
mod sndbuf;
pub(crate) mod tso;
mod undo;

use std::collections::VecDeque;

use serde::Deserialize;

use super::cc::{self, CaState, CcState, CongestionControl, RateSample, Recovery};
use super::hystart::{HyStartPlusPlus, Phase, CSS_GROWTH_DIVISOR};
use super::hystart_linux::{self, LinuxHyStart};
use super::sack::Scoreboard;
use super::segment::{timestamps_option_bytes, TIMESTAMPS_OPTION_BYTES};
use super::{
    rcvbuf, timestamp_clock, window_shift_for, BufferSize, RtoEstimator, Segment, Timestamps,
};
use crate::engine::{Nanos, RngStream};
use prr::Prr;
use rack::Rack;
use rack_recovery::Probe;
use reno_sack::Reordering;
use rtx_queue::TxRate;
use rtx_queue::{Covered, RtxQueue};
use sndbuf::{SendBuffer, Seqs};
pub use sndbuf::{SndbufAccounting, TCP_WMEM};
pub(crate) use sndbuf::{SKB_SHARED_INFO_TRUESIZE, SK_BUFF_TRUESIZE, TCP_MSS_DEFAULT};
use undo::{AfterAck, Undo};

/// RFC 5681 §3.2: the third duplicate ACK signals a loss.
const DUPACK_THRESHOLD: u32 = 3;

/// Which small segments Nagle's algorithm holds back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NagleVariant {
    /// RFC 896 as RFC 1122 §4.2.3.4 states it: while any data is unacknowledged.
    #[default]
    Rfc896,
    /// Minshall's variant (Linux `tcp_nagle_check`, `tcp_minshall_check`): only while a
    /// small segment sent earlier is unacknowledged.
    Minshall,
}

/// How a SACK connection finds and repairs losses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossRecovery {
    /// By duplicate ACKs: RFC 6675 with SACK (RFC 5681 / 6582 without), the timer for the
    /// rest; the recovery the source papers' stacks and ns-3 use.
    #[default]
    Classic,
    /// RACK-TLP (RFC 8985) with PRR (RFC 6937) in Linux's congestion states
    /// (`rack_recovery.rs`); without SACK, Linux's duplicate-ACK counting in the same
    /// states (`reno_sack.rs`).
    Rack,
}

/// Which HyStart ends the initial slow start when `hystart` is on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HyStartVariant {
    /// HyStart++, RFC 9406, for every algorithm but BBR.
    #[default]
    Rfc9406,
    /// Linux's HyStart (tcp_cubic.c: ACK train and delay increase), for CUBIC only, as in
    /// Linux, where it is part of CUBIC.
    Linux,
}

#[derive(Debug, Clone)]
pub struct SenderConfig {
    pub cc: String,
    pub cubic_variant: cc::CubicVariant,
    pub reno_variant: cc::RenoVariant,
    pub mss: u32,
    pub sndbuf: BufferSize,
    /// What `sndbuf` limits, and when a writer blocked on it is woken (`sndbuf.rs`).
    pub sndbuf_accounting: SndbufAccounting,
    /// Our own receive buffer, advertised in our SYN (data flows the other way only).
    pub rcvbuf: BufferSize,
    pub initial_window: u32,
    pub window_scaling: bool,
    pub sack: bool,
    pub timestamps: bool,
    pub abc: bool,
    pub hystart: bool,
    pub hystart_variant: HyStartVariant,
    pub nagle: bool,
    pub nagle_variant: NagleVariant,
    pub fast_retransmit: bool,
    pub min_rto_ns: Nanos,
    pub rto_form: super::RtoForm,
    /// RFC 7661 congestion window validation (see `is_cwnd_limited`).
    pub cwnd_validation: bool,
    pub loss_recovery: LossRecovery,
    /// Linux's `tcp_slow_start_after_idle`: cwnd restarts after an idle spell (`idle.rs`).
    pub slow_start_after_idle: bool,
    /// F-RTO (RFC 5682) after a timeout, with Linux's recovery (`undo.rs`).
    pub frto: bool,
    /// Linux's undo of spurious reductions, with Linux's recovery (`undo.rs`).
    pub undo: bool,
    /// Linux's GSO buffers and their deferral (`tso.rs`) for a sender that does not pace.
    pub gso: bool,
    /// ECN (RFC 3168): requested on our SYN when this asks for it.
    pub ecn: super::EcnMode,
    /// The connection's random stream, for an algorithm that draws.
    pub rng: RngStream,
}

/// What keeps the sender from sending more right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The peer's advertised window is full.
    Rwnd,
    /// Everything in the send buffer is sent and the application is blocked on a full buffer.
    SndBuf,
    /// The congestion window is full.
    Cwnd,
    /// Everything written is sent and the application has nothing more to write.
    App,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Zero-window probes sent by the persist timer (Linux's TCPWinProbe).
    pub persist_probes: u64,
    /// Window reductions for ECN-Echo (RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
}

/// A first transmission whose ACK may give an RTT sample and a delivery-rate sample
/// (draft-cheng-iccrg-delivery-rate-estimation §3.2: the connection's delivery state at
/// the moment the packet was sent). Kept without RACK only: RACK's retransmission queue
/// has a record of each segment with the same facts.
struct Timed {
    end: u64,
    sent_at: Nanos,
    retransmitted: bool,
    tx: TxRate,
}

pub struct Sender {
    cfg: SenderConfig,
    cc: Box<dyn CongestionControl>,
    recovery: Recovery,
    established: bool,
    syn_retransmitted: bool,
    syn_sent_at: Nanos,
    /// Effective MSS: the smaller of ours and the peer's MSS option.
    mss: u64,
    snd_una: u64,
    snd_nxt: u64,
    /// One past the highest byte ever sent.
    snd_max: u64,
    /// One past the last byte the application has written.
    written: u64,
    sndbuf: SendBuffer,
    cwnd: u64,
    ssthresh: u64,
    rwnd: u64,
    last_window_field: u16,
    /// Largest window the peer ever offered, for RFC 1122 §4.2.3.4.
    max_rwnd: u64,
    /// One past the last byte of the newest sub-MSS segment of new data (Linux's
    /// `snd_sml`), for Minshall's Nagle.
    snd_sml: u64,
    /// Shift the peer applies to its window field (RFC 7323), 0 unless both sides offered it.
    snd_wscale: u8,
    dupacks: u32,
    /// RFC 6582 `recover`: highest byte sent when recovery or the last timeout began.
    recover: Option<u64>,
    in_recovery: bool,
    partial_ack_seen: bool,
    rto: RtoEstimator,
    timer: Option<Nanos>,
    /// The persist timer (RFC 9293 §3.8.6.1), its back-off exponent, and one past the
    /// byte the last zero-window probe carried (an ACK may cover it).
    persist: Option<Nanos>,
    persist_backoff: u32,
    probe_end: u64,
    timed: VecDeque<Timed>,
    /// SACK negotiated (both SYNs carried SACK-permitted, RFC 2018 §2).
    sack_ok: bool,
    scoreboard: Scoreboard,
    /// RFC 6675 HighRxt: one past the highest byte resent in the current recovery.
    high_rxt: u64,
    /// Timestamps negotiated (RFC 7323), and the peer's latest TSval to echo.
    timestamps: bool,
    ts_recent: u32,
    /// Delivery-rate estimation state (draft-cheng-iccrg-delivery-rate-estimation §3.1):
    /// bytes cumulatively acknowledged, when that last grew, the send time of the newest
    /// acknowledged packet, and the delivered mark until which samples are app-limited.
    delivered: u64,
    delivered_time: Nanos,
    first_sent_time: Nanos,
    app_limited_until: u64,
    /// Pacing: the earliest time the next segment may leave, and whether sending waits
    /// for it.
    next_send_at: Nanos,
    pacing_wait: bool,
    /// The latest transmission, and whether sending waits for a larger GSO burst (`tso.rs`).
    last_sent_at: Nanos,
    gso_wait: bool,
    /// The delivery-rate sample of the ACK being processed.
    rate_sample: Option<RateSample>,
    /// The RTT sample of the ACK being processed.
    rtt_sample: Option<Nanos>,
    /// HyStart++ for the initial slow start (RFC 9406), when asked for.
    hystart: Option<HyStartPlusPlus>,
    /// Linux's HyStart, for CUBIC with `hystart_variant = linux`.
    linux_hystart: Option<LinuxHyStart>,
    /// Congestion window validation (RFC 7661, as Linux's `tcp_cwnd_validate`): whether
    /// the flight filled cwnd at some send since `cwnd_usage_seq` was taken, the largest
    /// flight in that span, and the `snd_nxt` that ends it (about one round trip).
    cwnd_limited: bool,
    max_flight: u64,
    cwnd_usage_seq: u64,
    /// RACK-TLP recovery (`rack_recovery.rs`): whether it was asked for, the
    /// retransmission queue, RACK's and PRR's state, the congestion state and the
    /// `snd_max` that ends it, the reordering and probe timers, the probe in flight, and
    /// timeouts since the cumulative ACK last advanced.
    rack_recovery: bool,
    rtx: RtxQueue,
    rack: Rack,
    prr: Prr,
    ca_state: CaState,
    high_seq: u64,
    reo_timer: Option<Nanos>,
    probe_timer: Option<Nanos>,
    probe: Option<Probe>,
    consecutive_timeouts: u32,
    /// Without SACK, the duplicate ACKs that mark the head lost (`reno_sack.rs`).
    reno_reordering: Reordering,
    /// What undoing a spurious reduction needs (`undo.rs`).
    undo: Undo,
    /// ECN negotiated (our SYN asked, the SYN-ACK agreed: RFC 3168 §6.1.1); CWR owed on
    /// the next new data; and, outside RACK's congestion states, the `snd_max` before
    /// which no further ECE reduces the window (one reduction per window, §6.1.2).
    ecn_ok: bool,
    cwr_pending: bool,
    ece_window_end: u64,
    pub stats: SenderStats,
}

impl Sender {
    pub fn new(cfg: SenderConfig) -> Self {
        let (cc, recovery) = cc::build(
            &cfg.cc,
            cfg.cubic_variant,
            cfg.reno_variant,
            cfg.rng.clone(),
        );
        Self {
            cc,
            recovery,
            mss: u64::from(cfg.mss),
            rto: RtoEstimator::new(cfg.min_rto_ns, cfg.rto_form),
            established: false,
            syn_retransmitted: false,
            syn_sent_at: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            written: 0,
            sndbuf: SendBuffer::new(cfg.sndbuf_accounting, cfg.sndbuf),
            cwnd: 0,
            // RFC 5681 §3.1: the initial ssthresh may be arbitrarily high.
            ssthresh: u64::MAX,
            rwnd: 0,
            last_window_field: 0,
            max_rwnd: 0,
            snd_sml: 0,
            snd_wscale: 0,
            dupacks: 0,
            recover: None,
            in_recovery: false,
            partial_ack_seen: false,
            timer: None,
            persist: None,
            persist_backoff: 0,
            probe_end: 0,
            timed: VecDeque::new(),
            sack_ok: false,
            scoreboard: Scoreboard::default(),
            high_rxt: 0,
            timestamps: false,
            ts_recent: 0,
            delivered: 0,
            delivered_time: 0,
            first_sent_time: 0,
            app_limited_until: 0,
            next_send_at: 0,
            pacing_wait: false,
            last_sent_at: 0,
            gso_wait: false,
            rate_sample: None,
            rtt_sample: None,
            // BBR has its own way out of startup.
            hystart: (cfg.hystart
                && cfg.cc != "bbr"
                && cfg.hystart_variant == HyStartVariant::Rfc9406)
                .then(HyStartPlusPlus::default),
            linux_hystart: (cfg.hystart
                && cfg.cc == "cubic"
                && cfg.hystart_variant == HyStartVariant::Linux)
                .then(LinuxHyStart::default),
            cwnd_limited: false,
            max_flight: 0,
            cwnd_usage_seq: 0,
            rack_recovery: cfg.loss_recovery == LossRecovery::Rack && recovery != Recovery::Tahoe,
            rtx: RtxQueue::default(),
            rack: Rack::default(),
            prr: Prr::default(),
            ca_state: CaState::Open,
            high_seq: 0,
            reo_timer: None,
            probe_timer: None,
            probe: None,
            consecutive_timeouts: 0,
            reno_reordering: Reordering::default(),
            undo: Undo::default(),
            ecn_ok: false,
            cwr_pending: false,
            ece_window_end: 0,
            stats: SenderStats::default(),
            cfg,
        }
    }

    /// Our SYN: its options are what the connection negotiates, sent or handed over.
    pub fn syn(&self, now: Nanos) -> Segment {
        Segment {
            timestamps: self.cfg.timestamps.then(|| Timestamps {
                val: timestamp_clock(now),
                ecr: 0,
            }),
            syn: true,
            window: self.syn_window() as u16,
            mss_option: Some(self.cfg.mss as u16),
            wscale_option: self.cfg.window_scaling.then(|| match self.cfg.rcvbuf {
                BufferSize::Bytes(bytes) => window_shift_for(bytes),
                BufferSize::Auto(_) => rcvbuf::window_scale(),
            }),
            sack_permitted: self.cfg.sack,
            retransmission: self.syn_retransmitted,
            // RFC 3168 §6.1.1: an ECN-setup SYN.
            ece: self.cfg.ecn.requests(),
            cwr: self.cfg.ecn.requests(),
            ..Segment::default()
        }
    }

    /// The window our SYN offers: the receive buffer up to 65,535 bytes, or with
    /// autotuning what Linux's initial buffer offers (tcp/rcvbuf.rs).
    fn syn_window(&self) -> u64 {
        match self.cfg.rcvbuf {
            BufferSize::Bytes(bytes) => bytes.min(65_535),
            BufferSize::Auto(_) => rcvbuf::syn_window(
                u64::from(self.cfg.mss) - timestamps_option_bytes(self.cfg.timestamps),
            ),
        }
    }

    /// Linux `tcp_sndbuf_expand`'s target for the current cwnd (sndbuf.rs `expansion`):
    /// the largest segment negotiated is the payload with the timestamps option; BBR asks
    /// for three windows (`bbr_sndbuf_expand`), the others for two.
    fn sndbuf_target(&self) -> u64 {
        let factor = if self.cfg.cc == "bbr" { 3 } else { 2 };
        let largest = self.mss + timestamps_option_bytes(self.timestamps);
        sndbuf::expansion(largest, self.cwnd / self.mss, factor)
    }

    /// Active open: sends the SYN and arms the timer with the initial RTO.
    pub fn connect(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.syn_sent_at = now;
        out.push(self.syn(now));
        self.timer = Some(now + self.rto.rto());
    }

    pub fn is_established(&self) -> bool {
        self.established
    }

    fn seqs(&self) -> Seqs {
        Seqs {
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            written: self.written,
        }
    }

    /// The payload one skb takes from a write (Linux's size goal).
    fn size_goal(&self) -> u64 {
        sndbuf::size_goal(self.cfg.gso, self.mss, self.max_rwnd)
    }

    /// Bytes a write() call can put into the send buffer now (which holds unacknowledged
    /// and unsent bytes); none while a writer that found it full waits to be woken.
    pub fn buffer_space(&self) -> u64 {
        self.sndbuf.space(self.seqs(), self.size_goal())
    }

    /// The application writes `bytes` (at most what `buffer_space()` offered when its call
    /// began: a host with a CPU model copies later, when the tail skb may have left). With
    /// nothing outstanding, a write after an idle spell restarts cwnd first (`idle.rs`).
    pub fn write(&mut self, now: Nanos, bytes: u64) {
        if self.snd_una == self.snd_max {
            self.restart_after_idle(now);
        }
        self.sndbuf.write(self.seqs(), bytes, self.size_goal());
        self.written += bytes;
    }

    /// The application has more to write and `buffer_space()` is 0: it blocks until the
    /// buffer wakes it.
    pub fn wait_for_space(&mut self) {
        self.sndbuf.wait_for_space();
    }

    fn window(&self) -> u64 {
        self.cwnd.min(self.rwnd)
    }

    /// True while the window, not Nagle or an empty buffer, stops transmission.
    pub fn window_full(&self) -> bool {
        self.snd_nxt >= self.snd_una + self.window()
    }

    /// Why the sender cannot send more at this moment; `app_has_more` tells whether the
    /// application is waiting for buffer space. A window is the limit while a full-sized
    /// segment no longer fits in it (or pacing holds the next one); a sub-segment tail that
    /// Nagle holds back below a window with room for a whole segment is the buffer's limit
    /// when the application waits for space, else the application's (Linux counts
    /// `tcpi_sndbuf_limited` where the buffer, not the window test, stopped the sender).
    pub fn limit(&self, app_has_more: bool) -> Limit {
        let unsent = self.written.saturating_sub(self.snd_nxt);
        let room = (self.snd_una + self.window()).saturating_sub(self.snd_nxt);
        let window_stops = unsent > 0 && (room < self.mss || self.pacing_wait || self.gso_wait);
        if !window_stops {
            if app_has_more {
                Limit::SndBuf
            } else {
                Limit::App
            }
        } else if self.rwnd <= self.cwnd {
            Limit::Rwnd
        } else {
            Limit::Cwnd
        }
    }

    /// A data segment carrying [seq, seq + len), with our timestamp when negotiated.
    fn data_segment(&self, now: Nanos, seq: u64, len: u64) -> Segment {
        let mut seg = Segment::data(seq, len as u32, 0, self.last_advertised_field());
        if self.timestamps {
            seg.timestamps = Some(Timestamps {
                val: timestamp_clock(now),
                ecr: self.ts_recent,
            });
        }
        seg
    }

    fn emit(&mut self, now: Nanos, seq: u64, len: u64, out: &mut Vec<Segment>) {
        let retransmission = seq < self.snd_max;
        let mut seg = self.data_segment(now, seq, len);
        seg.retransmission = retransmission;
        if self.ecn_ok && !retransmission {
            self.mark_ecn(&mut seg);
        }
        out.push(seg);
        self.stats.segments_sent += 1;
        self.last_sent_at = now;
        if self.snd_una == self.snd_max {
            // Nothing in flight: the delivery-rate intervals start now (§3.2).
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        if self.in_flight() == 0 {
            self.on_transmit_start(now);
        }
        let tx = TxRate {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited_until > 0,
        };
        if self.rack_mode() {
            if retransmission {
                self.rtx.resent(seq, now, tx);
            } else {
                self.rtx.sent(seq, seg.end(), now, tx);
            }
            if matches!(self.ca_state, CaState::Recovery | CaState::Cwr) {
                self.prr.on_sent(1);
            }
        }
        if retransmission {
            self.stats.retransmits += 1;
        } else {
            if self.sndbuf.counts_skbs() {
                let tso_segs = self.tso_segs();
                self.sndbuf.sent(seg.end(), tso_segs);
            }
            if len < self.mss {
                self.snd_sml = seg.end();
            }
            if !self.rack_mode() {
                self.timed.push_back(Timed {
                    end: seg.end(),
                    sent_at: now,
                    retransmitted: false,
                    tx,
                });
            }
        }
        if let Some(rate) = self.cc.pacing_rate().filter(|&r| r > 0) {
            // Linux spaces departures by the payload alone (`tcp_update_skb_after_send`
            // divides the data skb's length, headers not yet pushed, by the pacing rate),
            // and BBR's rate counts delivered payload, so the two match at gain 1.
            self.next_send_at = self.next_send_at.max(now) + len * 1_000_000_000 / rate;
        }
        self.snd_max = self.snd_max.max(seg.end());
        // RFC 6298 §5.1: start the timer when data is sent and it is not running.
        if self.timer.is_none() {
            self.timer = Some(now + self.rto.rto());
        }
    }

    /// Resends [start, end) and marks the first transmissions it covers as ambiguous for
    /// RTT sampling (Karn).
    fn retransmit(&mut self, now: Nanos, start: u64, end: u64, out: &mut Vec<Segment>) {
        let first = self.timed.partition_point(|t| t.end <= start);
        for t in self.timed.iter_mut().skip(first) {
            t.retransmitted = true;
            if t.end >= end {
                break;
            }
        }
        self.emit(now, start, end - start, out);
    }

    fn last_advertised_field(&self) -> u16 {
        self.syn_window() as u16
    }

    /// Sends what the windows, the buffer and the silly-window rules allow.
    pub fn try_send(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        if !self.established {
            return;
        }
        self.send_allowed(now, out);
        self.note_cwnd_use();
        self.update_persist_timer(now);
    }

    fn send_allowed(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let rack = self.rack_mode();
        let sent_before = self.snd_max;
        if rack {
            match std::mem::take(&mut self.undo.after_ack) {
                AfterAck::Lost => self.resend_lost(now, out),
                AfterAck::NewData => {
                    self.send_new(now, out);
                    if !self.new_data_went() {
                        self.resend_lost(now, out);
                    }
                }
                AfterAck::NoRetransmission => {}
            }
        }
        self.send_new(now, out);
        if rack && self.snd_max > sent_before {
            self.schedule_probe(now);
        }
    }

    /// While pacing holds the next segment back, the sender waits for its release time.
    fn pacing_holds(&mut self, now: Nanos) -> bool {
        if self.cc.pacing_rate().is_some() && now < self.next_send_at {
            self.pacing_wait = true;
            return true;
        }
        false
    }

    fn send_new(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.gso_wait = false;
        // Segments left in the GSO buffer being sent; deferral is decided per buffer.
        let mut buffer_left = 0;
        loop {
            let limit = if self.rack_mode() {
                self.rack_send_limit()
            } else {
                self.snd_una + self.window()
            };
            if self.snd_nxt >= limit {
                self.sndbuf.window_stops(self.snd_nxt);
                return;
            }
            if self.snd_nxt >= self.written {
                // The window is open but the application wrote nothing more: samples
                // taken until this data is delivered are app-limited (§3.4).
                self.app_limited_until = (self.delivered + self.in_flight()).max(1);
                return;
            }
            if self.pacing_holds(now) {
                return;
            }
            let resend = self.snd_nxt < self.snd_max;
            if resend {
                // After a timeout, data the receiver has SACKed is not sent again
                // (RFC 6675 §5.1).
                if let Some((_, end)) = self.scoreboard.sacked_range(self.snd_nxt) {
                    self.snd_nxt = end;
                    continue;
                }
            }
            let usable = limit - self.snd_nxt;
            let queued = self.written - self.snd_nxt;
            let mut len = self.mss.min(usable).min(queued);
            if resend {
                len = self.unsacked_end(self.snd_nxt, self.snd_nxt + len) - self.snd_nxt;
            }
            if len < self.mss
                && !resend
                && !self.small_segment_allowed(len, queued)
                && !self.fills_window_edge(self.snd_nxt + len, buffer_left)
            {
                return;
            }
            if !resend && buffer_left == 0 {
                match self.gso_buffer(now, usable, queued) {
                    Some(segments) => buffer_left = segments,
                    None => {
                        self.gso_wait = true;
                        return;
                    }
                }
            }
            buffer_left = buffer_left.saturating_sub(1);
            let seq = self.snd_nxt;
            self.emit(now, seq, len, out);
            self.snd_nxt += len;
        }
    }

    /// Segments of the next GSO buffer, or None while Linux would hold it back for more
    /// room (`tso::should_defer`). Without `gso`, with pacing (which spaces the segments
    /// itself), in recovery, or when everything queued fits the room, nothing waits.
    fn gso_buffer(&self, now: Nanos, room: u64, queued: u64) -> Option<u64> {
        let (Some(srtt), Some(min_rtt)) = (self.rto.srtt(), self.rto.min_rtt()) else {
            return Some(u64::MAX);
        };
        let recovering = if self.rack_mode() {
            self.ca_state >= CaState::Recovery
        } else {
            self.in_recovery
        };
        if !self.cfg.gso || self.cc.pacing_rate().is_some() || recovering || queued <= room {
            return Some(u64::MAX);
        }
        let segments = self.autosize(srtt, min_rtt);
        let head_sent_at = if self.rack_mode() {
            self.rtx.head().map(|r| r.sent_at)
        } else {
            self.timed.front().map(|t| t.sent_at)
        };
        let defer = tso::should_defer(tso::Moment {
            now,
            last_sent_at: self.last_sent_at,
            head_sent_at,
            srtt,
            room,
            window: self.window(),
            buffer: segments * self.mss,
        });
        (!defer).then_some(segments)
    }

    /// Linux `tcp_tso_autosize` at the rate `tcp_update_pacing_rate` sets for a sender that
    /// does not pace itself (or at a pacing algorithm's own rate).
    fn autosize(&self, srtt: Nanos, min_rtt: Nanos) -> u64 {
        let rate = self.cc.pacing_rate().filter(|&r| r > 0).unwrap_or_else(|| {
            // Linux: max(cwnd, packets_out), everything sent and not acknowledged.
            let cwnd_segments = self
                .cwnd
                .max(self.snd_nxt - self.snd_una)
                .div_ceil(self.mss);
            tso::pacing_rate(self.mss, cwnd_segments, self.ssthresh, self.cwnd, srtt)
        });
        tso::autosize_segments(rate, min_rtt, self.mss)
    }

    /// Linux `tcp_tso_segs`: the most segments of an skb sent at once; one without GSO
    /// (`gso_max_segs` 1), a whole 64 KiB skb before the first RTT sample.
    fn tso_segs(&self) -> u64 {
        if !self.cfg.gso {
            return 1;
        }
        match (self.rto.srtt(), self.rto.min_rtt()) {
            (Some(srtt), Some(min_rtt)) => self.autosize(srtt, min_rtt),
            _ => tso::GSO_MAX_SIZE / self.mss.max(1),
        }
    }

    /// RFC 7661 §4.1 asks whether cwnd is validated, i.e. whether the flight has used it
    /// recently. As Linux (`tcp_cwnd_validate`), the answer is kept per round trip: a send
    /// that leaves less than one segment of cwnd free marks the round cwnd-limited, and
    /// otherwise the round's largest flight is remembered; the round ends once `snd_una`
    /// passes the `snd_nxt` recorded at its start.
    fn note_cwnd_use(&mut self) {
        // After a timeout everything past snd_nxt is presumed lost and will be resent.
        let flight = self.in_flight().min(self.snd_nxt - self.snd_una);
        // A sender holding data back for a larger GSO burst counts as cwnd-limited, as
        // Linux's tcp_tso_should_defer reports it.
        let limited = flight + self.mss > self.cwnd || (self.gso_wait && self.cwnd <= self.rwnd);
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.cwnd_limited && flight > self.max_flight)
        {
            self.cwnd_limited = limited;
            self.max_flight = flight;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// Linux's `tcp_is_cwnd_limited`: cwnd may grow only while it limits the sender
    /// (RFC 7661 §4.3: no growth while cwnd is non-validated). In slow start, growth is
    /// allowed while cwnd is below twice the largest recent flight, so that a sender
    /// which just became limited by something else still doubles what it really used.
    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited || (self.cwnd < self.ssthresh && self.cwnd < 2 * self.max_flight)
    }

    /// RFC 1122 §4.2.3.4 sender silly-window avoidance, with Nagle as its second condition:
    /// a segment shorter than the MSS goes out only if it carries all queued data and Nagle
    /// lets it, or if it fills at least half the largest window the peer has offered.
    fn small_segment_allowed(&self, len: u64, queued: u64) -> bool {
        (len == queued && self.nagle_allows_small_segment())
            || (self.max_rwnd > 0 && len >= self.max_rwnd / 2)
    }

    /// Linux `tcp_mss_split_point`: a GSO buffer that the peer's window cuts short takes the
    /// sub-MSS remainder up to the window's edge along with its full segments, if Nagle
    /// lets a small segment go; a buffer that cannot start with a whole segment does not
    /// start (`tcp_snd_wnd_test`). So a receive-window-limited sender fills the window to
    /// the byte, with one small segment per round trip (the kernel's 376-byte segments on
    /// the standard grid's rcv64KiB points), and its flights hold an even number of
    /// segments, which the receiver acknowledges without waiting for its timer.
    fn fills_window_edge(&self, end: u64, buffer_left: u64) -> bool {
        self.cfg.gso
            && buffer_left > 0
            && end == self.snd_una + self.rwnd
            && self.nagle_allows_small_segment()
    }

    /// RFC 896 holds a small segment while anything is unacknowledged; Minshall's variant
    /// only while an earlier small segment is, so the partial tail of a multi-segment
    /// write leaves with the full segments before it.
    fn nagle_allows_small_segment(&self) -> bool {
        !self.cfg.nagle
            || match self.cfg.nagle_variant {
                NagleVariant::Rfc896 => self.snd_una == self.snd_max,
                NagleVariant::Minshall => self.snd_sml <= self.snd_una,
            }
    }

    /// Handles a segment from the peer (the SYN-ACK, then ACKs).
    pub fn on_segment(&mut self, now: Nanos, seg: &Segment, out: &mut Vec<Segment>) {
        if seg.syn {
            self.on_syn_ack(now, seg);
        } else if self.established && seg.has_ack {
            self.on_ack(now, seg, out);
        }
        self.try_send(now, out);
        // Linux frees acknowledged memory in tcp_ack and, after sending, grows an
        // autotuned buffer for a waiting writer while the window has room and wakes the
        // writer (tcp_data_snd_check → tcp_check_space → tcp_new_space).
        if self.established && self.in_flight() < self.cwnd {
            self.sndbuf.expand_for_waiting_writer(self.sndbuf_target());
        }
        self.sndbuf.acked(self.seqs());
    }

    fn on_syn_ack(&mut self, now: Nanos, seg: &Segment) {
        if self.established {
            return;
        }
        self.adopt_syn_ack(seg);
        if self.syn_retransmitted {
            // RFC 5681 §3.1: the initial window is one segment if the SYN was lost.
            self.cwnd = self.mss;
            self.rto.after_syn_timeout();
        } else {
            self.cwnd = u64::from(self.cfg.initial_window) * self.mss;
            self.rto
                .sample(now - self.syn_sent_at, self.snd_una, self.snd_nxt);
        }
        self.timer = None;
        // tcp_init_transfer → tcp_init_buffer_space, with the initial cwnd.
        self.sndbuf.expand(self.sndbuf_target());
    }

    /// Opens without a handshake (`tcp.handshake = false`): `syn_ack` is the peer's answer
    /// to our `syn()`, handed over at setup. Nothing crossed the path, so there is no RTT
    /// sample and the RTO stays at its initial value until the first ACK gives one.
    pub fn open_established(&mut self, syn_ack: &Segment) {
        self.adopt_syn_ack(syn_ack);
        self.cwnd = u64::from(self.cfg.initial_window) * self.mss;
        self.sndbuf.expand(self.sndbuf_target());
    }

    /// The options both SYNs agreed on, and the peer's first window.
    fn adopt_syn_ack(&mut self, seg: &Segment) {
        self.established = true;
        if let Some(peer_mss) = seg.mss_option {
            self.mss = self.mss.min(u64::from(peer_mss));
        }
        // RFC 7323 §2.2: scaling applies only if both SYNs carried the option, and the
        // window field of a SYN is never scaled.
        if let (true, Some(shift)) = (self.cfg.window_scaling, seg.wscale_option) {
            self.snd_wscale = shift.min(14);
        }
        self.sack_ok = self.cfg.sack && seg.sack_permitted;
        // RFC 3168 §6.1.1: the SYN-ACK agrees with ECE and without CWR.
        self.ecn_ok = self.cfg.ecn.requests() && seg.ece && !seg.cwr;
        if let (true, Some(ts)) = (self.cfg.timestamps, seg.timestamps) {
            // RFC 6691 §2: options count against the MSS, so each segment carries 12 bytes
            // less payload (1448 on a 1500-byte MTU, as Linux sends).
            self.timestamps = true;
            self.ts_recent = ts.val;
            self.mss -= u64::from(TIMESTAMPS_OPTION_BYTES);
        }
        self.rwnd = u64::from(seg.window);
        self.last_window_field = seg.window;
        self.max_rwnd = self.rwnd;
    }

    fn on_ack(&mut self, now: Nanos, seg: &Segment, out: &mut Vec<Segment>) {
        if seg.ack > self.snd_max.max(self.probe_end) {
            return; // acknowledges data never sent (RFC 9293 §3.10.7.4): ignore
        }
        // A window probe's byte that the receiver took counts as sent.
        self.snd_max = self.snd_max.max(seg.ack);
        if let (true, Some(ts)) = (self.timestamps, seg.timestamps) {
            self.ts_recent = ts.val;
        }
        let window_changed = seg.window != self.last_window_field;
        self.rwnd = u64::from(seg.window) << self.snd_wscale;
        self.last_window_field = seg.window;
        self.max_rwnd = self.max_rwnd.max(self.rwnd);
        if self.rack_mode() {
            self.on_ack_rack(now, seg, window_changed);
            self.apply_rate_sample(now);
            return;
        }
        if self.sack_ok {
            self.on_ack_with_sack(now, seg, out);
            self.on_ece(now, seg);
            self.apply_rate_sample(now);
            return;
        }

        if seg.ack > self.snd_una {
            let acked = seg.ack - self.snd_una;
            self.take_rtt_sample(now, seg, acked);
            self.snd_una = seg.ack;
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            self.dupacks = 0;
            if self.in_recovery {
                self.on_ack_in_recovery(now, acked, out);
            } else {
                self.grow_window(now, acked);
                self.restart_timer(now);
            }
        } else if self.is_duplicate_ack(seg, window_changed) {
            self.on_duplicate_ack(now, out);
        }
        self.on_ece(now, seg);
        self.apply_rate_sample(now);
    }

    /// RFC 5681 §2: an ACK is a duplicate if it acknowledges nothing new, carries no data,
    /// leaves the window unchanged, and data is outstanding.
    fn is_duplicate_ack(&self, seg: &Segment, window_changed: bool) -> bool {
        seg.ack == self.snd_una && seg.len == 0 && !window_changed && self.snd_max > self.snd_una
    }

    /// Fast retransmit of the first unacknowledged segment re-arms the timer, as Linux does
    /// (`tcp_xmit_retransmit_queue`). RFC 6298 alone would leave it running from the last
    /// new ACK; when that ACK ended a burst (a window-limited flow on a long path idles for
    /// most of each round trip), the timer then expires just before the retransmission can
    /// be acknowledged: a spurious timeout.
    fn rearm_for_head_retransmission(&mut self, now: Nanos) {
        self.timer = Some(now + self.rto.rto());
    }

    /// RFC 6298 §5.2–5.3: stop the timer when everything is acknowledged, else restart it.
    fn restart_timer(&mut self, now: Nanos) {
        self.timer = (self.snd_una < self.snd_max).then(|| now + self.rto.rto());
    }

    /// The RTT sample and the delivery-rate sample of an ACK that newly acknowledges
    /// `delivered` bytes, from the first transmissions in `timed` it covers (without RACK).
    fn take_rtt_sample(&mut self, now: Nanos, seg: &Segment, delivered: u64) {
        let ack = seg.ack.max(self.snd_una);
        let acked = ack - self.snd_una;
        let mut covered = Covered::default();
        let mut newest = None;
        while let Some(t) = self.timed.front() {
            if t.end > ack {
                break;
            }
            covered.include(t.sent_at, t.retransmitted, false);
            newest = self.timed.pop_front();
        }
        self.sample_rtt(now, seg, covered, None);
        if delivered == 0 {
            return;
        }
        self.note_delivered(now, delivered);
        let prior_in_flight = self.in_flight();
        self.rate_sample = newest.map(|p| {
            let rtt = (!p.retransmitted).then(|| now - p.sent_at);
            self.rate_sample_from(now, p.tx, p.sent_at, rtt, acked, prior_in_flight)
        });
    }

    /// One sample per ACK (Linux `tcp_ack_update_rtt`): from the oldest segment it newly
    /// acknowledges cumulatively, unless any of those was retransmitted (Karn's algorithm,
    /// RFC 6298 §3); else from the oldest never-retransmitted segment it newly SACKs, sent
    /// at `sacked_sent_at` (`sack_rtt_us`), so that recovery keeps measuring; else, for an
    /// ACK that moves the cumulative point, from the echoed timestamp (RFC 7323 §4).
    fn sample_rtt(
        &mut self,
        now: Nanos,
        seg: &Segment,
        covered: Covered,
        sacked_sent_at: Option<Nanos>,
    ) {
        let acked = covered.first_sent_at.filter(|_| !covered.retransmitted);
        self.rtt_sample = match (acked.or(sacked_sent_at), seg.timestamps) {
            (Some(sent_at), _) => Some(now - sent_at),
            (None, Some(ts)) if self.timestamps && covered.records > 0 => {
                let ms = timestamp_clock(now).wrapping_sub(ts.ecr);
                Some(u64::from(ms) * 1_000_000)
            }
            _ => None,
        };
        if let Some(rtt) = self.rtt_sample {
            self.rto.sample(rtt, seg.ack, self.snd_nxt);
        }
    }

    /// `delivered` more bytes reached the receiver at `now` (§3.2: the connection's
    /// delivered count and time, and the end of an app-limited spell).
    fn note_delivered(&mut self, now: Nanos, delivered: u64) {
        if delivered == 0 {
            return;
        }
        self.delivered += delivered;
        self.delivered_time = now;
        if self.app_limited_until > 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
    }

    /// The delivery-rate sample of an ACK whose most recently sent delivered packet left
    /// at `sent_at` with rate state `tx` (§3.3, Linux `tcp_rate_gen`).
    fn rate_sample_from(
        &mut self,
        now: Nanos,
        tx: TxRate,
        sent_at: Nanos,
        rtt: Option<Nanos>,
        acked: u64,
        prior_in_flight: u64,
    ) -> RateSample {
        self.first_sent_time = sent_at;
        let send_elapsed = sent_at - tx.first_sent_time;
        let ack_elapsed = now - tx.delivered_time;
        let interval = send_elapsed.max(ack_elapsed);
        // §3.3: an interval shorter than the path's min RTT comes from ACK
        // compression and would overstate the rate; the sample is not used.
        let valid = self.rto.min_rtt().is_some_and(|m| interval >= m);
        RateSample {
            prior_delivered: tx.delivered,
            delivered: self.delivered - tx.delivered,
            interval_ns: if valid { interval } else { 0 },
            rtt_ns: rtt,
            app_limited: tx.app_limited,
            acked,
            losses: 0,
            prior_in_flight,
        }
    }

    /// Hands every ACK's delivery-rate sample to the algorithm (an ACK that delivered
    /// nothing new gives an empty one); a model-based algorithm (BBR) then sets cwnd
    /// itself, in recovery too.
    fn apply_rate_sample(&mut self, now: Nanos) {
        let prior_in_flight = self.in_flight();
        let rs = self
            .rate_sample
            .take()
            .unwrap_or_else(|| RateSample::invalid(self.delivered, 0, prior_in_flight));
        if let Some(cwnd) = self.cc.on_rate_sample(&self.cc_state(now), &rs) {
            self.cwnd = cwnd;
        }
        if let Some(ssthresh) = self.cc.take_ssthresh() {
            self.ssthresh = ssthresh;
        }
    }

    /// The next time the sender wants to be woken: the retransmission or the persist
    /// timer, or the pacing release of a segment that is waiting.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let pacing = self.pacing_wait.then_some(self.next_send_at);
        [
            self.timer,
            self.persist,
            pacing,
            self.reo_timer,
            self.probe_timer,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires the retransmission timer if it is due (RFC 6298 §5.4–5.6, RFC 5681 §3.1).
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        if self.pacing_wait && now >= self.next_send_at {
            self.pacing_wait = false;
            self.try_send(now, out);
        }
        if self.persist.is_some_and(|deadline| deadline <= now) {
            self.on_persist_timer(now, out);
        }
        if self.reo_timer.is_some_and(|deadline| deadline <= now) {
            self.on_reo_timer(now, out);
        }
        if self.probe_timer.is_some_and(|deadline| deadline <= now) {
            self.on_probe_timer(now, out);
        }
        match self.timer {
            Some(deadline) if deadline <= now => {}
            _ => return,
        }
        self.rto.back_off();
        if !self.established {
            self.syn_retransmitted = true;
            out.push(self.syn(now));
            self.timer = Some(now + self.rto.rto());
            return;
        }
        self.restart_linux_hystart(now);
        if self.rack_mode() {
            self.on_rto_rack(now, out);
            self.try_send(now, out);
            return;
        }
        self.stats.timeouts += 1;
        // The reduction first, then the timeout hook: CUBIC's §4.8 restart (K = 0) must
        // undo the W_max that the reduction records, not be undone by it.
        let state = self.cc_state(now);
        self.ssthresh = self.cc.ssthresh_after_loss(&state);
        self.note_reduction();
        self.cc.on_timeout(&state);
        self.in_recovery = false;
        // RFC 6582 §3.2 step 1 heuristics: no fast retransmit for data sent before the timeout.
        self.go_back_n(now, out);
    }

    /// Loss response shared by the timeout and Tahoe's fast retransmit (RFC 5681 §3.1),
    /// once the caller has set ssthresh: a loss window of one segment, and every
    /// outstanding segment resent as the window reopens, none of them giving an RTT sample
    /// (Karn).
    fn go_back_n(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.cwnd = self.mss;
        self.dupacks = 0;
        self.recover = Some(self.snd_max);
        self.snd_nxt = self.snd_una;
        self.high_rxt = self.snd_una;
        self.timed.clear();
        self.timer = None;
        self.try_send(now, out);
    }

    /// Data presumed in the network: with RACK Linux's tcp_packets_in_flight (sent and not
    /// acknowledged, less what is SACKed or deemed lost, plus retransmissions still out),
    /// during SACK recovery RFC 6675's pipe, otherwise everything sent and not acknowledged
    /// (RFC 5681's FlightSize). What the trace reports as flight, as TCP_INFO gives the
    /// emu backend's.
    pub fn in_flight(&self) -> u64 {
        if self.rack_mode() {
            self.rtx.in_flight()
        } else if self.sack_ok && self.in_recovery {
            self.scoreboard
                .pipe(self.snd_una, self.snd_max, self.high_rxt, self.mss)
        } else {
            self.snd_max - self.snd_una
        }
    }

    /// Window growth on an ACK of new data outside recovery: the algorithm's, except that
    /// during the initial slow start HyStart++ may slow it to Conservative Slow Start and
    /// then end slow start by setting ssthresh = cwnd (RFC 9406 §4.2). Only the initial
    /// slow start uses it (§4.3): after a loss ssthresh is finite and it stays out.
    /// With `cwnd_validation`, nothing grows while cwnd is not what limits the sender.
    fn grow_window(&mut self, now: Nanos, acked: u64) {
        self.linux_hystart_update(now);
        if self.cfg.cwnd_validation && !self.is_cwnd_limited() {
            return;
        }
        let grown = self.cc.on_ack(&self.cc_state(now), acked);
        let in_initial_slow_start = self.ssthresh == u64::MAX;
        match &mut self.hystart {
            Some(h) if in_initial_slow_start => {
                match h.on_ack(self.snd_una, self.snd_nxt, self.rtt_sample) {
                    Phase::SlowStart => self.cwnd = grown,
                    Phase::Css { .. } => {
                        self.cwnd += grown.saturating_sub(self.cwnd) / CSS_GROWTH_DIVISOR;
                    }
                    Phase::Done => {
                        self.cwnd += grown.saturating_sub(self.cwnd) / CSS_GROWTH_DIVISOR;
                        self.ssthresh = self.cwnd;
                    }
                }
            }
            _ => self.cwnd = grown,
        }
    }

    /// Linux `cubictcp_acked`: HyStart sees every ACK's RTT sample before cwnd grows, and
    /// ends slow start by setting ssthresh = cwnd.
    fn linux_hystart_update(&mut self, now: Nanos) {
        let (Some(h), Some(rs)) = (&mut self.linux_hystart, &self.rate_sample) else {
            return;
        };
        let Some(rtt) = rs.rtt_ns.filter(|&rtt| rtt > 0) else {
            return;
        };
        if self.cwnd >= self.ssthresh {
            return;
        }
        let pacing_rate = self
            .rto
            .srtt()
            .filter(|&srtt| srtt > 0)
            .map_or(0, |srtt| 2 * self.cwnd * 1_000_000_000 / srtt);
        let sample = hystart_linux::AckSample {
            now,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt,
            cwnd_segments: self.cwnd / self.mss,
            pacing_rate,
        };
        if h.on_ack(sample) {
            self.ssthresh = self.cwnd;
        }
    }

    /// A timeout starts a new slow start, which Linux's HyStart may end again
    /// (`cubictcp_state` on TCP_CA_Loss).
    fn restart_linux_hystart(&mut self, now: Nanos) {
        if let Some(h) = &mut self.linux_hystart {
            h.restart(now, self.snd_max);
        }
    }

    fn cc_state(&self, now: Nanos) -> CcState {
        CcState {
            now,
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            mss: self.mss,
            flight: self.in_flight(),
            srtt: self.rto.srtt(),
            min_rtt: self.rto.min_rtt(),
            abc: self.cfg.abc,
            delivered: self.delivered,
            lost: self.rtx.lost_total,
            ca_state: if self.rack_mode() {
                self.ca_state
            } else if self.in_recovery {
                CaState::Recovery
            } else {
                CaState::Open
            },
            next_send_at: self.next_send_at,
        }
    }

    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    pub fn rwnd(&self) -> u64 {
        self.rwnd
    }

    pub fn rto(&self) -> &RtoEstimator {
        &self.rto
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
}

#[cfg(test)]
mod tests;
