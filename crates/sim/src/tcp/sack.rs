//! The SACK scoreboard and the RFC 6675 loss-recovery queries built on it: which holes
//! are presumed lost (IsLost), how much is still in the network (SetPipe), and what to
//! send next (NextSeg).

use super::ranges::RangeSet;

/// RFC 6675 §2 DupThresh, as RFC 5681's three duplicate ACKs.
pub const DUP_THRESH: u64 = 3;

/// Octet ranges the receiver has reported with SACK, above the cumulative ACK.
#[derive(Debug, Default, Clone)]
pub struct Scoreboard {
    blocks: RangeSet,
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

/// A run of unSACKed octets between the cumulative ACK and the highest data sent, with
/// what RFC 6675 needs to know about the SACKed data above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hole {
    pub start: u64,
    pub end: u64,
    /// RFC 6675 §4 IsLost: DupThresh discontiguous SACKed ranges lie above the hole, or
    /// more than (DupThresh − 1)·SMSS SACKed octets do.
    pub lost: bool,
    /// Some SACKed octet lies above the hole (RFC 6675 NextSeg rule (1.b)).
    pub below_sack: bool,
}

impl Scoreboard {
    /// Records SACK blocks (RFC 6675 §4 Update) and forgets what the cumulative ACK covers.
    /// Returns how many octets the blocks reported that were not SACKed before.
    pub fn update(&mut self, snd_una: u64, blocks: &[(u64, u64)]) -> u64 {
        self.blocks.discard_below(snd_una);
        let mut newly = 0;
        for &(start, end) in blocks {
            let start = start.max(snd_una);
            if start >= end {
                continue;
            }
            newly += (end - start) - self.blocks.covered(start, end);
            self.blocks.insert(start, end);
        }
        newly
    }

    /// Octets of [start, end) already SACKed.
    pub fn sacked_between(&self, start: u64, end: u64) -> u64 {
        self.blocks.covered(start, end)
    }

    pub fn clear(&mut self) {
        self.blocks.clear();
    }

    /// The SACKed range containing `seq`, if any.
    pub fn sacked_range(&self, seq: u64) -> Option<(u64, u64)> {
        self.blocks.containing(seq)
    }

    /// Start of the first SACKed range at or above `seq`.
    pub fn next_sacked_start(&self, seq: u64) -> Option<u64> {
        self.blocks.iter().map(|(s, _)| s).find(|&s| s >= seq)
    }

    /// The holes between `snd_una` and `high_data`, lowest first.
    pub fn holes(&self, snd_una: u64, high_data: u64, mss: u64) -> Vec<Hole> {
        let mut above_bytes = self.blocks.bytes();
        let mut above_ranges = self.blocks.len() as u64;
        let mut holes = Vec::new();
        let mut cursor = snd_una;
        for (s, e) in self.blocks.iter() {
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

    /// RFC 6675 §4 SetPipe: octets presumed in the network. An unSACKed octet counts once
    /// unless presumed lost, and once more if it was retransmitted (it is below HighRxt).
    pub fn pipe(&self, snd_una: u64, high_data: u64, high_rxt: u64, mss: u64) -> u64 {
        self.holes(snd_una, high_data, mss)
            .iter()
            .map(|h| {
                let in_flight = if h.lost { 0 } else { h.end - h.start };
                let retransmitted = high_rxt.min(h.end).saturating_sub(h.start);
                in_flight + retransmitted
            })
            .sum()
    }

    /// The candidates of NextSeg rules (1) and (3) above HighRxt, each at most one SMSS.
    pub fn next_retransmission(
        &self,
        snd_una: u64,
        high_data: u64,
        high_rxt: u64,
        mss: u64,
    ) -> Retransmission {
        let mut lost = None;
        let mut any = None;
        for h in self.holes(snd_una, high_data, mss) {
            let start = h.start.max(high_rxt);
            if start >= h.end {
                continue;
            }
            let range = (start, h.end.min(start + mss));
            if h.lost && lost.is_none() {
                lost = Some(range);
            }
            if !h.lost && any.is_none() && h.below_sack {
                any = Some(range);
            }
        }
        Retransmission { lost, other: any }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

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
        assert!(!b.holes(0, 3000, MSS)[0].lost);
        let b = board(&[(1000, 4000)]);
        assert!(b.holes(0, 4000, MSS)[0].lost);
        // Three discontiguous SACKed ranges above also count (RFC 6675 §4 IsLost).
        let b = board(&[(1000, 1100), (2000, 2100), (3000, 3100)]);
        assert!(b.holes(0, 3100, MSS)[0].lost);
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
