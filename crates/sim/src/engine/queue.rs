//! Future event list: binary heaps ordered by (time, rank, insertion number). The
//! insertion number breaks ties first-in first-out, so events scheduled for the same
//! nanosecond run in the order they were scheduled and a run never depends on heap
//! internals. An event scheduled "behind" ranks after every ordinary event of its
//! nanosecond, whenever either was scheduled: ATM cells yield to packet events at the same
//! instant, the order they had when cells kept a schedule of their own.
//!
//! Events scheduled on a delay line (a channel's packets in propagation, which reach its
//! far end in the order they left) wait in that line's FIFO, and only the line's earliest
//! is in the heap: with a window of thousands of packets in flight the heap stays as small
//! as the number of lines, not of packets. The order is the same as if every event were in
//! the heap, because a line's events are scheduled in time order and each keeps its
//! insertion number. The heap itself is two: one of the events due soon, which most events
//! pass through, and one of those due later (timers), see `EventQueue::near`.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use super::Nanos;

/// The top bit of an entry's `seq`: the event was scheduled behind.
const BEHIND: u64 = 1 << 63;

/// `Entry::line` of an event not on a delay line.
const NO_LINE: u32 = u32::MAX;

struct Entry<E> {
    at: Nanos,
    /// The insertion number, with [`BEHIND`] set for an event scheduled behind.
    seq: u64,
    event: E,
    /// The delay line the event came from, or [`NO_LINE`].
    line: u32,
}

/// A delay line's events after its earliest (which is in the heap), in time order.
struct Line<E> {
    waiting: VecDeque<(Nanos, u64, E)>,
    head_in_heap: bool,
    last_at: Nanos,
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

/// How far past the earliest event the near heap reaches when it is refilled: 16.8 ms,
/// longer than a terrestrial path's propagation and a link's serialization, shorter than
/// the delayed-ACK and retransmission timers.
const NEAR_SPAN: Nanos = 1 << 24;

pub struct EventQueue<E> {
    /// The events due before `horizon`; every other event is in `far`. Most events are
    /// due within microseconds (serialization, the next packet of a line) while the timers
    /// of every connection wait tens or hundreds of milliseconds ahead: apart, the events
    /// popped most often come from a heap of a few entries, not of every timer.
    near: BinaryHeap<Entry<E>>,
    far: BinaryHeap<Entry<E>>,
    horizon: Nanos,
    lines: Vec<Line<E>>,
    next_seq: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            near: BinaryHeap::new(),
            far: BinaryHeap::new(),
            horizon: 0,
            lines: Vec::new(),
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

    /// Schedules `event` on delay line `line` (any number; lines are made as used). It
    /// runs exactly when and in the order [`EventQueue::schedule`] would run it; an event
    /// earlier than the line's last one goes to the heap directly, so the line stays in
    /// time order.
    pub fn schedule_on_line(&mut self, line: usize, at: Nanos, event: E) {
        if line >= self.lines.len() {
            self.lines.resize_with(line + 1, || Line {
                waiting: VecDeque::new(),
                head_in_heap: false,
                last_at: 0,
            });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let l = &mut self.lines[line];
        if at < l.last_at {
            self.push_entry(Entry {
                at,
                seq,
                event,
                line: NO_LINE,
            });
            return;
        }
        l.last_at = at;
        if l.head_in_heap {
            l.waiting.push_back((at, seq, event));
        } else {
            l.head_in_heap = true;
            let line = line as u32;
            self.push_entry(Entry {
                at,
                seq,
                event,
                line,
            });
        }
    }

    fn push(&mut self, at: Nanos, seq: u64, event: E) {
        self.push_entry(Entry {
            at,
            seq,
            event,
            line: NO_LINE,
        });
        self.next_seq += 1;
    }

    fn push_entry(&mut self, entry: Entry<E>) {
        if entry.at < self.horizon {
            self.near.push(entry);
        } else {
            self.far.push(entry);
        }
    }

    /// Moves the events due within [`NEAR_SPAN`] of the earliest far one to the near heap,
    /// which is empty: every event left in `far` is then due after every event in `near`.
    fn refill(&mut self) {
        let Some(first) = self.far.peek() else {
            return;
        };
        self.horizon = first.at.saturating_add(NEAR_SPAN);
        while let Some(entry) = self.far.peek() {
            if entry.at >= self.horizon {
                break;
            }
            let entry = self.far.pop().expect("peeked");
            self.near.push(entry);
        }
    }

    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        if self.near.is_empty() {
            self.refill();
        }
        let entry = self.near.pop()?;
        self.popped += 1;
        if entry.line != NO_LINE {
            let line = &mut self.lines[entry.line as usize];
            match line.waiting.pop_front() {
                Some((at, seq, event)) => self.push_entry(Entry {
                    at,
                    seq,
                    event,
                    line: entry.line,
                }),
                None => line.head_in_heap = false,
            }
        }
        Some((entry.at, entry.event))
    }

    /// When the earliest event is due.
    pub fn peek_at(&self) -> Option<Nanos> {
        self.near
            .peek()
            .or_else(|| self.far.peek())
            .map(|entry| entry.at)
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

    /// Events on delay lines come out exactly as the same events scheduled plainly: random
    /// times, lines that are and are not in time order, plain events among them.
    #[test]
    fn delay_lines_keep_the_order_of_plain_scheduling() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        for _ in 0..50 {
            let (mut lined, mut plain) = (EventQueue::default(), EventQueue::default());
            let mut now = 0;
            let mut id = 0;
            for _ in 0..2000 {
                if rng.gen_bool(0.4) {
                    if let (Some(a), Some(b)) = (lined.pop(), plain.pop()) {
                        assert_eq!(a, b);
                        now = a.0;
                    }
                    continue;
                }
                let at = now + rng.gen_range(0..50);
                id += 1;
                match rng.gen_range(0..4) {
                    0 => {
                        lined.schedule(at, id);
                        plain.schedule(at, id);
                    }
                    1 => {
                        lined.schedule_behind(at, id);
                        plain.schedule_behind(at, id);
                    }
                    line => {
                        lined.schedule_on_line(line, at, id);
                        plain.schedule(at, id);
                    }
                }
            }
            let rest = |q: &mut EventQueue<u32>| std::iter::from_fn(|| q.pop()).collect::<Vec<_>>();
            assert_eq!(rest(&mut lined), rest(&mut plain));
            assert_eq!(lined.popped(), plain.popped());
        }
    }

    /// Far and near events, ordinary and behind, come out in (time, rank, insertion) order
    /// whatever the heap they wait in: the order of one sorted list of them all.
    #[test]
    fn near_and_far_events_come_out_in_one_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut q = EventQueue::default();
        let mut reference = std::collections::BTreeSet::new();
        let mut now = 0;
        for id in 0..20_000u64 {
            if rng.gen_bool(0.45) {
                if let Some((at, got)) = q.pop() {
                    let (want_at, (_, want)) = reference.pop_first().expect("as many events");
                    assert_eq!((at, got), (want_at, want));
                    now = at;
                }
                continue;
            }
            // Microseconds to seconds ahead, around NEAR_SPAN.
            let at =
                now + rng.gen_range(0..4 * NEAR_SPAN) / [1, 1_000, 100_000][rng.gen_range(0..3)];
            let behind = rng.gen_bool(0.2);
            if behind {
                q.schedule_behind(at, id);
            } else {
                q.schedule(at, id);
            }
            reference.insert((at, (behind, id)));
        }
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = reference
            .into_iter()
            .map(|(at, (_, id))| (at, id))
            .collect();
        assert_eq!(rest, want);
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
