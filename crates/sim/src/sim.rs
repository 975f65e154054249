//! The simulation: a linear path of hosts and store-and-forward routers joined by
//! full-duplex links, one TCP connection from the first host to the last, and the event
//! loop that drives them.

use crate::engine::{EventQueue, Nanos, RngStream, NS_PER_S};
use crate::host::Writer;
use crate::metrics::{IntervalSeries, LimitClock, Trace};
use crate::net::{Channel, Packet, Taps};
use crate::plan::Plan;
use crate::result::{FlowResult, LinkResult, RunResult, Summary};
use crate::tcp::{Receiver, ReceiverConfig, Segment, Sender, SenderConfig};

/// Route 0 carries data from the first host to the last, route 1 carries ACKs back.
const DATA_ROUTE: usize = 0;
const ACK_ROUTE: usize = 1;

enum Event {
    /// A channel finished serializing its frame.
    TxDone(usize),
    /// A packet reached the far end of the channel it was on.
    Arrive(Packet),
    SenderTimer,
    ReceiverTimer,
    Sample,
}

/// Wake-up bookkeeping for an endpoint's timer: stale wake-ups are harmless (the endpoint
/// checks its own deadline), so an event is scheduled only when the deadline moves earlier.
#[derive(Default)]
struct Wake(Option<Nanos>);

impl Wake {
    fn needs(&mut self, deadline: Option<Nanos>) -> Option<Nanos> {
        let d = deadline?;
        if self.0.is_some_and(|w| w <= d) {
            return None;
        }
        self.0 = Some(d);
        Some(d)
    }

    fn fired(&mut self, now: Nanos) {
        if self.0 == Some(now) {
            self.0 = None;
        }
    }
}

pub struct Simulation {
    plan: Plan,
    now: Nanos,
    events: EventQueue<Event>,
    /// Link i's forward direction is channel 2i, its reverse 2i + 1.
    channels: Vec<Channel>,
    routes: [Vec<usize>; 2],
    sender: Sender,
    receiver: Receiver,
    writer: Writer,
    sender_wake: Wake,
    receiver_wake: Wake,
    out: Vec<Segment>,
    delivered: u64,
    completed_at: Option<Nanos>,
    series: IntervalSeries,
    trace: Trace,
    limits: LimitClock,
    taps: Taps,
}

impl Simulation {
    pub fn new(plan: Plan) -> Self {
        let mut channels = Vec::with_capacity(plan.links.len() * 2);
        for (i, link) in plan.links.iter().enumerate() {
            for (dir, ch) in [("forward", &link.forward), ("reverse", &link.reverse)] {
                let stream = RngStream::new(plan.seed, &format!("links.{i}.{dir}.errors"));
                channels.push(Channel::new(ch, stream));
            }
        }
        let n = plan.links.len();
        let routes = [
            (0..n).map(|i| 2 * i).collect(),
            (0..n).rev().map(|i| 2 * i + 1).collect(),
        ];
        let (src, dst) = (&plan.hosts[0].tcp, &plan.hosts[plan.hosts.len() - 1].tcp);
        let sender = Sender::new(SenderConfig {
            cc: src.cc.clone(),
            mss: src.mss,
            sndbuf: src.sndbuf,
            rcvbuf: src.rcvbuf,
            initial_window: src.initial_window,
            window_scaling: src.window_scaling,
            sack: src.sack,
            timestamps: src.timestamps,
            abc: src.abc,
            hystart: src.hystart,
            nagle: src.nagle,
            fast_retransmit: src.fast_retransmit,
            min_rto_ns: src.min_rto_ns,
        });
        let receiver = Receiver::new(ReceiverConfig {
            mss: dst.mss,
            rcvbuf: dst.rcvbuf,
            window_scaling: dst.window_scaling,
            sack: dst.sack,
            timestamps: dst.timestamps,
            delayed_ack: dst.delayed_ack,
            delack_timeout_ns: dst.delack_timeout_ns,
        });
        Self {
            now: 0,
            events: EventQueue::default(),
            channels,
            routes,
            sender,
            receiver,
            writer: Writer::new(&plan.app),
            sender_wake: Wake::default(),
            receiver_wake: Wake::default(),
            out: Vec::new(),
            delivered: 0,
            completed_at: None,
            series: IntervalSeries::new(plan.interval_ns),
            trace: Trace::default(),
            limits: LimitClock::default(),
            taps: Taps::new(plan.trace.as_ref(), plan.seed, &[(0, plan.hosts.len() - 1)]),
            plan,
        }
    }

    pub fn run(mut self) -> RunResult {
        let end = self.plan.duration_ns;
        let mut out = std::mem::take(&mut self.out);
        self.sender.connect(0, &mut out);
        self.send(DATA_ROUTE, &mut out);
        self.out = out;
        self.reschedule_timers();
        self.events
            .schedule(self.plan.trace_interval_ns.min(end), Event::Sample);
        while let Some((at, event)) = self.events.pop() {
            if at > end {
                break;
            }
            self.now = at;
            self.handle(event);
            if self.completed_at.is_some() {
                break;
            }
        }
        let stop = self.completed_at.unwrap_or(end);
        self.limits.enter(stop, None);
        self.finish(stop)
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::TxDone(ch) => {
                let departure = self.channels[ch].finish(self.now);
                if let Some((packet, at)) = departure.arrival {
                    self.events.schedule(at, Event::Arrive(packet));
                }
                if let Some(at) = departure.next_done {
                    self.tap(ch);
                    self.events.schedule(at, Event::TxDone(ch));
                }
            }
            Event::Arrive(packet) => self.arrive(packet),
            Event::SenderTimer => {
                self.sender_wake.fired(self.now);
                let mut out = std::mem::take(&mut self.out);
                self.sender.on_timer(self.now, &mut out);
                self.after_sender_activity(out);
            }
            Event::ReceiverTimer => {
                self.receiver_wake.fired(self.now);
                self.after_receiver_activity();
            }
            Event::Sample => {
                self.trace.sample(0, self.now, &self.sender);
                let next = self.now + self.plan.trace_interval_ns;
                if next <= self.plan.duration_ns {
                    self.events.schedule(next, Event::Sample);
                }
            }
        }
    }

    /// A packet reached the end of its current channel: forward it (store-and-forward
    /// routers add no processing delay) or hand it to the endpoint.
    fn arrive(&mut self, mut packet: Packet) {
        if packet.hop + 1 < self.routes[packet.route].len() {
            packet.hop += 1;
            self.offer(packet);
            return;
        }
        if packet.route == DATA_ROUTE {
            self.receiver.on_segment(self.now, &packet.segment);
            self.after_receiver_activity();
        } else {
            let mut out = std::mem::take(&mut self.out);
            self.sender.on_segment(self.now, &packet.segment, &mut out);
            self.after_sender_activity(out);
        }
    }

    fn offer(&mut self, packet: Packet) {
        let ch = self.routes[packet.route][packet.hop];
        if let Some(done) = self.channels[ch].offer(self.now, packet) {
            self.tap(ch);
            self.events.schedule(done, Event::TxDone(ch));
        }
    }

    /// A frame has just started onto the wire of channel `ch`: show it to the captures.
    fn tap(&mut self, ch: usize) {
        if let Some(packet) = self.channels[ch].in_service() {
            let (link, forward) = (ch / 2, ch.is_multiple_of(2));
            let from_sender = packet.route == DATA_ROUTE;
            self.taps
                .on_wire(self.now, link, forward, packet, from_sender);
        }
    }

    fn send(&mut self, route: usize, out: &mut Vec<Segment>) {
        for segment in out.drain(..) {
            self.offer(Packet {
                flow: 0,
                route,
                hop: 0,
                segment,
            });
        }
    }

    fn after_sender_activity(&mut self, mut out: Vec<Segment>) {
        if self.sender.is_established() {
            self.writer.fill(self.now, &mut self.sender, &mut out);
        }
        self.send(DATA_ROUTE, &mut out);
        self.out = out;
        let limit = self
            .sender
            .is_established()
            .then(|| self.sender.limit(self.writer.has_more()));
        self.limits.enter(self.now, limit);
        self.reschedule_timers();
    }

    /// The receiving application reads everything as it arrives (a reader blocked in
    /// recv() with no CPU cost), before the receiver decides on its ACK.
    fn after_receiver_activity(&mut self) {
        let read = self.receiver.read(u64::MAX);
        if read > 0 {
            self.delivered += read;
            self.series.add(self.now, read);
            if self.plan.app.bytes.is_some_and(|b| self.delivered >= b) {
                self.completed_at = Some(self.now);
            }
        }
        let mut out = std::mem::take(&mut self.out);
        self.receiver.poll(self.now, &mut out);
        self.send(ACK_ROUTE, &mut out);
        self.out = out;
        self.reschedule_timers();
    }

    fn reschedule_timers(&mut self) {
        if let Some(at) = self.sender_wake.needs(self.sender.next_deadline()) {
            self.events.schedule(at, Event::SenderTimer);
        }
        if let Some(at) = self.receiver_wake.needs(self.receiver.next_deadline()) {
            self.events.schedule(at, Event::ReceiverTimer);
        }
    }

    fn finish(self, stop: Nanos) -> RunResult {
        let elapsed_s = stop as f64 / NS_PER_S as f64;
        let goodput_bps = if stop > 0 {
            self.delivered as f64 * 8.0 / elapsed_s
        } else {
            0.0
        };
        let s = self.sender.stats;
        let seconds = |t: Option<Nanos>| t.map_or(0.0, |t| t as f64 / NS_PER_S as f64);
        let hosts = &self.plan.hosts;
        let flows = vec![FlowResult {
            flow: 0,
            src: hosts[0].name.clone(),
            dst: hosts[hosts.len() - 1].name.clone(),
            goodput_bps,
            bytes_delivered: self.delivered,
            retransmits: s.retransmits,
            timeouts: s.timeouts,
            srtt_s: seconds(self.sender.rto().srtt()),
            min_rtt_s: seconds(self.sender.rto().min_rtt()),
            final_cwnd_bytes: self.sender.cwnd(),
        }];
        let links = self
            .channels
            .iter()
            .enumerate()
            .map(|(i, ch)| LinkResult {
                link: i / 2,
                direction: if i % 2 == 0 { "forward" } else { "reverse" },
                packets: ch.stats.packets,
                bytes: ch.stats.wire_bytes,
                drops_queue: ch.stats.drops_queue,
                drops_error: ch.stats.drops_error,
                max_queue_bytes: ch.stats.max_queue_bytes,
                utilisation: if stop > 0 {
                    ch.stats.busy_ns.min(stop) as f64 / stop as f64
                } else {
                    0.0
                },
            })
            .collect();
        RunResult {
            summary: Summary {
                goodput_bps,
                elapsed_s,
                bytes_delivered: self.delivered,
                bytes_written: self.writer.written(),
                segments_sent: s.segments_sent,
                retransmits: s.retransmits,
                fast_retransmits: s.fast_retransmits,
                timeouts: s.timeouts,
                completed: self.plan.app.bytes.is_none() || self.completed_at.is_some(),
                events: self.events.popped(),
                limited_by: self.limits.shares(),
            },
            flows,
            links,
            series: self.series.finish(stop),
            trace: self.trace,
            captures: self.taps.finish(),
        }
    }
}
