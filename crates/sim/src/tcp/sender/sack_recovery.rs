//! SACK-based loss recovery, RFC 6675 §5, used when both SYNs carried SACK-permitted
//! (RFC 2018). The congestion-control algorithm still sets ssthresh; the scoreboard
//! decides what is lost, how much is in the network (pipe) and what to send next.

use super::Sender;
use crate::engine::Nanos;
use crate::tcp::sack::DUP_THRESH;
use crate::tcp::Segment;

impl Sender {
    pub(super) fn on_ack_with_sack(&mut self, now: Nanos, seg: &Segment, out: &mut Vec<Segment>) {
        // RFC 6675 §5: record the SACK information first. Data counts as delivered when it
        // is first SACKed, so the cumulative ACK that later covers it adds only the rest.
        let cumulative = seg.ack.max(self.snd_una);
        let sacked_before = self.scoreboard.sacked_between(self.snd_una, cumulative);
        let newly_sacked = self.scoreboard.update(cumulative, seg.sack_blocks());
        let new_sack = newly_sacked > 0;
        let delivered = newly_sacked + (cumulative - self.snd_una) - sacked_before;
        self.take_rtt_sample(now, seg, delivered);
        if seg.ack > self.snd_una {
            let acked = seg.ack - self.snd_una;
            self.snd_una = seg.ack;
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            self.high_rxt = self.high_rxt.max(self.snd_una);
            self.dupacks = 0;
            self.restart_timer(now);
            if !self.in_recovery {
                self.grow_window(now, acked);
            } else if self.recover.is_some_and(|point| self.snd_una >= point) {
                // (A): a cumulative ACK at or past RecoveryPoint ends recovery.
                self.in_recovery = false;
                self.cwnd = self.ssthresh;
            }
        }
        if self.in_recovery {
            // (B) and (C): the scoreboard is updated; send what pipe allows.
            self.send_in_sack_recovery(now, out);
        } else if new_sack && self.snd_max > self.snd_una {
            // §2: an ACK bringing new SACK information is a duplicate ACK.
            self.dupacks += 1;
            let head_lost = self
                .scoreboard
                .head_lost(self.snd_una, self.snd_max, self.mss);
            if u64::from(self.dupacks) >= DUP_THRESH || head_lost {
                self.enter_sack_recovery(now, out);
            }
        }
    }

    /// §5 step (4), unless fast retransmit is off or the last recovery point (set by a
    /// recovery or a timeout, §5.1) has not been passed yet.
    fn enter_sack_recovery(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        if !self.cfg.fast_retransmit || self.recover.is_some_and(|point| self.snd_una < point) {
            return;
        }
        self.stats.fast_retransmits += 1;
        self.recover = Some(self.snd_max); // (4.1) RecoveryPoint = HighData
        self.ssthresh = self.cc.ssthresh_after_loss(&self.cc_state(now));
        self.note_reduction();
        self.cwnd = self.ssthresh; // (4.2)
        self.in_recovery = true;
        // (4.3): resend the first segment presumed dropped, whatever pipe says.
        let end = self.unsacked_end(self.snd_una, self.snd_una + self.mss);
        self.retransmit(now, self.snd_una, end, out);
        self.rearm_for_head_retransmission(now);
        self.high_rxt = end;
        self.send_in_sack_recovery(now, out);
    }

    /// End of a segment starting at `start`: at most `limit`, and not into SACKed data or
    /// past the highest byte sent.
    pub(super) fn unsacked_end(&self, start: u64, limit: u64) -> u64 {
        let limit = limit.min(self.snd_max);
        self.scoreboard
            .next_sacked_start(start)
            .map_or(limit, |s| s.min(limit))
    }

    /// §5 step (C) with NextSeg (§4): while cwnd − pipe ≥ 1 SMSS, resend the next hole
    /// presumed lost (rule 1), else send new data (rule 2), else resend the next unSACKed
    /// segment below the highest SACK (rule 3).
    fn send_in_sack_recovery(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        loop {
            let pipe = self
                .scoreboard
                .pipe(self.snd_una, self.snd_max, self.high_rxt, self.mss);
            if self.cwnd < pipe + self.mss {
                return;
            }
            let next = self.scoreboard.next_retransmission(
                self.snd_una,
                self.snd_max,
                self.high_rxt,
                self.mss,
            );
            if let Some((start, end)) = next.lost {
                self.retransmit(now, start, end, out);
                self.high_rxt = end;
            } else if let Some(len) = self.new_data_allowed() {
                let seq = self.snd_max;
                self.emit(now, seq, len, out);
                self.snd_nxt = self.snd_max;
            } else if let Some((start, end)) = next.other {
                self.retransmit(now, start, end, out);
                self.high_rxt = end;
            } else {
                return;
            }
        }
    }

    /// NextSeg rule (2): new data, if the application wrote some and the peer's window
    /// takes it.
    fn new_data_allowed(&self) -> Option<u64> {
        let window_end = self.snd_una + self.rwnd;
        let queued = self.written.saturating_sub(self.snd_max);
        let len = self
            .mss
            .min(queued)
            .min(window_end.saturating_sub(self.snd_max));
        (len > 0 && (len == self.mss || self.small_segment_allowed(len, queued))).then_some(len)
    }
}
