use crate::tcp::Segment;

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

/// Every packet in flight, each stored once from the moment its host sends it until it is
/// delivered or lost; freed slots are reused, so a run allocates only while its number of
/// packets in flight grows.
#[derive(Default)]
pub struct Packets {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl Packets {
    pub fn insert(&mut self, packet: Packet) -> PacketRef {
        let ip_bytes = u32::try_from(packet.ip_bytes()).expect("an IP datagram fits in u32");
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = packet;
                id
            }
            None => {
                self.slots.push(packet);
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 packets in flight")
            }
        };
        PacketRef { id, ip_bytes }
    }

    pub fn get(&self, id: u32) -> &Packet {
        &self.slots[id as usize]
    }

    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// The packet was delivered or lost: its slot is free for the next one. Returns it,
    /// copied out (a packet holds no heap data).
    pub fn remove(&mut self, id: u32) -> Packet {
        self.free.push(id);
        self.slots[id as usize]
    }

    /// Packets in flight.
    pub fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
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
}
