//! Real-time media streams at run time (docs/models/media.md): each message has a sequence
//! number (its index) and a send timestamp, and arrives when the receiving application has
//! all of it: over TCP when its last byte is read, over UDP when the last fragment of its
//! datagram is in. The statistics and the ITU verdicts are computed from these records by
//! tcplab.media, the same for every backend.

mod fragments;

pub use fragments::fragments;

use schemars::JsonSchema;
use serde::Serialize;

use crate::engine::{Nanos, RngStream};
use crate::plan::{StreamPlan, Transport};

/// How big each message is.
enum Sizes {
    Fixed(u64),
    /// Uniform over min..=max, from the stream's own random stream.
    Range(u64, u64, RngStream),
}

impl Sizes {
    fn next(&mut self) -> u64 {
        match self {
            Sizes::Fixed(n) => *n,
            Sizes::Range(min, max, rng) => {
                let span = *max - *min + 1;
                *min + ((rng.uniform() * span as f64) as u64).min(span - 1)
            }
        }
    }
}

pub struct MediaStream {
    pub name: String,
    pub transport: Transport,
    interval: Nanos,
    start_delay: Nanos,
    sizes: Sizes,
    /// When message 0 is due; None until the stream can send.
    first_due: Option<Nanos>,
    /// Messages that fell due so far, sent or skipped.
    due: u64,
    /// TCP: messages the application dropped because the last one was not all written.
    skip_when_blocked: bool,
    skipped: u64,
    /// Per message, by sequence number.
    bytes: Vec<u64>,
    sent: Vec<Nanos>,
    received: Vec<Option<Nanos>>,
    /// TCP: where each message ends in its connection's byte stream (which other streams
    /// may share), and the first not yet read whole.
    ends: Vec<u64>,
    next_unread: usize,
    /// UDP: fragments of each message's datagram still to arrive.
    missing: Vec<u32>,
}

/// A message the application hands to its transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    pub seq: u64,
    pub bytes: u64,
}

impl MediaStream {
    pub fn new(plan: &StreamPlan, seed: u64) -> Self {
        let sizes = match plan.max_message_size {
            Some(max) if max > plan.message_size => Sizes::Range(
                plan.message_size,
                max,
                RngStream::new(seed, &format!("media.{}.sizes", plan.name)),
            ),
            _ => Sizes::Fixed(plan.message_size),
        };
        Self {
            name: plan.name.clone(),
            transport: plan.transport,
            interval: plan.interval_ns,
            start_delay: plan.start_ns,
            sizes,
            first_due: None,
            due: 0,
            skip_when_blocked: plan.skip_when_blocked,
            skipped: 0,
            bytes: Vec::new(),
            sent: Vec::new(),
            received: Vec::new(),
            ends: Vec::new(),
            next_unread: 0,
            missing: Vec::new(),
        }
    }

    /// The stream can send from `now` on (UDP: its flow started; TCP: its connection is
    /// open). Returns when the first message is due, or None if it started already.
    pub fn start(&mut self, now: Nanos) -> Option<Nanos> {
        if self.first_due.is_some() {
            return None;
        }
        let due = now + self.start_delay;
        self.first_due = Some(due);
        Some(due)
    }

    /// When the next message is due: on a fixed grid from the first, so that a late
    /// event never shifts the ones after it.
    pub fn next_due(&self) -> Option<Nanos> {
        self.first_due.map(|t| t + self.interval * self.due)
    }

    /// A message falls due at `now` while `blocked` (the last one is not all in the send
    /// buffer): the application drops it if it skips then, and returns None.
    pub fn fall_due(&mut self, now: Nanos, blocked: bool) -> Option<Message> {
        self.due += 1;
        if blocked && self.skip_when_blocked {
            self.skipped += 1;
            return None;
        }
        Some(self.emit(now))
    }

    /// The application produces its next message at `now` and time-stamps it; sequence
    /// numbers count the messages sent, so a receiver sees no gap for a skipped one.
    fn emit(&mut self, now: Nanos) -> Message {
        let seq = self.sent.len() as u64;
        let bytes = self.sizes.next();
        self.bytes.push(bytes);
        self.sent.push(now);
        self.received.push(None);
        Message { seq, bytes }
    }

    /// TCP: the last message sent went into the connection, ending at byte `end`.
    pub fn written_to(&mut self, end: u64) {
        self.ends.push(end);
    }

    /// UDP: message `seq`'s datagram goes out as `count` fragments.
    pub fn sent_as(&mut self, seq: u64, count: u32) {
        let i = seq as usize;
        if self.missing.len() <= i {
            self.missing.resize(i + 1, 0);
        }
        self.missing[i] = count;
    }

    /// UDP: one fragment of message `seq` reached the receiving host at `now`. Returns the
    /// message's size when this was its last fragment.
    pub fn fragment_arrived(&mut self, seq: u64, now: Nanos) -> Option<u64> {
        let i = seq as usize;
        self.missing[i] -= 1;
        (self.missing[i] == 0).then(|| {
            self.received[i] = Some(now);
            self.bytes[i]
        })
    }

    /// TCP: the receiving application has read `total` bytes of the stream by `now`; every
    /// message that ends within them has arrived.
    pub fn read_to(&mut self, total: u64, now: Nanos) {
        while self
            .ends
            .get(self.next_unread)
            .is_some_and(|&end| end <= total)
        {
            self.received[self.next_unread] = Some(now);
            self.next_unread += 1;
        }
    }

    pub fn result(&self, flow: usize, src: String, dst: String) -> StreamResult {
        StreamResult {
            stream: self.name.clone(),
            transport: self.transport.name(),
            flow,
            src,
            dst,
            interval_ns: self.interval,
            skipped: self.skipped,
            bytes: self.bytes.clone(),
            sent_ns: self.sent.clone(),
            received_ns: self.received.clone(),
        }
    }
}

/// One stream's messages, by sequence number: size, send time and arrival time (None: not
/// arrived by the end of the run).
#[derive(Debug, Serialize, JsonSchema)]
pub struct StreamResult {
    pub stream: String,
    pub transport: &'static str,
    pub flow: usize,
    pub src: String,
    pub dst: String,
    pub interval_ns: Nanos,
    /// Messages that fell due but were dropped by the application (skip_when_blocked).
    pub skipped: u64,
    pub bytes: Vec<u64>,
    pub sent_ns: Vec<Nanos>,
    pub received_ns: Vec<Option<Nanos>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(transport: Transport, max: Option<u64>) -> StreamPlan {
        StreamPlan {
            name: "video".into(),
            transport,
            interval_ns: 40_000_000,
            message_size: 1000,
            max_message_size: max,
            start_ns: 5,
            skip_when_blocked: false,
        }
    }

    #[test]
    fn messages_fall_due_on_a_fixed_grid_from_the_start() {
        let mut s = MediaStream::new(&plan(Transport::Tcp, None), 1);
        assert_eq!(s.next_due(), None);
        assert_eq!(s.start(100), Some(105));
        assert_eq!(s.start(200), None, "a stream starts once");
        // Emitted late, message 0 does not delay message 1.
        let first = Message {
            seq: 0,
            bytes: 1000,
        };
        assert_eq!(s.fall_due(110, false), Some(first));
        assert_eq!(s.next_due(), Some(40_000_105));
    }

    #[test]
    fn a_skipping_sender_drops_what_falls_due_while_blocked_and_keeps_its_grid() {
        let mut p = plan(Transport::Tcp, None);
        p.skip_when_blocked = true;
        let mut s = MediaStream::new(&p, 1);
        s.start(0);
        assert_eq!(s.fall_due(5, false).map(|m| m.seq), Some(0));
        assert_eq!(s.fall_due(40_000_005, true), None);
        assert_eq!(s.next_due(), Some(80_000_005));
        // The next message sent is number 1: the receiver sees no gap.
        assert_eq!(s.fall_due(80_000_005, false).map(|m| m.seq), Some(1));
        assert_eq!(s.result(0, "a".into(), "b".into()).skipped, 1);
        // A queueing sender queues whatever the socket says.
        let mut q = MediaStream::new(&plan(Transport::Tcp, None), 1);
        q.start(0);
        assert!(q.fall_due(5, true).is_some());
    }

    #[test]
    fn a_tcp_message_arrives_when_its_last_byte_is_read() {
        let mut s = MediaStream::new(&plan(Transport::Tcp, None), 1);
        s.start(0);
        s.fall_due(0, false);
        s.written_to(1000);
        s.fall_due(1, false);
        // Another stream's 500 bytes came between the two in the shared connection.
        s.written_to(2500);
        s.read_to(999, 10);
        s.read_to(2499, 20);
        assert_eq!(s.received, vec![Some(20), None]);
        s.read_to(2500, 30);
        assert_eq!(s.received, vec![Some(20), Some(30)]);
    }

    #[test]
    fn a_udp_message_arrives_with_its_last_fragment() {
        let mut s = MediaStream::new(&plan(Transport::Udp, None), 1);
        s.start(0);
        s.fall_due(0, false);
        s.sent_as(0, 2);
        assert_eq!(s.fragment_arrived(0, 7), None);
        assert_eq!(s.received, vec![None]);
        assert_eq!(s.fragment_arrived(0, 9), Some(1000));
        assert_eq!(s.received, vec![Some(9)]);
    }

    #[test]
    fn ranged_sizes_stay_in_range_and_follow_the_seed() {
        let sizes = |seed| {
            let mut s = MediaStream::new(&plan(Transport::Udp, Some(1003)), seed);
            s.start(0);
            (0..200)
                .filter_map(|t| s.fall_due(t, false).map(|m| m.bytes))
                .collect::<Vec<_>>()
        };
        let a = sizes(1);
        assert!(a.iter().all(|b| (1000..=1003).contains(b)));
        assert!((1000..=1003).all(|b| a.contains(&b)), "every size occurs");
        assert_eq!(a, sizes(1));
        assert_ne!(a, sizes(2));
    }
}
