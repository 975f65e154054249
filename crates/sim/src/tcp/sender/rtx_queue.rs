//! The retransmission queue as Linux keeps it for loss recovery with RACK (tcp_input.c
//! `tcp_sacktag_one`, `tcp_mark_skb_lost`; tcp_output.c `tcp_xmit_retransmit_queue`): one
//! record per segment sent and not yet cumulatively acknowledged, each marked SACKed, lost
//! or retransmitted, with the byte counts of each kept as the marks change, so that the
//! data in flight is known without walking the queue:
//!
//! in_flight = outstanding − SACKed − lost + retransmitted (Linux `tcp_packets_in_flight`,
//! RFC 6675's pipe in the form RFC 8985 §6.2 uses). Without SACK, "SACKed" is what the
//! duplicate ACKs report held (`reno_sack.rs`).
//!
//! Every operation costs O(log n) plus the records it changes, whatever the number of
//! holes: SACK blocks are compared with the SACKed ranges already known, so a block
//! repeated on every ACK walks no record twice, and the records still to be resent are kept
//! in an ordered set.

use std::collections::{BTreeSet, VecDeque};

use crate::engine::Nanos;
use crate::tcp::ranges::RangeSet;
use crate::tcp::segment::MAX_SACK_BLOCKS;

/// The delivery-rate state when a record was last (re)sent (Linux `tcp_skb_cb.tx`, set by
/// tcp_rate.c `tcp_rate_skb_sent`): the bytes delivered by then and when the latest of them
/// was, when the current send phase began, and whether the sender was application-limited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxRate {
    pub delivered: u64,
    pub delivered_time: Nanos,
    pub first_sent_time: Nanos,
    pub app_limited: bool,
}

/// One segment's worth of stream sent and not yet cumulatively acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub start: u64,
    pub end: u64,
    /// Time of the latest (re)transmission.
    pub sent_at: Nanos,
    pub sacked: bool,
    /// Presumed lost (Linux TCPCB_LOST); it stays set after the record is resent.
    pub lost: bool,
    /// A retransmission of it is in flight (Linux TCPCB_SACKED_RETRANS).
    pub retrans: bool,
    /// It was ever retransmitted (Linux TCPCB_EVER_RETRANS).
    pub ever_retrans: bool,
    pub tx: TxRate,
    /// How many times it was sent, which names the entry of each transmission in the
    /// time-ordered list.
    transmissions: u32,
}

impl Record {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// A record that the receiver has just reported delivered, cumulatively or by SACK, for
/// RACK (RFC 8985 §6.1) and reordering detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    pub sent_at: Nanos,
    pub end: u64,
    pub ever_retrans: bool,
    pub tx: TxRate,
}

/// What an ACK newly covers of the segments sent, for its RTT sample: when the first of
/// them not SACKed before was last sent (Linux `first_ackt`), and whether any was ever
/// retransmitted (Karn's algorithm, RFC 6298 §3, forbids a sample then, and that send
/// time is not the first's); and how many records it dropped (Linux's `pkts_acked`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Covered {
    pub first_sent_at: Option<Nanos>,
    pub retransmitted: bool,
    pub records: u64,
}

impl Covered {
    /// The ACK covers one more record, sent last at `sent_at`: only one not SACKed before
    /// can time it (Linux skips `TCPCB_SACKED_ACKED` for `first_ackt`), and any ever resent
    /// forbids the sample.
    pub fn include(&mut self, sent_at: Nanos, ever_retrans: bool, sacked: bool) {
        self.retransmitted |= ever_retrans;
        self.records += 1;
        if !sacked {
            self.first_sent_at.get_or_insert(sent_at);
        }
    }
}

#[derive(Debug, Default)]
pub struct RtxQueue {
    /// Contiguous records in sequence order, from the cumulative ACK to the highest byte sent.
    records: VecDeque<Record>,
    /// The first record's start and the last one's end (equal when the queue is empty):
    /// the bytes outstanding without reading either record, which the trace asks of every
    /// connection every sample.
    low: u64,
    high: u64,
    sacked: u64,
    /// Bytes a connection without SACK counts as held by the receiver, a segment per
    /// duplicate ACK (Linux `sacked_out` when `tcp_is_reno`); no record is marked.
    dupacked: u64,
    lost: u64,
    retrans: u64,
    sacked_ranges: RangeSet,
    /// Starts of lost records whose retransmission is not in flight.
    to_resend: BTreeSet<u64>,
    /// Records dropped from the front so far: the record at index i is the
    /// (`dropped` + i)-th ever sent, its serial number.
    dropped: u64,
    /// (time, record serial, transmission number) of every transmission, oldest first.
    /// Entries whose record has been delivered or sent again since are skipped and dropped
    /// lazily. A serial, unlike a sequence number, finds its record without a search.
    by_time: VecDeque<(Nanos, u64, u32)>,
    /// Bytes of transmissions presumed lost after being retransmitted (Linux
    /// TCPLostRetransmit).
    pub lost_retransmits: u64,
    /// Bytes of every transmission presumed lost so far, first transmissions and
    /// retransmissions alike (Linux `tp->lost`, `tcp_sum_lost`).
    pub lost_total: u64,
}

impl RtxQueue {
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn outstanding(&self) -> u64 {
        debug_assert_eq!(
            (self.low, self.high),
            self.records.front().zip(self.records.back()).map_or(
                (self.low, self.low),
                |(first, last)| (first.start, last.end)
            )
        );
        self.high - self.low
    }

    pub fn sacked_bytes(&self) -> u64 {
        self.sacked
    }

    pub fn lost_bytes(&self) -> u64 {
        self.lost
    }

    pub fn retrans_bytes(&self) -> u64 {
        self.retrans
    }

    pub fn in_flight(&self) -> u64 {
        // Duplicate ACKs count whole segments, which a short tail record may not fill.
        (self.outstanding() - self.sacked - self.lost).saturating_sub(self.dupacked) + self.retrans
    }

    /// Records outstanding (Linux `packets_out`: one segment each).
    pub fn segments(&self) -> u64 {
        self.records.len() as u64
    }

    pub fn dupacked_bytes(&self) -> u64 {
        self.dupacked
    }

    pub fn set_dupacked(&mut self, bytes: u64) {
        self.dupacked = bytes;
    }

    pub fn head(&self) -> Option<&Record> {
        self.records.front()
    }

    pub fn last(&self) -> Option<&Record> {
        self.records.back()
    }

    fn index_of(&self, start: u64) -> Option<usize> {
        let i = self.records.partition_point(|r| r.start < start);
        (self.records.get(i)?.start == start).then_some(i)
    }

    /// The record with serial number `serial`, if it is still in the queue.
    fn by_serial(&self, serial: u64) -> Option<&Record> {
        let i = serial.checked_sub(self.dropped)?;
        self.records.get(usize::try_from(i).ok()?)
    }

    /// New data [start, end) has been sent at `now`.
    pub fn sent(&mut self, start: u64, end: u64, now: Nanos, tx: TxRate) {
        debug_assert!(self.records.back().is_none_or(|r| r.end == start));
        let serial = self.dropped + self.records.len() as u64;
        if self.records.is_empty() {
            self.low = start;
        }
        self.high = end;
        self.records.push_back(Record {
            start,
            end,
            sent_at: now,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            tx,
            transmissions: 1,
        });
        self.by_time.push_back((now, serial, 1));
    }

    /// The record starting at `start` has been sent again at `now`.
    pub fn resent(&mut self, start: u64, now: Nanos, tx: TxRate) {
        let Some(i) = self.index_of(start) else {
            return;
        };
        let r = &mut self.records[i];
        if !r.retrans {
            r.retrans = true;
            self.retrans += r.len();
        }
        r.ever_retrans = true;
        r.sent_at = now;
        r.tx = tx;
        r.transmissions += 1;
        let transmissions = r.transmissions;
        self.by_time
            .push_back((now, self.dropped + i as u64, transmissions));
        self.to_resend.remove(&start);
    }

    /// The lowest lost record whose retransmission is not in flight (Linux
    /// `tcp_xmit_retransmit_queue` walks them in sequence order).
    pub fn next_to_resend(&self) -> Option<Record> {
        let start = *self.to_resend.first()?;
        self.index_of(start).map(|i| self.records[i])
    }

    /// Marks the record at index `i` lost (Linux `tcp_mark_skb_lost`): a record lost for
    /// the first time joins the lost count; a lost record whose retransmission is now
    /// presumed lost too becomes eligible to be resent again.
    fn mark_lost_at(&mut self, i: usize) {
        let r = &mut self.records[i];
        if r.sacked {
            return;
        }
        if r.lost {
            if r.retrans {
                r.retrans = false;
                self.retrans -= r.len();
                self.lost_retransmits += r.len();
                self.lost_total += r.len();
                self.to_resend.insert(r.start);
            }
        } else {
            r.lost = true;
            self.lost += r.len();
            self.lost_total += r.len();
            self.to_resend.insert(r.start);
        }
    }

    pub fn mark_lost(&mut self, start: u64) {
        if let Some(i) = self.index_of(start) {
            self.mark_lost_at(i);
        }
    }

    /// The retransmission timer expired (Linux `tcp_timeout_mark_lost` with RACK): the
    /// first record and every record sent longer than `rack_rtt` ago are lost; those sent
    /// more recently may still be acknowledged.
    pub fn mark_lost_on_timeout(&mut self, now: Nanos, rack_rtt: Nanos) {
        for i in 0..self.records.len() {
            let r = self.records[i];
            if i == 0 || now.saturating_sub(r.sent_at) >= rack_rtt {
                self.mark_lost_at(i);
            }
        }
    }

    /// A spurious reduction is undone with its loss marks (Linux `tcp_undo_cwnd_reduction`
    /// with `unmark_loss`): nothing is presumed lost any more, and nothing is to be resent.
    pub fn unmark_lost(&mut self) {
        if self.lost == 0 {
            return;
        }
        for r in self.records.iter_mut().filter(|r| r.lost) {
            r.lost = false;
        }
        self.lost = 0;
        self.to_resend.clear();
    }

    /// Segments of `mss` bytes in [start, end) whose records were ever retransmitted: what a
    /// D-SACK for that range may show to have been sent twice (Linux `tcp_sacktag_one`).
    pub fn retransmitted_segments_in(&self, start: u64, end: u64, mss: u64) -> u64 {
        let first = self.records.partition_point(|r| r.end <= start);
        self.records
            .range(first..)
            .take_while(|r| r.start < end)
            .filter(|r| r.ever_retrans)
            .map(|r| r.len().div_ceil(mss))
            .sum()
    }

    /// The cumulative ACK reached `ack`: drops the records it covers, SACKed or not, and
    /// reports each that was not SACKed before.
    pub fn acknowledge(&mut self, ack: u64, mut delivered: impl FnMut(Delivery)) -> Covered {
        let mut covered = Covered::default();
        while let Some(r) = self.records.front().copied() {
            if r.start >= ack {
                break;
            }
            if r.end > ack {
                // Part of a record (a probe's byte, or a peer that acknowledges mid-segment).
                self.trim_front(ack);
                break;
            }
            self.records.pop_front();
            self.low = self.records.front().map_or(self.high, |next| next.start);
            self.dropped += 1;
            self.forget(&r);
            covered.include(r.sent_at, r.ever_retrans, r.sacked);
            if !r.sacked {
                delivered(Delivery {
                    sent_at: r.sent_at,
                    end: r.end,
                    ever_retrans: r.ever_retrans,
                    tx: r.tx,
                });
            }
        }
        self.sacked_ranges.discard_below(ack);
        while self
            .by_time
            .front()
            .is_some_and(|&(_, serial, _)| serial < self.dropped)
        {
            self.by_time.pop_front();
        }
        covered
    }

    fn forget(&mut self, r: &Record) {
        if r.sacked {
            self.sacked -= r.len();
        }
        if r.lost {
            self.lost -= r.len();
        }
        if r.retrans {
            self.retrans -= r.len();
        }
        self.to_resend.remove(&r.start);
    }

    fn trim_front(&mut self, ack: u64) {
        let r = self.records[0];
        let cut = ack - r.start;
        for (flag, count) in [
            (r.sacked, &mut self.sacked),
            (r.lost, &mut self.lost),
            (r.retrans, &mut self.retrans),
        ] {
            if flag {
                *count -= cut;
            }
        }
        if self.to_resend.remove(&r.start) {
            self.to_resend.insert(ack);
        }
        self.records[0].start = ack;
        self.low = ack;
    }

    /// Records SACK blocks above the cumulative ACK; reports every record they complete,
    /// lowest first, and returns the bytes newly SACKed. A record counts as SACKed once
    /// blocks cover all of it. The receiver lists its newest block first (RFC 2018 §4);
    /// Linux sorts the blocks by sequence before walking the queue
    /// (`tcp_sacktag_write_queue`), so data SACKed by two blocks of one ACK is not taken
    /// for reordering.
    pub fn sack(&mut self, blocks: &[(u64, u64)], mut delivered: impl FnMut(Delivery)) -> u64 {
        if self.records.is_empty() {
            return 0;
        }
        let (low, high) = (self.low, self.high);
        let mut sorted = [(0, 0); MAX_SACK_BLOCKS];
        let sorted = &mut sorted[..blocks.len()];
        sorted.copy_from_slice(blocks);
        sorted.sort_unstable();
        let mut newly = 0;
        for &(start, end) in sorted.iter() {
            let (start, end) = (start.max(low), end.min(high));
            if start >= end || self.sacked_ranges.covered(start, end) == end - start {
                continue;
            }
            let gaps = self.sacked_ranges.gaps(start, end);
            self.sacked_ranges.insert(start, end);
            for (gap_start, gap_end) in gaps {
                let mut i = self.records.partition_point(|r| r.end <= gap_start);
                while let Some(r) = self.records.get(i).copied() {
                    if r.start >= gap_end {
                        break;
                    }
                    if !r.sacked && self.sacked_ranges.covered(r.start, r.end) == r.len() {
                        newly += r.len();
                        self.mark_sacked_at(i);
                        delivered(Delivery {
                            sent_at: r.sent_at,
                            end: r.end,
                            ever_retrans: r.ever_retrans,
                            tx: r.tx,
                        });
                    }
                    i += 1;
                }
            }
        }
        newly
    }

    fn mark_sacked_at(&mut self, i: usize) {
        let r = &mut self.records[i];
        r.sacked = true;
        self.sacked += r.len();
        if r.lost {
            r.lost = false;
            self.lost -= r.len();
        }
        if r.retrans {
            r.retrans = false;
            self.retrans -= r.len();
        }
        let start = r.start;
        self.to_resend.remove(&start);
    }

    /// The transmissions still awaiting an answer, oldest first, that RACK may judge
    /// (RFC 8985 §6.2): not SACKed, and not lost unless resent since. Stale entries at the
    /// front are dropped as they are met.
    pub fn oldest_candidate(&mut self) -> Option<Record> {
        while let Some(&(_, serial, transmission)) = self.by_time.front() {
            match self.by_serial(serial) {
                Some(&r) if r.transmissions == transmission && Self::candidate(&r) => {
                    return Some(r);
                }
                _ => {
                    self.by_time.pop_front();
                }
            }
        }
        None
    }

    /// Drops the oldest transmission from the time order (RACK has marked it lost).
    pub fn pop_oldest(&mut self) {
        self.by_time.pop_front();
    }

    /// The newest candidate transmission sent no later than (`time`, `end`), for RACK's
    /// reordering timer.
    pub fn newest_candidate_before(&self, time: Nanos, end: u64) -> Option<Record> {
        let upto = self.by_time.partition_point(|&(t, _, _)| t <= time);
        self.by_time
            .range(..upto)
            .rev()
            .filter_map(|&(_, serial, transmission)| {
                let r = *self.by_serial(serial)?;
                (r.transmissions == transmission && Self::candidate(&r)).then_some(r)
            })
            .find(|r| r.sent_at < time || r.end < end)
    }

    fn candidate(r: &Record) -> bool {
        !r.sacked && (r.retrans || !r.lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Ten segments sent at 0, 1, …, 9 ns.
    fn ten() -> RtxQueue {
        let mut q = RtxQueue::default();
        for i in 0..10 {
            q.sent(i * MSS, (i + 1) * MSS, i, TxRate::default());
        }
        q
    }

    fn deliveries(q: &mut RtxQueue, blocks: &[(u64, u64)]) -> (u64, Vec<u64>) {
        let mut ends = Vec::new();
        let n = q.sack(blocks, |d| ends.push(d.end));
        (n, ends)
    }

    #[test]
    fn the_blocks_of_one_ack_are_walked_lowest_first() {
        // The receiver lists its newest block first (RFC 2018 §4); Linux sorts them
        // (tcp_sacktag_write_queue), so RACK sees deliveries in sequence order.
        let mut q = ten();
        assert_eq!(
            deliveries(&mut q, &[(6 * MSS, 7 * MSS), (2 * MSS, 4 * MSS)]),
            (3 * MSS, vec![3 * MSS, 4 * MSS, 7 * MSS])
        );
    }

    #[test]
    fn in_flight_leaves_out_sacked_and_lost_and_counts_resent_again() {
        // RFC 8985 §6.2 / Linux tcp_packets_in_flight.
        let mut q = ten();
        assert_eq!(q.in_flight(), 10 * MSS);
        q.sack(&[(2 * MSS, 5 * MSS)], |_| {});
        assert_eq!(q.in_flight(), 7 * MSS);
        q.mark_lost(0);
        q.mark_lost(MSS);
        assert_eq!(q.in_flight(), 5 * MSS);
        q.resent(0, 20, TxRate::default());
        assert_eq!(q.in_flight(), 6 * MSS);
        assert_eq!(q.next_to_resend().map(|r| r.start), Some(MSS));
    }

    #[test]
    fn a_repeated_block_reports_each_record_once() {
        let mut q = ten();
        assert_eq!(
            deliveries(&mut q, &[(2 * MSS, 4 * MSS)]),
            (2 * MSS, vec![3000, 4000])
        );
        assert_eq!(deliveries(&mut q, &[(2 * MSS, 5 * MSS)]), (MSS, vec![5000]));
        assert_eq!(deliveries(&mut q, &[(2 * MSS, 5 * MSS)]), (0, vec![]));
        assert_eq!(q.sacked_bytes(), 3 * MSS);
    }

    #[test]
    fn a_sacked_lost_record_leaves_the_lost_count_and_the_resend_set() {
        let mut q = ten();
        q.mark_lost(3 * MSS);
        q.sack(&[(3 * MSS, 4 * MSS)], |_| {});
        assert_eq!(q.lost_bytes(), 0);
        assert_eq!(q.next_to_resend(), None);
    }

    #[test]
    fn a_lost_retransmission_is_counted_and_resent_again() {
        // Linux tcp_mark_skb_lost: LOST stays, SACKED_RETRANS is cleared.
        let mut q = ten();
        q.mark_lost(0);
        q.resent(0, 20, TxRate::default());
        assert_eq!(q.next_to_resend(), None);
        q.mark_lost(0);
        assert_eq!(q.lost_retransmits, MSS);
        assert_eq!(q.next_to_resend().map(|r| r.start), Some(0));
        assert_eq!(q.in_flight(), 9 * MSS);
    }

    #[test]
    fn the_cumulative_ack_reports_only_records_not_sacked_before() {
        let mut q = ten();
        q.sack(&[(MSS, 2 * MSS)], |_| {});
        let mut ends = Vec::new();
        q.acknowledge(3 * MSS, |d| ends.push(d.end));
        assert_eq!(ends, vec![1000, 3000]);
        assert_eq!(q.sacked_bytes(), 0);
        assert_eq!(q.outstanding(), 7 * MSS);
        assert_eq!(q.head().map(|r| r.start), Some(3 * MSS));
    }

    #[test]
    fn candidates_come_oldest_first_and_skip_delivered_and_lost_unsent_records() {
        let mut q = ten();
        q.sack(&[(0, MSS)], |_| {});
        q.mark_lost(MSS);
        assert_eq!(q.oldest_candidate().map(|r| r.start), Some(2 * MSS));
        // Resending segment 1 puts it back, as the newest transmission.
        q.resent(MSS, 50, TxRate::default());
        assert_eq!(q.newest_candidate_before(60, 0).map(|r| r.start), Some(MSS));
        assert_eq!(
            q.newest_candidate_before(9, 0).map(|r| r.start),
            Some(8 * MSS)
        );
    }

    #[test]
    fn unmarking_forgets_every_loss_and_every_pending_resend() {
        let mut q = ten();
        q.mark_lost(0);
        q.mark_lost(3000);
        q.resent(0, 5, TxRate::default());
        q.unmark_lost();
        assert_eq!(q.lost_bytes(), 0);
        assert!(q.next_to_resend().is_none());
        // The retransmission sent is still in flight.
        assert_eq!(q.in_flight(), 10 * MSS + MSS);
        assert_eq!(q.retransmitted_segments_in(0, 10 * MSS, MSS), 1);
        assert_eq!(q.retransmitted_segments_in(MSS, 10 * MSS, MSS), 0);
    }

    #[test]
    fn timeout_marks_the_head_and_what_was_sent_a_rack_rtt_ago() {
        let mut q = ten();
        q.mark_lost_on_timeout(12, 5);
        // Sent at 0..=7 are lost (12 − 7 ≥ 5); 8 and 9 may still arrive.
        assert_eq!(q.lost_bytes(), 8 * MSS);
        let mut q = ten();
        q.mark_lost_on_timeout(5, 100);
        assert_eq!(q.lost_bytes(), MSS);
    }
}
