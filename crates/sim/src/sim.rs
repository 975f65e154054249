//! The simulation: hosts and store-and-forward routers joined by full-duplex links, the
//! flows between hosts (split into connections at PEPs, whose relays join them), each
//! host's CPU, and the event loop that drives them. This file holds the loop and the
//! network's side (packets handed from channel to channel, whatever carries them);
//! sim/hosts.rs the hosts' side (connections, applications, CPUs, relays).

use crate::atm::AtmNet;
use crate::engine::{prefetch, EventQueue, Nanos, RngStream, NS_PER_S};
use crate::flow::Flow;
use crate::host::Cpu;
use crate::metrics::{IntervalSeries, Trace, Traced};
use crate::net::aqm::Arrival;
use crate::net::{Channel, Packet, PacketRef, Packets, Taps};
use crate::pep::{self, Relay};
use crate::plan::Plan;
use crate::result::RunResult;
use crate::tcp::Segment;
use crate::wlan::Wlan;

mod hosts;
mod media;
mod paths;
mod report;
mod wlan;

use hosts::Job;
use paths::Paths;

/// Events name what they concern by index (a packet by its slot in `Simulation::packets`),
/// so an entry of the queue is a few words and scheduling one allocates nothing.
#[derive(Clone, Copy)]
enum Event {
    /// A channel finished serializing its frame.
    TxDone(u32),
    /// A packet reached the far end of the channel it was on.
    Arrive(PacketRef),
    /// A wake-up the ATM links asked for (crate::atm): a cell reached the far end of its
    /// wire, or an ABR source may send. Scheduled behind the other events of its instant.
    AtmDue(u32),
    SenderTimer(u32, u32),
    ReceiverTimer(u32, u32),
    /// A writing application's sleep between calls ended.
    AppWake(u32, u32),
    /// A host's CPU finished its current work.
    CpuDone(u32),
    /// A media flow's stream's next message falls due.
    MediaSend(u32, u32),
    Start(u32),
    Sample,
    /// The 802.11 medium has something due (sim/wlan.rs).
    Wlan(u32),
}

// An event is three words at most, so that a queue entry (time, order, event) is 32 bytes.
const _: () = assert!(std::mem::size_of::<Event>() <= 12);

/// From this many connections on, prefetching reaches further ahead. What the next event
/// reads is asked for one event ahead (`EventQueue::peek`): too little to hide a load from
/// memory while other machines fill the shared L3. So what the next packet on a delay line
/// reads is also asked for when it becomes the line's earliest, a few events before it
/// arrives on a line many channels share (the access links' line of a thousand-flow
/// dumbbell), and when it is the next event, its connection's sender and receiver as well,
/// through the side that is by then in the cache. A connection's state takes some 3-4 KB,
/// so with fewer connections it stays in a core's own cache (1 MiB here) and this would
/// only cost its instructions (1-4 % a segment for one flow, bench/README.md).
const PREFETCH_AHEAD_FLOWS: usize = 256;

/// What carries a channel's packets.
#[derive(Clone, Copy)]
enum Carrier {
    /// Its own serializer and queue (`Simulation::channels`).
    Wire,
    /// An 802.11 medium it shares with other wlan directions.
    Wlan,
    /// ATM cells.
    Atm,
}

pub struct Simulation {
    plan: Plan,
    now: Nanos,
    events: EventQueue<Event>,
    /// Every packet between the host that sent it and the one it reaches.
    packets: Packets,
    /// Link i's forward direction is channel 2i, its reverse 2i + 1.
    channels: Vec<Channel>,
    carriers: Vec<Carrier>,
    /// Per channel, the event queue's delay line its packets in propagation wait on.
    arrival_lines: Vec<u32>,
    /// The 802.11 media, which carry the wlan links' channels instead.
    wlan: Wlan,
    /// The links that carry ATM cells, if any (crate::atm).
    atm: Option<AtmNet>,
    /// Per node: its CPU, or None for a host whose work costs nothing and for routers
    /// (a PEP's relay works at no cost). Boxed: every packet reaching a host looks its
    /// entry up, and a table of pointers stays in the caches where a thousand hosts' CPU
    /// records would not.
    cpus: Vec<Option<Box<Cpu<Job>>>>,
    /// Hosts given work since their CPU last looked for more.
    touched: Vec<usize>,
    /// The TCP connections: one per flow, or one per segment of a flow a PEP splits.
    flows: Vec<Flow>,
    /// Their routes, as a table packets look up at every hop.
    paths: Paths,
    relays: Vec<Relay>,
    /// Connection sides a relay moved bytes for, which run again at the same instant.
    relay_woken: Vec<(usize, usize)>,
    /// Spare buffers for the segments a side sends and the ACKs its receiver owes, kept
    /// so that handling an event allocates nothing.
    spare_out: Vec<Segment>,
    spare_acks: Vec<Segment>,
    /// Sized flows not yet complete, and whether every flow is sized (then the run ends
    /// when they are all complete).
    pending: usize,
    all_sized: bool,
    stopped_at: Option<Nanos>,
    series: IntervalSeries,
    trace: Trace,
    /// Per connection, what the trace samples of it (updated at each turn of its client).
    traced: Vec<Traced>,
    taps: Taps,
}

/// The trace samples a run to the end takes: one per traced connection and trace interval.
/// Reserved up front, the trace's columns never grow by doubling (which would hold up to
/// twice the samples' memory) or copy themselves as they grow.
fn traced_samples(plan: &Plan, flows: &[Flow]) -> usize {
    let traced = flows.iter().filter(|f| f.tcp().is_some());
    let samples = (plan.duration_ns / plan.trace_interval_ns).max(1);
    traced.count() * usize::try_from(samples).unwrap_or(usize::MAX)
}

/// Per channel, its delay line (`EventQueue::schedule_on_line`). A frame leaving a line of
/// fixed delay d at `now` arrives at now + d, and `now` never decreases: the arrivals of
/// every channel of delay d come in time order, so they share one line, and a thousand
/// access links of equal delay put one event in the heap instead of one per link with a
/// packet in flight. A line with a schedule (varying delay) has a line of its own.
fn arrival_lines(plan: &Plan) -> Vec<u32> {
    let mut by_delay = std::collections::HashMap::new();
    let mut lines = 0u32;
    let mut new_line = || {
        lines += 1;
        lines - 1
    };
    plan.links
        .iter()
        .flat_map(|link| [&link.forward, &link.reverse])
        .map(|ch| match ch.schedule {
            Some(_) => new_line(),
            None => *by_delay.entry(ch.delay_ns).or_insert_with(&mut new_line),
        })
        .collect()
}

impl Simulation {
    pub fn new(plan: Plan) -> Self {
        let mut channels = Vec::with_capacity(plan.links.len() * 2);
        for (i, link) in plan.links.iter().enumerate() {
            for (dir, ch) in [("forward", &link.forward), ("reverse", &link.reverse)] {
                let stream = |what| RngStream::new(plan.seed, &format!("links.{i}.{dir}.{what}"));
                channels.push(Channel::new(
                    ch,
                    stream("errors"),
                    stream("queue"),
                    plan.interval_ns,
                ));
            }
        }
        let (flows, relays) = pep::connections(&plan);
        let routes: Vec<_> = flows.iter().map(|f| f.routes.clone()).collect();
        let atm = AtmNet::new(&plan, &routes);
        let pending = flows.iter().filter(|f| f.bytes.is_some()).count();
        let ends: Vec<(usize, usize)> = flows.iter().map(|f| (f.hosts[0], f.hosts[1])).collect();
        let wlan = Wlan::new(&plan);
        let samples = traced_samples(&plan, &flows);
        let traced = flows
            .iter()
            .map(|f| Traced::new(f.flow, f.segment, f.tcp()))
            .collect();
        let carriers = (0..channels.len())
            .map(|ch| {
                if wlan.carries(ch) {
                    Carrier::Wlan
                } else if atm.as_ref().is_some_and(|a| a.carries(ch)) {
                    Carrier::Atm
                } else {
                    Carrier::Wire
                }
            })
            .collect();
        Self {
            arrival_lines: arrival_lines(&plan),
            now: 0,
            events: EventQueue::default(),
            packets: Packets::default(),
            channels,
            carriers,
            wlan,
            atm,
            cpus: (0..plan.node_count())
                .map(|n| {
                    plan.hosts
                        .get(n)
                        .and_then(|h| h.cpu.as_ref().map(|c| Box::new(Cpu::new(c))))
                })
                .collect(),
            touched: Vec::new(),
            all_sized: pending == flows.len(),
            pending,
            paths: Paths::new(&flows),
            flows,
            relays,
            relay_woken: Vec::new(),
            spare_out: Vec::new(),
            spare_acks: Vec::new(),
            stopped_at: None,
            series: IntervalSeries::new(plan.interval_ns),
            trace: Trace::with_capacity(samples),
            traced,
            taps: Taps::new(
                plan.trace.as_ref(),
                plan.seed,
                &ends,
                &plan
                    .hosts
                    .iter()
                    .map(|h| h.name.as_str())
                    .collect::<Vec<_>>(),
            ),
            plan,
        }
    }

    pub fn run(mut self) -> RunResult {
        let end = self.plan.duration_ns;
        for f in 0..self.flows.len() {
            // A connection from a PEP opens when its relay's first connection reaches it.
            if self.flows[f].after.is_none() && self.flows[f].fed_by.is_none() {
                match self.flows[f].start_ns {
                    0 => self.start(f),
                    at => self.events.schedule(at, Event::Start(f as u32)),
                }
            }
        }
        self.dispatch();
        self.events
            .schedule(self.plan.trace_interval_ns.min(end), Event::Sample);
        let far_ahead = self.flows.len() >= PREFETCH_AHEAD_FLOWS;
        while let Some((at, event)) = self.events.pop() {
            if at > end {
                break;
            }
            self.now = at;
            if let Some(next) = self.events.peek() {
                self.prefetch_for(next, far_ahead);
            }
            if far_ahead {
                if let Some(ahead) = self.events.take_promoted() {
                    self.prefetch_for(&ahead, false);
                }
            }
            self.handle(event);
            self.dispatch();
            if self.stopped_at.is_some() {
                break;
            }
        }
        let stop = self.stopped_at.unwrap_or(end);
        for flow in &mut self.flows {
            flow.limits.enter(stop, None);
        }
        self.finish(stop)
    }

    fn handle(&mut self, event: Event) {
        let ix = |i: u32| i as usize;
        match event {
            Event::TxDone(ch) => {
                let ch = ix(ch);
                let packets = &mut self.packets;
                let departure = self.channels[ch].finish(self.now, &mut |lost| {
                    packets.remove(lost.id);
                });
                match departure.arrival {
                    // A channel's packets arrive in the order they left: its delay line.
                    Ok((packet, at)) => {
                        let line = self.arrival_lines[ch] as usize;
                        self.events
                            .schedule_on_line(line, at, Event::Arrive(packet));
                    }
                    Err(lost) => self.lose(lost),
                }
                if let Some(at) = departure.next_done {
                    self.started(ch);
                    self.events.schedule(at, Event::TxDone(ch as u32));
                }
            }
            Event::Arrive(packet) => self.arrive(packet),
            Event::AtmDue(entry) => {
                let atm = self.atm.as_mut().expect("only ATM links carry cells");
                let delivered = atm.handle(self.now, ix(entry));
                self.atm_wakeups();
                if let Some(packet) = delivered {
                    let packet = self.packets.insert(packet);
                    self.arrive(packet);
                }
            }
            Event::SenderTimer(f, s) => {
                let (f, s) = (ix(f), ix(s));
                self.flows[f].sides[s].tx_wake.fired(self.now);
                let mut out = self.out_buffer();
                if let Some(tx) = &mut self.flows[f].sides[s].tx {
                    tx.on_timer(self.now, &mut out);
                }
                self.activity(f, s, out);
            }
            Event::ReceiverTimer(f, s) => {
                let (f, s) = (ix(f), ix(s));
                self.flows[f].sides[s].rx_wake.fired(self.now);
                let out = self.out_buffer();
                self.activity(f, s, out);
            }
            Event::AppWake(f, s) => {
                let (f, s) = (ix(f), ix(s));
                self.flows[f].sides[s].app_wake.fired(self.now);
                let out = self.out_buffer();
                self.activity(f, s, out);
            }
            Event::CpuDone(h) => {
                let h = ix(h);
                let job = self.cpus[h]
                    .as_mut()
                    .expect("only a host with a CPU model schedules its work")
                    .finish();
                self.touched.push(h);
                self.done(job);
            }
            Event::MediaSend(f, k) => self.media_send(ix(f), ix(k)),
            Event::Start(f) => self.start(ix(f)),
            Event::Wlan(m) => self.wlan_due(ix(m)),
            Event::Sample => {
                // Every TCP connection: each one of a flow a PEP splits is traced too.
                self.trace.sample(self.now, &self.traced);
                if let Some(atm) = &mut self.atm {
                    atm.sample(self.now);
                }
                let next = self.now + self.plan.trace_interval_ns;
                if next <= self.plan.duration_ns {
                    self.events.schedule(next, Event::Sample);
                }
            }
        }
    }

    /// Starts loading what `event` will read first, if it is cold with many connections:
    /// the channel a frame leaves or enters, or the headers and the connection's side at
    /// the end of a packet's route (crate::engine::prefetch); `deep`, also the side's
    /// sender and receiver, which means reading the side's pointers to them: for the next
    /// event, whose side was asked for a few events before (`PREFETCH_AHEAD_FLOWS`).
    fn prefetch_for(&self, event: &Event, deep: bool) {
        match *event {
            Event::TxDone(ch) => prefetch(&self.channels[ch as usize]),
            Event::Arrive(packet) => {
                let p = self.packets.place(packet.id);
                let path = self.paths.get(p.flow(), p.route());
                if p.hop() + 1 < path.hops as usize {
                    let ch = self.paths.channel(p.flow(), p.route(), p.hop() + 1);
                    prefetch(&self.channels[ch]);
                } else {
                    self.packets.prefetch_headers(packet.id);
                    let side = &self.flows[p.flow()].sides[1 - p.route()];
                    prefetch(side);
                    if deep {
                        if let Some(tx) = &side.tx {
                            prefetch(&**tx);
                        }
                        if let Some(rx) = &side.rx {
                            prefetch(&**rx);
                        }
                    }
                }
            }
            Event::SenderTimer(f, s) | Event::ReceiverTimer(f, s) | Event::AppWake(f, s) => {
                prefetch(&self.flows[f as usize].sides[s as usize]);
            }
            _ => {}
        }
    }

    /// A packet reached the end of its current channel: forward it (store-and-forward
    /// routers add no processing delay) or hand it to the host at the end of its route.
    fn arrive(&mut self, packet: PacketRef) {
        let p = self.packets.place(packet.id);
        let path = self.paths.get(p.flow(), p.route());
        if p.hop() + 1 < path.hops as usize {
            self.packets.next_hop(packet.id);
            self.offer(packet);
            return;
        }
        let host = path.end_host as usize;
        match &mut self.cpus[host] {
            Some(cpu) => match cpu.receive(Job::Receive(packet)) {
                Ok(()) => self.touched.push(host),
                // A packet that finds the NIC ring full is lost (counted by the CPU).
                Err(_) => self.lose(packet),
            },
            None => self.deliver(packet),
        }
    }

    /// A packet was lost on the way: its slot is free again.
    fn lose(&mut self, packet: PacketRef) {
        self.packets.remove(packet.id);
    }

    /// A packet enters the channel at its hop, whatever carries it.
    fn offer(&mut self, packet: PacketRef) {
        let p = self.packets.place(packet.id);
        let ch = self.paths.channel(p.flow(), p.route(), p.hop());
        match self.carriers[ch] {
            Carrier::Wire => {
                let arrival = Arrival {
                    // The connection and its direction: what a 5-tuple tells apart.
                    flow: u64::from(p.flow) << 1 | u64::from(p.route),
                    ect: p.ect,
                };
                let packets = &mut self.packets;
                let started = self.channels[ch].offer(self.now, packet, arrival, &mut |lost| {
                    packets.remove(lost.id);
                });
                if let Some(done) = started {
                    self.started(ch);
                    self.events.schedule(done, Event::TxDone(ch as u32));
                }
            }
            Carrier::Wlan => self.wlan_offer(ch, packet),
            Carrier::Atm => {
                // The cells carry the packet from here; crate::atm keeps it while they do.
                let packet = self.packets.remove(packet.id);
                let atm = self.atm.as_mut().expect("ATM channels have the ATM links");
                atm.send(self.now, packet);
                self.atm_wakeups();
            }
        }
    }

    /// Queues the wake-ups the ATM links asked for, behind the events of their instant.
    fn atm_wakeups(&mut self) {
        if let Some(atm) = &mut self.atm {
            for (at, entry) in atm.take_wakeups() {
                self.events.schedule_behind(at, Event::AtmDue(entry as u32));
            }
        }
    }

    /// A frame has just started onto the wire of channel `ch`: the queue's ECN mark goes
    /// into its IP header (RFC 3168 §5: CE), and the captures see it.
    fn started(&mut self, ch: usize) {
        if self.channels[ch].in_service_marked() {
            if let Some(packet) = self.channels[ch].in_service() {
                self.packets.mark_ce(packet.id);
            }
        }
        self.tap(ch);
    }

    /// Shows the frame that has just started onto the wire of channel `ch` to the captures.
    fn tap(&mut self, ch: usize) {
        if !self.taps.any() {
            return;
        }
        if let Some(packet) = self.channels[ch].in_service() {
            let packet = self.packets.get(packet.id);
            show_on_wire(&mut self.taps, self.now, ch, &packet);
        }
    }

    fn seconds(t: Nanos) -> f64 {
        t as f64 / NS_PER_S as f64
    }
}

/// Shows a frame that starts onto channel `ch` at `now` to the captures.
fn show_on_wire(taps: &mut Taps, now: Nanos, ch: usize, packet: &Packet) {
    taps.on_wire(now, ch / 2, ch.is_multiple_of(2), packet);
}
