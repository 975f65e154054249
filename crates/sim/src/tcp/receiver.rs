//! The receiving side of a connection: reassembly, the receive buffer and its advertised
//! window with receiver silly-window avoidance, window updates when the application
//! drains the buffer, and the ACK policy (immediate or delayed).

use std::collections::VecDeque;

use super::ecn::EcnEcho;
use super::ranges::RangeSet;
use super::rcvbuf::{self, AutoRcvBuf, DataArrival};
use super::segment::{MAX_SACK_BLOCKS, MAX_SACK_BLOCKS_WITH_TIMESTAMPS, TIMESTAMPS_OPTION_BYTES};
use super::{timestamp_clock, window_shift_for, BufferSize, EcnMode, Segment, Timestamps};
use crate::engine::Nanos;

/// RFC 5681 §4.2 / RFC 1122 §4.2.3.2: ACK at least every second segment.
const SEGMENTS_PER_DELAYED_ACK: u32 = 2;
/// Linux TCP_MAX_QUICKACKS: the most segments quick-ACK mode acknowledges one by one.
const MAX_QUICKACKS: u64 = 16;

#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    pub mss: u32,
    /// The receive buffer, which tcplab takes as the largest window offered; or "auto",
    /// Linux's autotuned buffer (tcp/rcvbuf.rs), whose window clamp grows with the reads.
    pub rcvbuf: BufferSize,
    pub window_scaling: bool,
    pub sack: bool,
    pub timestamps: bool,
    pub delayed_ack: bool,
    pub delack_timeout_ns: Nanos,
    /// Linux's quick-ACK mode (`tcp_incr_quickack`, `tcp_enter_quickack_mode`): the first
    /// data of a connection, and data that was already received, make the next segments
    /// be acknowledged one by one, so that the peer's slow start is not slowed by delayed
    /// ACKs.
    pub quickack: bool,
    /// D-SACK (RFC 2883, Linux `net.ipv4.tcp_dsack`): a segment that brings only data
    /// already received is reported in the first SACK block of the next ACK.
    pub dsack: bool,
    /// Linux's receive-window growth (`tcp_grow_window`) from this many segments: the
    /// window offered starts there and grows by two segments per data segment received, up
    /// to the buffer; while it grows, every segment is acknowledged at once. None offers
    /// the whole buffer from the start.
    pub initial_rwnd: Option<u64>,
    /// ECN (RFC 3168): accepted when the SYN asks for it and this allows it.
    pub ecn: EcnMode,
}

/// Linux `tcp_event_data_recv`: segments shorter than this do not grow the window.
const MIN_GROWING_SEGMENT: u64 = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckDue {
    None,
    SynAck,
    Now,
    At(Nanos),
}

#[derive(Debug, Default, Clone, Copy)]
pub struct ReceiverStats {
    pub segments: u64,
    pub acks_sent: u64,
    pub out_of_order: u64,
    /// ACKs sent because the application's reads opened the window, not because data came.
    pub window_updates: u64,
}

pub struct Receiver {
    cfg: ReceiverConfig,
    established: bool,
    rcv_nxt: u64,
    /// Out-of-order data held for reassembly.
    ooo: RangeSet,
    /// SACK negotiated (both SYNs carried SACK-permitted).
    sack: bool,
    /// The out-of-order blocks most recently added to, most recent first (RFC 2018 §4),
    /// each as the range it held then; at most [`MAX_SACK_BLOCKS`], as Linux keeps
    /// (`selective_acks`, TCP_NUM_SACKS).
    recent: VecDeque<(u64, u64)>,
    /// The duplicate the next ACK reports first (Linux `duplicate_sack[0]`: a later one
    /// replaces it).
    duplicate: Option<(u64, u64)>,
    /// Timestamps negotiated, and RFC 7323 §4.3 TS.Recent with Last.ACK.sent.
    timestamps: bool,
    ts_recent: u32,
    last_ack_sent: u64,
    /// In-order bytes the application has not read yet.
    unread: u64,
    /// The right edge of the window last offered, RCV.NXT + RCV.WND as sent.
    rcv_adv: u64,
    /// The payload of the peer's full segments (RFC 1122's Eff.snd.MSS): the smaller MSS
    /// of the two SYNs, less the timestamps option when it is in use (RFC 6691).
    peer_mss: u64,
    /// The ACK now due is a window update.
    window_update: bool,
    /// Shift we apply to our window field; 0 unless both SYNs offered scaling.
    rcv_wscale: u8,
    offer_wscale: bool,
    ack_due: AckDue,
    segments_since_ack: u32,
    /// Segments still to be acknowledged at once in quick-ACK mode.
    quickacks: u64,
    /// The largest window that may be offered now (Linux `rcv_ssthresh`).
    rcv_ssthresh: u64,
    /// The buffer windows are offered from, in window bytes: `cfg.rcvbuf`, or the
    /// autotuned buffer's window clamp.
    rcvbuf: u64,
    /// Linux's receive-buffer autotuning, for `rcvbuf = "auto"`.
    autotune: Option<Box<AutoRcvBuf>>,
    ecn: EcnEcho,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        // Until the SYN sets it up, an autotuned buffer offers what its SYN would.
        let rcvbuf = match cfg.rcvbuf {
            BufferSize::Bytes(bytes) => bytes,
            BufferSize::Auto(_) => rcvbuf::syn_window(u64::from(cfg.mss)),
        };
        Self {
            established: false,
            rcv_nxt: 0,
            ooo: RangeSet::default(),
            sack: false,
            recent: VecDeque::new(),
            duplicate: None,
            timestamps: false,
            ts_recent: 0,
            last_ack_sent: 0,
            unread: 0,
            rcv_adv: 0,
            peer_mss: u64::from(cfg.mss),
            window_update: false,
            rcv_wscale: 0,
            offer_wscale: false,
            ack_due: AckDue::None,
            segments_since_ack: 0,
            quickacks: 0,
            rcv_ssthresh: rcvbuf,
            rcvbuf,
            autotune: cfg.rcvbuf.is_auto().then(|| Box::new(AutoRcvBuf::new())),
            ecn: EcnEcho::default(),
            stats: ReceiverStats::default(),
            cfg,
        }
    }

    /// Free receive buffer, the window we can offer (RFC 9293 §3.8.6).
    fn free(&self) -> u64 {
        self.rcvbuf.saturating_sub(self.unread)
    }

    /// The window the 16-bit field describes for an offer of `bytes`, given our shift:
    /// without scaling it cannot exceed 65535 bytes (RFC 7323 §2). With scaling, Linux
    /// rounds the offer up to a whole unit of the scale, so that a window smaller than
    /// one unit (the initial window of ten segments at shift 14) is not scaled away to
    /// zero (`__tcp_select_window`: ALIGN(window, 1 << rcv_wscale)); here only where the
    /// free buffer holds the rounded offer, else down.
    fn describable(&self, bytes: u64) -> u64 {
        let unit = 1u64 << self.rcv_wscale;
        let up = bytes.div_ceil(unit) * unit;
        let offer = if up <= self.free() { up } else { bytes };
        (offer >> self.rcv_wscale).min(65_535) << self.rcv_wscale
    }

    /// The window offered now. RFC 1122 §4.2.3.3 receiver SWS avoidance: the right edge
    /// moves only when it can move by at least min(rcvbuf / 2, MSS); until then the offer
    /// keeps the old edge and shrinks as data arrives, so a slow reader freeing a few
    /// bytes at a time never invites small segments.
    pub fn advertised_window(&self) -> u64 {
        let whole = self.describable(self.free().min(self.rcv_ssthresh));
        let step = (self.rcvbuf / 2).min(self.peer_mss);
        if self.rcv_nxt + whole >= self.rcv_adv + step {
            whole
        } else {
            self.describable(self.rcv_adv.saturating_sub(self.rcv_nxt))
        }
    }

    fn window_field(&self) -> u16 {
        (self.advertised_window() >> self.rcv_wscale) as u16
    }

    pub fn on_segment(&mut self, now: Nanos, seg: &Segment) {
        if seg.syn {
            self.on_syn(now, seg);
            return;
        }
        if !self.established || seg.len == 0 {
            return; // a one-way transfer: the sender's pure ACKs carry nothing for us
        }
        if self.stats.segments == 0 {
            // Linux `tcp_event_data_recv`: the first data starts quick-ACK mode.
            self.enter_quickack_mode();
        }
        self.stats.segments += 1;
        // RFC 7323 §4.3 (2): echo the TSval of the segment holding the next byte we owe an
        // ACK for, so that a delayed ACK reports the older of two segments.
        if let Some(ts) = seg.timestamps {
            if seg.seq <= self.last_ack_sent && self.last_ack_sent < seg.end() {
                self.ts_recent = ts.val;
            }
        }
        let echo_now = self.ecn.on_data(seg.cwr, seg.ce);
        let window_end = self.rcv_nxt + self.advertised_window();
        let end = seg.end().min(window_end);
        if end > self.rcv_nxt {
            self.autotune_on_data(now, seg, end);
            // Linux `tcp_data_queue_ofo`: without SACK, data out of order leaves the window
            // alone, so that its ACKs stay duplicates and trigger fast retransmit.
            if seg.seq <= self.rcv_nxt || self.sack {
                self.grow_window(u64::from(seg.len));
            }
        }
        if seg.seq < self.rcv_nxt {
            // RFC 2883 §4 (1), Linux `tcp_data_queue`: the part below RCV.NXT was a
            // duplicate.
            self.report_duplicate(seg.seq, seg.end().min(self.rcv_nxt));
        }
        if end <= self.rcv_nxt {
            // Old or out-of-window data: RFC 9293 §3.10.7.4 answers with an ACK, and Linux
            // (`tcp_data_queue`) enters quick-ACK mode: the sender is recovering.
            self.enter_quickack_mode();
            self.ack_due = AckDue::Now;
        } else if seg.seq > self.rcv_nxt {
            // RFC 5681 §4.2: an out-of-order segment gets an immediate duplicate ACK.
            self.stats.out_of_order += 1;
            if let Some(held) = self.ooo.first_overlap(seg.seq, end) {
                // RFC 2883 §4 (2), Linux `tcp_data_queue_ofo`: data already held out of
                // order; the block holding it follows (it becomes the most recent).
                self.report_duplicate(held.0, held.1);
            }
            self.insert_out_of_order(seg.seq, end);
            self.grow_for_out_of_order();
            self.ack_due = AckDue::Now;
        } else {
            let filled_gap = !self.ooo.is_empty();
            self.advance(end);
            if filled_gap {
                // RFC 5681 §4.2: a segment that fills (part of) a gap is ACKed at once.
                self.ack_due = AckDue::Now;
            } else {
                self.schedule_ack(now);
            }
        }
        if echo_now {
            // Linux `tcp_ecn_check_ce`: the first CE is echoed at once.
            self.ack_due = AckDue::Now;
        }
    }

    fn on_syn(&mut self, now: Nanos, seg: &Segment) {
        self.established = true;
        self.offer_wscale = self.cfg.window_scaling;
        if self.cfg.window_scaling && seg.wscale_option.is_some() {
            self.rcv_wscale = match self.cfg.rcvbuf {
                BufferSize::Bytes(bytes) => window_shift_for(bytes),
                BufferSize::Auto(_) => rcvbuf::window_scale(),
            };
        }
        self.sack = self.cfg.sack && seg.sack_permitted;
        // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR.
        self.ecn.enabled = self.cfg.ecn.accepts() && seg.ece && seg.cwr;
        if let Some(mss) = seg.mss_option {
            self.peer_mss = self.peer_mss.min(u64::from(mss));
        }
        if let (true, Some(ts)) = (self.cfg.timestamps, seg.timestamps) {
            self.timestamps = true;
            self.ts_recent = ts.val;
            self.peer_mss -= u64::from(TIMESTAMPS_OPTION_BYTES);
        }
        if let Some(auto) = &mut self.autotune {
            // tcp_select_initial_window: the initial window is rcv_ssthresh. The clamp of
            // tcp_init_buffer_space applies once the handshake completes: at once on an
            // active open (this is the SYN-ACK), else with the first data (on_data), so a
            // SYN-ACK offers the whole initial window.
            let (rcv_wnd, clamp) = auto.establish(
                seg.has_ack.then_some(now),
                self.peer_mss,
                self.timestamps,
                self.cfg.initial_rwnd,
            );
            self.rcvbuf = if seg.has_ack {
                clamp
            } else {
                auto.initial_space()
            };
            self.rcv_ssthresh = rcv_wnd.min(self.rcvbuf);
        } else if let Some(segments) = self.cfg.initial_rwnd {
            // Linux `tcp_select_initial_window`: initrwnd segments of the payload MSS.
            self.rcv_ssthresh = (segments * self.peer_mss).min(self.rcvbuf);
        }
        self.ack_due = AckDue::SynAck;
    }

    fn insert_out_of_order(&mut self, start: u64, end: u64) {
        self.ooo.insert(start, end);
        if self.sack {
            // One entry per block: a segment that extends or joins blocks moves the joined
            // block to the front (Linux `tcp_sack_new_ofo_skb`, `tcp_sack_maybe_coalesce`),
            // so that a run of contiguous arrivals does not push the other blocks out.
            let block = self.ooo.containing(start).unwrap_or((start, end));
            self.recent.retain(|&(s, e)| e <= block.0 || block.1 <= s);
            self.recent.push_front(block);
            self.recent.truncate(MAX_SACK_BLOCKS);
        }
    }

    /// Linux `tcp_dsack_set`, with SACK and D-SACK on.
    fn report_duplicate(&mut self, start: u64, end: u64) {
        if self.sack && self.cfg.dsack && start < end {
            self.duplicate = Some((start, end));
        }
    }

    /// Moves `rcv_nxt` to `end`, then through any held data that is now contiguous.
    fn advance(&mut self, end: u64) {
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        while let Some((_, stop)) = self.ooo.pop_first_reaching(self.rcv_nxt) {
            self.rcv_nxt = self.rcv_nxt.max(stop);
        }
        self.unread += self.rcv_nxt - before;
    }

    /// RFC 2018 §4: the first block holds the most recently received segment, the others
    /// repeat the most recently reported blocks, as many distinct ones as fit; each block is
    /// a whole out-of-order range. A D-SACK block goes before them, in this ACK only (RFC
    /// 2883 §4; Linux `tcp_options_write` clears `rx_opt.dsack` once written).
    fn attach_sack_blocks(&mut self, seg: &mut Segment) {
        let rcv_nxt = self.rcv_nxt;
        self.recent.retain(|&(_, e)| e > rcv_nxt);
        let room = if self.timestamps {
            MAX_SACK_BLOCKS_WITH_TIMESTAMPS
        } else {
            MAX_SACK_BLOCKS
        };
        if let Some(block) = self.duplicate.take() {
            seg.sack[0] = block;
            seg.sack_len = 1;
        }
        for &(start, _) in &self.recent {
            if usize::from(seg.sack_len) == room {
                break;
            }
            if let Some(block) = self.ooo.containing(start) {
                seg.sack[usize::from(seg.sack_len)] = block;
                seg.sack_len += 1;
            }
        }
    }

    /// Linux `tcp_grow_window`: while the offered window is below the buffer, each data
    /// segment raises its ceiling by max(2·MSS, 2·length), and is acknowledged at once
    /// (`icsk_ack.quick |= 1`).
    fn grow_window(&mut self, len: u64) {
        let room = self.free().saturating_sub(self.rcv_ssthresh);
        let grows = self.cfg.initial_rwnd.is_some() || self.autotune.is_some();
        if !grows || room == 0 || len < MIN_GROWING_SEGMENT {
            return;
        }
        self.rcv_ssthresh += room.min((2 * self.peer_mss).max(2 * len));
        self.quickacks = self.quickacks.max(1);
    }

    /// Linux `tcp_incr_quickack`: up to 16 quick ACKs, and no more than half the window
    /// offered, in segments (at least 2).
    fn enter_quickack_mode(&mut self) {
        if self.cfg.quickack {
            let half_window = (self.advertised_window() / (2 * self.peer_mss)).max(2);
            self.quickacks = self.quickacks.max(half_window.min(MAX_QUICKACKS));
        }
    }

    /// RFC 1122 §4.2.3.2 / RFC 5681 §4.2: with delayed ACKs, ACK every second segment or
    /// when the timer runs out, whichever comes first; in quick-ACK mode, at once.
    fn schedule_ack(&mut self, now: Nanos) {
        self.segments_since_ack += 1;
        if !self.cfg.delayed_ack
            || self.quickacks > 0
            || self.segments_since_ack >= SEGMENTS_PER_DELAYED_ACK
        {
            self.ack_due = AckDue::Now;
        } else if self.ack_due == AckDue::None {
            self.ack_due = AckDue::At(now + self.cfg.delack_timeout_ns);
        }
    }

    /// In-order bytes waiting for the application.
    pub fn readable(&self) -> u64 {
        self.unread
    }

    /// The application reads up to `max` bytes; returns how many it got.
    pub fn read(&mut self, max: u64) -> u64 {
        let n = self.unread.min(max);
        self.unread -= n;
        if n > 0 {
            if let Some(auto) = &mut self.autotune {
                // Linux `tcp_recvmsg_locked` calls `tcp_rcv_space_adjust` after each skb
                // it copies, with what is still queued then; the skbs of one read are
                // copied at one time, so only the first can start a new measure. A read
                // that empties a queue a filled hole had released counts that data as
                // still queued, as the kernel's does.
                let first = n.min(self.peer_mss);
                let copied_seq = self.rcv_nxt - self.unread - n + first;
                if let Some(clamp) = auto.on_read(copied_seq, self.unread + n - first) {
                    self.rcvbuf = clamp;
                }
            }
            self.consider_window_update();
        }
        n
    }

    /// An autotuned buffer learns from a data segment that brings new data up to `end`
    /// (rcvbuf.rs `on_data`); a new ratio of payload to memory moves the window clamp,
    /// and `rcv_ssthresh` with it as Linux's `tcp_set_window_clamp` does: a lower clamp
    /// lowers it, a higher one raises it to the window last offered.
    fn autotune_on_data(&mut self, now: Nanos, seg: &Segment, end: u64) {
        let in_order = seg.seq <= self.rcv_nxt;
        let rcv_wnd = self.rcv_adv.saturating_sub(self.last_ack_sent);
        let Some(auto) = &mut self.autotune else {
            return;
        };
        let arrival = DataArrival {
            now,
            len: u64::from(seg.len),
            tsecr: seg.timestamps.filter(|_| self.timestamps).map(|ts| ts.ecr),
            in_order,
            rcv_nxt: if in_order { end } else { self.rcv_nxt },
            rcv_wnd,
            queued: self.unread > 0,
        };
        if let Some(clamp) = auto.on_data(arrival) {
            self.rcv_ssthresh = if clamp < self.rcvbuf {
                self.rcv_ssthresh.min(clamp)
            } else {
                self.rcv_ssthresh.max(rcv_wnd.min(clamp))
            };
            self.rcvbuf = clamp;
        }
    }

    /// Linux `tcp_data_queue_ofo` → `tcp_rcvbuf_grow`: an autotuned buffer grows to hold
    /// what is held out of order as well.
    fn grow_for_out_of_order(&mut self) {
        let Some(auto) = &mut self.autotune else {
            return;
        };
        let beyond = self.ooo.iter().next_back().map_or(0, |(_, end)| end) - self.rcv_nxt;
        if let Some(clamp) = auto.on_out_of_order(beyond) {
            self.rcvbuf = clamp;
        }
    }

    /// After a read, a window update goes out when the right edge can move by at least two
    /// segments or half the buffer, as 4.4BSD's tcp_output decides (Wright & Stevens, TCP/IP
    /// Illustrated Vol. 2, §26.3); a smaller opening waits for the next ACK. A slow
    /// receiver's updates are the extra control packets of seed 003's downstream (Fig. 8).
    fn consider_window_update(&mut self) {
        if !self.established || matches!(self.ack_due, AckDue::Now | AckDue::SynAck) {
            return;
        }
        let opens = (self.rcv_nxt + self.advertised_window()).saturating_sub(self.rcv_adv);
        if opens >= 2 * self.peer_mss || 2 * opens >= self.rcvbuf {
            self.ack_due = AckDue::Now;
            self.window_update = true;
        }
    }

    /// Emits the ACK that is due by `now`, if any.
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let due = match self.ack_due {
            AckDue::None => false,
            AckDue::SynAck | AckDue::Now => true,
            AckDue::At(t) => t <= now,
        };
        if !due {
            return;
        }
        if self.window_update {
            self.stats.window_updates += 1;
        }
        let seg = self.acknowledgement(now);
        out.push(seg);
        self.stats.acks_sent += 1;
    }

    /// The ACK fields for a data segment this host sends the other way: every segment after
    /// the SYN carries them (RFC 9293 §3.10.7.4), so it takes the place of any ACK due. The
    /// SYN-ACK, while ours is still owed.
    pub fn piggyback(&mut self, now: Nanos) -> Option<Segment> {
        self.established.then(|| self.acknowledgement(now))
    }

    /// The SYN-ACK answering the SYN just handed to `on_segment`, for a connection opened
    /// without a handshake: given to the sender at setup, never sent.
    pub fn hand_over_syn_ack(&mut self, now: Nanos) -> Segment {
        debug_assert!(self.ack_due == AckDue::SynAck);
        self.acknowledgement(now)
    }

    fn acknowledgement(&mut self, now: Nanos) -> Segment {
        let mut seg = if self.ack_due == AckDue::SynAck {
            // RFC 7323 §2.2: the window in a SYN is never scaled.
            let window = self.free().min(self.rcv_ssthresh).min(65_535);
            self.rcv_adv = window;
            Segment {
                syn: true,
                has_ack: true,
                window: window as u16,
                mss_option: Some(self.cfg.mss as u16),
                wscale_option: self.offer_wscale.then_some(self.rcv_wscale),
                sack_permitted: self.sack,
                // §6.1.1: the ECN-setup SYN-ACK carries ECE without CWR.
                ece: self.ecn.enabled,
                ..Segment::default()
            }
        } else {
            let field = self.window_field();
            self.rcv_adv = self
                .rcv_adv
                .max(self.rcv_nxt + (u64::from(field) << self.rcv_wscale));
            let mut ack = Segment::pure_ack(self.rcv_nxt, field);
            ack.ece = self.ecn.ece();
            if self.sack {
                self.attach_sack_blocks(&mut ack);
            }
            ack
        };
        if self.timestamps {
            seg.timestamps = Some(Timestamps {
                val: timestamp_clock(now),
                ecr: self.ts_recent,
            });
        }
        self.last_ack_sent = self.rcv_nxt;
        self.segments_since_ack = 0;
        self.quickacks = self.quickacks.saturating_sub(1);
        self.ack_due = AckDue::None;
        self.window_update = false;
        seg
    }

    pub fn next_deadline(&self) -> Option<Nanos> {
        match self.ack_due {
            AckDue::At(t) => Some(t),
            _ => None,
        }
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn receiver(delayed_ack: bool, rcvbuf: u64, window_scaling: bool) -> Receiver {
        Receiver::new(ReceiverConfig {
            mss: 1460,
            rcvbuf: BufferSize::Bytes(rcvbuf),
            window_scaling,
            sack: true,
            timestamps: true,
            delayed_ack,
            delack_timeout_ns: 200 * MS,
            quickack: false,
            dsack: false,
            initial_rwnd: None,
            ecn: EcnMode::Off,
        })
    }

    /// Takes a SYN offering window scaling (shift 0) and answers it.
    fn accept_scaled_syn(r: &mut Receiver) {
        r.on_segment(
            0,
            &Segment {
                syn: true,
                wscale_option: Some(0),
                ..Segment::default()
            },
        );
        r.poll(0, &mut Vec::new());
    }

    fn established(delayed_ack: bool) -> Receiver {
        let mut r = receiver(delayed_ack, 65_535, false);
        r.on_segment(
            0,
            &Segment {
                syn: true,
                ..Segment::default()
            },
        );
        r.poll(0, &mut Vec::new());
        r
    }

    fn acks(r: &mut Receiver, now: Nanos) -> Vec<Segment> {
        let mut out = Vec::new();
        r.poll(now, &mut out);
        out
    }

    #[test]
    fn without_delayed_acks_every_segment_is_acked() {
        let mut r = established(false);
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        assert_eq!(acks(&mut r, MS)[0].ack, 1460);
    }

    #[test]
    fn delayed_ack_waits_for_a_second_segment() {
        let mut r = established(true);
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        assert!(acks(&mut r, MS).is_empty());
        r.on_segment(2 * MS, &Segment::data(1460, 1460, 0, 0));
        assert_eq!(acks(&mut r, 2 * MS)[0].ack, 2920);
    }

    #[test]
    fn quick_ack_mode_acks_the_first_segments_one_by_one() {
        // Linux tcp_incr_quickack: min(16, window / (2 · MSS)) = 16 quick ACKs here.
        let mut r = Receiver::new(ReceiverConfig {
            quickack: true,
            ..receiver(true, 1 << 20, true).cfg
        });
        accept_scaled_syn(&mut r);
        let mut acked_at_once = 0;
        for i in 0..20u64 {
            r.on_segment(MS, &Segment::data(i * 1460, 1460, 0, 0));
            acked_at_once += acks(&mut r, MS).len();
        }
        assert_eq!(acked_at_once, 16 + 2);
        // A segment received twice starts the mode again.
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        acks(&mut r, MS);
        r.on_segment(MS, &Segment::data(20 * 1460, 1460, 0, 0));
        assert_eq!(acks(&mut r, MS).len(), 1);
    }

    #[test]
    fn the_window_grows_from_what_the_syn_offered_and_each_segment_is_acked_meanwhile() {
        // Linux tcp_grow_window: 10 segments at first, + 2 · MSS per segment received,
        // each segment acknowledged at once while the window grows. Nobody reads here, so
        // it stops growing when it meets the free buffer, after 20 segments.
        let mut r = Receiver::new(ReceiverConfig {
            initial_rwnd: Some(10),
            ..receiver(true, 100_000, true).cfg
        });
        r.on_segment(
            0,
            &Segment {
                syn: true,
                wscale_option: Some(0),
                ..Segment::default()
            },
        );
        let mut syn_ack = Vec::new();
        r.poll(0, &mut syn_ack);
        assert_eq!(syn_ack[0].window, 14_600);
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        assert_eq!(acks(&mut r, MS).len(), 1);
        assert_eq!(r.advertised_window(), 14_600 + 2 * 1460);
        for i in 1..20u64 {
            r.on_segment(MS, &Segment::data(i * 1460, 1460, 0, 0));
            assert_eq!(acks(&mut r, MS).len(), 1, "segment {i}");
        }
        r.on_segment(MS, &Segment::data(20 * 1460, 1460, 0, 0));
        assert!(acks(&mut r, MS).is_empty());
        assert_eq!(r.advertised_window(), 100_000 - 21 * 1460);
    }

    #[test]
    fn without_sack_data_out_of_order_leaves_the_window_alone() {
        // Linux tcp_data_queue_ofo grows the window for data out of order only with SACK,
        // so that without it the ACKs stay duplicates (RFC 5681 §2) and trigger fast
        // retransmit. The SYN here carries no SACK-permitted.
        let mut r = Receiver::new(ReceiverConfig {
            initial_rwnd: Some(10),
            ..receiver(true, 100_000, true).cfg
        });
        accept_scaled_syn(&mut r);
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        acks(&mut r, MS);
        let window = r.advertised_window();
        for i in 2..5u64 {
            r.on_segment(MS, &Segment::data(i * 1460, 1460, 0, 0));
            let dup = acks(&mut r, MS);
            assert_eq!(dup.len(), 1);
            assert_eq!(dup[0].ack, 1460);
        }
        assert_eq!(r.advertised_window(), window);
    }

    #[test]
    fn a_scaled_window_smaller_than_one_unit_is_rounded_up_not_away() {
        // Linux __tcp_select_window: ALIGN(window, 1 << rcv_wscale). With a 512 MiB
        // buffer the shift is 14, and the initial ten segments (14,600 B) would be a zero
        // window if rounded down; Linux offers one unit, 16,384 B.
        let mut r = Receiver::new(ReceiverConfig {
            initial_rwnd: Some(10),
            ..receiver(true, 512 << 20, true).cfg
        });
        accept_scaled_syn(&mut r);
        assert_eq!(r.rcv_wscale, 14);
        assert_eq!(r.advertised_window(), 16_384);
        assert_eq!(r.window_field(), 1);
    }

    #[test]
    fn an_autotuned_buffer_does_not_count_a_released_hole_as_read_in_one_round_trip() {
        // Linux tcp_rcv_space_adjust runs after each skb a read copies, with what is still
        // queued (inq) subtracted: when a retransmission fills a hole, the first copy sees
        // the released data as queued and starts a new measure instead of growing the
        // buffer for it. Forty segments held out of order, then the hole filled, a round
        // trip (100 ms) after the measure began: the clamp stays where the out-of-order
        // data put it.
        let mut r = Receiver::new(ReceiverConfig {
            rcvbuf: BufferSize::Auto(super::super::Auto::Auto),
            timestamps: true,
            ..receiver(false, 0, true).cfg
        });
        let ts = |ecr| {
            Some(Timestamps {
                val: 1,
                ecr: timestamp_clock(ecr),
            })
        };
        r.on_segment(
            0,
            &Segment {
                syn: true,
                wscale_option: Some(7),
                timestamps: ts(0),
                ..Segment::default()
            },
        );
        acks(&mut r, 0);
        let data = |seq: u64| Segment {
            timestamps: ts(0),
            ..Segment::data(seq * 1448, 1448, 0, 0)
        };
        r.on_segment(100 * MS, &data(0));
        r.read(u64::MAX);
        for k in 2..42 {
            r.on_segment(150 * MS, &data(k));
        }
        let held = r.rcvbuf;
        r.on_segment(250 * MS, &data(1));
        assert_eq!(r.read(u64::MAX), 41 * 1448);
        assert_eq!(r.rcvbuf, held);
    }

    #[test]
    fn delayed_ack_timer_acks_a_lone_segment() {
        let mut r = established(true);
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        assert_eq!(r.next_deadline(), Some(201 * MS));
        assert!(acks(&mut r, 200 * MS).is_empty());
        assert_eq!(acks(&mut r, 201 * MS)[0].ack, 1460);
        assert_eq!(r.next_deadline(), None);
    }

    #[test]
    fn out_of_order_segment_gets_an_immediate_duplicate_ack() {
        let mut r = established(true);
        r.on_segment(MS, &Segment::data(1460, 1460, 0, 0));
        assert_eq!(acks(&mut r, MS)[0].ack, 0);
    }

    #[test]
    fn filling_the_gap_acks_everything_at_once() {
        let mut r = established(true);
        r.on_segment(MS, &Segment::data(1460, 1460, 0, 0));
        r.on_segment(MS, &Segment::data(2920, 1460, 0, 0));
        acks(&mut r, MS);
        r.on_segment(2 * MS, &Segment::data(0, 1460, 0, 0));
        assert_eq!(acks(&mut r, 2 * MS)[0].ack, 4380);
        assert_eq!(r.read(u64::MAX), 4380);
    }

    #[test]
    fn window_is_the_free_buffer() {
        let mut r = established(false);
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        assert_eq!(acks(&mut r, MS)[0].window, 65_535 - 1460);
        r.read(1460);
        assert_eq!(r.advertised_window(), 65_535);
    }

    #[test]
    fn the_right_edge_moves_only_by_an_mss_or_half_the_buffer() {
        // RFC 1122 §4.2.3.3: freeing less than min(rcvbuf/2, MSS) leaves the offered right
        // edge where it was, so the window keeps shrinking as data arrives.
        let mut r = established(false);
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        acks(&mut r, MS);
        r.read(1000);
        assert_eq!(r.advertised_window(), 65_535 - 1460);
        r.on_segment(2 * MS, &Segment::data(1460, 500, 0, 0));
        assert_eq!(acks(&mut r, 2 * MS)[0].window, 65_535 - 1960);
        // 1000 + 960 bytes freed since the edge last moved: more than an MSS, so it moves.
        r.read(960);
        assert_eq!(r.advertised_window(), 65_535);
    }

    /// A receiver with an 8 KiB buffer (Windows 2000's default, seed 003 Table 2) whose
    /// application has not read the 7300 bytes that arrived.
    fn full_small_buffer() -> Receiver {
        let mut r = receiver(false, 8192, false);
        r.on_segment(
            0,
            &Segment {
                syn: true,
                ..Segment::default()
            },
        );
        acks(&mut r, 0);
        for k in 0..5u64 {
            r.on_segment(MS, &Segment::data(1460 * k, 1460, 0, 0));
        }
        assert_eq!(acks(&mut r, MS).last().unwrap().window, 892);
        r
    }

    #[test]
    fn a_slow_reader_sends_a_window_update_once_two_segments_fit_again() {
        // 4.4BSD tcp_output: a window update after the application reads when the right
        // edge can move by 2 MSS (or half the buffer); smaller reads send nothing.
        let mut r = full_small_buffer();
        for _ in 0..5 {
            r.read(512);
            assert!(acks(&mut r, 2 * MS).is_empty());
        }
        r.read(512);
        let update = acks(&mut r, 2 * MS);
        assert_eq!((update[0].ack, update[0].window), (7300, 892 + 3072));
        assert_eq!(r.stats.window_updates, 1);
    }

    #[test]
    fn a_window_probe_is_answered_at_once_with_the_current_window() {
        // RFC 9293 §3.8.6.1 / §3.10.7.4: a probe beyond a closed window is not accepted
        // but answered with an ACK that states the window; here the buffer is full
        // (fill the last 892 bytes first), then a read reopens it without an update
        // (less than two segments), and the next probe's ACK carries the open window.
        let mut r = full_small_buffer();
        r.on_segment(2 * MS, &Segment::data(7300, 892, 0, 0));
        assert_eq!(acks(&mut r, 2 * MS)[0].window, 0);
        r.on_segment(3 * MS, &Segment::data(8192, 1, 0, 0));
        assert_eq!((acks(&mut r, 3 * MS)[0].ack, r.readable()), (8192, 8192));
        r.read(2048);
        assert!(acks(&mut r, 4 * MS).is_empty());
        r.on_segment(5 * MS, &Segment::data(8192, 1, 0, 0));
        // The window is open again: the receiver keeps the probe's byte.
        let answer = acks(&mut r, 5 * MS);
        assert_eq!((answer[0].ack, answer[0].window), (8193, 2047));
    }

    #[test]
    fn reading_half_the_buffer_at_once_opens_it_with_one_update() {
        let mut r = full_small_buffer();
        r.read(4096);
        assert_eq!(acks(&mut r, 2 * MS)[0].window, 892 + 4096);
        assert_eq!(r.stats.window_updates, 1);
    }

    #[test]
    fn a_reader_that_keeps_up_sends_no_window_updates() {
        let mut r = established(true);
        let mut sent = 0;
        for k in 0..100u64 {
            r.on_segment(MS * k, &Segment::data(1460 * k, 1460, 0, 0));
            r.read(u64::MAX);
            sent += acks(&mut r, MS * k).len();
        }
        assert_eq!((sent, r.stats.window_updates), (50, 0));
    }

    #[test]
    fn a_piggybacked_ack_replaces_the_delayed_one() {
        let mut r = established(true);
        r.on_segment(MS, &Segment::data(0, 100, 0, 0));
        assert_eq!(r.next_deadline(), Some(201 * MS));
        let ack = r.piggyback(2 * MS).unwrap();
        assert_eq!((ack.ack, ack.has_ack), (100, true));
        assert_eq!(r.next_deadline(), None);
        assert!(acks(&mut r, 300 * MS).is_empty());
        assert_eq!(
            r.stats.acks_sent, 1,
            "only the SYN-ACK went as a segment of its own"
        );
    }

    #[test]
    fn window_is_capped_at_65535_without_scaling() {
        let mut r = receiver(false, 1 << 20, false);
        r.on_segment(
            0,
            &Segment {
                syn: true,
                wscale_option: Some(7),
                ..Segment::default()
            },
        );
        let syn_ack = acks(&mut r, 0);
        assert_eq!(syn_ack[0].window, 65_535);
        assert_eq!(syn_ack[0].wscale_option, None);
        assert_eq!(r.advertised_window(), 65_535);
    }

    #[test]
    fn window_scaling_needs_both_sides() {
        let mut r = receiver(false, 1 << 20, true);
        r.on_segment(
            0,
            &Segment {
                syn: true,
                wscale_option: Some(7),
                ..Segment::default()
            },
        );
        assert_eq!(acks(&mut r, 0)[0].wscale_option, Some(5));
        assert_eq!(r.advertised_window(), 1 << 20);
        let mut lone = receiver(false, 1 << 20, true);
        lone.on_segment(
            0,
            &Segment {
                syn: true,
                ..Segment::default()
            },
        );
        acks(&mut lone, 0);
        assert_eq!(lone.advertised_window(), 65_535);
    }

    #[test]
    fn data_beyond_the_window_is_trimmed() {
        let mut r = receiver(false, 2000, false);
        r.on_segment(
            0,
            &Segment {
                syn: true,
                ..Segment::default()
            },
        );
        acks(&mut r, 0);
        r.on_segment(MS, &Segment::data(0, 1460, 0, 0));
        r.on_segment(MS, &Segment::data(1460, 1460, 0, 0));
        assert_eq!(r.rcv_nxt(), 2000);
    }

    fn sack_receiver() -> Receiver {
        let mut r = receiver(false, 1 << 20, false);
        let syn = Segment {
            syn: true,
            sack_permitted: true,
            ..Segment::default()
        };
        r.on_segment(0, &syn);
        assert!(acks(&mut r, 0)[0].sack_permitted);
        r
    }

    #[test]
    fn sack_blocks_report_the_latest_segment_first() {
        let mut r = sack_receiver();
        r.on_segment(MS, &Segment::data(1000, 1000, 0, 0));
        assert_eq!(acks(&mut r, MS)[0].sack_blocks(), &[(1000, 2000)]);
        r.on_segment(MS, &Segment::data(3000, 1000, 0, 0));
        assert_eq!(
            acks(&mut r, MS)[0].sack_blocks(),
            &[(3000, 4000), (1000, 2000)]
        );
        // A segment extending an earlier block moves that block to the front.
        r.on_segment(MS, &Segment::data(2000, 1000, 0, 0));
        assert_eq!(acks(&mut r, MS)[0].sack_blocks(), &[(1000, 4000)]);
        // Once the hole fills, nothing is left to report.
        r.on_segment(MS, &Segment::data(0, 1000, 0, 0));
        let ack = acks(&mut r, MS)[0];
        assert_eq!((ack.ack, ack.sack_len), (4000, 0));
    }

    #[test]
    fn at_most_four_sack_blocks_are_sent() {
        let mut r = sack_receiver();
        for k in 0..6u64 {
            r.on_segment(MS, &Segment::data(1000 + 2000 * k, 1000, 0, 0));
            acks(&mut r, MS);
        }
        r.on_segment(MS, &Segment::data(13_000, 1000, 0, 0));
        let ack = acks(&mut r, MS)[0];
        assert_eq!(ack.sack_len, 4);
        assert_eq!(ack.sack_blocks()[0], (13_000, 14_000));
    }

    #[test]
    fn contiguous_arrivals_do_not_push_the_other_blocks_out() {
        // RFC 2018 §4: as many distinct blocks as fit, most recently reported first. Linux
        // keeps one entry per block (`selective_acks`), so a run of segments extending the
        // newest block leaves the three blocks before it in every ACK.
        let mut r = sack_receiver();
        for start in [1000, 3000, 5000, 7000] {
            r.on_segment(MS, &Segment::data(start, 1000, 0, 0));
            acks(&mut r, MS);
        }
        for k in 0..11u64 {
            r.on_segment(MS, &Segment::data(8000 + 1000 * k, 1000, 0, 0));
            acks(&mut r, MS);
        }
        r.on_segment(MS, &Segment::data(19_000, 1000, 0, 0));
        assert_eq!(
            acks(&mut r, MS)[0].sack_blocks(),
            &[(7000, 20_000), (5000, 6000), (3000, 4000), (1000, 2000)]
        );
    }

    #[test]
    fn a_fifth_block_forgets_the_least_recent() {
        // Linux `tcp_sack_new_ofo_skb`: with TCP_NUM_SACKS (4) blocks remembered, a new
        // block pushes out the least recent, which is not reported again while held.
        let mut r = sack_receiver();
        for start in [9000, 7000, 5000, 3000, 1000] {
            r.on_segment(MS, &Segment::data(start, 1000, 0, 0));
            acks(&mut r, MS);
        }
        // The hole at 0 fills: data up to 2000 is delivered; 9000-10000 is still held.
        r.on_segment(MS, &Segment::data(0, 1000, 0, 0));
        let ack = acks(&mut r, MS)[0];
        assert_eq!(ack.ack, 2000);
        assert_eq!(
            ack.sack_blocks(),
            &[(3000, 4000), (5000, 6000), (7000, 8000)]
        );
    }

    fn dsack_receiver() -> Receiver {
        let mut r = sack_receiver();
        r.cfg.dsack = true;
        r
    }

    #[test]
    fn a_segment_below_rcv_nxt_is_reported_in_a_dsack_block_once() {
        // RFC 2883 §4: the first block names the duplicate; the next ACK no longer does.
        let mut r = dsack_receiver();
        r.on_segment(MS, &Segment::data(0, 2000, 0, 0));
        acks(&mut r, MS);
        r.on_segment(MS, &Segment::data(1000, 1000, 0, 0));
        let ack = acks(&mut r, MS)[0];
        assert_eq!((ack.ack, ack.sack_blocks()), (2000, &[(1000, 2000)][..]));
        r.on_segment(MS, &Segment::data(2000, 1000, 0, 0));
        assert_eq!(acks(&mut r, MS)[0].sack_len, 0);
    }

    #[test]
    fn a_segment_straddling_rcv_nxt_reports_only_its_old_part() {
        // Linux tcp_data_queue: tcp_dsack_set(seq, rcv_nxt), then the new part is queued.
        let mut r = dsack_receiver();
        r.on_segment(MS, &Segment::data(0, 1500, 0, 0));
        r.on_segment(MS, &Segment::data(1000, 1000, 0, 0));
        let ack = acks(&mut r, MS)[0];
        assert_eq!((ack.ack, ack.sack_blocks()), (2000, &[(1000, 1500)][..]));
    }

    #[test]
    fn a_duplicate_held_out_of_order_is_followed_by_its_block() {
        // RFC 2883 §4 (2): the D-SACK block, then the block that holds it.
        let mut r = dsack_receiver();
        for start in [5000, 1000, 2000] {
            r.on_segment(MS, &Segment::data(start, 1000, 0, 0));
            acks(&mut r, MS);
        }
        r.on_segment(MS, &Segment::data(5000, 1000, 0, 0));
        assert_eq!(
            acks(&mut r, MS)[0].sack_blocks(),
            &[(5000, 6000), (5000, 6000), (1000, 3000)]
        );
    }

    #[test]
    fn without_dsack_a_duplicate_gets_a_plain_ack() {
        let mut r = sack_receiver();
        r.on_segment(MS, &Segment::data(0, 2000, 0, 0));
        acks(&mut r, MS);
        r.on_segment(MS, &Segment::data(1000, 1000, 0, 0));
        assert_eq!(acks(&mut r, MS)[0].sack_len, 0);
    }

    #[test]
    fn no_sack_blocks_unless_both_sides_permit_them() {
        let mut r = receiver(false, 1 << 20, false);
        r.on_segment(
            0,
            &Segment {
                syn: true,
                ..Segment::default()
            },
        );
        assert!(!acks(&mut r, 0)[0].sack_permitted);
        r.on_segment(MS, &Segment::data(1000, 1000, 0, 0));
        assert_eq!(acks(&mut r, MS)[0].sack_len, 0);
    }

    fn with_timestamps(tsval: u32) -> Segment {
        Segment {
            timestamps: Some(Timestamps { val: tsval, ecr: 0 }),
            ..Segment::default()
        }
    }

    #[test]
    fn delayed_ack_echoes_the_older_segments_timestamp() {
        let mut r = receiver(true, 65_535, false);
        r.on_segment(
            0,
            &Segment {
                syn: true,
                ..with_timestamps(1)
            },
        );
        assert_eq!(acks(&mut r, 0)[0].timestamps.unwrap().ecr, 1);
        r.on_segment(
            MS,
            &Segment {
                seq: 0,
                len: 1000,
                ..with_timestamps(10)
            },
        );
        r.on_segment(
            2 * MS,
            &Segment {
                seq: 1000,
                len: 1000,
                ..with_timestamps(11)
            },
        );
        let ack = acks(&mut r, 2 * MS)[0];
        assert_eq!(ack.timestamps, Some(Timestamps { val: 2, ecr: 10 }));
    }

    #[test]
    fn timestamps_leave_room_for_three_sack_blocks() {
        let mut r = receiver(false, 1 << 20, false);
        r.on_segment(
            0,
            &Segment {
                syn: true,
                sack_permitted: true,
                ..with_timestamps(1)
            },
        );
        acks(&mut r, 0);
        for k in 0..5u64 {
            r.on_segment(
                MS,
                &Segment {
                    seq: 1000 + 2000 * k,
                    len: 1000,
                    ..with_timestamps(2)
                },
            );
            acks(&mut r, MS);
        }
        r.on_segment(
            MS,
            &Segment {
                seq: 11_000,
                len: 1000,
                ..with_timestamps(2)
            },
        );
        assert_eq!(acks(&mut r, MS)[0].sack_len, 3);
    }
}
