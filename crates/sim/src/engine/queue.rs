//! Future event list, ordered by (time, rank, insertion number). The insertion number
//! breaks ties first-in first-out, so events scheduled for the same nanosecond run in the
//! order they were scheduled and a run never depends on the queue's internals. An event
//! scheduled "behind" ranks after every ordinary event of its nanosecond, whenever either
//! was scheduled: ATM cells yield to packet events at the same instant, the order they had
//! when cells kept a schedule of their own.
//!
//! Events scheduled on a delay line (packets in propagation, which reach the far end in the
//! order they left) wait in that line's FIFO, and only the line's earliest is queued: with a
//! window of thousands of packets in flight the queue holds as many of them as there are
//! lines, not packets. The order is the same as if every event were queued, because a
//! line's events are scheduled in time order and each keeps its insertion number. The
//! queued events wait in a timing wheel (queue/wheel.rs) whose cost per event does not grow
//! with the number of events pending.

use std::cmp::Ordering;
use std::collections::VecDeque;

use wheel::Wheel;

use super::Nanos;

mod wheel;

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

/// A delay line's events after its earliest (which is queued), in time order.
struct Line<E> {
    waiting: VecDeque<(Nanos, u64, E)>,
    head_queued: bool,
    last_at: Nanos,
}

/// The room a line's FIFO keeps however little it holds (`Line::give_back_room`).
const LINE_ROOM: usize = 256;

impl<E> Line<E> {
    /// Gives back the room of a FIFO that holds less than a quarter of it, keeping twice
    /// what it holds. A ring's ends move through all of its room, so a FIFO that grew once
    /// (a thousand connections' first windows put on their access links in the same
    /// millisecond: 16,384 places for the 300 or so packets in propagation after) reads
    /// and writes a cold cache line every few events. A shrink copies what the FIFO
    /// holds, and only after it has been drained to a quarter: O(1) per event, amortized.
    #[inline]
    fn give_back_room(&mut self) {
        if self.waiting.capacity() > LINE_ROOM.max(4 * self.waiting.len()) {
            self.shrink();
        }
    }

    // Out of line, so that the run loop's inlined pop stays small.
    #[cold]
    #[inline(never)]
    fn shrink(&mut self) {
        self.waiting
            .shrink_to(LINE_ROOM.max(2 * self.waiting.len()));
    }
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
    events: Wheel<E>,
    lines: Vec<Line<E>>,
    next_seq: u64,
    popped: u64,
    /// The event the last pop moved from its delay line into the queue, if it did.
    promoted: Option<E>,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            events: Wheel::default(),
            lines: Vec::new(),
            next_seq: 0,
            popped: 0,
            promoted: None,
        }
    }
}

impl<E: Copy> EventQueue<E> {
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
    /// earlier than the line's last one is queued directly, so the line stays in
    /// time order.
    #[inline]
    pub fn schedule_on_line(&mut self, line: usize, at: Nanos, event: E) {
        if line >= self.lines.len() {
            self.lines.resize_with(line + 1, || Line {
                waiting: VecDeque::new(),
                head_queued: false,
                last_at: 0,
            });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let l = &mut self.lines[line];
        if at < l.last_at {
            self.events.push(Entry {
                at,
                seq,
                event,
                line: NO_LINE,
            });
            return;
        }
        l.last_at = at;
        if l.head_queued {
            l.waiting.push_back((at, seq, event));
        } else {
            l.head_queued = true;
            let line = line as u32;
            self.events.push(Entry {
                at,
                seq,
                event,
                line,
            });
        }
    }

    fn push(&mut self, at: Nanos, seq: u64, event: E) {
        self.events.push(Entry {
            at,
            seq,
            event,
            line: NO_LINE,
        });
        self.next_seq += 1;
    }

    // Inlined, as `schedule_on_line` is, into the run loop that calls them once per event:
    // where the compiler chose to call them instead, a segment took 4 % more CPU.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        let entry = self.events.pop()?;
        self.popped += 1;
        if entry.line != NO_LINE {
            let line = &mut self.lines[entry.line as usize];
            match line.waiting.pop_front() {
                Some((at, seq, event)) => {
                    line.give_back_room();
                    self.promoted = Some(event);
                    self.events.push(Entry {
                        at,
                        seq,
                        event,
                        line: entry.line,
                    });
                }
                None => line.head_queued = false,
            }
        }
        Some((entry.at, entry.event))
    }

    /// The event that runs next unless one is scheduled before it, if it is in the time
    /// slot being run (the queue does not look further: this is for prefetching).
    pub fn peek(&self) -> Option<&E> {
        self.events.peek().map(|e| &e.event)
    }

    /// The event that the last pop made its delay line's earliest, now queued: the packet
    /// that reaches the line's far end next, a few events ahead on a line many channels
    /// share (this is for prefetching further ahead than `peek`).
    pub fn take_promoted(&mut self) -> Option<E> {
        self.promoted.take()
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
        assert_eq!(q.pop(), Some((10, "a")));
        assert_eq!(q.pop(), Some((20, "b")));
        assert_eq!(q.pop(), Some((30, "c")));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn peek_shows_the_next_event_of_the_slot_being_run_and_changes_nothing() {
        let mut q = EventQueue::default();
        q.schedule(10, "a");
        q.schedule(12, "b");
        q.schedule(1_000_000, "far");
        assert_eq!(q.peek(), Some(&"a"));
        assert_eq!(q.pop(), Some((10, "a")));
        assert_eq!(q.peek(), Some(&"b"));
        assert_eq!(q.pop(), Some((12, "b")));
        // The next event is in a later slot: the queue does not look for it.
        assert_eq!(q.peek(), None);
        assert_eq!(q.pop(), Some((1_000_000, "far")));
        assert_eq!(q.popped(), 3);
    }

    #[test]
    fn a_pop_names_the_event_it_made_its_lines_earliest() {
        let mut q = EventQueue::default();
        q.schedule_on_line(0, 10, "a");
        q.schedule_on_line(0, 20, "b");
        q.schedule(15, "plain");
        assert_eq!(q.take_promoted(), None);
        assert_eq!(q.pop(), Some((10, "a")));
        assert_eq!(q.take_promoted(), Some("b"));
        assert_eq!(q.take_promoted(), None);
        assert_eq!(q.pop(), Some((15, "plain")));
        assert_eq!(q.take_promoted(), None);
        // The line's last event leaves it empty: nothing moves up.
        assert_eq!(q.pop(), Some((20, "b")));
        assert_eq!(q.take_promoted(), None);
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

    /// Events at every distance, ordinary, behind and on delay lines, scheduled while
    /// others run (some for the very nanosecond being run), come out in (time, rank,
    /// insertion) order: that of one sorted list of them all. The distances straddle the
    /// wheel's slots (2^10 ns) and its reach (2^24 ns), and reach years ahead.
    #[test]
    fn events_at_every_distance_come_out_in_one_order() {
        use rand::{Rng, SeedableRng};
        for seed in 0..20 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let mut q = EventQueue::default();
            let mut reference = std::collections::BTreeSet::new();
            let mut now = 0;
            for id in 0..20_000u64 {
                if rng.gen_bool(0.45) {
                    if let Some((at, got)) = q.pop() {
                        let (want_at, _, want) = reference.pop_first().expect("as many events");
                        assert_eq!((at, got), (want_at, want), "seed {seed}");
                        now = at;
                    }
                    continue;
                }
                let ahead = match rng.gen_range(0..8) {
                    0 => 0,
                    1 => rng.gen_range(0..1 << 10),
                    2 => rng.gen_range(0..1 << 14),
                    3 | 4 => rng.gen_range(0..1 << 24),
                    5 => rng.gen_range((1 << 24) - (1 << 12)..(1 << 24) + (1 << 12)),
                    6 => rng.gen_range(0..1 << 30),
                    _ => rng.gen_range(0..1 << 60),
                };
                let at = now + ahead;
                let behind = match rng.gen_range(0..6) {
                    0 => {
                        q.schedule_behind(at, id);
                        true
                    }
                    // Lines of a fixed delay (in time order), or not.
                    1 => {
                        q.schedule_on_line(0, now + 5_000_000, id);
                        reference.insert((now + 5_000_000, false, id));
                        continue;
                    }
                    2 => {
                        q.schedule_on_line(1 + id as usize % 3, at, id);
                        false
                    }
                    _ => {
                        q.schedule(at, id);
                        false
                    }
                };
                reference.insert((at, behind, id));
            }
            let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            let want: Vec<_> = reference.into_iter().map(|(at, _, id)| (at, id)).collect();
            assert_eq!(rest, want, "seed {seed}");
        }
    }

    /// Timers far beyond the wheel's reach, down to the last nanosecond a clock can
    /// name, run in order after the wheel's events, and a wheel emptied for long gaps
    /// takes the next ones up.
    #[test]
    fn far_future_timers_run_in_order() {
        let mut q = EventQueue::default();
        q.schedule(u64::MAX, "end of time");
        q.schedule(3 << 40, "third");
        q.schedule(1 << 40, "first");
        q.schedule(2_000, "soon");
        q.schedule((1 << 40) + 1, "first + 1 ns");
        q.schedule(u64::MAX, "end of time, again");
        q.schedule(1 << 40, "first, again");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (2_000, "soon"),
                (1 << 40, "first"),
                (1 << 40, "first, again"),
                ((1 << 40) + 1, "first + 1 ns"),
                (3 << 40, "third"),
                (u64::MAX, "end of time"),
                (u64::MAX, "end of time, again"),
            ]
        );
    }

    /// A connection's timer moved earlier is scheduled again and the stale event stays:
    /// both run, in time order, and an event scheduled for the nanosecond being run runs
    /// after the events of that nanosecond already queued.
    #[test]
    fn rescheduled_and_same_instant_events_keep_their_places() {
        let mut q = EventQueue::default();
        q.schedule(200_000_000, "rto, stale");
        q.schedule(1_000, "ack");
        q.schedule(1_000, "ack 2");
        q.schedule(40_000_000, "rto");
        assert_eq!(q.pop(), Some((1_000, "ack")));
        q.schedule(1_000, "sent at once");
        q.schedule(1_001, "next nanosecond");
        q.schedule_behind(1_000, "cell");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (1_000, "ack 2"),
                (1_000, "sent at once"),
                (1_000, "cell"),
                (1_001, "next nanosecond"),
                (40_000_000, "rto"),
                (200_000_000, "rto, stale"),
            ]
        );
    }

    /// A line that once held 20,000 events keeps room for at most four times what it holds
    /// once drained, also while events keep passing through it, and gives them back in
    /// order all the while.
    #[test]
    fn a_drained_line_gives_back_its_room() {
        let mut q = EventQueue::default();
        for i in 0..20_000u64 {
            q.schedule_on_line(0, i, i);
        }
        for i in 0..19_700 {
            assert_eq!(q.pop(), Some((i, i)));
        }
        let room = |q: &EventQueue<u64>| q.lines[0].waiting.capacity();
        assert!(room(&q) <= 4 * 300, "room for {} events", room(&q));
        for i in 20_000..40_000 {
            q.schedule_on_line(0, i, i);
            assert_eq!(q.pop(), Some((i - 300, i - 300)));
            assert!(room(&q) <= 4 * LINE_ROOM, "room for {} events", room(&q));
        }
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
