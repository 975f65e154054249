//! ATM at cell level (docs/models/atm.md): AAL5 segmentation where a flow's packets enter
//! an ATM link, cells crossing cell links and switch output ports one by one, and
//! reassembly where they leave the last ATM link of a run. The simulator hands this module
//! packets and link events; everything that knows about cells lives here.
//!
//! Cells on a link direction reach its far end in the order they left, so each direction
//! keeps its cells in flight in a FIFO, and only each FIFO's head cell has an entry in the
//! simulator's event queue: a wake-up ([`AtmNet::take_wakeups`]) naming the wire.
//!
//! ABR (ATM Forum TM 4.0, [`abr`]) plugs in at four points: [`AtmNet::send`] hands an ABR
//! VC's frames to its source, whose wake-ups (one per cell, at 1/ACR) share the wires'
//! schedule; [`AtmNet::forward`] lets a switch port's feedback see each cell it is
//! offered; a backward RM cell crossing a switch meets the port on its VC's forward path;
//! and at the end of the ATM run [`AtmNet::arrive`] hands RM cells and EFCI to the end
//! system there.

pub mod aal5;
pub mod abr;
pub mod bound;
pub mod cell_link;
pub mod port;
pub mod sar;
pub mod switch;

use std::collections::VecDeque;

use crate::engine::{Nanos, RngStream};
use crate::net::Packet;
use crate::plan::{Plan, TCP_IP_HEADER_BYTES};
use crate::result::{AbrAcrSeries, AtmPortResult, AtmQueueSeries, AtmSummary, LinkResult};
use abr::{AbrNet, Feedback, Out};
use cell_link::{CellErrors, SlotClock};
use port::{Fate, Port};
use sar::{Cell, Frames, Payload};
use switch::Buffer;

/// Channel 2i is link i's forward direction, 2i + 1 its reverse.
fn direction(channel: usize) -> &'static str {
    if channel.is_multiple_of(2) {
        "forward"
    } else {
        "reverse"
    }
}

/// A VC: one direction of a flow, over its route.
struct Vc {
    route: Vec<usize>,
    /// The hop where the VC's cells enter ATM: the first ATM channel of its route.
    entry: u32,
    /// Per hop: the node at the end of that channel is an ATM switch, which passes the
    /// cell on to the next channel; otherwise the frame is reassembled there.
    switched: Vec<bool>,
    /// Per hop: the reassembly at the end of that channel, where there is one.
    reassembly: Vec<aal5::Reassembly>,
}

pub struct AtmNet {
    /// Per channel: its output port, if the link carries cells.
    ports: Vec<Option<Port>>,
    /// Per channel: the cells on the wire, with the time each reaches the far end.
    wires: Vec<VecDeque<(Nanos, Cell)>>,
    /// Wake-ups asked for since the simulator last took them, in the order asked: below
    /// `wires.len()` a wire whose head cell arrives, above it the ABR source of VC
    /// (entry − `wires.len()`).
    wakeups: Vec<(Nanos, usize)>,
    /// Per channel: the encapsulation bytes in front of each datagram.
    encapsulation: Vec<u64>,
    vcs: Vec<Vc>,
    frames: Frames,
    /// When the ports' queues were sampled.
    sampled_at: Vec<Nanos>,
    /// Cells segmented at the sending ends.
    cells_sent: u64,
    /// Cells that reached reassembly, and those of them in frames that passed.
    cells_reassembled: u64,
    cells_in_frames: u64,
    /// The goodput bound of the efficiency, if every flow crosses an ATM link.
    max_goodput_bps: Option<f64>,
    /// ABR sources and switch feedback, if some switch gives feedback.
    abr: Option<AbrNet>,
}

impl AtmNet {
    /// The ATM part of `plan`'s network, or None if no link carries cells. `routes` are
    /// each flow's channels there and back.
    pub fn new(plan: &Plan, routes: &[[Vec<usize>; 2]]) -> Option<Self> {
        let channels: Vec<_> = plan
            .links
            .iter()
            .flat_map(|l| [&l.forward, &l.reverse])
            .collect();
        if channels.iter().all(|c| c.atm.is_none()) {
            return None;
        }
        let nodes = plan.link_nodes();
        // The node each channel leaves and the node it reaches.
        let ends = |ch: usize| {
            let [a, b] = nodes[ch / 2];
            if ch.is_multiple_of(2) {
                (a, b)
            } else {
                (b, a)
            }
        };
        let switch_at = |node: usize| {
            node.checked_sub(plan.hosts.len())
                .and_then(|r| plan.routers.get(r))
                .and_then(|r| r.switch.as_ref())
        };
        let vc_count = routes.len() * 2;
        let ports = channels
            .iter()
            .enumerate()
            .map(|(ch, plan_ch)| {
                let atm = plan_ch.atm.as_ref()?;
                let dir = direction(ch);
                let rng = RngStream::new(plan.seed, &format!("links.{}.{dir}.cells", ch / 2));
                let clock = SlotClock::new(plan_ch.rate_bps, u64::from(atm.slot_octets));
                let buffer = switch_at(ends(ch).0).map(|s| Buffer::new(s, vc_count));
                Some(Port::new(
                    clock,
                    plan_ch.delay_ns,
                    CellErrors::new(plan_ch.error, rng),
                    buffer,
                ))
            })
            .collect();
        let encapsulation = channels
            .iter()
            .map(|c| c.atm.map_or(0, |a| u64::from(a.encapsulation_bytes)))
            .collect();
        let vcs = routes
            .iter()
            .flat_map(|pair| pair.iter())
            .map(|route| Vc {
                entry: route
                    .iter()
                    .position(|&ch| channels[ch].atm.is_some())
                    .unwrap_or(0) as u32,
                switched: route
                    .iter()
                    .map(|&ch| switch_at(ends(ch).1).is_some())
                    .collect(),
                reassembly: vec![aal5::Reassembly::default(); route.len()],
                route: route.clone(),
            })
            .collect();
        let mut net = Self {
            wires: vec![VecDeque::new(); channels.len()],
            wakeups: Vec::new(),
            ports,
            encapsulation,
            vcs,
            frames: Frames::default(),
            sampled_at: Vec::new(),
            cells_sent: 0,
            cells_reassembled: 0,
            cells_in_frames: 0,
            max_goodput_bps: None,
            abr: None,
        };
        net.max_goodput_bps = net.goodput_bound(plan, routes);
        let feedback = (0..channels.len())
            .map(|ch| {
                let cells_s = net.ports[ch].as_ref()?.clock().cells_per_s();
                let vcs = net.vcs.iter().filter(|vc| vc.route.contains(&ch)).count();
                switch_at(ends(ch).0)?.feedback.port(cells_s, vcs)
            })
            .collect();
        net.abr = net.abr_net(plan, routes, feedback);
        Some(net)
    }

    pub fn carries(&self, channel: usize) -> bool {
        self.ports[channel].is_some()
    }

    /// The wake-ups asked for since the last call, in the order asked, each to be handed
    /// back to [`AtmNet::handle`] when it falls due.
    pub fn take_wakeups(&mut self) -> std::vec::Drain<'_, (Nanos, usize)> {
        self.wakeups.drain(..)
    }

    fn schedule(&mut self, at: Nanos, entry: usize) {
        self.wakeups.push((at, entry));
    }

    fn schedule_source(&mut self, at: Nanos, vc: u32) {
        self.schedule(at, self.wires.len() + vc as usize);
    }

    /// The ABR part, if some switch gives ABR feedback: feedback state for those switches'
    /// ports, and an end system for each VC whose connection crosses one, with the cell
    /// rate of the channel where the VC enters ATM.
    fn abr_net(
        &self,
        plan: &Plan,
        routes: &[[Vec<usize>; 2]],
        feedback: Vec<Option<Feedback>>,
    ) -> Option<AbrNet> {
        let params = plan.abr.as_ref()?;
        if feedback.iter().all(Option::is_none) {
            return None;
        }
        let steered = |route: &[usize]| route.iter().any(|&ch| feedback[ch].is_some());
        let lines: Vec<Option<f64>> = routes
            .iter()
            .enumerate()
            .flat_map(|(f, pair)| {
                let abr = steered(&pair[0]) || steered(&pair[1]);
                (0..2).map(move |r| (abr, f * 2 + r))
            })
            .map(|(abr, vc)| {
                let vc = &self.vcs[vc];
                let port = self.ports[vc.route[vc.entry as usize]].as_ref();
                port.filter(|_| abr).map(|p| p.clock().cells_per_s())
            })
            .collect();
        Some(AbrNet::new(params, &lines, feedback))
    }

    /// Segments `packet`, which enters ATM channel `route[packet.hop]` at `now`.
    pub fn send(&mut self, now: Nanos, packet: Packet) {
        let vc = (packet.flow * 2 + packet.route) as u32;
        let hop = packet.hop as u32;
        let channel = self.vcs[vc as usize].route[packet.hop];
        let sdu = packet.ip_bytes() + self.encapsulation[channel];
        let (frame, cells) = self.frames.insert(packet, sdu);
        self.cells_sent += cells;
        if let Some(abr) = self.abr.as_mut().filter(|a| a.is_abr(vc)) {
            // The frame waits in the source's queue; its cells leave at ACR.
            if let Some(at) = abr.enqueue(now, vc, frame, cells) {
                self.schedule_source(at, vc);
            }
            return;
        }
        // UBR: every cell goes to the line now, behind whatever the sending end queued.
        for i in 0..cells {
            let payload = Payload::Frame {
                frame,
                eom: i + 1 == cells,
            };
            self.forward(now, Cell::new(vc, hop, payload));
        }
    }

    /// A wake-up from [`AtmNet::take_wakeups`] falls due at `now`: a wire's head cell
    /// arrives (a frame that passes reassembly comes out as its packet), or an ABR source
    /// may send.
    pub fn handle(&mut self, now: Nanos, entry: usize) -> Option<Packet> {
        match entry.checked_sub(self.wires.len()) {
            None => self.arrive(now, entry),
            Some(vc) => {
                self.source(now, vc as u32);
                None
            }
        }
    }

    /// ABR VC `vc`'s source wakes: it sends the cell that is due and asks for the next
    /// wake-up.
    fn source(&mut self, now: Nanos, vc: u32) {
        let abr = self.abr.as_mut().expect("only ABR VCs have sources");
        let (out, next) = abr.wake(now, vc);
        if let Some(at) = next {
            self.schedule_source(at, vc);
        }
        let payload = match out {
            None => return,
            Some(Out::Data { frame, eom }) => Payload::Frame { frame, eom },
            Some(Out::Frm { rm, .. }) | Some(Out::Brm(rm)) => Payload::Rm(rm),
        };
        let hop = self.vcs[vc as usize].entry;
        self.forward(now, Cell::new(vc, hop, payload));
    }

    /// Offers `cell` to the output port of the channel at its hop; a switch port's ABR
    /// feedback sees it first.
    fn forward(&mut self, now: Nanos, mut cell: Cell) {
        let vc = &self.vcs[cell.vc as usize];
        let channel = vc.route[cell.hop as usize];
        let port = self.ports[channel]
            .as_mut()
            .expect("a cell only travels ATM channels");
        if let Some(abr) = &mut self.abr {
            let rm = match &mut cell.payload {
                Payload::Rm(rm) => Some(rm),
                Payload::Frame { .. } => None,
            };
            abr.offer(now, channel, cell.vc, port.queued(now), &mut cell.efci, rm);
        }
        let fate = match cell.payload {
            Payload::Frame { eom, .. } => port.offer(now, cell.vc as usize, eom),
            Payload::Rm(_) => port.offer_rm(now),
        };
        match (fate, cell.payload) {
            (Fate::Arrives { at, errored }, _) => {
                cell.errored |= errored;
                let wire = &mut self.wires[channel];
                let was_idle = wire.is_empty();
                wire.push_back((at, cell));
                if was_idle {
                    self.schedule(at, channel);
                }
            }
            (Fate::Gone, Payload::Frame { frame, .. }) => {
                self.frames.release(frame, false);
            }
            (Fate::Gone, Payload::Rm(_)) => {}
        }
    }

    /// The head cell of `channel`'s wire reached the far end at `now`: a switch passes it
    /// on (a backward RM cell meets the port on its VC's forward path first); at the end
    /// of the ATM run an RM cell goes to the end system there, and a frame's cell is
    /// reassembled: a frame that passes comes out as its packet, on the channel it arrived
    /// by.
    fn arrive(&mut self, now: Nanos, channel: usize) -> Option<Packet> {
        let wire = &mut self.wires[channel];
        let (at, mut cell) = wire
            .pop_front()
            .expect("a wire is due only while it has a head cell");
        debug_assert_eq!(at, now);
        if let Some(&(next, _)) = wire.front() {
            self.schedule(next, channel);
        }
        let vc = &mut self.vcs[cell.vc as usize];
        let hop = cell.hop as usize;
        if vc.switched[hop] {
            if let (Some(abr), Payload::Rm(rm)) = (&mut self.abr, &mut cell.payload) {
                if rm.dir == abr::Dir::Backward {
                    // The port back the way the cell came is on the forward VC's path.
                    let forward = channel ^ 1;
                    let queued = self.ports[forward].as_ref().map_or(0, |p| p.queued(now));
                    abr.backward(now, forward, cell.vc ^ 1, queued, rm);
                }
            }
            cell.hop += 1;
            self.forward(now, cell);
            return None;
        }
        let abr = self.abr.as_mut().filter(|a| a.is_abr(cell.vc));
        let (frame, eom) = match cell.payload {
            Payload::Rm(rm) => {
                let abr = abr.expect("RM cells travel ABR VCs only");
                if let Some(at) = abr.arrive(now, cell.vc, false, Some(rm)) {
                    self.schedule_source(at, cell.vc ^ 1);
                }
                return None;
            }
            Payload::Frame { frame, eom } => (frame, eom),
        };
        if let Some(abr) = abr {
            abr.arrive(now, cell.vc, cell.efci, None);
        }
        let expected = self.frames.cells(frame);
        let passes = vc.reassembly[hop].push(frame, cell.errored, eom, expected);
        self.cells_reassembled += 1;
        let mut packet = self.frames.release(frame, passes == Some(true))?;
        self.cells_in_frames += expected;
        packet.hop = hop;
        Some(packet)
    }

    /// Records each port's queue (the trace interval's sample).
    pub fn sample(&mut self, now: Nanos) {
        self.sampled_at.push(now);
        if let Some(abr) = &mut self.abr {
            abr.sample(now);
        }
        for port in self.ports.iter_mut().flatten() {
            let queued = port.queued(now);
            port.samples.push(queued);
        }
    }

    /// The result's row for an ATM channel, counted in cells: packets are cells, bytes
    /// are cell-slot octets, queue drops are the switch's discards and error drops the
    /// receiver's.
    pub fn link_row(&self, channel: usize, stop: Nanos) -> Option<LinkResult> {
        let port = self.ports[channel].as_ref()?;
        let s = &port.stats;
        Some(LinkResult {
            link: channel / 2,
            direction: direction(channel),
            packets: s.cells,
            bytes: s.cells * port.slot_octets(),
            drops_queue: s.drops_full + s.drops_epd + s.drops_ppd,
            drops_error: s.lost,
            max_queue_bytes: s.max_queue_cells * aal5::CELL_BYTES,
            utilisation: port.busy_ns(stop) as f64 / stop.max(1) as f64,
            retries: None,
            collisions: None,
        })
    }

    fn goodput_bound(&self, plan: &Plan, routes: &[[Vec<usize>; 2]]) -> Option<f64> {
        let flows = &plan.flows;
        // A flow split by a PEP runs as several connections; its end-to-end segments are
        // not one VC's, so no bound is given.
        if flows.len() != routes.len() {
            return None;
        }
        let mut uses = Vec::with_capacity(flows.len());
        for (flow, [route, _]) in flows.iter().zip(routes) {
            let (src, dst) = (&plan.hosts[flow.src].tcp, &plan.hosts[flow.dst].tcp);
            // Timestamps come out of the payload; the datagram stays MSS + 40 (RFC 6691 §2).
            let options = if src.timestamps && dst.timestamps {
                12
            } else {
                0
            };
            let mss = u64::from(src.mss.min(dst.mss));
            let payload_bits = ((mss - options) * 8) as f64;
            let datagram = mss + u64::from(TCP_IP_HEADER_BYTES);
            let used: Vec<bound::Use> = route
                .iter()
                .filter(|&&ch| self.carries(ch))
                .map(|&ch| bound::Use {
                    channel: ch,
                    cells_per_bit: aal5::cells(datagram + self.encapsulation[ch]) as f64
                        / payload_bits,
                })
                .collect();
            if used.is_empty() {
                return None;
            }
            uses.push(used);
        }
        let capacity: Vec<f64> = self
            .ports
            .iter()
            .map(|p| p.as_ref().map_or(0.0, |p| p.clock().cells_per_s()))
            .collect();
        Some(bound::max_goodput_bps(&uses, &capacity))
    }

    /// The run's ATM summary; `goodput_bps` is its total TCP goodput.
    pub fn summary(&self, goodput_bps: f64) -> AtmSummary {
        let ports = || self.ports.iter().flatten().map(|p| &p.stats);
        let dropped: u64 = ports()
            .map(|s| s.drops_full + s.drops_epd + s.drops_ppd)
            .sum();
        let lost: u64 = ports().map(|s| s.lost).sum();
        let rm_cells = self.abr.as_ref().map_or(0, AbrNet::rm_cells);
        AtmSummary {
            efficiency: self.max_goodput_bps.map(|max| goodput_bps / max),
            max_goodput_bps: self.max_goodput_bps,
            cells_sent: self.cells_sent,
            rm_cells,
            cells_dropped: dropped,
            cells_lost: lost,
            cell_loss_ratio: (dropped + lost) as f64 / (self.cells_sent + rm_cells).max(1) as f64,
            cells_dead: self.cells_reassembled - self.cells_in_frames,
            frames_delivered: self.frames.delivered,
            frames_lost: self.frames.lost,
        }
    }

    /// The ABR VCs' ACR samples (empty without ABR).
    pub fn take_acr(&mut self) -> AbrAcrSeries {
        self.abr.as_mut().map(AbrNet::take_acr).unwrap_or_default()
    }

    /// One row per ATM output port, and their queue samples.
    pub fn ports(&self, stop: Nanos, plan: &Plan) -> (Vec<AtmPortResult>, AtmQueueSeries) {
        let nodes = plan.link_nodes();
        let names = plan.node_names();
        let mut rows = Vec::new();
        let mut queue = AtmQueueSeries::default();
        for (ch, port) in self.ports.iter().enumerate() {
            let Some(p) = port else { continue };
            let node = nodes[ch / 2][ch % 2];
            let direction = direction(ch);
            rows.push(AtmPortResult {
                link: ch / 2,
                direction,
                node: names[node].clone(),
                cells: p.stats.cells,
                drops_full: p.stats.drops_full,
                drops_epd: p.stats.drops_epd,
                drops_ppd: p.stats.drops_ppd,
                cells_lost: p.stats.lost,
                cells_errored: p.stats.errored,
                max_queue_cells: p.stats.max_queue_cells,
                utilisation: p.busy_ns(stop) as f64 / stop.max(1) as f64,
            });
            for (&t, &cells) in self.sampled_at.iter().zip(&p.samples) {
                queue.t_s.push(t as f64 / crate::engine::NS_PER_S as f64);
                queue.link.push(ch / 2);
                queue.direction.push(direction);
                queue.cells.push(cells);
            }
        }
        (rows, queue)
    }
}
