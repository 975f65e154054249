//! Packet captures on link directions (docs/pcap.md): which directions a capture records,
//! and the addresses, ports and initial sequence numbers under which the simulator's
//! segments appear in it.
//!
//! A capture sits at the sending end of a link direction and sees each frame as its first
//! bit goes onto the wire. Packets dropped by the queue in front of the link never get
//! there; packets the error model destroys were sent, so they are in the capture.

use std::net::Ipv4Addr;

use super::{Datagram, Endpoint, Packet, PcapFile, INITIAL_TTL};
use crate::engine::{Nanos, RngStream};
use crate::plan::{PcapPlan, TracePlan};
use crate::result::Capture;

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
    taps: Vec<(PcapPlan, PcapFile)>,
    /// Per flow: the data sender's end, then the data receiver's.
    flows: Vec<[Endpoint; 2]>,
}

impl Taps {
    /// The captures `trace` asks for; `flows` lists each connection's sending and receiving
    /// host indices.
    pub fn new(trace: Option<&TracePlan>, seed: u64, flows: &[(usize, usize)]) -> Self {
        let taps: Vec<_> = trace.map_or_else(Vec::new, |t| {
            t.pcap
                .iter()
                .map(|&p| (p, PcapFile::new(t.snaplen)))
                .collect()
        });
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
        Self { taps, flows }
    }

    /// A frame started onto the wire of `link` in one direction at `now`; `from_sender`
    /// says whether its flow's data sender sent it (rather than the receiver).
    pub fn on_wire(
        &mut self,
        now: Nanos,
        link: usize,
        forward: bool,
        packet: &Packet,
        from_sender: bool,
    ) {
        let mut datagram = None;
        for (plan, file) in &mut self.taps {
            if !plan.covers(link, forward) {
                continue;
            }
            let d = datagram.get_or_insert_with(|| {
                let [sender, receiver] = &self.flows[packet.flow];
                let (src, dst) = if from_sender {
                    (sender, receiver)
                } else {
                    (receiver, sender)
                };
                // Each router on the way has decremented the TTL (RFC 791 §3.2), and a
                // packet on its route's hop h has passed h routers.
                let ttl = u8::try_from(packet.hop).map_or(0, |h| INITIAL_TTL.saturating_sub(h));
                Datagram::new(&packet.segment, src, dst, ttl)
            });
            file.record(now, d);
        }
    }

    pub fn finish(self) -> Vec<Capture> {
        self.taps
            .into_iter()
            .map(|(plan, file)| Capture {
                name: plan.name(),
                pcap: file.into_bytes(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::CaptureDirection;
    use crate::tcp::Segment;

    fn taps(pcap: &[PcapPlan]) -> Taps {
        let trace = TracePlan {
            pcap: pcap.to_vec(),
            snaplen: 65_535,
        };
        Taps::new(Some(&trace), 1, &[(0, 2)])
    }

    fn packet(hop: usize, len: u32) -> Packet {
        Packet {
            flow: 0,
            route: 0,
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
        let both = PcapPlan {
            link: 1,
            direction: CaptureDirection::Both,
        };
        let reverse = PcapPlan {
            direction: CaptureDirection::Reverse,
            ..both
        };
        let mut t = taps(&[both, reverse]);
        t.on_wire(10, 1, true, &packet(1, 1000), true);
        t.on_wire(20, 1, false, &packet(0, 0), false);
        t.on_wire(30, 0, true, &packet(0, 1000), true); // another link
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
    fn isns_differ_per_direction_and_follow_the_seed() {
        let ends = |seed| Taps::new(None, seed, &[(0, 1)]).flows[0];
        let [a, b] = ends(1);
        assert_ne!(a.isn, b.isn);
        assert_eq!(ends(1), [a, b]);
        assert_ne!(ends(2)[0].isn, a.isn);
        assert_eq!((a.port, b.port), (49152, 9));
    }
}
