//! A connection without SACK in Linux's congestion states (`loss_recovery = "rack"` when
//! SACK was not negotiated, Linux `tcp_is_reno`). Linux keeps its states, PRR and undo and
//! emulates SACK by counting duplicate ACKs (tcp_input.c):
//!
//! - each duplicate ACK counts one segment as held by the receiver and delivered
//!   (`tcp_add_reno_sack`), so the flight falls as it would with SACK, never below one
//!   hole per segment outstanding; more duplicates than that are reordering
//!   (`tcp_limit_reno_sacked`, `tcp_check_reno_reordering`), which raises the count needed;
//! - a cumulative ACK of n segments takes back n − 1 of them, the first being the hole it
//!   filled (`tcp_remove_reno_sacks`); outside Recovery it clears the count
//!   (`tcp_reset_reno_sack`);
//! - the head is lost once the count reaches the reordering degree (three, as
//!   `net.ipv4.tcp_reordering`), and in Recovery again at every partial ACK
//!   (`tcp_newreno_mark_lost`, RFC 6582's partial-ACK rule).
//!
//! RACK's time-based detection and the tail loss probe need SACK; Linux leaves them out
//! here, and so does the simulator (RACK's RTT stays 0, so a timeout marks every segment
//! lost).

use super::{CaState, Sender, DUPACK_THRESHOLD};
use crate::engine::Nanos;

/// Linux `net.ipv4.tcp_max_reordering`: the most the reordering degree may grow to.
const MAX_REORDERING: u64 = 300;

/// The reordering degree of a connection without SACK: duplicate ACKs needed before the
/// head is presumed lost (Linux `tp->reordering`, initially `net.ipv4.tcp_reordering`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Reordering(u64);

impl Default for Reordering {
    fn default() -> Self {
        Self(u64::from(DUPACK_THRESHOLD))
    }
}

impl Sender {
    /// Segments the duplicate ACKs report held (Linux `sacked_out`).
    fn reno_sacked(&self) -> u64 {
        self.rtx.dupacked_bytes() / self.mss
    }

    fn set_reno_sacked(&mut self, segments: u64) {
        self.rtx.set_dupacked(segments * self.mss);
    }

    /// Linux `tcp_reset_reno_sack`.
    pub(super) fn reset_reno_sacks(&mut self) {
        self.set_reno_sacked(0);
    }

    /// Linux `tcp_limit_reno_sacked` and `tcp_check_reno_reordering`: at least one hole
    /// (or every segment lost) stays outstanding; more duplicates than that came from
    /// reordering, and the degree grows to what was outstanding (plus `addend`).
    fn limit_reno_sacks(&mut self, addend: u64) {
        let outstanding = self.rtx.segments();
        let holes = self
            .rtx
            .lost_bytes()
            .div_ceil(self.mss)
            .max(1)
            .min(outstanding);
        if self.reno_sacked() + holes > outstanding {
            self.set_reno_sacked(outstanding - holes);
            self.reno_reordering = Reordering((outstanding + addend).min(MAX_REORDERING));
        }
    }

    /// Linux `tcp_add_reno_sack` for one duplicate ACK: the bytes it reports delivered.
    pub(super) fn add_reno_sack(&mut self, now: Nanos) -> u64 {
        let prior = self.reno_sacked();
        self.set_reno_sacked(prior + 1);
        self.limit_reno_sacks(0);
        let delivered = (self.reno_sacked() - prior) * self.mss;
        self.note_delivered(now, delivered);
        delivered
    }

    /// Linux `tcp_remove_reno_sacks` for a cumulative ACK of `acked` segments: the bytes
    /// of `acked_bytes` that count as delivered now, the rest having been counted by the
    /// duplicate ACKs.
    pub(super) fn remove_reno_sacks(&mut self, acked: u64, acked_bytes: u64) -> u64 {
        if acked == 0 {
            return acked_bytes;
        }
        let counted = self.reno_sacked().min(acked - 1);
        self.set_reno_sacked(self.reno_sacked() - counted);
        self.limit_reno_sacks(acked);
        acked_bytes
            .saturating_sub(counted * self.mss)
            .max(acked_bytes.min(self.mss))
    }

    /// Linux `tcp_newreno_mark_lost`: the head is lost once the duplicates reach the
    /// reordering degree, or at a partial ACK in Recovery.
    pub(super) fn newreno_mark_lost(&mut self, una_advanced: bool) {
        let due = match self.ca_state {
            CaState::Recovery => una_advanced,
            CaState::Loss => false,
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                self.reno_sacked() >= self.reno_reordering.0
            }
        };
        match self.rtx.head() {
            Some(head) if due && !head.lost => {
                let start = head.start;
                self.rtx.mark_lost(start);
            }
            _ => {}
        }
    }

    /// Linux `tcp_fastretrans_alert` step E's duplicate-ACK bookkeeping outside Loss
    /// (`tcp_process_loss` does its own): in Recovery a duplicate adds to the count; in the
    /// other states the cumulative ACK clears it first.
    pub(super) fn count_reno_dupacks(&mut self, now: Nanos, una_advanced: bool, duplicate: bool) {
        match self.ca_state {
            CaState::Loss => return,
            CaState::Recovery => {}
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                if una_advanced {
                    self.reset_reno_sacks();
                }
            }
        }
        if duplicate {
            self.add_reno_sack(now);
        }
    }

    /// Linux `tcp_try_undo_recovery` without SACK: Recovery and Loss hold until an ACK
    /// passes `high_seq`, so that duplicates of data sent before it cannot start another
    /// recovery (RFC 6582 §4.1).
    pub(super) fn holds_at_high_seq(&self) -> bool {
        !self.sack_ok && self.snd_una == self.high_seq
    }
}
