//! Future event list: a binary heap ordered by (time, rank, insertion number). The
//! insertion number breaks ties first-in first-out, so events scheduled for the same
//! nanosecond run in the order they were scheduled and a run never depends on heap
//! internals. An event scheduled "behind" ranks after every ordinary event of its
//! nanosecond, whenever either was scheduled: ATM cells yield to packet events at the same
//! instant, the order they had when cells kept a schedule of their own.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Nanos;

/// The top bit of an entry's `seq`: the event was scheduled behind.
const BEHIND: u64 = 1 << 63;

struct Entry<E> {
    at: Nanos,
    /// The insertion number, with [`BEHIND`] set for an event scheduled behind.
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest event on top.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::new(),
            next_seq: 0,
            popped: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn schedule(&mut self, at: Nanos, event: E) {
        self.push(at, self.next_seq, event);
    }

    /// Schedules `event` to run after every event scheduled with [`EventQueue::schedule`]
    /// for the same nanosecond (among themselves, events behind keep their order).
    pub fn schedule_behind(&mut self, at: Nanos, event: E) {
        self.push(at, self.next_seq | BEHIND, event);
    }

    fn push(&mut self, at: Nanos, seq: u64, event: E) {
        self.heap.push(Entry { at, seq, event });
        self.next_seq += 1;
    }

    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let entry = self.heap.pop()?;
        self.popped += 1;
        Some((entry.at, entry.event))
    }

    /// When the earliest event is due.
    pub fn peek_at(&self) -> Option<Nanos> {
        self.heap.peek().map(|entry| entry.at)
    }

    /// Events handled so far, reported with every run as a measure of work done.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_event_comes_first() {
        let mut q = EventQueue::default();
        q.schedule(30, "c");
        q.schedule(10, "a");
        q.schedule(20, "b");
        assert_eq!(q.peek_at(), Some(10));
        assert_eq!(q.pop(), Some((10, "a")));
        assert_eq!(q.pop(), Some((20, "b")));
        assert_eq!(q.pop(), Some((30, "c")));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn simultaneous_events_keep_scheduling_order() {
        let mut q = EventQueue::default();
        for i in 0..100 {
            q.schedule(5, i);
        }
        for i in 0..100 {
            assert_eq!(q.pop(), Some((5, i)));
        }
        assert_eq!(q.popped(), 100);
    }

    #[test]
    fn events_behind_yield_to_ordinary_events_of_their_nanosecond() {
        let mut q = EventQueue::default();
        q.schedule_behind(5, "cell 1");
        q.schedule(6, "later");
        q.schedule_behind(5, "cell 2");
        q.schedule(5, "packet");
        q.schedule_behind(4, "earlier cell");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            ["earlier cell", "packet", "cell 1", "cell 2", "later"]
        );
    }
}
