//! The simulation: hosts and store-and-forward routers joined by full-duplex links, the
//! flows between hosts (split into connections at PEPs, whose relays join them), each
//! host's CPU, and the event loop that drives them.

use crate::atm::AtmNet;
use crate::engine::{EventQueue, Nanos, RngStream, NS_PER_S};
use crate::flow::Flow;
use crate::host::{Cpu, CpuCosts};
use crate::metrics::{IntervalSeries, Trace};
use crate::net::{Channel, Packet, PacketRef, Packets, Taps};
use crate::pep::{self, Relay};
use crate::plan::Plan;
use crate::result::RunResult;
use crate::tcp::Segment;
use crate::wlan::Wlan;

mod media;
mod report;
mod wlan;

/// Events name what they concern by index (a packet by its slot in `Simulation::packets`),
/// so an entry of the queue is a few words and scheduling one allocates nothing.
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

/// A piece of work for a host's CPU.
enum Job {
    Receive(PacketRef),
    Send(PacketRef),
    Write {
        flow: usize,
        side: usize,
        bytes: u64,
    },
    Read {
        flow: usize,
        side: usize,
        bytes: u64,
    },
    Store {
        flow: usize,
        side: usize,
        bytes: u64,
    },
}

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
    /// The 802.11 media, which carry the wlan links' channels instead.
    wlan: Wlan,
    /// The links that carry ATM cells, if any (crate::atm).
    atm: Option<AtmNet>,
    /// Per node: its CPU, or None for a host whose work costs nothing and for routers
    /// (a PEP's relay works at no cost).
    cpus: Vec<Option<Cpu<Job>>>,
    /// Hosts given work since their CPU last looked for more.
    touched: Vec<usize>,
    /// The TCP connections: one per flow, or one per segment of a flow a PEP splits.
    flows: Vec<Flow>,
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
    taps: Taps,
}

/// The trace samples a run to the end takes: one per traced connection and trace interval.
/// Reserved up front, the trace's columns never grow by doubling (which would hold up to
/// twice the samples' memory) or copy themselves as they grow.
fn traced_samples(plan: &Plan, flows: &[Flow]) -> usize {
    let traced = flows.iter().filter(|f| f.segment == 0 && f.tcp().is_some());
    let samples = (plan.duration_ns / plan.trace_interval_ns).max(1);
    traced.count() * usize::try_from(samples).unwrap_or(usize::MAX)
}

/// A sender's segments are its SYN and data; a receiver's are its SYN-ACK and pure ACKs.
fn from_sender(seg: &Segment) -> bool {
    (seg.syn && !seg.has_ack) || seg.len > 0
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
        let (flows, relays) = pep::connections(&plan);
        let routes: Vec<_> = flows.iter().map(|f| f.routes.clone()).collect();
        let atm = AtmNet::new(&plan, &routes);
        let pending = flows.iter().filter(|f| f.bytes.is_some()).count();
        let ends: Vec<(usize, usize)> = flows.iter().map(|f| (f.hosts[0], f.hosts[1])).collect();
        let wlan = Wlan::new(&plan);
        let traced = traced_samples(&plan, &flows);
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
            now: 0,
            events: EventQueue::default(),
            packets: Packets::default(),
            channels,
            carriers,
            wlan,
            atm,
            cpus: (0..plan.node_count())
                .map(|n| plan.hosts.get(n).and_then(|h| h.cpu.as_ref().map(Cpu::new)))
                .collect(),
            touched: Vec::new(),
            all_sized: pending == flows.len(),
            pending,
            flows,
            relays,
            relay_woken: Vec::new(),
            spare_out: Vec::new(),
            spare_acks: Vec::new(),
            stopped_at: None,
            series: IntervalSeries::new(plan.interval_ns),
            trace: Trace::with_capacity(traced),
            taps: Taps::new(plan.trace.as_ref(), plan.seed, &ends),
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
        while let Some((at, event)) = self.events.pop() {
            if at > end {
                break;
            }
            self.now = at;
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
                let departure = self.channels[ch].finish(self.now);
                match departure.arrival {
                    Ok((packet, at)) => self.events.schedule(at, Event::Arrive(packet)),
                    Err(lost) => self.lose(lost),
                }
                if let Some(at) = departure.next_done {
                    self.tap(ch);
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
                for flow in self.flows.iter().filter(|f| f.segment == 0) {
                    if let Some(tx) = flow.tcp() {
                        self.trace.sample(flow.flow, self.now, tx);
                    }
                }
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

    /// The client opens the connection.
    fn start(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        flow.started_at = Some(self.now);
        if flow.tcp().is_none() {
            return self.media_start(f);
        }
        if !flow.handshake {
            flow.open_established(self.now);
            self.relay_connects(f);
            let out = self.out_buffer();
            self.activity(f, 1, out);
            let out = self.out_buffer();
            return self.activity(f, 0, out);
        }
        let client = &mut flow.sides[0];
        client.connected = true;
        let mut out = std::mem::take(&mut self.spare_out);
        if let Some(tx) = &mut client.tx {
            tx.connect(self.now, &mut out);
        }
        self.activity(f, 0, out);
    }

    /// Runs the connection sides a relay moved bytes for, then lets every host that was
    /// given work start on it.
    fn dispatch(&mut self) {
        while let Some((f, s)) = self.relay_woken.pop() {
            let out = self.out_buffer();
            self.activity(f, s, out);
        }
        while let Some(h) = self.touched.pop() {
            if let Some(at) = self.cpus[h].as_mut().and_then(|c| c.dispatch(self.now)) {
                self.events.schedule(at, Event::CpuDone(h as u32));
            }
        }
    }

    /// A packet reached the end of its current channel: forward it (store-and-forward
    /// routers add no processing delay) or hand it to the host at the end of its route.
    fn arrive(&mut self, packet: PacketRef) {
        let p = self.packets.get_mut(packet.id);
        let route = &self.flows[p.flow].routes[p.route];
        if p.hop + 1 < route.len() {
            p.hop += 1;
            self.offer(packet);
            return;
        }
        let host = self.flows[p.flow].sides[1 - p.route].host;
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

    /// TCP processes a packet from the peer.
    fn deliver(&mut self, packet: PacketRef) {
        let packet = self.packets.remove(packet.id);
        if let Some(udp) = packet.udp {
            return self.media_fragment(packet.flow, udp);
        }
        let (f, s) = (packet.flow, 1 - packet.route);
        let now = self.now;
        let side = &mut self.flows[f].sides[s];
        let seg = packet.segment;
        let mut out = std::mem::take(&mut self.spare_out);
        if from_sender(&seg) {
            if let Some(rx) = &mut side.rx {
                rx.on_segment(now, &seg);
            }
            // A connection with data both ways opens its second direction when the first
            // SYN arrives; this SYN rides with the SYN-ACK.
            if seg.syn && !side.connected {
                if let Some(tx) = &mut side.tx {
                    side.connected = true;
                    tx.connect(now, &mut out);
                }
            }
        } else if let Some(tx) = &mut side.tx {
            tx.on_segment(now, &seg, &mut out);
        }
        if let (Some(ack), Some(tx)) = (packet.piggyback, &mut side.tx) {
            // An ACK that arrives with data is not a duplicate ACK (RFC 5681 §2).
            tx.on_segment(
                now,
                &Segment {
                    seq: seg.seq,
                    len: seg.len,
                    ..ack
                },
                &mut out,
            );
        }
        if seg.syn && from_sender(&seg) {
            self.relay_connects(f);
        }
        self.activity(f, s, out);
    }

    /// After a side's TCP or application did something: the applications run, segments
    /// go out (data with the receiver's ACK on it, then any ACK still due), and timers are
    /// re-armed.
    fn activity(&mut self, f: usize, s: usize, mut out: Vec<Segment>) {
        let host = self.flows[f].sides[s].host;
        if s == 0 {
            for (k, at) in self.flows[f].opened(self.now) {
                self.media_due(f, k, at);
            }
        }
        if self.cpus[host].is_none() {
            self.read_at_no_cost(f, s);
            self.write_at_no_cost(f, s, &mut out);
        } else {
            self.next_read(f, s);
            self.next_write(f, s);
        }
        let now = self.now;
        // Every data segment takes the receiver's ACK if one is due, before the receiver
        // decides what ACKs it still owes; sending changes neither.
        for &segment in &out {
            let rx = self.flows[f].sides[s].rx.as_mut();
            let piggyback = rx.and_then(|rx| rx.piggyback(now));
            self.send(host, f, s, segment, piggyback);
        }
        out.clear();
        if out.capacity() > self.spare_out.capacity() {
            self.spare_out = out;
        }
        if let Some(rx) = &mut self.flows[f].sides[s].rx {
            let mut acks = std::mem::take(&mut self.spare_acks);
            rx.poll(now, &mut acks);
            for &ack in &acks {
                self.send(host, f, s, ack, None);
            }
            acks.clear();
            self.spare_acks = acks;
        }
        let flow = &mut self.flows[f];
        if s == 0 {
            let tx = flow.sender();
            // An application asleep between writes is what holds the sender back.
            let has_more = flow.sides[0]
                .writer
                .as_ref()
                .is_some_and(|w| w.has_more() && w.asleep_until(now).is_none());
            let limit = tx.is_established().then(|| tx.limit(has_more));
            flow.limits.enter(now, limit);
        }
        self.reschedule(f, s);
    }

    /// The application on a host whose calls cost nothing reads everything as it arrives
    /// (a reader blocked in recv()), before the receiver decides on its ACK; one that
    /// sleeps after each read takes one call's worth and sleeps.
    fn read_at_no_cost(&mut self, f: usize, s: usize) {
        let now = self.now;
        let room = self.flows[f]
            .feeds
            .map_or(u64::MAX, |r| self.relays[r].room());
        let side = &mut self.flows[f].sides[s];
        let (Some(rx), Some(reader)) = (&mut side.rx, &mut side.reader) else {
            return;
        };
        let read = if reader.pauses() {
            let Some(bytes) = reader.next_read(now, rx.readable().min(room)) else {
                return;
            };
            reader.returned(now);
            if let Some(at) = side.app_wake.needs(reader.asleep_until(now)) {
                self.events.schedule(at, Event::AppWake(f as u32, s as u32));
            }
            rx.read(bytes)
        } else {
            rx.read(room)
        };
        if read > 0 {
            reader.got(read);
            self.consumed(f, s, read);
        }
    }

    fn write_at_no_cost(&mut self, f: usize, s: usize, out: &mut Vec<Segment>) {
        let now = self.now;
        let side = &mut self.flows[f].sides[s];
        let (Some(tx), Some(writer)) = (&mut side.tx, &mut side.writer) else {
            return;
        };
        let before = writer.written();
        if tx.is_established() {
            writer.fill(now, tx, out);
        }
        let wrote = writer.written() - before;
        let wake = writer.asleep_until(now);
        if let Some(at) = side.app_wake.needs(wake) {
            self.events.schedule(at, Event::AppWake(f as u32, s as u32));
        }
        if let Some(r) = self.flows[f].fed_by.filter(|_| wrote > 0) {
            // Room in the relay: it reads on from the upstream connection.
            self.relays[r].gave(wrote);
            self.relay_woken.push((self.relays[r].upstream, 1));
        }
    }

    /// On a host with a CPU model: the reading application's next read() call, if it is
    /// waiting and data is there.
    fn next_read(&mut self, f: usize, s: usize) {
        let side = &mut self.flows[f].sides[s];
        let (Some(rx), Some(reader)) = (&side.rx, &side.reader) else {
            return;
        };
        if side.reading {
            return;
        }
        let now = self.now;
        if let Some(at) = side.app_wake.needs(reader.asleep_until(now)) {
            self.events.schedule(at, Event::AppWake(f as u32, s as u32));
            return;
        }
        let Some(bytes) = reader.next_read(now, rx.readable()) else {
            return;
        };
        side.reading = true;
        let host = side.host;
        let job = Job::Read {
            flow: f,
            side: s,
            bytes,
        };
        self.call(host, job, true, |c| c.copy(bytes, true));
    }

    /// An application's system call (or the rest of a blocked one) on `host`, which has a
    /// CPU model, costing what `cost` says.
    fn call(&mut self, host: usize, job: Job, new_call: bool, cost: impl Fn(&CpuCosts) -> Nanos) {
        let cpu = self.cpus[host]
            .as_mut()
            .expect("only a host with a CPU model queues calls");
        let ns = cost(&cpu.costs);
        cpu.call(job, ns, new_call);
        self.touched.push(host);
    }

    /// On a host with a CPU model: the writing application's next write() call (or the
    /// rest of a blocked one), unless it sleeps between calls or the buffer is full.
    fn next_write(&mut self, f: usize, s: usize) {
        let now = self.now;
        let side = &mut self.flows[f].sides[s];
        let (Some(tx), Some(writer)) = (&side.tx, &side.writer) else {
            return;
        };
        if side.writing || !tx.is_established() {
            return;
        }
        if let Some(at) = side.app_wake.needs(writer.asleep_until(now)) {
            self.events.schedule(at, Event::AppWake(f as u32, s as u32));
            return;
        }
        let Some((bytes, new_call)) = writer.next_write(now, tx.buffer_space()) else {
            return;
        };
        side.writing = true;
        let host = side.host;
        let job = Job::Write {
            flow: f,
            side: s,
            bytes,
        };
        self.call(host, job, new_call, |c| c.copy(bytes, new_call));
    }

    /// The first SYN of a connection that ends at a PEP reached it: the PEP opens its
    /// connection onwards (a retransmitted SYN finds it open).
    fn relay_connects(&mut self, f: usize) {
        if let Some(r) = self.flows[f].feeds {
            let down = self.relays[r].downstream;
            if self.flows[down].started_at.is_none() {
                self.start(down);
            }
        }
    }

    /// A host's CPU finished a piece of work: carry out what it did.
    fn done(&mut self, job: Job) {
        let now = self.now;
        match job {
            Job::Receive(packet) => self.deliver(packet),
            Job::Send(packet) => self.offer(packet),
            Job::Write { flow, side, bytes } => {
                let s = &mut self.flows[flow].sides[side];
                s.writing = false;
                let mut out = std::mem::take(&mut self.spare_out);
                if let (Some(tx), Some(writer)) = (&mut s.tx, &mut s.writer) {
                    tx.write(bytes);
                    writer.wrote(now, bytes);
                    tx.try_send(now, &mut out);
                }
                self.activity(flow, side, out);
            }
            Job::Read { flow, side, bytes } => {
                let stores = self.flows[flow].stores();
                let s = &mut self.flows[flow].sides[side];
                if let (Some(rx), Some(reader)) = (&mut s.rx, &mut s.reader) {
                    rx.read(bytes);
                    reader.got(bytes);
                }
                let host = s.host;
                let storage = self.cpus[host].as_ref().is_some_and(|c| c.costs.stores());
                if stores && storage {
                    // The application writes what it read to storage before reading on.
                    let job = Job::Store { flow, side, bytes };
                    self.call(host, job, true, |c| c.store(bytes));
                } else {
                    s.read_returned(now);
                    self.consumed(flow, side, bytes);
                }
                let out = self.out_buffer();
                self.activity(flow, side, out);
            }
            Job::Store { flow, side, bytes } => {
                self.flows[flow].sides[side].read_returned(now);
                self.consumed(flow, side, bytes);
                let out = self.out_buffer();
                self.activity(flow, side, out);
            }
        }
    }

    /// Side `s`'s application is done with `n` more bytes: a destination's, or a PEP's
    /// relay, which hands them to its downstream connection's sender.
    fn consumed(&mut self, f: usize, s: usize, n: u64) {
        match self.flows[f].feeds {
            Some(r) => {
                self.relays[r].took(n);
                let down = self.relays[r].downstream;
                if let Some(w) = &mut self.flows[down].sides[0].writer {
                    w.release(n);
                }
                self.relay_woken.push((down, 0));
            }
            None => self.series.add(self.now, n),
        }
        if !self.flows[f].consumed(s, n, self.now) {
            return;
        }
        self.pending -= 1;
        if self.pending == 0 && self.all_sized {
            self.stopped_at = Some(self.now);
        }
        for g in 0..self.flows.len() {
            if self.flows[g].after == Some(f) {
                self.start(g);
            }
        }
    }

    /// Side `s` of connection `f`, on `host`, sends a TCP segment (with an ACK on it).
    fn send(
        &mut self,
        host: usize,
        f: usize,
        s: usize,
        segment: Segment,
        piggyback: Option<Segment>,
    ) {
        self.send_packet(
            host,
            Packet {
                flow: f,
                route: s,
                hop: 0,
                segment,
                piggyback,
                udp: None,
            },
        );
    }

    /// A packet leaves its host: through the CPU if the host has one.
    fn send_packet(&mut self, host: usize, packet: Packet) {
        let packet = self.packets.insert(packet);
        match &mut self.cpus[host] {
            Some(cpu) => {
                cpu.transmit(Job::Send(packet));
                self.touched.push(host);
            }
            None => self.offer(packet),
        }
    }

    /// A packet enters the channel at its hop, whatever carries it.
    fn offer(&mut self, packet: PacketRef) {
        let p = self.packets.get(packet.id);
        let ch = self.flows[p.flow].routes[p.route][p.hop];
        match self.carriers[ch] {
            Carrier::Wire => match self.channels[ch].offer(self.now, packet) {
                Ok(Some(done)) => {
                    self.tap(ch);
                    self.events.schedule(done, Event::TxDone(ch as u32));
                }
                Ok(None) => {}
                Err(dropped) => self.lose(dropped),
            },
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

    /// A spare buffer for the segments a side sends.
    fn out_buffer(&mut self) -> Vec<Segment> {
        std::mem::take(&mut self.spare_out)
    }

    /// A frame has just started onto the wire of channel `ch`: show it to the captures.
    fn tap(&mut self, ch: usize) {
        if let Some(packet) = self.channels[ch].in_service() {
            let packet = self.packets.get(packet.id);
            show_on_wire(&mut self.taps, self.now, ch, packet);
        }
    }

    fn reschedule(&mut self, f: usize, s: usize) {
        let side = &mut self.flows[f].sides[s];
        let tx_deadline = side.tx.as_ref().and_then(|tx| tx.next_deadline());
        if let Some(at) = side.tx_wake.needs(tx_deadline) {
            self.events
                .schedule(at, Event::SenderTimer(f as u32, s as u32));
        }
        let rx_deadline = side.rx.as_ref().and_then(|rx| rx.next_deadline());
        if let Some(at) = side.rx_wake.needs(rx_deadline) {
            self.events
                .schedule(at, Event::ReceiverTimer(f as u32, s as u32));
        }
    }

    fn seconds(t: Nanos) -> f64 {
        t as f64 / NS_PER_S as f64
    }
}

/// Shows a frame that starts onto channel `ch` at `now` to the captures. A piggybacked
/// acknowledgement is part of the data segment's header on the wire.
fn show_on_wire(taps: &mut Taps, now: Nanos, ch: usize, packet: &Packet) {
    let (link, forward) = (ch / 2, ch.is_multiple_of(2));
    let from_client = packet.route == 0;
    match &packet.piggyback {
        None => taps.on_wire(now, link, forward, packet, from_client),
        Some(ack) => {
            let wire = Packet {
                segment: Segment {
                    ack: ack.ack,
                    has_ack: true,
                    window: ack.window,
                    sack: ack.sack,
                    sack_len: ack.sack_len,
                    ..packet.segment
                },
                piggyback: None,
                ..*packet
            };
            taps.on_wire(now, link, forward, &wire, from_client);
        }
    }
}
