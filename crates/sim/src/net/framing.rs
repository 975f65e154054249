use crate::plan::FramingPlan;

/// What a link kind adds around each IP datagram. The numbers come from the plan, where
/// Python's `tcplab.links` keeps the one table of link kinds.
#[derive(Debug, Clone, Copy)]
pub struct Framing {
    overhead_bytes: u64,
    min_payload_bytes: u64,
}

impl From<FramingPlan> for Framing {
    fn from(p: FramingPlan) -> Self {
        Self {
            overhead_bytes: u64::from(p.overhead_bytes),
            min_payload_bytes: u64::from(p.min_payload_bytes),
        }
    }
}

impl Framing {
    /// Bytes on the wire for an IP datagram: short frames are padded (Ethernet's 46-byte
    /// minimum payload), then the link's header, trailer and gaps are added.
    pub fn wire_bytes(&self, ip_bytes: u64) -> u64 {
        ip_bytes.max(self.min_payload_bytes) + self.overhead_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_pads_short_frames_and_adds_its_overhead() {
        let eth = Framing::from(FramingPlan {
            overhead_bytes: 38,
            min_payload_bytes: 46,
        });
        assert_eq!(eth.wire_bytes(40), 84); // a bare TCP ACK: 64-byte frame + preamble + gap
        assert_eq!(eth.wire_bytes(1500), 1538);
    }

    #[test]
    fn ppp_adds_its_protocol_field() {
        let ppp = Framing::from(FramingPlan {
            overhead_bytes: 2,
            min_payload_bytes: 0,
        });
        assert_eq!(ppp.wire_bytes(1500), 1502);
    }
}
