//! Fast retransmit (RFC 5681 §3.2) and what follows it: Tahoe's slow start from one
//! segment, Reno's fast recovery (RFC 5681 §3.2), or NewReno's (RFC 6582 §3.2).

use super::{Recovery, Sender, DUPACK_THRESHOLD};
use crate::engine::Nanos;
use crate::tcp::Segment;

impl Sender {
    pub(super) fn on_duplicate_ack(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.dupacks += 1;
        if self.in_recovery {
            // RFC 6582 step 3 / RFC 5681 step 4: each further duplicate means a segment
            // has left the network; inflate the window by one segment.
            self.cwnd += self.mss;
        } else if self.dupacks == DUPACK_THRESHOLD && self.cfg.fast_retransmit {
            self.enter_fast_recovery(now, out);
        }
    }

    /// RFC 6582 §3.2 step 2: only if the cumulative ACK covers more than `recover`, so that
    /// duplicates caused by retransmissions do not trigger a second reduction. Classic
    /// Reno (RFC 5681) has no such guard.
    fn enter_fast_recovery(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let guarded = self.recovery != Recovery::Reno;
        if guarded && self.recover.is_some_and(|recover| self.snd_una <= recover) {
            return;
        }
        self.stats.fast_retransmits += 1;
        if self.recovery == Recovery::Tahoe {
            self.ssthresh = self.cc.ssthresh_after_loss(&self.cc_state(now));
            self.note_reduction();
            self.go_back_n(now, out);
            return;
        }
        self.ssthresh = self.cc.ssthresh_after_loss(&self.cc_state(now));
        self.note_reduction();
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.retransmit_first_unacked(now, out);
        self.rearm_for_head_retransmission(now);
        // RFC 5681 §3.2 step 3: ssthresh plus the three segments that left the network.
        self.cwnd = self.ssthresh + 3 * self.mss;
    }

    fn retransmit_first_unacked(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let (start, end) = (self.snd_una, self.snd_max.min(self.snd_una + self.mss));
        self.retransmit(now, start, end, out);
        self.snd_nxt = self.snd_nxt.max(end);
    }

    /// An ACK of new data while in fast recovery.
    pub(super) fn on_ack_in_recovery(&mut self, now: Nanos, acked: u64, out: &mut Vec<Segment>) {
        if self.recovery == Recovery::Reno {
            // RFC 5681 §3.2 step 6: the first new ACK ends recovery; deflate to ssthresh.
            self.cwnd = self.ssthresh;
            self.in_recovery = false;
            self.restart_timer(now);
            return;
        }
        // NewReno, RFC 6582 §3.2 steps 4 and 5.
        let recover = self.recover.expect("recovery always records `recover`");
        if self.snd_una >= recover {
            // Full acknowledgment: deflate with option (1) of step 3, which avoids a burst:
            // min(ssthresh, max(FlightSize, SMSS) + SMSS).
            let flight = self.snd_max - self.snd_una;
            self.cwnd = self.ssthresh.min(flight.max(self.mss) + self.mss);
            self.in_recovery = false;
            self.restart_timer(now);
            return;
        }
        // Partial acknowledgment: the next hole is lost too; resend it, deflate the window
        // by the newly acknowledged amount, add back one SMSS if at least that much was
        // acknowledged, and reset the timer on the first partial ACK only ("impatient").
        self.retransmit_first_unacked(now, out);
        self.cwnd = self.cwnd.saturating_sub(acked);
        if acked >= self.mss {
            self.cwnd += self.mss;
        }
        if !self.partial_ack_seen {
            self.partial_ack_seen = true;
            self.restart_timer(now);
        }
    }
}
