//! The SACK scoreboard and the RFC 6675 loss-recovery queries built on it: which holes
//! are presumed lost (IsLost), how much is still in the network (SetPipe), and what to
//! send next (NextSeg).

use std::cell::Cell;

use super::ranges::RangeSet;

/// RFC 6675 §2 DupThresh, as RFC 5681's three duplicate ACKs.
pub const DUP_THRESH: u64 = 3;

/// Octet ranges the receiver has reported with SACK, above the cumulative ACK.
///
/// Every query is cheap in the number of SACKed ranges, because SACK recovery asks them
/// for every segment it sends and a window can hold thousands of holes: a hole is lost
/// only with DupThresh ranges or more than (DupThresh − 1)·SMSS octets above it, so the
/// holes not presumed lost are the few highest ones, found from the top; and the SACKed
/// octets below HighRxt are counted from the last point asked about (`mark`), which
/// HighRxt passes a segment at a time.
#[derive(Debug, Default, Clone)]
pub struct Scoreboard {
    blocks: RangeSet,
    mark: Cell<u64>,
    sacked_below_mark: Cell<u64>,
}

/// Octet range [start, end).
pub type Range = (u64, u64);

/// What NextSeg (RFC 6675 §4) may resend: by rule (1), the next hole presumed lost; by
/// rule (3), failing rules (1) and (2), the next unSACKed octets below the highest SACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retransmission {
    pub lost: Option<Range>,
    pub other: Option<Range>,
}

/// The holes not presumed lost (the tail above the highest SACK, and at most
/// DupThresh − 1 below a SACKed range), highest first, and the end of the highest hole
/// presumed lost: every hole below that end is lost too (RFC 6675 §4 IsLost only counts
/// what lies above a hole, which grows downwards).
#[derive(Debug, Default)]
struct Top {
    unlost: [Range; DUP_THRESH as usize],
    unlost_below_sack: [bool; DUP_THRESH as usize],
    count: usize,
    lost_end: Option<u64>,
}

impl Top {
    fn push(&mut self, range: Range, below_sack: bool) {
        self.unlost[self.count] = range;
        self.unlost_below_sack[self.count] = below_sack;
        self.count += 1;
    }

    fn unlost(&self) -> impl DoubleEndedIterator<Item = (Range, bool)> + '_ {
        (0..self.count).map(|i| (self.unlost[i], self.unlost_below_sack[i]))
    }
}

impl Scoreboard {
    /// Records SACK blocks (RFC 6675 §4 Update) and forgets what the cumulative ACK covers.
    /// Returns how many octets the blocks reported that were not SACKed before.
    pub fn update(&mut self, snd_una: u64, blocks: &[(u64, u64)]) -> u64 {
        let mark = self.mark.get();
        let mut below_mark = self.sacked_below_mark.get();
        below_mark -= self.blocks.covered(0, snd_una.min(mark));
        self.blocks.discard_below(snd_una);
        let mut newly = 0;
        for &(start, end) in blocks {
            let start = start.max(snd_una);
            if start >= end {
                continue;
            }
            newly += (end - start) - self.blocks.covered(start, end);
            if start < mark {
                let below = end.min(mark);
                below_mark += (below - start) - self.blocks.covered(start, below);
            }
            self.blocks.insert(start, end);
        }
        self.sacked_below_mark.set(below_mark);
        newly
    }

    /// Octets of [start, end) already SACKed.
    pub fn sacked_between(&self, start: u64, end: u64) -> u64 {
        self.blocks.covered(start, end)
    }

    pub fn clear(&mut self) {
        self.blocks.clear();
        self.sacked_below_mark.set(0);
    }

    /// The SACKed range containing `seq`, if any.
    pub fn sacked_range(&self, seq: u64) -> Option<(u64, u64)> {
        self.blocks.containing(seq)
    }

    /// Start of the first SACKed range at or above `seq`.
    pub fn next_sacked_start(&self, seq: u64) -> Option<u64> {
        self.blocks.first_at_or_above(seq).map(|(s, _)| s)
    }

    /// SACKed octets below `point`, counted from the last point asked about.
    fn sacked_below(&self, point: u64) -> u64 {
        let mark = self.mark.get();
        let below_mark = self.sacked_below_mark.get();
        let below = if point >= mark {
            below_mark + self.blocks.covered(mark, point)
        } else {
            below_mark - self.blocks.covered(point, mark)
        };
        self.mark.set(point);
        self.sacked_below_mark.set(below);
        below
    }

    /// The holes between `snd_una` and `high_data` not presumed lost, found from the top.
    fn top(&self, snd_una: u64, high_data: u64, mss: u64) -> Top {
        let mut top = Top::default();
        let mut ranges = self.blocks.iter().rev().peekable();
        let tail_start = ranges.peek().map_or(snd_una, |&(_, e)| e.max(snd_una));
        if tail_start < high_data {
            top.push((tail_start, high_data), false);
        }
        let (mut above_bytes, mut above_ranges) = (0, 0);
        while let Some((s, e)) = ranges.next() {
            above_bytes += e - s;
            above_ranges += 1;
            let start = ranges.peek().map_or(snd_una, |&(_, e)| e.max(snd_una));
            if s <= start {
                break;
            }
            if above_ranges >= DUP_THRESH || above_bytes > (DUP_THRESH - 1) * mss {
                top.lost_end = Some(s.min(high_data));
                break;
            }
            top.push((start, s.min(high_data)), true);
        }
        top
    }

    /// RFC 6675 §4 IsLost of the first unacknowledged octet (false when it is SACKed).
    pub fn head_lost(&self, snd_una: u64, high_data: u64, mss: u64) -> bool {
        self.sacked_range(snd_una).is_none()
            && self
                .top(snd_una, high_data, mss)
                .lost_end
                .is_some_and(|end| snd_una < end)
    }

    /// RFC 6675 §4 SetPipe: octets presumed in the network. An unSACKed octet counts once
    /// unless presumed lost, and once more if it was retransmitted (it is below HighRxt).
    pub fn pipe(&self, snd_una: u64, high_data: u64, high_rxt: u64, mss: u64) -> u64 {
        let in_flight: u64 = self
            .top(snd_una, high_data, mss)
            .unlost()
            .map(|((s, e), _)| e - s)
            .sum();
        let rxt_end = high_rxt.min(high_data).max(snd_una);
        let sacked_below_rxt = self.sacked_below(rxt_end) - self.blocks.covered(0, snd_una);
        in_flight + (rxt_end - snd_una) - sacked_below_rxt
    }

    /// The candidates of NextSeg rules (1) and (3) above HighRxt, each at most one SMSS.
    pub fn next_retransmission(
        &self,
        snd_una: u64,
        high_data: u64,
        high_rxt: u64,
        mss: u64,
    ) -> Retransmission {
        let top = self.top(snd_una, high_data, mss);
        let mut start = high_rxt.max(snd_una);
        if let Some((_, end)) = self.sacked_range(start) {
            start = end;
        }
        let lost = top.lost_end.filter(|&end| start < end).map(|_| {
            let hole_end = self
                .next_sacked_start(start)
                .map_or(high_data, |s| s.min(high_data));
            (start, hole_end.min(start + mss))
        });
        let other = top.unlost().rev().find_map(|((s, e), below_sack)| {
            let start = s.max(high_rxt);
            (below_sack && start < e).then(|| (start, e.min(start + mss)))
        });
        Retransmission { lost, other }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    const MSS: u64 = 1000;

    /// A hole as RFC 6675 defines it, with its IsLost and whether a SACK lies above it.
    #[derive(Debug)]
    struct Hole {
        start: u64,
        end: u64,
        lost: bool,
        below_sack: bool,
    }

    /// Every hole, lowest first, straight from the definitions: the oracle the
    /// scoreboard's queries are checked against.
    fn holes(b: &Scoreboard, snd_una: u64, high_data: u64, mss: u64) -> Vec<Hole> {
        let mut above_bytes: u64 = b.blocks.iter().map(|(s, e)| e - s).sum();
        let mut above_ranges = b.blocks.iter().count() as u64;
        let mut holes = Vec::new();
        let mut cursor = snd_una;
        for (s, e) in b.blocks.iter() {
            if s > cursor {
                holes.push(Hole {
                    start: cursor,
                    end: s.min(high_data),
                    lost: above_ranges >= DUP_THRESH || above_bytes > (DUP_THRESH - 1) * mss,
                    below_sack: true,
                });
            }
            above_bytes -= e - s;
            above_ranges -= 1;
            cursor = cursor.max(e);
        }
        if cursor < high_data {
            holes.push(Hole {
                start: cursor,
                end: high_data,
                lost: false,
                below_sack: false,
            });
        }
        holes
    }

    fn oracle_pipe(b: &Scoreboard, snd_una: u64, high_data: u64, high_rxt: u64) -> u64 {
        holes(b, snd_una, high_data, MSS)
            .iter()
            .map(|h| {
                let in_flight = if h.lost { 0 } else { h.end - h.start };
                in_flight + high_rxt.min(h.end).saturating_sub(h.start)
            })
            .sum()
    }

    fn oracle_next(b: &Scoreboard, snd_una: u64, high_data: u64, high_rxt: u64) -> Retransmission {
        let mut lost = None;
        let mut other = None;
        for h in holes(b, snd_una, high_data, MSS) {
            let start = h.start.max(high_rxt);
            if start >= h.end {
                continue;
            }
            let range = (start, h.end.min(start + MSS));
            if h.lost && lost.is_none() {
                lost = Some(range);
            }
            if !h.lost && other.is_none() && h.below_sack {
                other = Some(range);
            }
        }
        Retransmission { lost, other }
    }

    /// Recovery as a sender drives it: SACKs of random segments arrive, the cumulative ACK
    /// and HighRxt advance (and now and then HighRxt falls back, as after a timeout); at
    /// every step each query equals the oracle's answer.
    #[test]
    fn queries_match_the_definitions_at_every_step() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for _ in 0..200 {
            let mut b = Scoreboard::default();
            let high_data = rng.gen_range(1..80) * MSS + rng.gen_range(0..2) * 300;
            let (mut snd_una, mut high_rxt) = (0, 0);
            for _ in 0..60 {
                let mut blocks = Vec::new();
                for _ in 0..rng.gen_range(0..4) {
                    if snd_una >= high_data {
                        break;
                    }
                    let start = rng.gen_range(snd_una..high_data);
                    let end = rng.gen_range(start + 1..=high_data.min(start + 5 * MSS));
                    blocks.push((start, end));
                }
                if rng.gen_bool(0.2) {
                    snd_una = rng.gen_range(snd_una..=high_data.min(snd_una + 3 * MSS));
                }
                b.update(snd_una, &blocks);
                high_rxt = match rng.gen_range(0..10) {
                    0 => snd_una,
                    1..=5 => high_rxt.max(snd_una) + MSS,
                    _ => high_rxt,
                };
                assert_eq!(
                    b.pipe(snd_una, high_data, high_rxt, MSS),
                    oracle_pipe(&b, snd_una, high_data, high_rxt)
                );
                assert_eq!(
                    b.next_retransmission(snd_una, high_data, high_rxt, MSS),
                    oracle_next(&b, snd_una, high_data, high_rxt)
                );
                let first = holes(&b, snd_una, high_data, MSS);
                let head = first.first().is_some_and(|h| h.start == snd_una && h.lost);
                assert_eq!(b.head_lost(snd_una, high_data, MSS), head);
            }
            if rng.gen_bool(0.1) {
                b.clear();
                assert_eq!(
                    b.pipe(0, high_data, high_rxt, MSS),
                    oracle_pipe(&b, 0, high_data, high_rxt)
                );
            }
        }
    }

    fn board(blocks: &[(u64, u64)]) -> Scoreboard {
        let mut b = Scoreboard::default();
        b.update(0, blocks);
        b
    }

    #[test]
    fn update_merges_blocks_and_reports_new_data() {
        let mut b = Scoreboard::default();
        assert_eq!(b.update(0, &[(2000, 3000)]), 1000);
        assert_eq!(b.update(0, &[(2500, 4000)]), 1000);
        assert_eq!(b.update(0, &[(2000, 4000)]), 0);
        assert_eq!(b.sacked_between(0, 3000), 1000);
        assert_eq!(b.sacked_range(2500), Some((2000, 4000)));
        // A cumulative ACK at 3000 forgets what it covers.
        assert_eq!(b.update(3000, &[]), 0);
        assert_eq!(b.sacked_range(2500), None);
        assert_eq!(b.sacked_range(3500), Some((3000, 4000)));
    }

    #[test]
    fn a_hole_is_lost_with_three_sacked_segments_above_it() {
        // Segment 0 missing, 1 and 2 SACKed: not yet lost (2·SMSS is not more than 2·SMSS).
        let b = board(&[(1000, 3000)]);
        assert!(!b.head_lost(0, 3000, MSS));
        let b = board(&[(1000, 4000)]);
        assert!(b.head_lost(0, 4000, MSS));
        // Three discontiguous SACKed ranges above also count (RFC 6675 §4 IsLost).
        let b = board(&[(1000, 1100), (2000, 2100), (3000, 3100)]);
        assert!(b.head_lost(0, 3100, MSS));
        let b = board(&[(1000, 1100), (2000, 2100)]);
        assert!(!b.head_lost(0, 2100, MSS));
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_and_retransmitted_octets() {
        // 0..10000 sent; 0 and 3000 lost; everything else SACKed.
        let b = board(&[(1000, 3000), (4000, 10_000)]);
        assert_eq!(b.pipe(0, 10_000, 0, MSS), 0);
        // After resending segment 0 it is in the network again.
        assert_eq!(b.pipe(0, 10_000, 1000, MSS), 1000);
        // A tail hole with nothing SACKed above is still in flight.
        let b = board(&[(1000, 5000)]);
        assert_eq!(b.pipe(0, 8000, 0, MSS), 3000);
    }

    #[test]
    fn next_retransmission_walks_the_lost_holes_in_order() {
        let b = board(&[(1000, 3000), (4000, 6000), (7000, 10_000)]);
        let next = |high_rxt| b.next_retransmission(0, 10_000, high_rxt, MSS).lost;
        assert_eq!(next(0), Some((0, 1000)));
        assert_eq!(next(1000), Some((3000, 4000)));
        assert_eq!(next(4000), Some((6000, 7000)));
        assert_eq!(next(7000), None);
    }
}
