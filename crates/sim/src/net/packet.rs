use crate::engine::prefetch;
use crate::tcp::{Segment, Timestamps, MAX_SACK_BLOCKS};

/// A piece of a media stream's UDP datagram (docs/models/media.md): which message it
/// carries and its IP payload bytes (the UDP header counts in the first fragment's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Udp {
    pub message: u64,
    pub len: u32,
}

/// An IPv4 datagram in flight: a TCP segment (or a UDP fragment) plus where it is on its
/// route.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub flow: usize,
    /// Index of the route (a list of channels) the packet follows.
    pub route: usize,
    /// Position on that route: the channel it is on or about to enter.
    pub hop: usize,
    pub segment: Segment,
    /// The acknowledgement the sending host's receiver rides on a data segment of a
    /// connection that carries data both ways (RFC 9293 §3.10.7.4), for the peer's sender.
    pub piggyback: Option<Segment>,
    /// A media stream's UDP fragment instead of a TCP segment; `segment` is then unused.
    pub udp: Option<Udp>,
}

impl Packet {
    /// IP datagram size: 20 bytes of IPv4 header, the TCP header with its options, and the
    /// payload. A piggybacked acknowledgement shares the header; its SACK blocks are the
    /// options that can make it longer.
    pub fn ip_bytes(&self) -> u64 {
        if let Some(udp) = self.udp {
            return 20 + u64::from(udp.len);
        }
        let header = self
            .piggyback
            .as_ref()
            .map_or(0, |ack| ack.tcp_header_bytes())
            .max(self.segment.tcp_header_bytes());
        20 + u64::from(header) + u64::from(self.segment.len)
    }
}

/// A packet in the [`Packets`] store as links, queues and events carry it: its slot and
/// its IP size, which is all a queue or a serializer needs, so nothing larger than these
/// eight bytes moves while the packet crosses the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketRef {
    pub id: u32,
    pub ip_bytes: u32,
}

/// What forwarding reads of a packet at every hop: where it is on which route, and
/// whether its transport is ECN-capable (for the queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub flow: u32,
    pub hop: u16,
    pub route: u8,
    /// ECT set in the IP header: a TCP segment's ECT(0) (a UDP fragment has none).
    pub ect: bool,
}

impl Place {
    pub fn flow(self) -> usize {
        self.flow as usize
    }

    pub fn route(self) -> usize {
        usize::from(self.route)
    }

    pub fn hop(self) -> usize {
        usize::from(self.hop)
    }
}

/// `Stored::sack` and `Stored::extra` of a packet that has none.
const NONE: u32 = u32::MAX;

/// A TCP segment as the store keeps it: its header fields, with its SACK blocks (64 bytes,
/// carried only by ACKs in recovery) and anything else a packet rarely carries in side
/// tables, so that a packet's headers are one cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Stored {
    seq: u64,
    ack: u64,
    len: u32,
    window: u16,
    mss_option: Option<u16>,
    wscale_option: Option<u8>,
    timestamps: Option<Timestamps>,
    has_ack: bool,
    syn: bool,
    sack_permitted: bool,
    retransmission: bool,
    ece: bool,
    cwr: bool,
    ect: bool,
    ce: bool,
    sack_len: u8,
    /// The slot of the SACK blocks in `Packets::sacks`, or [`NONE`] when all are zero.
    sack: u32,
    /// The slot of the piggybacked ACK and UDP fragment in `Packets::extras`, or [`NONE`].
    extra: u32,
}

const _: () = assert!(std::mem::size_of::<Stored>() == 64);

/// What a packet rarely carries.
#[derive(Clone, Copy)]
struct Extra {
    piggyback: Option<Segment>,
    udp: Option<Udp>,
}

type SackBlocks = [(u64, u64); MAX_SACK_BLOCKS];

/// Values in numbered slots; a freed slot is reused by the next value.
struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T: Copy> Slab<T> {
    fn insert(&mut self, item: T) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.items[id as usize] = item;
                id
            }
            None => {
                self.items.push(item);
                u32::try_from(self.items.len() - 1).expect("fewer than 2^32 packets in flight")
            }
        }
    }

    fn remove(&mut self, id: u32) -> T {
        self.free.push(id);
        self.items[id as usize]
    }

    fn len(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

/// Every packet in flight, each stored once from the moment its host sends it until it is
/// delivered or lost; freed slots are reused, so a run allocates only while its number of
/// packets in flight grows. A hop reads only the packet's [`Place`] (8 bytes in an array
/// of its own), the host at the end of the route its headers (one cache line).
#[derive(Default)]
pub struct Packets {
    stored: Slab<Stored>,
    /// Indexed by the slot in `stored`.
    places: Vec<Place>,
    sacks: Slab<SackBlocks>,
    extras: Slab<Extra>,
}

impl Packets {
    pub fn insert(&mut self, packet: Packet) -> PacketRef {
        let ip_bytes = u32::try_from(packet.ip_bytes()).expect("an IP datagram fits in u32");
        let Segment {
            seq,
            len,
            ack,
            has_ack,
            window,
            syn,
            mss_option,
            wscale_option,
            sack_permitted,
            sack,
            sack_len,
            timestamps,
            retransmission,
            ece,
            cwr,
            ect,
            ce,
        } = packet.segment;
        let sack = if sack == SackBlocks::default() {
            NONE
        } else {
            self.sacks.insert(sack)
        };
        let extra = if packet.piggyback.is_none() && packet.udp.is_none() {
            NONE
        } else {
            self.extras.insert(Extra {
                piggyback: packet.piggyback,
                udp: packet.udp,
            })
        };
        let id = self.stored.insert(Stored {
            seq,
            ack,
            len,
            window,
            mss_option,
            wscale_option,
            timestamps,
            has_ack,
            syn,
            sack_permitted,
            retransmission,
            ece,
            cwr,
            ect,
            ce,
            sack_len,
            sack,
            extra,
        });
        let place = Place {
            flow: u32::try_from(packet.flow).expect("fewer than 2^32 flows"),
            hop: u16::try_from(packet.hop).expect("routes of fewer than 2^16 hops"),
            route: u8::try_from(packet.route).expect("a connection's two routes"),
            ect: packet.udp.is_none() && ect,
        };
        match self.places.get_mut(id as usize) {
            Some(slot) => *slot = place,
            None => self.places.push(place),
        }
        PacketRef { id, ip_bytes }
    }

    /// Where the packet is: all that forwarding it reads.
    pub fn place(&self, id: u32) -> Place {
        self.places[id as usize]
    }

    /// Starts loading the packet's headers into the caches (crate::engine::prefetch).
    pub fn prefetch_headers(&self, id: u32) {
        prefetch(&self.stored.items[id as usize]);
    }

    /// The packet moves on to the next channel of its route.
    pub fn next_hop(&mut self, id: u32) {
        self.places[id as usize].hop += 1;
    }

    /// A queue marked the packet Congestion Experienced (RFC 3168 §5).
    pub fn mark_ce(&mut self, id: u32) {
        self.stored.items[id as usize].ce = true;
    }

    /// The packet, copied out of the store.
    pub fn get(&self, id: u32) -> Packet {
        let s = self.stored.items[id as usize];
        let sack = (s.sack != NONE).then(|| self.sacks.items[s.sack as usize]);
        let extra = (s.extra != NONE).then(|| self.extras.items[s.extra as usize]);
        Self::packet(self.places[id as usize], s, sack, extra)
    }

    /// The packet was delivered or lost: its slot is free for the next one. Returns it,
    /// copied out (a packet holds no heap data).
    pub fn remove(&mut self, id: u32) -> Packet {
        let s = self.stored.remove(id);
        let sack = (s.sack != NONE).then(|| self.sacks.remove(s.sack));
        let extra = (s.extra != NONE).then(|| self.extras.remove(s.extra));
        Self::packet(self.places[id as usize], s, sack, extra)
    }

    fn packet(place: Place, s: Stored, sack: Option<SackBlocks>, extra: Option<Extra>) -> Packet {
        Packet {
            flow: place.flow(),
            route: place.route(),
            hop: place.hop(),
            segment: Segment {
                seq: s.seq,
                len: s.len,
                ack: s.ack,
                has_ack: s.has_ack,
                window: s.window,
                syn: s.syn,
                mss_option: s.mss_option,
                wscale_option: s.wscale_option,
                sack_permitted: s.sack_permitted,
                sack: sack.unwrap_or_default(),
                sack_len: s.sack_len,
                timestamps: s.timestamps,
                retransmission: s.retransmission,
                ece: s.ece,
                cwr: s.cwr,
                ect: s.ect,
                ce: s.ce,
            },
            piggyback: extra.and_then(|e| e.piggyback),
            udp: extra.and_then(|e| e.udp),
        }
    }

    /// Packets in flight.
    pub fn in_flight(&self) -> usize {
        self.stored.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(len: u32) -> Packet {
        Packet {
            flow: 0,
            route: 0,
            hop: 0,
            segment: Segment::data(0, len, 0, 0),
            piggyback: None,
            udp: None,
        }
    }

    #[test]
    fn a_freed_slot_is_reused_and_refs_carry_the_ip_size() {
        let mut packets = Packets::default();
        let a = packets.insert(packet(100));
        let b = packets.insert(packet(200));
        assert_eq!((a.ip_bytes, b.ip_bytes), (140, 240));
        assert_eq!(packets.remove(a.id).segment.len, 100);
        let c = packets.insert(packet(300));
        assert_eq!(c.id, a.id);
        assert_eq!(packets.get(c.id).segment.len, 300);
        assert_eq!(packets.in_flight(), 2);
    }

    #[test]
    fn what_is_kept_out_of_line_comes_back_and_its_slots_are_reused() {
        let mut ack = Segment::pure_ack(5000, 100);
        ack.sack[0] = (6000, 7000);
        ack.sack_len = 1;
        ack.timestamps = Some(Timestamps { val: 7, ecr: 3 });
        let mut data = Segment::data(1000, 1448, 2000, 50);
        data.ect = true;
        let with_all = Packet {
            flow: 3,
            route: 1,
            hop: 2,
            segment: ack,
            piggyback: Some(data),
            udp: Some(Udp {
                message: 9,
                len: 100,
            }),
        };
        let mut packets = Packets::default();
        let a = packets.insert(with_all);
        let place = packets.place(a.id);
        assert_eq!((place.flow(), place.route(), place.hop()), (3, 1, 2));
        assert!(!place.ect, "a UDP fragment is not ECN-capable");
        packets.next_hop(a.id);
        packets.mark_ce(a.id);
        let back = packets.remove(a.id);
        assert_eq!(back.hop, 3);
        assert_eq!(back.segment, Segment { ce: true, ..ack });
        assert_eq!(
            (back.piggyback, back.udp),
            (with_all.piggyback, with_all.udp)
        );
        // The next packet takes the freed slots and carries none of the last one's extras.
        let b = packets.insert(packet(10));
        let plain = packets.get(b.id);
        assert_eq!(b.id, a.id);
        assert_eq!(plain.segment, Segment::data(0, 10, 0, 0));
        assert!(plain.piggyback.is_none() && plain.udp.is_none());
        assert_eq!((packets.sacks.len(), packets.extras.len()), (0, 0));
    }
}
