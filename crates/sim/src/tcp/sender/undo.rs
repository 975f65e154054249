//! Undoing a window reduction that turns out to have been spurious, as Linux does with
//! RACK-TLP (tcp_input.c `tcp_try_undo_*`, `tcp_process_loss`; `tcp.undo`, `tcp.frto`):
//!
//! - Eifel detection (RFC 3522, `tcp_packet_delayed`): an ACK that echoes a timestamp
//!   older than the episode's first retransmission was sent for an original transmission,
//!   so the data was delayed, not lost.
//! - D-SACK (RFC 2883, RFC 3708 §3, `tcp_try_undo_dsack`): every retransmission of the
//!   episode was reported as a duplicate, so none was needed.
//! - F-RTO (RFC 5682 §3.1, SACK-enhanced, `tcp_process_loss`): after a timeout, the first
//!   ACK that advances the window sends new data instead of retransmissions; if the next
//!   ACK acknowledges data that was never retransmitted, the timeout was spurious.
//!
//! An undo restores cwnd (the algorithm's `undo_cwnd`: Reno's and CUBIC's max(cwnd,
//! prior cwnd), BBR's its own) and ssthresh as they were before the reduction.

use super::{CaState, Sender};
use crate::engine::Nanos;
use crate::tcp::{timestamp_clock, Segment};

/// What the sender sends after this ACK (Linux `REXMIT_*` of `tcp_fastretrans_alert`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterAck {
    /// Lost data first, then new data.
    #[default]
    Lost,
    /// F-RTO step 2b: new data only; if none goes, lost data after all.
    NewData,
    /// A partial undo with retransmissions still out: new data, no retransmission.
    NoRetransmission,
}

/// Linux's undo state (`undo_marker`, `undo_retrans`, `prior_ssthresh`, `prior_cwnd`,
/// `retrans_stamp`, `frto`, `dsack_dups`).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Undo {
    /// `snd_una` when the reduction began; None when there is nothing to undo.
    marker: Option<u64>,
    /// Retransmissions of the episode not yet reported by a D-SACK; negative when none
    /// were in flight as it began (then D-SACKs cannot undo it).
    retrans: i64,
    /// ssthresh as the reduction found it (0: the reduction stands, e.g. an ECN echo) and
    /// cwnd then.
    prior_ssthresh: u64,
    pub(super) prior_cwnd: u64,
    /// The timestamp clock at the episode's first retransmission.
    retrans_stamp: Option<u32>,
    /// F-RTO under way after a timeout.
    frto: bool,
    /// Segments reported duplicate so far (D-SACKs beyond what was retransmitted are
    /// dubious and ignored).
    dsack_dups: u64,
    pub(super) after_ack: AfterAck,
}

/// A D-SACK an ACK carried.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Dsack {
    /// Bytes reported twice (0: none, or a dubious report).
    pub bytes: u64,
    /// It reports the tail loss probe's retransmission (Linux FLAG_DSACK_TLP).
    pub for_probe: bool,
}

/// What one ACK showed that the undo rules read.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct AckFacts {
    pub una_advanced: bool,
    /// Data never retransmitted and sent before `high_seq` was acknowledged or SACKed
    /// (Linux FLAG_ORIG_SACK_ACKED).
    pub original_delivered: bool,
    /// New data was SACKed (FLAG_DATA_SACKED).
    pub data_sacked: bool,
    /// A duplicate ACK: nothing new acknowledged, no window change, no D-SACK.
    pub duplicate: bool,
}

impl Sender {
    fn undoing(&self) -> bool {
        self.cfg.undo
    }

    /// Linux `tcp_current_ssthresh`: ssthresh, or in a reduction-free state three quarters
    /// of cwnd if that is more.
    pub(super) fn current_ssthresh(&self) -> u64 {
        if matches!(self.ca_state, CaState::Cwr | CaState::Recovery) {
            return self.ssthresh;
        }
        let cwnd = self.cwnd / self.mss;
        self.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) * self.mss)
    }

    /// Linux `tcp_init_undo` at a reduction (recovery or timeout), with `prior_ssthresh`:
    /// the retransmissions still in flight, and a tail loss probe's, may be D-SACKed later.
    pub(super) fn init_undo(&mut self, prior_ssthresh: u64) {
        self.undo.prior_ssthresh = prior_ssthresh;
        self.undo.marker = Some(self.snd_una);
        let mut retrans = self.rtx.retrans_bytes().div_ceil(self.mss);
        if self.probe.is_some_and(|p| p.retransmission) {
            retrans += 1;
        }
        self.undo.retrans = if retrans == 0 { -1 } else { retrans as i64 };
    }

    /// Linux `tcp_enter_cwr`: an ECN echo proves congestion; nothing to undo.
    pub(super) fn forbid_undo(&mut self) {
        self.undo.prior_ssthresh = 0;
        if self.ca_state < CaState::Cwr {
            self.undo.marker = None;
        }
    }

    /// Linux `tcp_retransmit_skb` (recovery's and the timer's retransmissions, not a
    /// probe's): the episode's first is stamped, and each may be D-SACKed later.
    pub(super) fn note_retransmission(&mut self, now: Nanos, len: u64) {
        self.undo
            .retrans_stamp
            .get_or_insert_with(|| timestamp_clock(now));
        self.undo.retrans = self.undo.retrans.max(0) + len.div_ceil(self.mss) as i64;
    }

    /// Linux `tcp_fastretrans_alert` step A: an ACK with ECE forbids undoing the current
    /// reduction; in Open the episode's stamp is cleared.
    pub(super) fn note_ack_for_undo(&mut self, seg: &Segment) {
        if seg.ece {
            self.undo.prior_ssthresh = 0;
        }
        if self.ca_state == CaState::Open {
            self.undo.retrans_stamp = None;
        }
    }

    /// Linux `tcp_check_dsack` and `tcp_dsack_seen`: the ACK's first block reports a
    /// duplicate if it lies below the cumulative ACK, or inside the second block (RFC 2883
    /// §4). The duplicate bytes count as delivered, as Linux counts them; a D-SACK of a
    /// retransmission of this episode brings an undo closer.
    pub(super) fn take_dsack(&mut self, seg: &Segment, prior_snd_una: u64) -> Dsack {
        let none = Dsack::default();
        let blocks = seg.sack_blocks();
        let Some(&(start, end)) = blocks.first() else {
            return none;
        };
        let below_ack = start < seg.ack;
        let inside_second = blocks.get(1).is_some_and(|&(s, e)| s <= start && end <= e);
        if !(below_ack || inside_second) || start >= end || end - start > self.max_rwnd {
            return none;
        }
        let len = end - start;
        let dup_segs = len.div_ceil(self.mss);
        let for_probe = len <= self.mss && self.probe.is_some_and(|p| p.high_seq == end);
        self.undo.dsack_dups += dup_segs;
        if self.undo.dsack_dups > self.stats.retransmits {
            return none;
        }
        self.rack.note_dsack(for_probe);
        if let Some(marker) = self.undo.marker {
            if self.undo.retrans > 0 && end > marker {
                // Below the ACK Linux counts blindly; above it, the segments resent.
                let resent = if end <= prior_snd_una {
                    dup_segs
                } else {
                    self.rtx.retransmitted_segments_in(start, end, self.mss)
                };
                self.undo.retrans = (self.undo.retrans - resent as i64).max(0);
            }
        }
        Dsack {
            bytes: len,
            for_probe,
        }
    }

    /// The timestamp the ACK echoes, if timestamps are on and it echoes one.
    pub(super) fn echoed(&self, seg: &Segment) -> Option<u32> {
        let ecr = seg.timestamps.filter(|_| self.timestamps)?.ecr;
        (ecr != 0).then_some(ecr)
    }

    /// Linux `tcp_packet_delayed`: the ACK echoes a timestamp from before the episode's
    /// first retransmission, so an original transmission got through.
    fn packet_delayed(&self, seg: &Segment) -> bool {
        self.undo
            .retrans_stamp
            .is_some_and(|stamp| echoes_before(self.echoed(seg), stamp))
    }

    /// Linux `tcp_may_undo`.
    fn may_undo(&self, seg: &Segment) -> bool {
        self.undo.marker.is_some() && (self.undo.retrans == 0 || self.packet_delayed(seg))
    }

    /// Linux `tcp_undo_cwnd_reduction`.
    fn undo_reduction(&mut self, now: Nanos, unmark_loss: bool) {
        if unmark_loss {
            self.rtx.unmark_lost();
        }
        if self.undo.prior_ssthresh > 0 {
            let state = self.cc_state(now);
            self.cwnd = self.cc.undo_cwnd(&state, self.undo.prior_cwnd);
            if self.undo.prior_ssthresh > self.ssthresh {
                self.ssthresh = self.undo.prior_ssthresh;
                // `tcp_ecn_withdraw_cwr`
                self.cwr_pending = false;
            }
        }
        self.undo.marker = None;
        self.rack.force_detection();
    }

    /// The reduction is still to be carried out when recovery ends (Linux
    /// `tcp_end_cwnd_reduction`: unless it was undone).
    pub(super) fn reduction_stands(&self) -> bool {
        !self.undoing() || self.undo.marker.is_some()
    }

    /// Linux `tcp_try_keep_open`.
    fn keep_open(&mut self) {
        let state = self.open_or_disorder();
        if self.ca_state != state {
            self.ca_state = state;
            self.high_seq = self.snd_max;
        }
        self.in_recovery = false;
    }

    /// Recovery or Loss reached `high_seq` (Linux `tcp_try_undo_recovery`): undone if the
    /// episode proved spurious. The state becomes Open either way.
    pub(super) fn try_undo_recovery(&mut self, now: Nanos, seg: &Segment) {
        if !self.undoing() {
            return;
        }
        if self.may_undo(seg) {
            self.undo_reduction(now, false);
        } else {
            self.rack.recovery_not_undone();
        }
    }

    /// Linux `tcp_fastretrans_alert` step E before loss detection, in Recovery, Open and
    /// Disorder: a partial ACK that an original transmission triggered, or D-SACKs for
    /// every retransmission, undo the reduction.
    pub(super) fn try_undo_on_ack(&mut self, now: Nanos, seg: &Segment, facts: AckFacts) {
        if !self.undoing() {
            return;
        }
        match self.ca_state {
            CaState::Recovery => {
                if facts.una_advanced && self.try_undo_partial(now, seg) {
                    self.undo.after_ack = AfterAck::NoRetransmission;
                    return;
                }
                if self.try_undo_dsack(now) {
                    self.keep_open();
                }
            }
            CaState::Open | CaState::Disorder => {
                self.try_undo_dsack(now);
            }
            CaState::Cwr | CaState::Loss => {}
        }
    }

    /// Linux `tcp_try_undo_partial`: true while retransmissions are still out (send new
    /// data, but no retransmission, on this ACK).
    fn try_undo_partial(&mut self, now: Nanos, seg: &Segment) -> bool {
        if self.undo.marker.is_none() || !self.packet_delayed(seg) {
            return false;
        }
        self.rack.saw_reordering();
        if self.rtx.retrans_bytes() > 0 {
            return true;
        }
        if !self.any_retransmission_out() {
            self.undo.retrans_stamp = None;
        }
        self.undo_reduction(now, true);
        self.keep_open();
        false
    }

    /// Linux `tcp_try_undo_dsack`.
    fn try_undo_dsack(&mut self, now: Nanos) -> bool {
        if self.undo.marker.is_none() || self.undo.retrans != 0 {
            return false;
        }
        self.rack.recovery_undone_by_dsack();
        self.undo_reduction(now, false);
        true
    }

    /// Linux `tcp_any_retrans_done`.
    fn any_retransmission_out(&self) -> bool {
        self.rtx.retrans_bytes() > 0 || self.rtx.head().is_some_and(|r| r.ever_retrans)
    }

    /// Linux `tcp_try_to_open`'s first step: no retransmission left, no episode.
    pub(super) fn forget_retransmission_stamp(&mut self) {
        if !self.any_retransmission_out() {
            self.undo.retrans_stamp = None;
        }
    }

    /// Linux `tcp_enter_loss`: cwnd before the timeout, and F-RTO (RFC 5682 §3.1 step 1)
    /// when no recovery was under way or the timeout repeats one.
    pub(super) fn start_loss_undo(&mut self, prior_ssthresh: Option<u64>, new_recovery: bool) {
        if let Some(prior_ssthresh) = prior_ssthresh {
            self.undo.prior_cwnd = self.cwnd;
            self.init_undo(prior_ssthresh);
        }
        self.undo.frto = self.cfg.frto && (new_recovery || self.consecutive_timeouts > 0);
    }

    /// An ACK in Loss (Linux `tcp_process_loss`): undo if the timeout proves spurious,
    /// F-RTO's steps, and the end of Loss at `high_seq`.
    pub(super) fn process_loss(&mut self, now: Nanos, seg: &Segment, facts: AckFacts) {
        let recovered = self.snd_una >= self.high_seq;
        if facts.una_advanced && self.undoing() && self.try_undo_loss(now, seg, false) {
            return;
        }
        if self.undo.frto {
            // Step 3b: never-retransmitted data got through: not everything was lost.
            if facts.original_delivered && self.try_undo_loss(now, seg, true) {
                return;
            }
            if self.snd_max > self.high_seq {
                // Step 3a: new data was sent, and a SACK or duplicate ACK shows loss.
                if facts.data_sacked || facts.duplicate {
                    self.undo.frto = false;
                }
            } else if facts.una_advanced && !recovered {
                // Step 2b: send new data rather than retransmissions, if there is any and
                // the peer's window takes it.
                self.high_seq = self.snd_max;
                if self.written > self.snd_max && self.snd_una + self.rwnd > self.snd_max {
                    self.undo.after_ack = AfterAck::NewData;
                    return;
                }
                self.undo.frto = false;
            }
        }
        if recovered {
            // Step 2a and the first part of step 3a.
            self.try_undo_recovery(now, seg);
            if !self.holds_at_high_seq() {
                self.finish_loss();
            }
            return;
        }
        if !self.sack_ok {
            // A duplicate after step 2b's new data means that data arrived: it leaves the
            // flight to let out (re)transmissions.
            if self.snd_max > self.high_seq && facts.duplicate {
                self.add_reno_sack(now);
            } else if facts.una_advanced {
                self.reset_reno_sacks();
            }
        }
    }

    /// Linux `tcp_try_undo_loss`.
    fn try_undo_loss(&mut self, now: Nanos, seg: &Segment, frto_undo: bool) -> bool {
        if !(frto_undo || self.may_undo(seg)) {
            return false;
        }
        self.undo_reduction(now, true);
        self.consecutive_timeouts = 0;
        self.finish_loss();
        true
    }

    /// Loss ends (Linux: Open after `tcp_try_undo_recovery` or `tcp_try_undo_loss`), with
    /// the cwnd slow start regrew.
    fn finish_loss(&mut self) {
        self.ca_state = CaState::Open;
        self.in_recovery = false;
    }

    /// F-RTO step 2b's sending: new data; if none could go, the conventional recovery.
    pub(super) fn new_data_went(&mut self) -> bool {
        if self.snd_max > self.high_seq {
            return true;
        }
        self.undo.frto = false;
        false
    }
}

/// Linux `tcp_tsopt_ecr_before`: an echoed timestamp from before `when` (both on the
/// timestamp clock) was sent before then.
pub(super) fn echoes_before(echoed: Option<u32>, when: u32) -> bool {
    echoed.is_some_and(|ecr| (ecr.wrapping_sub(when) as i32) < 0)
}
