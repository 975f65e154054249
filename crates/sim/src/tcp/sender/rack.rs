//! RACK loss detection, RFC 8985 §6, as Linux implements it (tcp_recovery.c): a segment
//! is lost when a segment sent after it has been delivered and it has not been delivered
//! itself within the latest RTT plus a reordering window. Time, not the count of
//! duplicate ACKs, decides, so lost retransmissions and losses at the tail are found too.

use super::rtx_queue::{Delivery, RtxQueue};
use crate::engine::Nanos;

/// Linux TCP_RACK_RECOVERY_THRESH: how many recoveries a reordering window widened by
/// D-SACKs stays wide (RFC 8985 §6.2 step 4).
const RECOVERY_THRESH: u8 = 16;
/// Linux caps `reo_wnd_steps` at 0xFF.
const MAX_REO_WND_STEPS: u64 = 255;

#[derive(Debug, Default, Clone)]
pub struct Rack {
    /// RACK.xmit_ts and RACK.end_seq: the latest-sent segment delivered so far.
    xmit_ts: Nanos,
    end_seq: u64,
    /// RACK.rtt: the RTT of that segment.
    pub rtt: Nanos,
    /// A delivery moved RACK forward since loss detection last ran.
    advanced: bool,
    /// Reordering has been seen on this connection (Linux `reord_seen`).
    reordering_seen: bool,
    /// One past the highest byte delivered out of order (SACKed), for reordering
    /// detection.
    highest_sacked: u64,
    /// RFC 8985 §6.2 step 4 (Linux `reo_wnd_steps`, less one; `dsack_seen`,
    /// `last_delivered`, `reo_wnd_persist`): the reordering window is min_rtt/4 times the
    /// steps, one step more per round trip with a D-SACK after reordering was seen, back
    /// to one after that many recoveries without one.
    extra_steps: u64,
    dsack_seen: bool,
    last_delivered: u64,
    persist: u8,
}

/// Where loss detection leaves the connection.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Detection {
    /// Segments newly presumed lost, in bytes.
    pub newly_lost: u64,
    /// When the segments not yet overdue become so (the reordering timer), if any.
    pub timer: Option<Nanos>,
}

/// Linux `tcp_skb_sent_after`: t1 is later than t2, or as late and further in sequence.
fn sent_after(t1: Nanos, t2: Nanos, seq1: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// RFC 8985 §6.2 step 2 (Linux `tcp_rack_advance`): the delivered segment becomes
    /// RACK's reference if it was sent later than the current one. A retransmitted
    /// segment acknowledged sooner than the minimum RTT was probably delivered by its
    /// original transmission, so it gives nothing. As Linux, every other delivery sets
    /// RACK.rtt, whether or not it moves the reference: the ACK's last one counts, so a
    /// late original's long RTT keeps what was sent after it from being judged lost.
    pub fn advance(&mut self, d: Delivery, now: Nanos, min_rtt: Nanos) {
        let rtt = now.saturating_sub(d.sent_at);
        if d.ever_retrans && rtt < min_rtt {
            return;
        }
        self.rtt = rtt;
        self.advanced = true;
        if self.xmit_ts == 0 || sent_after(d.sent_at, self.xmit_ts, d.end, self.end_seq) {
            self.xmit_ts = d.sent_at;
            self.end_seq = d.end;
        }
    }

    /// RFC 8985 §6.2 step 3 (Linux `tcp_sacktag_one`, `tcp_check_sack_reordering`): a
    /// segment never retransmitted that is SACKed below data SACKed before it was
    /// reordered, not lost. An ACK's blocks are walked lowest first (`RtxQueue::sack`).
    pub fn note_sacked(&mut self, d: Delivery) {
        self.note_reordering(d, self.highest_sacked);
        self.highest_sacked = self.highest_sacked.max(d.end);
    }

    /// The same for a segment the cumulative ACK delivers, against the highest data SACKed
    /// before this ACK (Linux `tcp_clean_rtx_queue`'s `prior_fack`): a hole that the ACK's
    /// own SACK blocks reveal above the segment is a loss, not reordering.
    pub fn note_acked(&mut self, d: Delivery, prior_highest_sacked: u64) {
        self.note_reordering(d, prior_highest_sacked);
    }

    fn note_reordering(&mut self, d: Delivery, sacked_above: u64) {
        if !d.ever_retrans && d.end < sacked_above {
            self.reordering_seen = true;
        }
    }

    /// One past the highest byte SACKed so far (0 when none is).
    pub fn highest_sacked(&self) -> u64 {
        self.highest_sacked
    }

    pub fn forget_sacks_below(&mut self, ack: u64) {
        if self.highest_sacked < ack {
            self.highest_sacked = 0;
        }
    }

    /// Linux `tcp_rack_reo_wnd`: no reordering window while no reordering has been seen
    /// and either recovery is under way or DupThresh segments are SACKed (RFC 8985 §6.2
    /// step 4); otherwise a quarter of the minimum RTT, at most the smoothed RTT.
    pub fn reo_wnd(
        &self,
        recovering: bool,
        sacked_segments: u64,
        min_rtt: Nanos,
        srtt: Nanos,
    ) -> Nanos {
        if !self.reordering_seen && (recovering || sacked_segments >= 3) {
            return 0;
        }
        (min_rtt / 4 * (1 + self.extra_steps)).min(srtt)
    }

    /// Linux `tcp_dsack_seen`: a D-SACK widens the window only once reordering has been
    /// seen, and never for a tail loss probe's (timer-driven, not RACK's) retransmission.
    pub fn note_dsack(&mut self, for_probe: bool) {
        if self.reordering_seen && !for_probe {
            self.dsack_seen = true;
        }
    }

    /// Reordering shown otherwise (Linux `tcp_check_sack_reordering`: a hole filled by the
    /// original transmission, per the echoed timestamp).
    pub fn saw_reordering(&mut self) {
        self.reordering_seen = true;
    }

    /// Linux `tcp_rack_update_reo_wnd`, once per ACK with the delivered count when the
    /// newest delivered segment was sent (0: none) and now: one step per round trip
    /// with D-SACKs.
    pub fn update_reo_wnd(&mut self, prior_delivered: u64, delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        if prior_delivered < self.last_delivered {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.extra_steps = (self.extra_steps + 1).min(MAX_REO_WND_STEPS - 1);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.persist = RECOVERY_THRESH;
        } else if self.persist == 0 {
            self.extra_steps = 0;
        }
    }

    /// A recovery ended without undo (Linux `tcp_try_undo_recovery`): one fewer to go.
    pub fn recovery_not_undone(&mut self) {
        self.persist = self.persist.saturating_sub(1);
    }

    /// A recovery undone by D-SACKs (Linux `tcp_try_undo_dsack`).
    pub fn recovery_undone_by_dsack(&mut self) {
        self.persist = (self.persist + 1).min(RECOVERY_THRESH);
    }

    /// After an undo, loss detection looks at the queue again (Linux sets `rack.advanced`).
    pub fn force_detection(&mut self) {
        self.advanced = true;
    }

    /// RFC 8985 §6.2 step 5 (Linux `tcp_rack_detect_loss`), run when a delivery advanced
    /// RACK: every transmission sent before RACK.xmit_ts that is overdue by RACK.rtt +
    /// reo_wnd is lost; the timer is set for the latest one not yet overdue.
    pub fn detect_loss(&mut self, q: &mut RtxQueue, now: Nanos, reo_wnd: Nanos) -> Detection {
        self.advanced = false;
        self.detect(q, now, reo_wnd)
    }

    /// Loss detection when the reordering timer fires (RFC 8985 §6.3, Linux
    /// `tcp_rack_reo_timeout`).
    pub fn detect(&self, q: &mut RtxQueue, now: Nanos, reo_wnd: Nanos) -> Detection {
        let before = q.lost_bytes() + q.lost_retransmits;
        let deadline = |sent_at: Nanos| sent_at + self.rtt + reo_wnd;
        while let Some(r) = q.oldest_candidate() {
            if !sent_after(self.xmit_ts, r.sent_at, self.end_seq, r.end)
                || deadline(r.sent_at) > now
            {
                break;
            }
            q.mark_lost(r.start);
            q.pop_oldest();
        }
        let timer = q
            .newest_candidate_before(self.xmit_ts, self.end_seq)
            .map(|r| deadline(r.sent_at))
            .filter(|&at| at > now);
        Detection {
            newly_lost: q.lost_bytes() + q.lost_retransmits - before,
            timer,
        }
    }

    pub fn advanced(&self) -> bool {
        self.advanced
    }
}

#[cfg(test)]
mod tests {
    use super::super::rtx_queue::TxRate;
    use super::*;

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;

    /// Ten segments sent 1 ms apart from t = 0.
    fn sent() -> RtxQueue {
        let mut q = RtxQueue::default();
        for i in 0..10 {
            q.sent(i * MSS, (i + 1) * MSS, i * MS, TxRate::default());
        }
        q
    }

    fn sack(q: &mut RtxQueue, rack: &mut Rack, block: (u64, u64), now: Nanos) {
        let mut delivered = Vec::new();
        q.sack(&[block], |d| delivered.push(d));
        for d in delivered {
            rack.note_sacked(d);
            rack.advance(d, now, 10 * MS);
        }
    }

    #[test]
    fn a_segment_sent_before_a_delivered_one_is_lost_after_rtt_plus_reo_wnd() {
        // RFC 8985 §6.2: segment 0 missing, segment 1 SACKed at 21 ms (RTT 20 ms).
        let (mut q, mut rack) = (sent(), Rack::default());
        sack(&mut q, &mut rack, (MSS, 2 * MSS), 21 * MS);
        assert_eq!(rack.rtt, 20 * MS);
        // With a 5 ms reordering window segment 0 is overdue at 25 ms: a timer for then.
        let d = rack.detect_loss(&mut q, 21 * MS, 5 * MS);
        assert_eq!(
            d,
            Detection {
                newly_lost: 0,
                timer: Some(25 * MS)
            }
        );
        let d = rack.detect(&mut q, 25 * MS, 5 * MS);
        assert_eq!(d.newly_lost, MSS);
        assert_eq!(q.next_to_resend().map(|r| r.start), Some(0));
    }

    #[test]
    fn without_a_reordering_window_the_loss_is_immediate() {
        let (mut q, mut rack) = (sent(), Rack::default());
        sack(&mut q, &mut rack, (3 * MSS, 4 * MSS), 23 * MS);
        // Segments 0, 1 and 2 were sent before segment 3: all lost at once.
        let d = rack.detect_loss(&mut q, 23 * MS, 0);
        assert_eq!(
            d,
            Detection {
                newly_lost: 3 * MSS,
                timer: None
            }
        );
    }

    #[test]
    fn a_lost_retransmission_is_detected_by_a_later_delivery() {
        // The point of RACK (RFC 8985 §3.2): a retransmission is a transmission like any.
        let (mut q, mut rack) = (sent(), Rack::default());
        sack(&mut q, &mut rack, (MSS, 2 * MSS), 21 * MS);
        rack.detect_loss(&mut q, 21 * MS, 0);
        q.resent(0, 22 * MS, TxRate::default());
        // New data sent at 23 ms is SACKed at 43 ms; the retransmission sent at 22 ms is not.
        q.sent(10 * MSS, 11 * MSS, 23 * MS, TxRate::default());
        sack(&mut q, &mut rack, (10 * MSS, 11 * MSS), 43 * MS);
        let d = rack.detect_loss(&mut q, 43 * MS, 0);
        assert!(d.newly_lost >= MSS);
        assert_eq!(q.lost_retransmits, MSS);
        assert_eq!(q.next_to_resend().map(|r| r.start), Some(0));
    }

    #[test]
    fn a_quick_ack_of_a_retransmission_gives_no_reference() {
        // Linux tcp_rack_advance: RTT below min_rtt means the original was delivered.
        let mut rack = Rack::default();
        let d = Delivery {
            sent_at: 95 * MS,
            end: MSS,
            ever_retrans: true,
            tx: TxRate::default(),
        };
        rack.advance(d, 100 * MS, 10 * MS);
        assert!(!rack.advanced());
    }

    #[test]
    fn reordering_window_is_zero_in_recovery_until_reordering_is_seen() {
        let mut rack = Rack::default();
        assert_eq!(rack.reo_wnd(true, 0, 40 * MS, 50 * MS), 0);
        assert_eq!(rack.reo_wnd(false, 3, 40 * MS, 50 * MS), 0);
        assert_eq!(rack.reo_wnd(false, 2, 40 * MS, 50 * MS), 10 * MS);
        // A never-retransmitted segment delivered below SACKed data: reordering.
        rack.note_sacked(delivery(5000));
        let prior = rack.highest_sacked();
        rack.note_acked(delivery(1000), prior);
        assert_eq!(rack.reo_wnd(true, 5, 40 * MS, 50 * MS), 10 * MS);
    }

    #[test]
    fn every_delivery_sets_the_rtt_but_only_a_later_one_moves_the_reference() {
        // Linux tcp_rack_advance sets rack.rtt_us before it compares send times: a late
        // original acknowledged after a newer segment leaves its long RTT.
        let mut rack = Rack::default();
        let newer = Delivery {
            sent_at: 300 * MS,
            ..delivery(5000)
        };
        rack.advance(newer, 350 * MS, 40 * MS);
        rack.advance(delivery(1000), 450 * MS, 40 * MS);
        assert_eq!(
            (rack.rtt, rack.xmit_ts, rack.end_seq),
            (450 * MS, 300 * MS, 5000)
        );
    }

    #[test]
    fn dsacks_after_reordering_widen_the_window_a_step_per_round_trip() {
        // RFC 8985 §6.2 step 4, Linux tcp_rack_update_reo_wnd: min_rtt/4 per step, at most
        // the smoothed RTT; a second D-SACK within the same round trip adds nothing.
        let mut rack = Rack::default();
        rack.note_dsack(false);
        rack.update_reo_wnd(1, 10);
        assert_eq!(rack.reo_wnd(false, 0, 40 * MS, 50 * MS), 10 * MS);
        rack.saw_reordering();
        rack.note_dsack(true);
        rack.update_reo_wnd(1, 10);
        assert_eq!(rack.reo_wnd(false, 0, 40 * MS, 50 * MS), 10 * MS);
        rack.note_dsack(false);
        rack.update_reo_wnd(5, 10);
        assert_eq!(rack.reo_wnd(false, 0, 40 * MS, 50 * MS), 20 * MS);
        rack.note_dsack(false);
        rack.update_reo_wnd(8, 12);
        assert_eq!(rack.reo_wnd(false, 0, 40 * MS, 50 * MS), 20 * MS);
        rack.note_dsack(false);
        rack.update_reo_wnd(10, 20);
        rack.note_dsack(false);
        rack.update_reo_wnd(20, 30);
        assert_eq!(rack.reo_wnd(false, 0, 40 * MS, 50 * MS), 40 * MS);
        rack.note_dsack(false);
        rack.update_reo_wnd(30, 40);
        assert_eq!(rack.reo_wnd(false, 0, 40 * MS, 50 * MS), 50 * MS);
        // Sixteen recoveries without undo, then back to one step.
        for _ in 0..16 {
            rack.update_reo_wnd(40, 50);
            rack.recovery_not_undone();
        }
        rack.update_reo_wnd(40, 50);
        assert_eq!(rack.reo_wnd(false, 0, 40 * MS, 50 * MS), 10 * MS);
    }

    fn delivery(end: u64) -> Delivery {
        Delivery {
            sent_at: 0,
            end,
            ever_retrans: false,
            tx: TxRate::default(),
        }
    }

    #[test]
    fn a_hole_revealed_by_the_same_ack_is_not_reordering() {
        // Linux prior_fack: one ACK delivers [0, 1000) cumulatively and SACKs [2000, 3000)
        // (segment [1000, 2000) lost): the segment below the new block is no reordering.
        let mut rack = Rack::default();
        let prior = rack.highest_sacked();
        rack.note_sacked(delivery(3000));
        rack.note_acked(delivery(1000), prior);
        assert_eq!(rack.reo_wnd(false, 3, 40 * MS, 50 * MS), 0);
        // Nor are two blocks of one ACK, walked lowest first.
        rack.note_sacked(delivery(5000));
        rack.note_sacked(delivery(7000));
        assert_eq!(rack.reo_wnd(false, 3, 40 * MS, 50 * MS), 0);
    }
}
