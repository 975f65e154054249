use crate::tcp::Segment;

/// An IPv4 datagram in flight: a TCP segment plus where it is on its route.
#[derive(Debug, Clone)]
pub struct Packet {
    pub flow: usize,
    /// Index of the route (a list of channels) the packet follows.
    pub route: usize,
    /// Position on that route: the channel it is on or about to enter.
    pub hop: usize,
    pub segment: Segment,
}

impl Packet {
    /// IP datagram size: 20 bytes of IPv4 header, the TCP header with its options, and the
    /// payload.
    pub fn ip_bytes(&self) -> u64 {
        20 + u64::from(self.segment.tcp_header_bytes()) + u64::from(self.segment.len)
    }
}
