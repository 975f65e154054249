//! ATM at cell level (docs/models/atm.md): AAL5 segmentation where a flow's packets enter
//! an ATM link, cells crossing cell links and switch output ports one by one, and
//! reassembly where they leave the last ATM link of a run. The simulator hands this module
//! packets and link events; everything that knows about cells lives here.
//!
//! Cells on a link direction reach its far end in the order they left, so each direction
//! keeps its cells in flight in a FIFO, and only each FIFO's head cell waits in a schedule
//! of small entries of its own ([`AtmNet::next_due`]), apart from the simulator's event
//! queue, whose entries are as large as a packet.
//!
//! Hooks for ABR (ATM Forum TM 4.0), which plugs in here:
//! - the source: [`AtmNet::send`] segments a frame and passes each cell to
//!   [`AtmNet::emit`], the per-VC source scheduler. Today (UBR) it puts every cell on the
//!   line at once, back to back at line rate; an ABR VC queues them and emits at ACR, with
//!   a forward RM cell every Nrm cells. Its pacing timers belong in the ATM links' own
//!   schedule (`due`, which holds wire heads today) rather than the simulator's queue.
//! - the switches: [`AtmNet::forward`] passes each cell to its next output port
//!   ([`port::Port::offer`]), which decides from the cells waiting; a cell's slot, hence
//!   its departure, is known as it is accepted. EFCI marking and ERICA's per-port
//!   measurements belong there, and backward RM cells pass the same point on the way back.
//! - the destination: reassembly in [`AtmNet::arrive`] is where an RM cell turns round.

pub mod aal5;
pub mod bound;
pub mod cell_link;
pub mod port;
pub mod sar;
pub mod switch;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::engine::{Nanos, RngStream};
use crate::net::Packet;
use crate::plan::{Plan, TCP_IP_HEADER_BYTES};
use crate::result::{AtmPortResult, AtmQueueSeries, AtmSummary, LinkResult};
use cell_link::{CellErrors, SlotClock};
use port::{Fate, Port};
use sar::{Cell, Frames};
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
    /// The wires with cells, by when their head cell arrives (ties: first scheduled first).
    due: BinaryHeap<Reverse<(Nanos, u64, usize)>>,
    scheduled: u64,
    /// Head-cell arrivals handled, for the run's count of events.
    pub arrivals: u64,
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
            due: BinaryHeap::new(),
            scheduled: 0,
            arrivals: 0,
            ports,
            encapsulation,
            vcs,
            frames: Frames::default(),
            sampled_at: Vec::new(),
            cells_sent: 0,
            cells_reassembled: 0,
            cells_in_frames: 0,
            max_goodput_bps: None,
        };
        net.max_goodput_bps = net.goodput_bound(plan, routes);
        Some(net)
    }

    pub fn carries(&self, channel: usize) -> bool {
        self.ports[channel].is_some()
    }

    /// When the next cell reaches the far end of its wire.
    pub fn next_due(&self) -> Option<Nanos> {
        self.due.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The wire whose head cell arrives next ([`AtmNet::next_due`]), for [`AtmNet::arrive`].
    pub fn pop_due(&mut self) -> Option<usize> {
        self.due.pop().map(|Reverse((_, _, channel))| channel)
    }

    fn schedule(&mut self, at: Nanos, channel: usize) {
        self.due.push(Reverse((at, self.scheduled, channel)));
        self.scheduled += 1;
    }

    /// Segments `packet`, which enters ATM channel `route[packet.hop]` at `now`.
    pub fn send(&mut self, now: Nanos, packet: Packet) {
        let vc = (packet.flow * 2 + packet.route) as u32;
        let hop = packet.hop as u32;
        let channel = self.vcs[vc as usize].route[packet.hop];
        let sdu = packet.ip_bytes() + self.encapsulation[channel];
        let (frame, cells) = self.frames.insert(packet, sdu);
        self.cells_sent += cells;
        for i in 0..cells {
            let cell = Cell {
                vc,
                hop,
                frame,
                eom: i + 1 == cells,
                errored: false,
            };
            self.emit(now, cell);
        }
    }

    /// The per-VC source scheduler. UBR: the cell goes to the line now, behind whatever the
    /// sending end has queued there.
    fn emit(&mut self, now: Nanos, cell: Cell) {
        self.forward(now, cell);
    }

    /// Offers `cell` to the output port of the channel at its hop.
    fn forward(&mut self, now: Nanos, mut cell: Cell) {
        let vc = &self.vcs[cell.vc as usize];
        let channel = vc.route[cell.hop as usize];
        let port = self.ports[channel]
            .as_mut()
            .expect("a cell only travels ATM channels");
        match port.offer(now, cell.vc as usize, cell.eom) {
            Fate::Arrives { at, errored } => {
                cell.errored |= errored;
                let wire = &mut self.wires[channel];
                let was_idle = wire.is_empty();
                wire.push_back((at, cell));
                if was_idle {
                    self.schedule(at, channel);
                }
            }
            Fate::Gone => {
                self.frames.release(cell.frame, false);
            }
        }
    }

    /// The head cell of `channel`'s wire reached the far end at `now`: a switch passes it
    /// on; at the end of the ATM run it is reassembled, and a frame that passes comes out as
    /// its packet, on the channel it arrived by.
    pub fn arrive(&mut self, now: Nanos, channel: usize) -> Option<Packet> {
        self.arrivals += 1;
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
            cell.hop += 1;
            self.forward(now, cell);
            return None;
        }
        let expected = self.frames.cells(cell.frame);
        let passes = vc.reassembly[hop].push(cell.frame, cell.errored, cell.eom, expected);
        self.cells_reassembled += 1;
        let mut packet = self.frames.release(cell.frame, passes == Some(true))?;
        self.cells_in_frames += expected;
        packet.hop = hop;
        Some(packet)
    }

    /// Records each port's queue (the trace interval's sample).
    pub fn sample(&mut self, now: Nanos) {
        self.sampled_at.push(now);
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
        let flows = plan.resolved_flows();
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
        AtmSummary {
            efficiency: self.max_goodput_bps.map(|max| goodput_bps / max),
            max_goodput_bps: self.max_goodput_bps,
            cells_sent: self.cells_sent,
            cells_dropped: dropped,
            cells_lost: lost,
            cell_loss_ratio: (dropped + lost) as f64 / self.cells_sent.max(1) as f64,
            cells_dead: self.cells_reassembled - self.cells_in_frames,
            frames_delivered: self.frames.delivered,
            frames_lost: self.frames.lost,
        }
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
