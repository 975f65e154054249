//! One direction of a full-duplex link: a drop-tail queue feeding a serializer at `rate`,
//! then `delay` of propagation. A frame occupies the line for wire_bytes · 8 / rate, and
//! arrives `delay` after its last bit left.

use super::{DropTail, ErrorProcess, Framing, Packet};
use crate::engine::{serialization_ns, Nanos, RngStream};
use crate::plan::ChannelPlan;

#[derive(Debug, Default, Clone, Copy)]
pub struct ChannelStats {
    pub packets: u64,
    pub wire_bytes: u64,
    pub drops_queue: u64,
    pub drops_error: u64,
    pub max_queue_bytes: u64,
    pub busy_ns: u64,
}

/// What became of the frame whose serialization just ended.
pub struct Departure {
    /// The frame and its arrival time at the far end, unless the error model destroyed it.
    pub arrival: Option<(Packet, Nanos)>,
    /// When the next queued frame finishes serializing, if one started.
    pub next_done: Option<Nanos>,
}

pub struct Channel {
    rate_bps: u64,
    delay_ns: Nanos,
    framing: Framing,
    queue: DropTail,
    in_service: Option<Packet>,
    errors: ErrorProcess,
    pub stats: ChannelStats,
}

impl Channel {
    pub fn new(plan: &ChannelPlan, rng: RngStream) -> Self {
        Self {
            rate_bps: plan.rate_bps,
            delay_ns: plan.delay_ns,
            framing: plan.framing.into(),
            queue: DropTail::new(plan.queue),
            in_service: None,
            errors: ErrorProcess::new(plan.error, rng),
            stats: ChannelStats::default(),
        }
    }

    fn start(&mut self, now: Nanos, packet: Packet) -> Nanos {
        let wire = self.framing.wire_bytes(packet.ip_bytes());
        let tx = serialization_ns(wire, self.rate_bps);
        self.stats.packets += 1;
        self.stats.wire_bytes += wire;
        self.stats.busy_ns += tx;
        self.in_service = Some(packet);
        now + tx
    }

    /// Offers a packet to the channel. Returns when its serialization ends if the line
    /// was idle; otherwise it waits in the queue or is dropped there.
    pub fn offer(&mut self, now: Nanos, packet: Packet) -> Option<Nanos> {
        if self.in_service.is_none() {
            return Some(self.start(now, packet));
        }
        if !self.queue.push(packet) {
            self.stats.drops_queue += 1;
        }
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queue.bytes());
        None
    }

    /// The frame in service has left the line: apply the error model, start the next.
    pub fn finish(&mut self, now: Nanos) -> Departure {
        let packet = self
            .in_service
            .take()
            .expect("a channel finishes only the frame it started");
        let wire = self.framing.wire_bytes(packet.ip_bytes());
        let arrival = if self.errors.corrupts(wire) {
            self.stats.drops_error += 1;
            None
        } else {
            Some((packet, now + self.delay_ns))
        };
        let next_done = self.queue.pop().map(|p| self.start(now, p));
        Departure { arrival, next_done }
    }

    /// The frame being serialized, if any.
    pub fn in_service(&self) -> Option<&Packet> {
        self.in_service.as_ref()
    }

    pub fn queue_bytes(&self) -> u64 {
        self.queue.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ErrorPlan, FramingPlan, QueuePlan};
    use crate::tcp::Segment;

    fn channel(queue: QueuePlan, error: ErrorPlan) -> Channel {
        let plan = ChannelPlan {
            rate_bps: 1_000_000,
            delay_ns: 10_000_000,
            queue,
            error,
            atm: None,
            framing: FramingPlan {
                overhead_bytes: 2,
                min_payload_bytes: 0,
            },
        };
        Channel::new(&plan, RngStream::new(1, "t"))
    }

    fn packet(len: u32) -> Packet {
        Packet {
            flow: 0,
            route: 0,
            hop: 0,
            segment: Segment::data(0, len, 0, 0),
            piggyback: None,
            udp: None,
        }
    }

    #[test]
    fn back_to_back_frames_are_serialized_one_after_another() {
        let mut ch = channel(QueuePlan::Packets(10), ErrorPlan::None);
        // 1000 bytes of IP + 2 bytes of framing = 8016 bits at 1 Mb/s = 8.016 ms.
        let done = ch.offer(0, packet(960)).unwrap();
        assert_eq!(done, 8_016_000);
        assert_eq!(ch.offer(0, packet(960)), None);
        let d = ch.finish(done);
        let (_, arrive) = d.arrival.unwrap();
        assert_eq!(arrive, 8_016_000 + 10_000_000);
        assert_eq!(d.next_done, Some(2 * 8_016_000));
    }

    #[test]
    fn a_full_queue_drops_arrivals_but_not_the_frame_in_service() {
        let mut ch = channel(QueuePlan::Packets(1), ErrorPlan::None);
        ch.offer(0, packet(960));
        ch.offer(0, packet(960));
        ch.offer(0, packet(960));
        assert_eq!(ch.stats.drops_queue, 1);
        assert_eq!(ch.stats.packets, 1);
    }

    #[test]
    fn corrupted_frames_still_use_the_line() {
        let mut ch = channel(QueuePlan::Packets(10), ErrorPlan::Loss { p: 1.0 });
        let done = ch.offer(0, packet(960)).unwrap();
        assert!(ch.finish(done).arrival.is_none());
        assert_eq!(ch.stats.drops_error, 1);
        assert_eq!(ch.stats.busy_ns, 8_016_000);
    }
}
