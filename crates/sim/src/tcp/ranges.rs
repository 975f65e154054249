//! A set of disjoint, non-adjacent byte ranges [start, end): the receiver's out-of-order
//! data and the sender's SACK scoreboard are both one of these.

use std::collections::BTreeMap;

#[derive(Debug, Default, Clone)]
pub struct RangeSet {
    ranges: BTreeMap<u64, u64>,
}

impl RangeSet {
    /// Adds [start, end), merging it with every range it overlaps or touches.
    pub fn insert(&mut self, mut start: u64, mut end: u64) {
        if start >= end {
            return;
        }
        let touching: Vec<(u64, u64)> = self
            .ranges
            .range(..=end)
            .rev()
            .take_while(|&(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.ranges.remove(&s);
            start = start.min(s);
            end = end.max(e);
        }
        self.ranges.insert(start, end);
    }

    /// Octets of [start, end) already in the set.
    pub fn covered(&self, start: u64, end: u64) -> u64 {
        self.ranges
            .range(..end)
            .rev()
            .take_while(|&(_, &e)| e > start)
            .map(|(&s, &e)| e.min(end) - s.max(start))
            .sum()
    }

    /// The parts of [start, end) not in the set, lowest first.
    pub fn gaps(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut gaps = Vec::new();
        let mut cursor = start;
        let first = self.containing(start).map_or(start, |(s, _)| s);
        for (&s, &e) in self.ranges.range(first..end) {
            if s > cursor {
                gaps.push((cursor, s));
            }
            cursor = cursor.max(e);
        }
        if cursor < end {
            gaps.push((cursor, end));
        }
        gaps
    }

    /// Drops everything below `point`.
    pub fn discard_below(&mut self, point: u64) {
        while let Some((&s, &e)) = self.ranges.first_key_value() {
            if s >= point {
                break;
            }
            self.ranges.pop_first();
            if e > point {
                self.ranges.insert(point, e);
                break;
            }
        }
    }

    /// The range containing `seq`.
    pub fn containing(&self, seq: u64) -> Option<(u64, u64)> {
        let (&s, &e) = self.ranges.range(..=seq).next_back()?;
        (seq < e).then_some((s, e))
    }

    /// The lowest part of [start, end) already in the set.
    pub fn first_overlap(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        let from = self.containing(start).map_or(start, |(s, _)| s);
        let (&s, &e) = self.ranges.range(from..end).next()?;
        (e > start).then(|| (s.max(start), e.min(end)))
    }

    /// The lowest range starting at or above `seq`.
    pub fn first_at_or_above(&self, seq: u64) -> Option<(u64, u64)> {
        self.ranges.range(seq..).next().map(|(&s, &e)| (s, e))
    }

    /// Removes and returns the lowest range if it starts at or below `point`.
    pub fn pop_first_reaching(&mut self, point: u64) -> Option<(u64, u64)> {
        let (&s, _) = self.ranges.first_key_value()?;
        if s > point {
            return None;
        }
        self.ranges.pop_first()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().map(|(&s, &e)| (s, e))
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn clear(&mut self) {
        self.ranges.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_the_uncovered_parts_of_a_range() {
        let mut r = RangeSet::default();
        r.insert(10, 20);
        r.insert(30, 40);
        assert_eq!(r.gaps(0, 50), vec![(0, 10), (20, 30), (40, 50)]);
        assert_eq!(r.gaps(15, 35), vec![(20, 30)]);
        assert_eq!(r.gaps(12, 18), vec![]);
    }

    fn set(ranges: &[(u64, u64)]) -> RangeSet {
        let mut s = RangeSet::default();
        for &(a, b) in ranges {
            s.insert(a, b);
        }
        s
    }

    #[test]
    fn insert_merges_overlapping_and_touching_ranges() {
        let s = set(&[(10, 20), (30, 40), (20, 25), (35, 50), (0, 5)]);
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![(0, 5), (10, 25), (30, 50)]
        );
        let s = set(&[(10, 20), (30, 40), (5, 45)]);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(5, 45)]);
    }

    #[test]
    fn the_first_overlap_is_the_lowest_shared_part() {
        let mut set = RangeSet::default();
        set.insert(10, 20);
        set.insert(30, 40);
        assert_eq!(set.first_overlap(15, 35), Some((15, 20)));
        assert_eq!(set.first_overlap(20, 35), Some((30, 35)));
        assert_eq!(set.first_overlap(5, 10), None);
        assert_eq!(set.first_overlap(20, 30), None);
        assert_eq!(set.first_overlap(32, 38), Some((32, 38)));
    }

    #[test]
    fn covered_counts_the_overlap() {
        let s = set(&[(10, 20), (30, 40)]);
        assert_eq!(s.covered(15, 35), 10);
        assert_eq!(s.covered(0, 10), 0);
        assert_eq!(s.covered(0, 50), 20);
    }

    #[test]
    fn discard_below_trims_a_straddling_range() {
        let mut s = set(&[(10, 20), (30, 40)]);
        s.discard_below(15);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![(15, 20), (30, 40)]);
        assert_eq!(s.containing(35), Some((30, 40)));
        assert_eq!(s.containing(25), None);
        assert_eq!(s.pop_first_reaching(14), None);
        assert_eq!(s.pop_first_reaching(15), Some((15, 20)));
    }
}
