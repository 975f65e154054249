//! The sending application: a loop of blocking `write(message_size)` calls, like netperf
//! TCP_STREAM (`bulk`) or a file sender that stops after `bytes` (`file`).

use crate::engine::Nanos;
use crate::plan::{AppKind, AppPlan};
use crate::tcp::{Segment, Sender};

pub struct Writer {
    message_size: u64,
    /// Bytes the application will ever write; None for an endless bulk stream.
    total: Option<u64>,
    written: u64,
}

impl Writer {
    pub fn new(plan: &AppPlan) -> Self {
        Self {
            message_size: plan.message_size,
            total: match plan.kind {
                AppKind::Bulk => None,
                AppKind::File => plan.bytes,
            },
            written: 0,
        }
    }

    fn remaining(&self) -> u64 {
        self.total.map_or(u64::MAX, |t| t - self.written)
    }

    /// True while the application still has bytes to write.
    pub fn has_more(&self) -> bool {
        self.remaining() > 0
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes as much as the send buffer takes. Messages are back to back, so the current
    /// one ends at the next multiple of `message_size`; a blocking write copies what fits
    /// and waits for space for the rest. TCP gets a chance to send after every write call,
    /// because message boundaries decide segment sizes when Nagle is off; once the window
    /// is full, further writes only fill the buffer and are done in one step (which keeps
    /// small messages from costing one loop turn each).
    pub fn fill(&mut self, now: Nanos, tcp: &mut Sender, out: &mut Vec<Segment>) {
        loop {
            let space = tcp.buffer_space().min(self.remaining());
            if space == 0 {
                return;
            }
            if tcp.window_full() {
                self.copy(tcp, space);
                return;
            }
            let message_left = self.message_size - self.written % self.message_size;
            self.copy(tcp, message_left.min(space));
            tcp.try_send(now, out);
        }
    }

    fn copy(&mut self, tcp: &mut Sender, n: u64) {
        tcp.write(n);
        self.written += n;
    }
}
