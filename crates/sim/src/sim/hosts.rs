//! The hosts' side of the simulation: the TCP connections' ends, their applications'
//! reads and writes, each host's CPU and its jobs, the PEPs' relays, and the packets a host
//! sends into the network or is handed by it (sim.rs routes them between the two).

use super::{Event, Simulation};
use crate::engine::{prefetch, Nanos};
use crate::host::CpuCosts;
use crate::net::{Packet, PacketRef};
use crate::tcp::Segment;

/// A piece of work for a host's CPU.
pub(super) enum Job {
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

/// A sender's segments are its SYN and data; a receiver's are its SYN-ACK and pure ACKs.
fn from_sender(seg: &Segment) -> bool {
    (seg.syn && !seg.has_ack) || seg.len > 0
}

impl Simulation {
    /// The client opens the connection.
    pub(super) fn start(&mut self, f: usize) {
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
    pub(super) fn dispatch(&mut self) {
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

    /// TCP processes a packet from the peer.
    pub(super) fn deliver(&mut self, packet: PacketRef) {
        let packet = self.packets.remove(packet.id);
        if let Some(udp) = packet.udp {
            return self.media_fragment(packet.flow, udp);
        }
        self.taps.on_arrival(self.now, &packet);
        let (f, s) = (packet.flow, 1 - packet.route);
        // What this side sends in answer (an ACK, or data for an ACK) enters the first
        // channel of its route, cold with many connections: its loads start now, while
        // TCP works (crate::engine::prefetch).
        prefetch(&self.channels[self.paths.channel(f, s, 0)]);
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
    pub(super) fn activity(&mut self, f: usize, s: usize, mut out: Vec<Segment>) {
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
            // Only a turn of this side changes what the trace takes of the connection.
            self.traced[f].update(tx);
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
        let (Some(tx), Some(writer)) = (&mut side.tx, &side.writer) else {
            return;
        };
        if side.writing || !tx.is_established() {
            return;
        }
        if let Some(at) = side.app_wake.needs(writer.asleep_until(now)) {
            self.events.schedule(at, Event::AppWake(f as u32, s as u32));
            return;
        }
        let space = tx.buffer_space();
        let Some((bytes, new_call)) = writer.next_write(now, space) else {
            if space == 0 && writer.has_more() {
                tx.wait_for_space();
            }
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
    pub(super) fn done(&mut self, job: Job) {
        let now = self.now;
        match job {
            Job::Receive(packet) => self.deliver(packet),
            Job::Send(packet) => self.offer(packet),
            Job::Write { flow, side, bytes } => {
                let s = &mut self.flows[flow].sides[side];
                s.writing = false;
                let mut out = std::mem::take(&mut self.spare_out);
                if let (Some(tx), Some(writer)) = (&mut s.tx, &mut s.writer) {
                    tx.write(now, bytes);
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
    pub(super) fn send_packet(&mut self, host: usize, packet: Packet) {
        let packet = self.packets.insert(packet);
        match &mut self.cpus[host] {
            Some(cpu) => {
                cpu.transmit(Job::Send(packet));
                self.touched.push(host);
            }
            None => self.offer(packet),
        }
    }

    /// A spare buffer for the segments a side sends.
    pub(super) fn out_buffer(&mut self) -> Vec<Segment> {
        std::mem::take(&mut self.spare_out)
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
}
