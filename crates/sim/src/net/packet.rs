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
#[derive(Debug, Clone)]
pub struct Packet {
    pub flow: usize,
    /// Index of the route (a list of channels) the packet follows.
    pub route: usize,
    /// Position on that route: the channel it is on or about to enter.
    pub hop: usize,
    pub segment: Segment,
    /// The acknowledgement the sending host's receiver rides on a data segment of a
    /// connection that carries data both ways (RFC 9293 §3.10.7.4), for the peer's sender.
    /// Boxed: few packets carry one, and every packet moves through the event queue.
    pub piggyback: Option<Box<Segment>>,
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
