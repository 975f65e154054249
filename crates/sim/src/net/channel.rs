//! One direction of a full-duplex link: a queue (drop-tail or an AQM, net/aqm) feeding the
//! line (net/line.rs: serialization at `rate`, then `delay` of propagation, or what a
//! schedule says).

use super::aqm::{Arrival, Discipline};
use super::{Line, PacketRef};
use crate::engine::{Nanos, RngStream};
use crate::metrics::{QueueMeter, QueueSeries};
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
    /// The frame and its arrival time at the far end, or `Err` with the frame the error
    /// model destroyed.
    pub arrival: Result<(PacketRef, Nanos), PacketRef>,
    /// When the next queued frame finishes serializing, if one started.
    pub next_done: Option<Nanos>,
}

/// Laid out so that a packet crossing an idle drop-tail line (the access links of a
/// dumbbell) reads two cache lines: the frame in service and the line's parameters, then
/// the counters and the meter's interval end. With a thousand connections each on links
/// of their own, a channel is cold when a packet comes.
#[repr(C, align(64))]
pub struct Channel {
    in_service: Option<PacketRef>,
    /// The queue marked the frame in service Congestion Experienced.
    in_service_ce: bool,
    /// Drop-tail: a packet that finds the line idle goes onto it without queueing
    /// (`Discipline::bypassed_when_idle`).
    bypass: bool,
    /// The queue may hold packets: false from a dequeue that leaves it empty to the next
    /// enqueue, so that an empty drop-tail queue is not read when a frame leaves.
    waiting: bool,
    line: Line,
    pub stats: ChannelStats,
    /// The queue per interval, for the result's `queue` series; departures are
    /// `stats.packets`.
    meter: QueueMeter,
    queue: Discipline<PacketRef>,
}

impl Channel {
    /// `rng` draws the error model's losses, `queue_rng` the queue discipline's choices;
    /// the queue is measured per `interval_ns`.
    pub fn new(
        plan: &ChannelPlan,
        rng: RngStream,
        queue_rng: RngStream,
        interval_ns: Nanos,
    ) -> Self {
        let queue = Discipline::new(plan.queue, plan.aqm.as_ref(), plan.rate_bps, queue_rng);
        Self {
            line: Line::new(plan, rng),
            bypass: queue.bypassed_when_idle(),
            waiting: false,
            queue,
            in_service: None,
            in_service_ce: false,
            stats: ChannelStats::default(),
            meter: QueueMeter::new(interval_ns),
        }
    }

    fn start(&mut self, now: Nanos, packet: PacketRef, ce: bool) -> Nanos {
        let wire = self.line.wire_bytes(u64::from(packet.ip_bytes));
        let done = self.line.finish(now, wire);
        self.stats.packets += 1;
        self.stats.wire_bytes += wire;
        self.stats.busy_ns = self.stats.busy_ns.saturating_add(done - now);
        self.in_service = Some(packet);
        self.in_service_ce = ce;
        done
    }

    /// Starts the next packet the queue gives up, if any; the packets it drops on the way
    /// go to `dropped`.
    fn start_next(&mut self, now: Nanos, dropped: &mut impl FnMut(PacketRef)) -> Option<Nanos> {
        if self.bypass && !self.waiting {
            // Nothing to give up, and the meter's level (empty) stands.
            return None;
        }
        let stats = &mut self.stats;
        let next = self.queue.dequeue(now, &mut |p| {
            stats.drops_queue += 1;
            dropped(p);
        });
        let (bytes, packets) = (self.queue.bytes(), self.queue.packets());
        self.waiting = packets > 0;
        self.meter.level(now, bytes, packets, self.stats.packets);
        let next = next?;
        self.meter
            .departure(now, next.sojourn_ns, self.stats.packets);
        Some(self.start(now, next.packet, next.ce))
    }

    /// Offers a packet to the channel. Returns when its serialization ends if the line
    /// was idle, None if it waits in the queue (or is dropped). The packets the queue
    /// drops go to `dropped`: the arrival, or with FQ-CoDel one of a longer flow queue's.
    pub fn offer(
        &mut self,
        now: Nanos,
        packet: PacketRef,
        arrival: Arrival,
        dropped: &mut impl FnMut(PacketRef),
    ) -> Option<Nanos> {
        let idle = self.in_service.is_none();
        if idle && self.bypass {
            self.meter.departure(now, 0, self.stats.packets);
            return Some(self.start(now, packet, false));
        }
        if let Some(lost) = self.queue.enqueue(now, packet, arrival) {
            self.stats.drops_queue += 1;
            dropped(lost);
        }
        self.waiting = true;
        let bytes = self.queue.bytes();
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(bytes);
        self.meter
            .level(now, bytes, self.queue.packets(), self.stats.packets);
        if idle {
            // An AQM has seen the arrival; the idle line takes what the queue gives now.
            return self.start_next(now, dropped);
        }
        None
    }

    /// The queue's rows of the result's `queue` series, up to `stop`.
    pub fn queue_series(
        &mut self,
        stop: Nanos,
        link: usize,
        direction: &'static str,
        out: &mut QueueSeries,
    ) {
        self.meter
            .finish(stop, self.stats.packets, link, direction, out);
    }

    /// The frame in service has left the line: apply the error model, start the next.
    /// Packets the queue drops as it gives up the next (CoDel's) go to `dropped`.
    pub fn finish(&mut self, now: Nanos, dropped: &mut impl FnMut(PacketRef)) -> Departure {
        let packet = self
            .in_service
            .take()
            .expect("a channel finishes only the frame it started");
        let wire = self.line.wire_bytes(u64::from(packet.ip_bytes));
        let arrival = match self.line.depart(now, wire) {
            Some(at) => Ok((packet, at)),
            None => {
                self.stats.drops_error += 1;
                Err(packet)
            }
        };
        let next_done = self.start_next(now, dropped);
        Departure { arrival, next_done }
    }

    /// The frame being serialized, if any.
    pub fn in_service(&self) -> Option<PacketRef> {
        self.in_service
    }

    /// Whether the queue marked the frame being serialized Congestion Experienced.
    pub fn in_service_marked(&self) -> bool {
        self.in_service_ce
    }

    pub fn queue_bytes(&self) -> u64 {
        self.queue.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ErrorPlan, FramingPlan, QueuePlan};

    fn channel(queue: QueuePlan, error: ErrorPlan) -> Channel {
        let plan = ChannelPlan {
            rate_bps: 1_000_000,
            delay_ns: 10_000_000,
            queue,
            error,
            atm: None,
            schedule: None,
            aqm: None,
            framing: FramingPlan {
                overhead_bytes: 2,
                min_payload_bytes: 0,
            },
        };
        Channel::new(
            &plan,
            RngStream::new(1, "t"),
            RngStream::new(1, "q"),
            1_000_000_000,
        )
    }

    /// An IP datagram carrying `len` bytes of TCP payload behind 40 bytes of headers.
    fn packet(len: u32) -> PacketRef {
        PacketRef {
            id: 0,
            ip_bytes: 40 + len,
        }
    }

    /// Offers a packet; returns the serialization end or the packet dropped.
    fn offer(ch: &mut Channel, now: Nanos, p: PacketRef) -> Result<Option<Nanos>, PacketRef> {
        let mut lost = None;
        let done = ch.offer(now, p, Arrival::default(), &mut |p| lost = Some(p));
        lost.map_or(Ok(done), Err)
    }

    fn finish(ch: &mut Channel, now: Nanos) -> Departure {
        ch.finish(now, &mut |_| panic!("drop-tail drops only arrivals"))
    }

    #[test]
    fn back_to_back_frames_are_serialized_one_after_another() {
        let mut ch = channel(QueuePlan::Packets(10), ErrorPlan::None);
        // 1000 bytes of IP + 2 bytes of framing = 8016 bits at 1 Mb/s = 8.016 ms.
        let done = offer(&mut ch, 0, packet(960)).unwrap().unwrap();
        assert_eq!(done, 8_016_000);
        assert_eq!(offer(&mut ch, 0, packet(960)), Ok(None));
        let d = finish(&mut ch, done);
        let (_, arrive) = d.arrival.unwrap();
        assert_eq!(arrive, 8_016_000 + 10_000_000);
        assert_eq!(d.next_done, Some(2 * 8_016_000));
    }

    #[test]
    fn a_full_queue_drops_arrivals_but_not_the_frame_in_service() {
        let mut ch = channel(QueuePlan::Packets(1), ErrorPlan::None);
        assert_eq!(offer(&mut ch, 0, packet(960)), Ok(Some(8_016_000)));
        assert_eq!(offer(&mut ch, 0, packet(960)), Ok(None));
        assert_eq!(offer(&mut ch, 0, packet(960)), Err(packet(960)));
        assert_eq!(ch.stats.drops_queue, 1);
        assert_eq!(ch.stats.packets, 1);
    }

    #[test]
    fn the_queue_series_counts_every_frame_put_on_the_line_and_the_waits_of_the_queued() {
        // Interval 1 s. Two frames at 0 s (the first crosses the idle line, the second
        // waits 8.016 ms), both served; a third at 1.5 s crosses the idle line again, after
        // a frame left an empty queue (not read: nothing waits).
        let mut ch = channel(QueuePlan::Packets(10), ErrorPlan::None);
        let first = offer(&mut ch, 0, packet(960)).unwrap().unwrap();
        assert_eq!(offer(&mut ch, 0, packet(960)), Ok(None));
        let second = finish(&mut ch, first).next_done.unwrap();
        assert_eq!(finish(&mut ch, second).next_done, None);
        let third = offer(&mut ch, 1_500_000_000, packet(960)).unwrap().unwrap();
        assert_eq!(finish(&mut ch, third).next_done, None);
        let mut out = QueueSeries::default();
        ch.queue_series(2_000_000_000, 0, "forward", &mut out);
        assert_eq!(out.departures, vec![2, 1]);
        assert_eq!(out.sojourn_max_s, vec![0.008_016, 0.0]);
        assert_eq!(out.packets_max, vec![1, 0]);
        assert_eq!(ch.stats.packets, 3);
    }

    #[test]
    fn corrupted_frames_still_use_the_line() {
        let mut ch = channel(QueuePlan::Packets(10), ErrorPlan::Loss { p: 1.0 });
        let done = offer(&mut ch, 0, packet(960)).unwrap().unwrap();
        assert_eq!(finish(&mut ch, done).arrival, Err(packet(960)));
        assert_eq!(ch.stats.drops_error, 1);
        assert_eq!(ch.stats.busy_ns, 8_016_000);
    }
}
