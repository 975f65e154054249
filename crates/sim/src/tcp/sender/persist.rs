//! The persist timer (RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17): while data waits and nothing
//! is in flight, no ACK will come to reopen a closed window if the update that reopened it
//! was lost, so the sender probes the window itself, at intervals that back off
//! exponentially from the RTO as Linux's `tcp_send_probe0` / `tcp_probe0_when` do, up to
//! 120 s (`TCP_RTO_MAX`). The persist timer is not a retransmission timeout: it neither
//! backs off the RTO nor touches cwnd or ssthresh, and is not counted in `timeouts`.
//!
//! A probe carries the next byte of new data, beyond the offered window, as RFC 9293
//! §3.8.6.1 describes and BSD does; Linux sends a zero-length segment with an old sequence
//! number instead. Either makes the receiver answer with an ACK that states its current
//! window (RFC 9293 §3.10.7.4); a byte keeps the probe a data segment, which is what the
//! simulator hands to the receiving side. If the window has reopened, the receiver keeps
//! the byte and its ACK covers it.
//!
//! While the window is open but smaller than a segment and sender silly-window avoidance
//! holds the data back, the same timer is RFC 1122 §4.2.3.4's override timeout: it sends
//! what fits.

use super::Sender;
use crate::engine::{Nanos, NS_PER_S};
use crate::tcp::Segment;

/// Linux's TCP_RTO_MAX: the longest interval between probes.
const MAX_PROBE_INTERVAL_NS: Nanos = 120 * NS_PER_S;
/// RTO · 2^16 exceeds the cap for any RTO of 2 ms or more; the shift stops there.
const MAX_BACKOFF: u32 = 16;

impl Sender {
    /// Nothing is in flight to bring an ACK, and data waits that the window (or sender
    /// silly-window avoidance) holds back.
    fn stalled(&self) -> bool {
        self.snd_una == self.snd_max && self.snd_nxt < self.written && !self.pacing_wait
    }

    /// Arms the persist timer when the sender stalls, and stops it with its back-off reset
    /// when the sender is no longer stalled (Linux `tcp_check_probe_timer`,
    /// `tcp_ack_probe`).
    pub(super) fn update_persist_timer(&mut self, now: Nanos) {
        if !self.stalled() {
            self.persist = None;
            self.persist_backoff = 0;
        } else if self.persist.is_none() {
            let interval = self.rto.rto() << self.persist_backoff.min(MAX_BACKOFF);
            self.persist = Some(now + interval.min(MAX_PROBE_INTERVAL_NS));
        }
    }

    pub(super) fn on_persist_timer(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.persist = None;
        if self.stalled() {
            let usable = (self.snd_una + self.window()).saturating_sub(self.snd_nxt);
            if usable == 0 {
                let probe = self.data_segment(now, self.snd_nxt, 1);
                self.probe_end = probe.end();
                out.push(probe);
                self.stats.segments_sent += 1;
                self.stats.persist_probes += 1;
                self.persist_backoff += 1;
            } else {
                let len = usable.min(self.written - self.snd_nxt).min(self.mss);
                let seq = self.snd_nxt;
                self.emit(now, seq, len, out);
                self.snd_nxt += len;
            }
        }
        self.update_persist_timer(now);
    }
}
