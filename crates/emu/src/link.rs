//! One direction of the emulated path as a pure function of arrival times: every packet
//! read from a TUN device is pushed through the hops of its direction at once, and comes
//! out with the time it must be written to the far TUN, or with the hop that dropped it.
//!
//! Each hop is the simulator's link (crates/sim/src/net/channel.rs): a drop-tail queue in
//! front of a serializer at `rate` (a frame departs at max(now, previous departure) +
//! wire bytes · 8 / rate), then `delay` of propagation, then the error model, applied once
//! per frame in the order frames cross the line, drawn from the same named stream
//! (`links.{i}.{dir}.errors`) as the simulator's. A hop with a schedule asks the
//! simulator's `Schedule` when a frame finishes and when it arrives (net/schedule.rs),
//! whose clock starts at the measurement's start (`start_clock`). Because a hop is FIFO
//! (a schedule keeps it so), the arrivals at the next hop are in time order too, so a
//! hop's future can be computed when the packet enters the path: no per-hop timers are
//! needed.

use std::collections::VecDeque;

use tcplab_sim::engine::{serialization_ns, RngStream};
use tcplab_sim::net::{ErrorProcess, Framing, Schedule};
use tcplab_sim::plan::{ChannelPlan, QueuePlan};

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

pub struct Hop {
    rate_bps: u64,
    delay_ns: u64,
    framing: Framing,
    limit: QueuePlan,
    errors: ErrorProcess,
    schedule: Option<Schedule>,
    /// When the line is free again.
    line_free_ns: u64,
    /// Packets accepted but not yet on the line: (serialization start, IP bytes).
    waiting: VecDeque<(u64, u64)>,
    waiting_bytes: u64,
    pub stats: HopStats,
}

impl Hop {
    pub fn new(plan: &ChannelPlan, rng: RngStream) -> Self {
        Self {
            rate_bps: plan.rate_bps,
            delay_ns: plan.delay_ns,
            framing: plan.framing.into(),
            limit: plan.queue,
            errors: ErrorProcess::new(plan.error, rng),
            // Not started: a schedule holds its values of time 0 until `start_clock`.
            schedule: Schedule::new(plan).map(|mut s| {
                s.start_at(u64::MAX);
                s
            }),
            line_free_ns: 0,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            stats: HopStats::default(),
        }
    }

    /// Puts the schedule's time 0, if the hop has one, at `origin_ns`.
    pub fn start_clock(&mut self, origin_ns: u64) {
        if let Some(schedule) = &mut self.schedule {
            schedule.start_at(origin_ns);
        }
    }

    /// Offers an IP packet of `ip_bytes` arriving at `now_ns`; arrivals must come in time
    /// order. Returns what happened; a sent packet reaches the next node at
    /// departure + delay.
    pub fn offer(&mut self, now_ns: u64, ip_bytes: u64) -> HopEvent {
        // Frames whose serialization has started by now have left the queue.
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now_ns {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes;
        }
        let queue_packets = self.waiting.len() as u32;
        let queue_bytes = self.waiting_bytes;
        let event = |fate| HopEvent {
            arrival_ns: now_ns,
            queue_packets,
            queue_bytes,
            fate,
        };
        let start = if self.line_free_ns <= now_ns {
            // An idle line takes the frame at once; it never sits in the queue.
            now_ns
        } else {
            let fits = match self.limit {
                QueuePlan::Packets(n) => (self.waiting.len() as u64) < n,
                QueuePlan::Bytes(n) => self.waiting_bytes + ip_bytes <= n,
            };
            if !fits {
                self.stats.drops_queue += 1;
                return event(Fate::DroppedByQueue);
            }
            self.waiting.push_back((self.line_free_ns, ip_bytes));
            self.waiting_bytes += ip_bytes;
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.waiting_bytes);
            self.line_free_ns
        };
        let wire = self.framing.wire_bytes(ip_bytes);
        let departure_ns = match &mut self.schedule {
            None => start + serialization_ns(wire, self.rate_bps),
            Some(schedule) => schedule.finish(start, wire),
        };
        self.line_free_ns = departure_ns;
        self.stats.packets += 1;
        self.stats.wire_bytes += wire;
        self.stats.busy_ns = self.stats.busy_ns.saturating_add(departure_ns - start);
        // The simulator draws the error when the frame leaves the line; frames leave in
        // the order they were accepted, so drawing now gives the same sequence.
        let (reaches_ns, corrupted) = match &mut self.schedule {
            None => (departure_ns + self.delay_ns, self.errors.corrupts(wire)),
            Some(schedule) => {
                let (at, model) = schedule.depart(departure_ns);
                (at, self.errors.corrupts_under(model, wire))
            }
        };
        if corrupted {
            self.stats.drops_error += 1;
            return event(Fate::DroppedByError { departure_ns });
        }
        event(Fate::Sent {
            departure_ns,
            reaches_ns,
        })
    }
}

/// The hops of one direction, in the order packets cross them.
pub struct Path {
    pub hops: Vec<Hop>,
}

impl Path {
    /// Pushes a packet through every hop. Calls `log` with each hop's index and event; returns
    /// the time it reaches the far end, or None if a hop dropped it.
    pub fn offer(
        &mut self,
        now_ns: u64,
        ip_bytes: u64,
        mut log: impl FnMut(usize, &HopEvent),
    ) -> Option<u64> {
        let mut at = now_ns;
        for (i, hop) in self.hops.iter_mut().enumerate() {
            let event = hop.offer(at, ip_bytes);
            log(i, &event);
            match event.fate {
                Fate::Sent { reaches_ns, .. } => at = reaches_ns,
                _ => return None,
            }
        }
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_sim::plan::{ErrorPlan, FramingPlan};

    fn hop(queue: QueuePlan, error: ErrorPlan) -> Hop {
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
        Hop::new(&plan, RngStream::new(1, "links.0.forward.errors"))
    }

    fn departure(e: HopEvent) -> u64 {
        match e.fate {
            Fate::Sent { departure_ns, .. } => departure_ns,
            other => panic!("not sent: {other:?}"),
        }
    }

    #[test]
    fn back_to_back_packets_depart_one_serialization_apart() {
        let mut h = hop(QueuePlan::Packets(10), ErrorPlan::None);
        // 1000 bytes of IP + 2 of framing = 8016 bits at 1 Mb/s = 8.016 ms.
        assert_eq!(departure(h.offer(0, 1000)), 8_016_000);
        assert_eq!(departure(h.offer(1, 1000)), 16_032_000);
        // An arrival after the line went idle starts at once.
        assert_eq!(departure(h.offer(20_000_000, 1000)), 28_016_000);
    }

    #[test]
    fn a_packet_limit_counts_waiting_packets_only() {
        // Limit 2: one on the line and two waiting fit; the fourth is dropped.
        let mut h = hop(QueuePlan::Packets(2), ErrorPlan::None);
        let fates: Vec<_> = (0..4).map(|_| h.offer(0, 1000).fate).collect();
        assert_eq!(fates[3], Fate::DroppedByQueue);
        assert!(fates[..3].iter().all(|f| matches!(f, Fate::Sent { .. })));
        assert_eq!(h.stats.drops_queue, 1);
        assert_eq!(h.stats.max_queue_bytes, 2000);
        // Once the first has left the line, the second is on it and one place is free.
        let e = h.offer(8_016_000, 1000);
        assert_eq!(e.queue_packets, 1);
        assert!(matches!(e.fate, Fate::Sent { .. }));
    }

    #[test]
    fn a_byte_limit_counts_ip_bytes() {
        let mut h = hop(QueuePlan::Bytes(2500), ErrorPlan::None);
        h.offer(0, 1500); // on the line
        assert!(matches!(h.offer(0, 1500).fate, Fate::Sent { .. }));
        assert_eq!(h.offer(0, 1500).fate, Fate::DroppedByQueue);
        assert!(matches!(h.offer(0, 1000).fate, Fate::Sent { .. }));
    }

    #[test]
    fn corrupted_frames_use_the_line_and_are_counted() {
        let mut h = hop(QueuePlan::Packets(10), ErrorPlan::Loss { p: 1.0 });
        assert_eq!(
            h.offer(0, 1000).fate,
            Fate::DroppedByError {
                departure_ns: 8_016_000
            }
        );
        assert_eq!(
            departure(hop(QueuePlan::Packets(1), ErrorPlan::None).offer(0, 1000)),
            8_016_000
        );
        assert_eq!(h.stats.busy_ns, 8_016_000);
        assert_eq!(h.stats.drops_error, 1);
    }

    #[test]
    fn the_same_seed_drops_the_same_frames_as_the_simulators_stream() {
        // The emulator's hop and a bare ErrorProcess on the simulator's stream name agree.
        let plan = ErrorPlan::Loss { p: 0.3 };
        let mut h = hop(QueuePlan::Packets(100_000), plan);
        let mut reference = ErrorProcess::new(plan, RngStream::new(1, "links.0.forward.errors"));
        for i in 0..1000 {
            let lost = matches!(
                h.offer(i * 10_000_000, 1000).fate,
                Fate::DroppedByError { .. }
            );
            assert_eq!(lost, reference.corrupts(1002));
        }
    }

    #[test]
    fn a_scheduled_hop_follows_its_table_from_the_clock_it_is_given() {
        use tcplab_sim::plan::{SchedulePlan, SeriesPlan};
        let plan = ChannelPlan {
            rate_bps: 1_000_000,
            delay_ns: 10_000_000,
            queue: QueuePlan::Packets(10),
            error: ErrorPlan::None,
            atm: None,
            aqm: None,
            // 2 Mb/s from 1 s on, and 50 ms of delay from 2 s on.
            schedule: Some(SchedulePlan {
                rate_bps: Some(SeriesPlan {
                    linear: false,
                    points: vec![(0, 1_000_000), (1_000_000_000, 2_000_000)],
                }),
                delay_ns: Some(SeriesPlan {
                    linear: false,
                    points: vec![(0, 10_000_000), (2_000_000_000, 50_000_000)],
                }),
                ..Default::default()
            }),
            framing: FramingPlan {
                overhead_bytes: 0,
                min_payload_bytes: 0,
            },
        };
        let mut h = Hop::new(&plan, RngStream::new(1, "links.0.forward.errors"));
        let reaches = |e: HopEvent| match e.fate {
            Fate::Sent { reaches_ns, .. } => reaches_ns,
            other => panic!("not sent: {other:?}"),
        };
        // Before the clock starts, the values of time 0: 8 ms at 1 Mb/s, then 10 ms.
        assert_eq!(reaches(h.offer(5_000_000_000, 1000)), 5_018_000_000);
        h.start_clock(4_000_000_000);
        // 1 s after the origin: 4 ms at 2 Mb/s.
        assert_eq!(reaches(h.offer(5_100_000_000, 1000)), 5_114_000_000);
        // 2 s after it: 50 ms of delay.
        assert_eq!(reaches(h.offer(6_000_000_000, 1000)), 6_054_000_000);
    }

    #[test]
    fn a_path_adds_each_hops_serialization_and_delay() {
        let mut path = Path {
            hops: vec![
                hop(QueuePlan::Packets(10), ErrorPlan::None),
                hop(QueuePlan::Packets(10), ErrorPlan::None),
            ],
        };
        let mut seen = 0;
        let at = path.offer(0, 1000, |_, _| seen += 1);
        assert_eq!(at, Some(2 * (8_016_000 + 10_000_000)));
        assert_eq!(seen, 2);
    }
}
