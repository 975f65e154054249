//! Packet captures (docs/pcap.md): which packets a capture records, and the addresses,
//! ports and initial sequence numbers under which the simulator's segments appear in it.
//!
//! A link capture sits at the sending end of a link direction and sees each frame as its
//! first bit goes onto the wire. Packets dropped by the queue in front of the link never get
//! there; packets the error model destroys were sent, so they are in the capture.
//!
//! A host capture sees what `tcpdump -i` on the host's interface sees: each packet the host
//! sends as it goes onto the wire of its first link, and each packet it receives as the host
//! takes it in, after its last link (and, with a CPU model, after the NIC ring: a packet
//! dropped there is not in it).

use std::net::Ipv4Addr;

use super::{Datagram, Endpoint, Packet, PcapFile, INITIAL_TTL};
use crate::engine::{Nanos, RngStream};
use crate::plan::{PcapPlan, TracePlan};
use crate::result::Capture;
use crate::tcp::Segment;

/// The receiving application's port: the discard service (RFC 863), which is what a bulk
/// receiver is, and a port where Wireshark reads the zero payload as plain data.
const RECEIVER_PORT: u16 = 9;
/// Sending ports start at the dynamic range (RFC 6335 §6), one per flow.
const FIRST_SENDER_PORT: u16 = 49152;

/// Host i has the test address 10.0.0.0 + i + 1. The packets never leave the simulator.
fn host_addr(host: usize) -> Ipv4Addr {
    Ipv4Addr::from(0x0a00_0000 + host as u32 + 1)
}

pub struct Taps {
    /// Each capture: what it records, its name and its file.
    taps: Vec<(PcapPlan, String, PcapFile)>,
    /// Per flow: the data sender's end, then the data receiver's.
    flows: Vec<[Endpoint; 2]>,
    /// Per flow: the data sender's node index, then the data receiver's.
    nodes: Vec<[usize; 2]>,
}

impl Taps {
    /// The captures `trace` asks for; `flows` lists each connection's sending and receiving
    /// node indices (hosts first, so that a host's index is its node's); `hosts` are the
    /// hosts' names.
    pub fn new(
        trace: Option<&TracePlan>,
        seed: u64,
        flows: &[(usize, usize)],
        hosts: &[&str],
    ) -> Self {
        let taps: Vec<_> = trace.map_or_else(Vec::new, |t| {
            t.pcap
                .iter()
                .map(|&p| (p, p.name(|h| hosts[h]), PcapFile::new(t.snaplen)))
                .collect()
        });
        let nodes = flows.iter().map(|&(s, r)| [s, r]).collect();
        let flows = flows
            .iter()
            .enumerate()
            .map(|(f, &(sender, receiver))| {
                // RFC 9293 §3.4.1 takes ISNs from a clock so that old segments cannot
                // pass for new ones; here they only need to look like real ones, so each
                // flow draws its pair from a stream of its own.
                let mut rng = RngStream::new(seed, &format!("flows.{f}.isn"));
                let mut isn = || (rng.uniform() * 4_294_967_296.0) as u32;
                [
                    Endpoint {
                        addr: host_addr(sender),
                        port: FIRST_SENDER_PORT + f as u16,
                        isn: isn(),
                    },
                    Endpoint {
                        addr: host_addr(receiver),
                        port: RECEIVER_PORT,
                        isn: isn(),
                    },
                ]
            })
            .collect();
        Self { taps, flows, nodes }
    }

    /// Whether any capture is on: without one a frame need not be shown at all.
    pub fn any(&self) -> bool {
        !self.taps.is_empty()
    }

    /// A frame started onto the wire of `link` in one direction at `now`: link captures
    /// of that direction record it, and on the first link of its route, its sending host's.
    pub fn on_wire(&mut self, now: Nanos, link: usize, forward: bool, packet: &Packet) {
        let sent_by = self.nodes[packet.flow][usize::from(!from_sender(packet))];
        self.record(now, packet, |plan| match plan {
            PcapPlan::Link(c) => c.covers(link, forward),
            PcapPlan::Host(c) => packet.hop == 0 && c.host == sent_by,
        });
    }

    /// A packet reached the host at the end of its route, which takes it in at `now`:
    /// that host's captures record it.
    pub fn on_arrival(&mut self, now: Nanos, packet: &Packet) {
        if !self.any() {
            return;
        }
        let received_by = self.nodes[packet.flow][usize::from(from_sender(packet))];
        self.record(
            now,
            packet,
            |plan| matches!(plan, PcapPlan::Host(c) if c.host == received_by),
        );
    }

    fn record(&mut self, now: Nanos, packet: &Packet, records: impl Fn(&PcapPlan) -> bool) {
        let mut datagram = None;
        for (plan, _, file) in &mut self.taps {
            if !records(plan) {
                continue;
            }
            let d = datagram.get_or_insert_with(|| {
                let [sender, receiver] = &self.flows[packet.flow];
                let (src, dst) = if from_sender(packet) {
                    (sender, receiver)
                } else {
                    (receiver, sender)
                };
                // Each router on the way has decremented the TTL (RFC 791 §3.2), and a
                // packet on its route's hop h has passed h routers.
                let ttl = u8::try_from(packet.hop).map_or(0, |h| INITIAL_TTL.saturating_sub(h));
                Datagram::new(&on_the_wire(packet), src, dst, ttl)
            });
            file.record(now, d);
        }
    }

    pub fn finish(self) -> Vec<Capture> {
        self.taps
            .into_iter()
            .map(|(_, name, file)| Capture {
                name,
                pcap: file.into_bytes(),
            })
            .collect()
    }
}

/// Whether the packet comes from its flow's data sender (route 0) rather than its receiver.
fn from_sender(packet: &Packet) -> bool {
    packet.route == 0
}

/// The segment as its header goes on the wire: a piggybacked acknowledgement is part of
/// the data segment's header.
fn on_the_wire(packet: &Packet) -> Segment {
    match &packet.piggyback {
        None => packet.segment,
        Some(ack) => Segment {
            ack: ack.ack,
            has_ack: true,
            window: ack.window,
            sack: ack.sack,
            sack_len: ack.sack_len,
            ..packet.segment
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{CaptureDirection, HostCapture, LinkCapture};

    fn taps(pcap: &[PcapPlan]) -> Taps {
        let trace = TracePlan {
            pcap: pcap.to_vec(),
            snaplen: 65_535,
        };
        Taps::new(Some(&trace), 1, &[(0, 2)], &["client", "other", "server"])
    }

    /// A packet of flow 0 on `route` (0 from the data sender, 1 from the receiver).
    fn packet(route: usize, hop: usize, len: u32) -> Packet {
        Packet {
            flow: 0,
            route,
            hop,
            segment: Segment::data(0, len, 0, 100),
            piggyback: None,
            udp: None,
        }
    }

    /// (ttl, source address, destination address, total length) of each record.
    fn records(capture: &Capture) -> Vec<(u8, [u8; 4], [u8; 4], usize)> {
        let mut out = Vec::new();
        let mut rest = &capture.pcap[24..];
        while !rest.is_empty() {
            let kept = u32::from_le_bytes(rest[8..12].try_into().unwrap()) as usize;
            let ip = &rest[16..16 + kept];
            let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
            out.push((
                ip[8],
                ip[12..16].try_into().unwrap(),
                ip[16..20].try_into().unwrap(),
                total,
            ));
            rest = &rest[16 + kept..];
        }
        out
    }

    #[test]
    fn a_link_capture_records_both_directions_and_a_named_direction_only_its_own() {
        let both = LinkCapture {
            link: 1,
            direction: CaptureDirection::Both,
        };
        let reverse = LinkCapture {
            direction: CaptureDirection::Reverse,
            ..both
        };
        let mut t = taps(&[PcapPlan::Link(both), PcapPlan::Link(reverse)]);
        t.on_wire(10, 1, true, &packet(0, 1, 1000));
        t.on_wire(20, 1, false, &packet(1, 0, 0));
        t.on_wire(30, 0, true, &packet(0, 0, 1000)); // another link
        let captures = t.finish();
        assert_eq!(captures[0].name, "links.1");
        assert_eq!(captures[1].name, "links.1.reverse");
        assert_eq!(
            records(&captures[0]),
            [
                (63, [10, 0, 0, 1], [10, 0, 0, 3], 1040),
                (64, [10, 0, 0, 3], [10, 0, 0, 1], 40),
            ]
        );
        assert_eq!(
            records(&captures[1]),
            [(64, [10, 0, 0, 3], [10, 0, 0, 1], 40)]
        );
    }

    #[test]
    fn a_host_capture_records_what_it_sends_on_its_first_link_and_what_it_takes_in() {
        // Flow 0 runs from host 0 over link 0, a router and link 1 to host 2.
        let mut t = taps(&[
            PcapPlan::Host(HostCapture { host: 0 }),
            PcapPlan::Host(HostCapture { host: 2 }),
        ]);
        t.on_wire(10, 0, true, &packet(0, 0, 1000)); // leaves host 0
        t.on_wire(20, 1, true, &packet(0, 1, 1000)); // leaves the router
        t.on_arrival(30, &packet(0, 1, 1000)); // reaches host 2
        t.on_wire(40, 1, false, &packet(1, 0, 0)); // host 2's ACK leaves
        t.on_wire(50, 0, false, &packet(1, 1, 0)); // leaves the router
        t.on_arrival(60, &packet(1, 1, 0)); // reaches host 0
        let captures = t.finish();
        assert_eq!(captures[0].name, "client");
        assert_eq!(captures[1].name, "server");
        let times = |c: &Capture| {
            let mut out = Vec::new();
            let mut rest = &c.pcap[24..];
            while !rest.is_empty() {
                out.push(u32::from_le_bytes(rest[4..8].try_into().unwrap()));
                let kept = u32::from_le_bytes(rest[8..12].try_into().unwrap()) as usize;
                rest = &rest[16 + kept..];
            }
            out
        };
        // Nanosecond pcap: the second field is the nanoseconds.
        assert_eq!(times(&captures[0]), [10, 60]);
        assert_eq!(times(&captures[1]), [30, 40]);
        assert_eq!(
            records(&captures[0]),
            [
                (64, [10, 0, 0, 1], [10, 0, 0, 3], 1040),
                (63, [10, 0, 0, 3], [10, 0, 0, 1], 40),
            ]
        );
    }

    #[test]
    fn isns_differ_per_direction_and_follow_the_seed() {
        let ends = |seed| Taps::new(None, seed, &[(0, 1)], &[]).flows[0];
        let [a, b] = ends(1);
        assert_ne!(a.isn, b.isn);
        assert_eq!(ends(1), [a, b]);
        assert_ne!(ends(2)[0].isn, a.isn);
        assert_eq!((a.port, b.port), (49152, 9));
    }
}
