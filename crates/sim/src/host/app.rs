//! The applications' socket calls. A writer is a loop of blocking `write(message_size)`
//! calls, like netperf TCP_STREAM (`bulk`) or a file sender that stops after `bytes`,
//! optionally sleeping between calls (seed 003's inter-packet delay: `Sleep(d)` after each
//! `send()`); a reader is a loop of `read(read_size)` calls, optionally sleeping after each
//! (`Sleep(d)` after each `recv()` at the receiving end). A media application writes each
//! message in one call of the message's own size when it falls due.

use std::collections::VecDeque;

use crate::engine::Nanos;
use crate::tcp::{Segment, Sender};

pub struct Writer {
    message_size: u64,
    /// Bytes the application may write in all; None for an endless stream. Request/response
    /// applications raise it by one message whenever one is due.
    limit: Option<u64>,
    written: u64,
    write_delay: Nanos,
    /// After a call returns, the application sleeps `write_delay` before the next.
    asleep_until: Option<Nanos>,
    /// Messages released one by one whose calls have not returned: where each starts and
    /// ends in the stream. Without them, calls are `message_size` bytes each.
    calls: VecDeque<(u64, u64)>,
}

impl Writer {
    pub fn new(message_size: u64, limit: Option<u64>, write_delay: Nanos) -> Self {
        Self {
            message_size,
            limit,
            written: 0,
            write_delay,
            asleep_until: None,
            calls: VecDeque::new(),
        }
    }

    fn remaining(&self) -> u64 {
        self.limit.map_or(u64::MAX, |t| t - self.written)
    }

    /// True while the application still has bytes to write.
    pub fn has_more(&self) -> bool {
        self.remaining() > 0
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// One more message of `bytes` is due (a request or a response).
    pub fn release(&mut self, bytes: u64) {
        if let Some(limit) = &mut self.limit {
            *limit += bytes;
        }
    }

    /// A media message of `bytes` falls due: one write() call of its size. Returns where
    /// the message ends in the connection's byte stream.
    pub fn release_message(&mut self, bytes: u64) -> u64 {
        let start = self.limit.unwrap_or(self.written);
        self.release(bytes);
        self.calls.push_back((start, start + bytes));
        start + bytes
    }

    /// The bytes of the current call still to write, and whether the call has yet to begin.
    fn call_left(&self) -> (u64, bool) {
        match self.calls.front() {
            Some(&(start, end)) => (end - self.written, self.written == start),
            None => {
                let left = self.message_size - self.written % self.message_size;
                (left, left == self.message_size)
            }
        }
    }

    /// `n` more bytes are in the send buffer; returns whether a released message's call
    /// returned with them.
    fn advance(&mut self, n: u64) -> bool {
        self.written += n;
        let mut returned = false;
        while self
            .calls
            .front()
            .is_some_and(|&(_, end)| end <= self.written)
        {
            self.calls.pop_front();
            returned = true;
        }
        returned
    }

    /// When a sleeping application wakes up; None when it is not asleep at `now`.
    pub fn asleep_until(&self, now: Nanos) -> Option<Nanos> {
        self.asleep_until.filter(|&t| t > now)
    }

    /// The next piece of a write() call, given the free send buffer: how many bytes, and
    /// whether a new call begins (else a blocked call goes on where it stopped).
    pub fn next_write(&self, now: Nanos, space: u64) -> Option<(u64, bool)> {
        if self.asleep_until(now).is_some() {
            return None;
        }
        let (left, new_call) = self.call_left();
        let n = left.min(space).min(self.remaining());
        (n > 0).then_some((n, new_call))
    }

    /// `n` bytes went into the send buffer at `now`. A call returns when its message is
    /// all in, and the application then sleeps for the inter-write delay.
    pub fn wrote(&mut self, now: Nanos, n: u64) {
        let message_returned = self.advance(n);
        let call_returned =
            message_returned || self.written.is_multiple_of(self.message_size) || !self.has_more();
        if call_returned && self.write_delay > 0 {
            self.asleep_until = Some(now + self.write_delay);
        }
    }

    /// Writes as much as the send buffer takes, on a host whose calls cost nothing.
    /// Messages are back to back, so the current one ends at the next multiple of
    /// `message_size`; a blocking write copies what fits and waits for space for the rest.
    /// TCP gets a chance to send after every write call, because message boundaries decide
    /// segment sizes when Nagle is off; once the window is full, further writes only fill
    /// the buffer and are done in one step (which keeps small messages from costing one
    /// loop turn each), unless the application sleeps between calls.
    pub fn fill(&mut self, now: Nanos, tcp: &mut Sender, out: &mut Vec<Segment>) {
        loop {
            let space = tcp.buffer_space().min(self.remaining());
            if space == 0 {
                if self.has_more() && self.asleep_until(now).is_none() {
                    tcp.wait_for_space();
                }
                return;
            }
            if tcp.window_full() && self.write_delay == 0 {
                tcp.write(now, space);
                self.advance(space);
                return;
            }
            let Some((n, _)) = self.next_write(now, space) else {
                return;
            };
            tcp.write(now, n);
            self.wrote(now, n);
            tcp.try_send(now, out);
        }
    }
}

/// The receiving application: `read(read_size)` calls, each taking what the socket holds
/// up to `read_size` (a blocking read returns as soon as any data is there), optionally
/// sleeping after each (the receiving end of seed 003's inter-packet delay: `Sleep(d)`
/// after each `recv()` and the file write that follows it).
pub struct Reader {
    read_size: u64,
    read: u64,
    read_delay: Nanos,
    asleep_until: Option<Nanos>,
}

impl Reader {
    /// `read_size` None: each call takes everything the socket holds.
    pub fn new(read_size: Option<u64>, read_delay: Nanos) -> Self {
        Self {
            read_size: read_size.unwrap_or(u64::MAX),
            read: 0,
            read_delay,
            asleep_until: None,
        }
    }

    /// The size of the next read() when `readable` bytes wait in the socket; None while
    /// the application sleeps or nothing is there.
    pub fn next_read(&self, now: Nanos, readable: u64) -> Option<u64> {
        if self.asleep_until(now).is_some() {
            return None;
        }
        let n = readable.min(self.read_size);
        (n > 0).then_some(n)
    }

    pub fn got(&mut self, n: u64) {
        self.read += n;
    }

    /// A read() call (and the storage write after it, if any) returned at `now`: the
    /// application sleeps for the read delay before its next call.
    pub fn returned(&mut self, now: Nanos) {
        if self.read_delay > 0 {
            self.asleep_until = Some(now + self.read_delay);
        }
    }

    /// Whether each call is followed by a sleep, so calls cannot be merged into one.
    pub fn pauses(&self) -> bool {
        self.read_delay > 0
    }

    /// When a sleeping application wakes up; None when it is not asleep at `now`.
    pub fn asleep_until(&self, now: Nanos) -> Option<Nanos> {
        self.asleep_until.filter(|&t| t > now)
    }

    pub fn read(&self) -> u64 {
        self.read
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn a_blocked_write_goes_on_without_a_new_call() {
        let mut w = Writer::new(4096, Some(10_000), 0);
        assert_eq!(w.next_write(0, 1000), Some((1000, true)));
        w.wrote(0, 1000);
        assert_eq!(w.next_write(0, 8192), Some((3096, false)));
        w.wrote(0, 3096);
        assert_eq!(w.next_write(0, 8192), Some((4096, true)));
        w.wrote(0, 4096);
        // The file's last write is shorter than a message.
        assert_eq!(w.next_write(0, 8192), Some((1808, true)));
        w.wrote(0, 1808);
        assert!(!w.has_more());
        assert_eq!(w.next_write(0, 8192), None);
    }

    #[test]
    fn the_writer_sleeps_between_calls() {
        // Seed 003: Sleep(d) after each send() of 4096 bytes.
        let mut w = Writer::new(4096, None, 5 * MS);
        w.wrote(0, 2000);
        assert_eq!(
            w.asleep_until(0),
            None,
            "a call still copying does not sleep"
        );
        w.wrote(MS, 2096);
        assert_eq!(w.asleep_until(MS), Some(6 * MS));
        assert_eq!(w.next_write(5 * MS, 65_536), None);
        assert_eq!(w.next_write(6 * MS, 65_536), Some((4096, true)));
    }

    #[test]
    fn released_messages_raise_the_limit() {
        let mut w = Writer::new(100, Some(0), 0);
        assert!(!w.has_more());
        w.release(100);
        assert_eq!(w.next_write(0, 1 << 20), Some((100, true)));
    }

    #[test]
    fn released_messages_are_one_call_each_of_their_own_size() {
        let mut w = Writer::new(1000, Some(0), 0);
        w.release_message(300);
        w.release_message(700);
        assert_eq!(w.next_write(0, 100), Some((100, true)));
        w.wrote(0, 100);
        assert_eq!(w.next_write(0, 1 << 20), Some((200, false)));
        w.wrote(0, 200);
        assert_eq!(w.next_write(0, 1 << 20), Some((700, true)));
        w.wrote(0, 700);
        assert!(!w.has_more());
    }

    #[test]
    fn a_read_takes_what_is_there_up_to_the_read_size() {
        // Seed 003's application buffer: 512 B reads drain a full socket buffer in 64 calls.
        let small = Reader::new(Some(512), 0);
        assert_eq!(small.next_read(0, 32_768), Some(512));
        assert_eq!(small.next_read(0, 100), Some(100));
        assert_eq!(small.next_read(0, 0), None);
        assert_eq!(Reader::new(None, 0).next_read(0, 32_768), Some(32_768));
    }

    #[test]
    fn the_reader_sleeps_after_each_call() {
        // Seed 003 §III.2: both ends pausing, Sleep(d) after each recv() at the receiver.
        let mut r = Reader::new(Some(4096), 5 * MS);
        assert_eq!(r.next_read(0, 8192), Some(4096));
        r.got(4096);
        r.returned(MS);
        assert_eq!(r.asleep_until(MS), Some(6 * MS));
        assert_eq!(r.next_read(5 * MS, 8192), None, "asleep with data waiting");
        assert_eq!(r.next_read(6 * MS, 8192), Some(4096));
        assert_eq!(r.read(), 4096);
    }
}
