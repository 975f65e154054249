//! One direction of the emulated path, run as the simulator runs its links: each hop is a
//! queue discipline (crates/sim/src/net/aqm, the same code: drop-tail or an AQM) in front
//! of a serializer at `rate` (a frame occupies the line for wire bytes · 8 / rate), then
//! `delay` of propagation; the error model is drawn when a frame leaves the line, in the
//! order frames cross it, from the simulator's stream (`links.{i}.{dir}.errors`), and the
//! discipline's choices from its (`links.{i}.{dir}.queue`). A hop with a schedule asks
//! the simulator's `Schedule` when a frame finishes and when it arrives
//! (net/schedule.rs), whose clock starts at the measurement's start (`start_clock`).
//!
//! An AQM decides when a packet leaves the queue (FQ-CoDel also in which order), so a
//! hop's future depends on later arrivals. The path is therefore a small discrete-event
//! system on the monotonic clock: the shuttle offers each packet at the time it was read
//! and advances the path to each time it asks to be woken for (`next_event_ns`). Events
//! run at their scheduled times however late the wake-up, so the schedule is the one the
//! simulator's channels compute; only the writes to the far device can be late.

use std::collections::VecDeque;

use tcplab_sim::engine::RngStream;
use tcplab_sim::net::aqm::{Arrival, Discipline};
use tcplab_sim::net::{Line, Queued};
use tcplab_sim::plan::ChannelPlan;

/// Counters of one hop in one direction, as the simulator's ChannelStats.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct HopStats {
    /// Frames that went onto the line (corrupted ones included).
    pub packets: u64,
    pub wire_bytes: u64,
    pub drops_queue: u64,
    pub drops_error: u64,
    /// Largest number of IP bytes waiting (the frame on the line excluded).
    pub max_queue_bytes: u64,
    pub busy_ns: u64,
}

/// What a hop did with a packet, for the packet log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It left the hop's line at `departure_ns` and reaches the next node at `reaches_ns`.
    Sent {
        departure_ns: u64,
        reaches_ns: u64,
    },
    DroppedByQueue,
    DroppedByError {
        departure_ns: u64,
    },
}

/// One hop's view of one packet: when it arrived, how full the queue was, what happened.
#[derive(Debug, Clone, Copy)]
pub struct HopEvent {
    pub arrival_ns: u64,
    pub queue_packets: u32,
    pub queue_bytes: u64,
    pub fate: Fate,
}

/// A packet in the path: its buffer in the shuttle's pool, and what the hops need of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub buffer: u32,
    pub len: u32,
    /// What the queues see of its header: flow and ECN capability.
    pub arrival: Arrival,
    /// A queue marked it Congestion Experienced: its IP header must say so when written.
    pub ce: bool,
    /// It belongs to the measurement's control connection (`EmuConfig::control_dscp`): the
    /// hops carry it, but their error models neither destroy it nor draw for it.
    pub control: bool,
    /// At the hop it is crossing: when it arrived and the queue it found.
    arrived_ns: u64,
    queue_packets: u32,
    queue_bytes: u64,
}

impl Packet {
    pub fn new(buffer: u32, len: u32, arrival: Arrival) -> Self {
        Self {
            buffer,
            len,
            arrival,
            ce: false,
            control: false,
            arrived_ns: 0,
            queue_packets: 0,
            queue_bytes: 0,
        }
    }

    fn event(&self, fate: Fate) -> HopEvent {
        HopEvent {
            arrival_ns: self.arrived_ns,
            queue_packets: self.queue_packets,
            queue_bytes: self.queue_bytes,
            fate,
        }
    }
}

impl Queued for Packet {
    fn ip_bytes(&self) -> u64 {
        u64::from(self.len)
    }
}

/// What became of a packet, for the shuttle: written to the far device at `at_ns`, or
/// dropped (its buffer is free again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Delivered { at_ns: u64, packet: Packet },
    Dropped(Packet),
}

pub struct Hop {
    /// Serialization, propagation and errors, as the simulator's channel runs them.
    link: Line,
    queue: Discipline<Packet>,
    /// The frame being serialized and when its last bit leaves.
    line: Option<(u64, Packet)>,
    /// Frames propagating to the next node, in the order (and so the time) they arrive.
    wire: VecDeque<(u64, Packet)>,
    pub stats: HopStats,
}

/// Where a hop reports: the packet log (hop index, what happened, IP bytes) and the
/// packets that leave the path.
pub struct Sinks<'a, L: FnMut(usize, &HopEvent, u32), O: FnMut(Exit)> {
    pub log: &'a mut L,
    pub out: &'a mut O,
}

impl Hop {
    /// `rng` draws the error model's losses, `queue_rng` the discipline's choices.
    pub fn new(plan: &ChannelPlan, rng: RngStream, queue_rng: RngStream) -> Self {
        let mut link = Line::new(plan, rng);
        // Not started: a schedule holds its values of time 0 until `start_clock`.
        link.start_clock(u64::MAX);
        Self {
            link,
            queue: Discipline::new(plan.queue, plan.aqm.as_ref(), plan.rate_bps, queue_rng),
            line: None,
            wire: VecDeque::new(),
            stats: HopStats::default(),
        }
    }

    /// Puts the schedule's time 0, if the hop has one, at `origin_ns`.
    pub fn start_clock(&mut self, origin_ns: u64) {
        self.link.start_clock(origin_ns);
    }

    /// A packet reaches the hop at `now`.
    fn arrive<L, O>(&mut self, i: usize, now: u64, mut packet: Packet, sinks: &mut Sinks<L, O>)
    where
        L: FnMut(usize, &HopEvent, u32),
        O: FnMut(Exit),
    {
        packet.arrived_ns = now;
        packet.queue_packets = self.queue.packets() as u32;
        packet.queue_bytes = self.queue.bytes();
        let idle = self.line.is_none();
        if idle && self.queue.bypassed_when_idle() {
            self.start(now, packet);
            return;
        }
        if let Some(lost) = self.queue.enqueue(now, packet, packet.arrival) {
            self.stats.drops_queue += 1;
            (sinks.log)(i, &lost.event(Fate::DroppedByQueue), lost.len);
            (sinks.out)(Exit::Dropped(lost));
        }
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queue.bytes());
        if idle {
            self.start_next(i, now, sinks);
        }
    }

    fn start(&mut self, now: u64, packet: Packet) {
        let wire = self.link.wire_bytes(u64::from(packet.len));
        let done = self.link.finish(now, wire);
        self.stats.packets += 1;
        self.stats.wire_bytes += wire;
        self.stats.busy_ns = self.stats.busy_ns.saturating_add(done - now);
        self.line = Some((done, packet));
    }

    /// The line is free at `now`: the queue gives up its next packet, if any.
    fn start_next<L, O>(&mut self, i: usize, now: u64, sinks: &mut Sinks<L, O>)
    where
        L: FnMut(usize, &HopEvent, u32),
        O: FnMut(Exit),
    {
        let stats = &mut self.stats;
        let next = self.queue.dequeue(now, &mut |lost: Packet| {
            stats.drops_queue += 1;
            (sinks.log)(i, &lost.event(Fate::DroppedByQueue), lost.len);
            (sinks.out)(Exit::Dropped(lost));
        });
        if let Some(d) = next {
            let mut packet = d.packet;
            packet.ce |= d.ce;
            self.start(now, packet);
        }
    }

    /// The frame on the line has left it at `now`: the error model, then the next frame.
    fn finish<L, O>(&mut self, i: usize, now: u64, sinks: &mut Sinks<L, O>)
    where
        L: FnMut(usize, &HopEvent, u32),
        O: FnMut(Exit),
    {
        let (_, packet) = self
            .line
            .take()
            .expect("a hop finishes only the frame it started");
        let wire = self.link.wire_bytes(u64::from(packet.len));
        let reaches = if packet.control {
            Some(self.link.pass(now))
        } else {
            self.link.depart(now, wire)
        };
        match reaches {
            Some(reaches_ns) => {
                let fate = Fate::Sent {
                    departure_ns: now,
                    reaches_ns,
                };
                (sinks.log)(i, &packet.event(fate), packet.len);
                // A schedule keeps a hop's arrivals in the order frames left
                // (net/schedule.rs).
                self.wire.push_back((reaches_ns, packet));
            }
            None => {
                self.stats.drops_error += 1;
                let fate = Fate::DroppedByError { departure_ns: now };
                (sinks.log)(i, &packet.event(fate), packet.len);
                (sinks.out)(Exit::Dropped(packet));
            }
        }
        self.start_next(i, now, sinks);
    }

    /// The hop's next event: its frame leaving the line, or one reaching the next node.
    fn next_event(&self) -> Option<(u64, Step)> {
        let line = self.line.map(|(t, _)| (t, Step::LineFree));
        let wire = self.wire.front().map(|&(t, _)| (t, Step::Propagated));
        match (line, wire) {
            (Some(l), Some(w)) => Some(if w.0 < l.0 { w } else { l }),
            (l, w) => l.or(w),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Step {
    LineFree,
    Propagated,
}

/// The hops of one direction, in the order packets cross them.
pub struct Path {
    pub hops: Vec<Hop>,
}

impl Path {
    /// The earliest time something happens in the path, if anything is under way.
    pub fn next_event_ns(&self) -> Option<u64> {
        self.hops
            .iter()
            .filter_map(|h| h.next_event())
            .map(|(t, _)| t)
            .min()
    }

    /// Runs every event due by `until`, in time order (at one instant, hops in path order).
    /// Each event moves one packet one stage on (onto the line, onto the wire, into the
    /// next hop or out of the path), so the loop ends with the packets in the path.
    pub fn advance<L, O>(&mut self, until: u64, sinks: &mut Sinks<L, O>)
    where
        L: FnMut(usize, &HopEvent, u32),
        O: FnMut(Exit),
    {
        loop {
            let next = self
                .hops
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.next_event().map(|(t, step)| (t, i, step)))
                .min_by_key(|&(t, i, _)| (t, i));
            let Some((t, i, step)) = next.filter(|&(t, _, _)| t <= until) else {
                return;
            };
            match step {
                Step::LineFree => self.hops[i].finish(i, t, sinks),
                Step::Propagated => {
                    let (_, packet) = self.hops[i].wire.pop_front().expect("a propagating frame");
                    match self.hops.get_mut(i + 1) {
                        Some(next) => next.arrive(i + 1, t, packet, sinks),
                        None => (sinks.out)(Exit::Delivered { at_ns: t, packet }),
                    }
                }
            }
        }
    }

    /// A packet read from the device at `now` enters the first hop, once everything due
    /// before it has happened.
    pub fn offer<L, O>(&mut self, now: u64, packet: Packet, sinks: &mut Sinks<L, O>)
    where
        L: FnMut(usize, &HopEvent, u32),
        O: FnMut(Exit),
    {
        self.advance(now, sinks);
        self.hops[0].arrive(0, now, packet, sinks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_sim::net::ErrorProcess;
    use tcplab_sim::plan::{AqmPlan, ErrorPlan, FramingPlan, QueuePlan};

    fn plan(queue: QueuePlan, error: ErrorPlan, aqm: Option<AqmPlan>) -> ChannelPlan {
        ChannelPlan {
            rate_bps: 1_000_000,
            delay_ns: 10_000_000,
            queue,
            error,
            atm: None,
            schedule: None,
            aqm,
            framing: FramingPlan {
                overhead_bytes: 2,
                min_payload_bytes: 0,
            },
        }
    }

    fn hop(queue: QueuePlan, error: ErrorPlan) -> Hop {
        Hop::new(
            &plan(queue, error, None),
            RngStream::new(1, "links.0.forward.errors"),
            RngStream::new(1, "links.0.forward.queue"),
        )
    }

    /// Offers packets of `len` IP bytes at the given times (flow = the packet's index)
    /// and runs the path to the end; returns each packet's fate and the log.
    fn run(path: &mut Path, arrivals: &[(u64, u32)]) -> (Vec<Exit>, Vec<(usize, HopEvent)>) {
        let mut outcomes = Vec::new();
        let mut log = Vec::new();
        let mut sinks = Sinks {
            log: &mut |i: usize, e: &HopEvent, _len: u32| log.push((i, *e)),
            out: &mut |o| outcomes.push(o),
        };
        for (k, &(at, len)) in arrivals.iter().enumerate() {
            let arrival = Arrival {
                flow: k as u64,
                ect: false,
            };
            path.offer(at, Packet::new(k as u32, len, arrival), &mut sinks);
        }
        path.advance(u64::MAX, &mut sinks);
        (outcomes, log)
    }

    /// Delivery time of each packet (None: dropped), by buffer index.
    fn deliveries(outcomes: &[Exit], n: usize) -> Vec<Option<u64>> {
        let mut at = vec![None; n];
        for o in outcomes {
            if let Exit::Delivered { at_ns, packet } = o {
                at[packet.buffer as usize] = Some(*at_ns);
            }
        }
        at
    }

    fn one(h: Hop) -> Path {
        Path { hops: vec![h] }
    }

    #[test]
    fn back_to_back_packets_depart_one_serialization_apart() {
        // 1000 bytes of IP + 2 of framing = 8016 bits at 1 Mb/s = 8.016 ms, then 10 ms.
        let mut p = one(hop(QueuePlan::Packets(10), ErrorPlan::None));
        let (o, _) = run(&mut p, &[(0, 1000), (1, 1000), (20_000_000, 1000)]);
        assert_eq!(
            deliveries(&o, 3),
            vec![
                Some(18_016_000),
                Some(26_032_000),
                // An arrival after the line went idle starts at once.
                Some(38_016_000)
            ]
        );
    }

    #[test]
    fn a_packet_limit_counts_waiting_packets_only() {
        // Limit 2: one on the line and two waiting fit; the fourth is dropped.
        let mut p = one(hop(QueuePlan::Packets(2), ErrorPlan::None));
        let (o, log) = run(&mut p, &[(0, 1000); 4]);
        assert_eq!(deliveries(&o, 4)[3], None);
        assert!(deliveries(&o, 4)[..3].iter().all(Option::is_some));
        let stats = p.hops[0].stats;
        assert_eq!((stats.drops_queue, stats.max_queue_bytes), (1, 2000));
        let dropped = log
            .iter()
            .find(|(_, e)| e.fate == Fate::DroppedByQueue)
            .unwrap();
        assert_eq!((dropped.1.queue_packets, dropped.1.queue_bytes), (2, 2000));
    }

    #[test]
    fn a_byte_limit_counts_ip_bytes() {
        let mut p = one(hop(QueuePlan::Bytes(2500), ErrorPlan::None));
        let (o, _) = run(&mut p, &[(0, 1500), (0, 1500), (0, 1500), (0, 1000)]);
        let d = deliveries(&o, 4);
        assert!(d[1].is_some() && d[2].is_none() && d[3].is_some());
    }

    #[test]
    fn corrupted_frames_use_the_line_and_are_counted() {
        let mut p = one(hop(QueuePlan::Packets(10), ErrorPlan::Loss { p: 1.0 }));
        let (o, log) = run(&mut p, &[(0, 1000)]);
        assert!(matches!(o[..], [Exit::Dropped(_)]));
        assert_eq!(
            log[0].1.fate,
            Fate::DroppedByError {
                departure_ns: 8_016_000
            }
        );
        assert_eq!(p.hops[0].stats.busy_ns, 8_016_000);
        assert_eq!(p.hops[0].stats.drops_error, 1);
    }

    #[test]
    fn the_same_seed_drops_the_same_frames_as_the_simulators_stream() {
        // The emulator's hop and a bare ErrorProcess on the simulator's stream name agree.
        let plan = ErrorPlan::Loss { p: 0.3 };
        let mut p = one(hop(QueuePlan::Packets(100_000), plan));
        let mut reference = ErrorProcess::new(plan, RngStream::new(1, "links.0.forward.errors"));
        let arrivals: Vec<(u64, u32)> = (0..1000).map(|i| (i * 10_000_000, 1000)).collect();
        let (o, _) = run(&mut p, &arrivals);
        let d = deliveries(&o, 1000);
        for lost in d.iter().map(Option::is_none) {
            assert_eq!(lost, reference.corrupts(1002));
        }
    }

    #[test]
    fn control_packets_cross_without_taking_a_draw() {
        // Every third frame is the measurement's control traffic: never lost, and the
        // others meet the stream's draws in order, as if the control frames were not there.
        let plan = ErrorPlan::Loss { p: 0.3 };
        let mut p = one(hop(QueuePlan::Packets(100_000), plan));
        let mut reference = ErrorProcess::new(plan, RngStream::new(1, "links.0.forward.errors"));
        let mut outcomes = Vec::new();
        let mut sinks = Sinks {
            log: &mut |_: usize, _: &HopEvent, _: u32| {},
            out: &mut |o| outcomes.push(o),
        };
        for k in 0..900u32 {
            let mut packet = Packet::new(k, 1000, Arrival::default());
            packet.control = k % 3 == 0;
            p.offer(u64::from(k) * 10_000_000, packet, &mut sinks);
        }
        p.advance(u64::MAX, &mut sinks);
        let d = deliveries(&outcomes, 900);
        for (k, delivered) in d.iter().enumerate() {
            if k % 3 == 0 {
                assert!(delivered.is_some(), "control frame {k}");
            } else {
                assert_eq!(delivered.is_none(), reference.corrupts(1002), "frame {k}");
            }
        }
    }

    #[test]
    fn a_path_adds_each_hops_serialization_and_delay() {
        let mut p = Path {
            hops: vec![
                hop(QueuePlan::Packets(10), ErrorPlan::None),
                hop(QueuePlan::Packets(10), ErrorPlan::None),
            ],
        };
        let (o, log) = run(&mut p, &[(0, 1000)]);
        assert_eq!(deliveries(&o, 1), vec![Some(2 * (8_016_000 + 10_000_000))]);
        assert_eq!(log.len(), 2);
    }

    #[test]
    fn fq_codel_serves_a_late_sparse_flow_before_a_backlog() {
        // The order packets leave in depends on a later arrival: FQ-CoDel's new-flow list
        // puts the sparse flow's packet ahead of the 20 queued before it (RFC 8290 §4.2).
        let aqm = AqmPlan::FqCodel {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            flows: 1024,
            quantum: 1514,
            ecn: false,
        };
        let mut p = one(Hop::new(
            &plan(QueuePlan::Packets(1000), ErrorPlan::None, Some(aqm)),
            RngStream::new(1, "e"),
            RngStream::new(1, "q"),
        ));
        let mut outcomes = Vec::new();
        let mut sinks = Sinks {
            log: &mut |_: usize, _: &HopEvent, _: u32| {},
            out: &mut |o| outcomes.push(o),
        };
        let bulk = Arrival {
            flow: 7,
            ect: false,
        };
        for k in 0..20 {
            p.offer(0, Packet::new(k, 1000, bulk), &mut sinks);
        }
        let sparse = Arrival {
            flow: 8,
            ect: false,
        };
        p.offer(1_000_000, Packet::new(20, 100, sparse), &mut sinks);
        p.advance(u64::MAX, &mut sinks);
        let d = deliveries(&outcomes, 21);
        // Packet 0 was on the line, packet 1 left next (the rest of its flow's quantum),
        // then the sparse one: two frames of 8.016 ms, its own 0.816 ms, 10 ms of delay.
        assert_eq!(d[20], Some(2 * 8_016_000 + 816_000 + 10_000_000));
        assert!(d[2].unwrap() > d[20].unwrap());
    }

    #[test]
    fn a_scheduled_hop_follows_its_table_from_the_clock_it_is_given() {
        use tcplab_sim::plan::{SchedulePlan, SeriesPlan};
        let mut plan = plan(QueuePlan::Packets(10), ErrorPlan::None, None);
        plan.framing.overhead_bytes = 0;
        // 2 Mb/s from 1 s on, and 50 ms of delay from 2 s on.
        plan.schedule = Some(SchedulePlan {
            rate_bps: Some(SeriesPlan {
                linear: false,
                points: vec![(0, 1_000_000), (1_000_000_000, 2_000_000)],
            }),
            delay_ns: Some(SeriesPlan {
                linear: false,
                points: vec![(0, 10_000_000), (2_000_000_000, 50_000_000)],
            }),
            ..Default::default()
        });
        let h = Hop::new(&plan, RngStream::new(1, "e"), RngStream::new(1, "q"));
        let mut p = one(h);
        // Before the clock starts, the values of time 0: 8 ms at 1 Mb/s, then 10 ms.
        let (o, _) = run(&mut p, &[(5_000_000_000, 1000)]);
        assert_eq!(deliveries(&o, 1), vec![Some(5_018_000_000)]);
        p.hops[0].start_clock(4_000_000_000);
        // 1 s after the origin: 4 ms at 2 Mb/s; 2 s after it: 50 ms of delay.
        let (o, _) = run(&mut p, &[(5_100_000_000, 1000), (6_000_000_000, 1000)]);
        assert_eq!(
            deliveries(&o, 2),
            vec![Some(5_114_000_000), Some(6_054_000_000)]
        );
    }
}
