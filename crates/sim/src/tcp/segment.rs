/// RFC 2018 §3: at most four SACK blocks fit in the 40 bytes of option space, three when
/// the timestamps option takes 12 of them.
pub const MAX_SACK_BLOCKS: usize = 4;
pub const MAX_SACK_BLOCKS_WITH_TIMESTAMPS: usize = 3;
/// RFC 7323 §3: the timestamps option is 10 bytes, sent with two NOPs for alignment.
pub const TIMESTAMPS_OPTION_BYTES: u32 = 12;

/// The bytes the timestamps option takes from each segment when it is in use.
pub fn timestamps_option_bytes(timestamps: bool) -> u64 {
    if timestamps {
        u64::from(TIMESTAMPS_OPTION_BYTES)
    } else {
        0
    }
}

/// RFC 7323 §3 timestamps: the sender's clock and the echo of the peer's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timestamps {
    pub val: u32,
    pub ecr: u32,
}

/// A TCP segment as the simulator carries it: the header fields the model uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Segment {
    /// Stream offset of the first payload byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Next stream byte the sender of this segment expects (valid when `has_ack`).
    pub ack: u64,
    pub has_ack: bool,
    /// The 16-bit window field as sent, before the receiver of it applies the scale.
    pub window: u16,
    pub syn: bool,
    /// MSS option (SYN only), RFC 9293 §3.7.1.
    pub mss_option: Option<u16>,
    /// Window scale option (SYN only), RFC 7323 §2.
    pub wscale_option: Option<u8>,
    /// SACK-permitted option (SYN only), RFC 2018 §2.
    pub sack_permitted: bool,
    /// SACK blocks [start, end), most recent first (RFC 2018 §3–4).
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub sack_len: u8,
    pub timestamps: Option<Timestamps>,
    /// Sender bookkeeping: this payload was sent before.
    pub retransmission: bool,
    /// ECN-Echo and Congestion Window Reduced flags (RFC 3168 §6.1); on a SYN both
    /// request ECN, on a SYN-ACK ECE alone accepts it (§6.1.1).
    pub ece: bool,
    pub cwr: bool,
    /// The ECN field of the IP header the segment travels in (RFC 3168 §5): ECN-capable
    /// transport (ECT(0)), and Congestion Experienced once a queue has marked it.
    pub ect: bool,
    pub ce: bool,
}

impl Segment {
    pub fn data(seq: u64, len: u32, ack: u64, window: u16) -> Self {
        Self {
            seq,
            len,
            ack,
            has_ack: true,
            window,
            ..Self::default()
        }
    }

    pub fn pure_ack(ack: u64, window: u16) -> Self {
        Self::data(0, 0, ack, window)
    }

    /// 20 bytes of fixed header plus options padded to a multiple of 4 (RFC 9293 §3.1):
    /// MSS is 4 bytes, window scale 3, SACK-permitted 2, SACK 2 + 8 per block.
    pub fn tcp_header_bytes(&self) -> u32 {
        let sack = if self.sack_len > 0 {
            2 + 8 * u32::from(self.sack_len)
        } else {
            0
        };
        let options: u32 = self.mss_option.map_or(0, |_| 4)
            + self.wscale_option.map_or(0, |_| 3)
            + if self.sack_permitted { 2 } else { 0 }
            + self.timestamps.map_or(0, |_| TIMESTAMPS_OPTION_BYTES)
            + sack;
        20 + options.div_ceil(4) * 4
    }

    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..usize::from(self.sack_len)]
    }

    pub fn end(&self) -> u64 {
        self.seq + u64::from(self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_size_counts_padded_options() {
        assert_eq!(Segment::data(0, 1460, 0, 0).tcp_header_bytes(), 20);
        let syn = Segment {
            syn: true,
            mss_option: Some(1460),
            wscale_option: Some(7),
            ..Segment::default()
        };
        assert_eq!(syn.tcp_header_bytes(), 28);
        let syn_no_ws = Segment {
            wscale_option: None,
            ..syn
        };
        assert_eq!(syn_no_ws.tcp_header_bytes(), 24);
        let syn_sack = Segment {
            sack_permitted: true,
            ..syn
        };
        assert_eq!(syn_sack.tcp_header_bytes(), 32);
    }

    #[test]
    fn timestamps_cost_twelve_bytes() {
        let mut seg = Segment::data(0, 1448, 0, 0);
        seg.timestamps = Some(Timestamps::default());
        assert_eq!(seg.tcp_header_bytes(), 32);
        seg.sack_len = 3;
        assert_eq!(seg.tcp_header_bytes(), 60); // the 40-byte option space is full
    }

    #[test]
    fn sack_blocks_cost_eight_bytes_each() {
        let mut ack = Segment::pure_ack(0, 0);
        ack.sack_len = 3;
        assert_eq!(ack.tcp_header_bytes(), 20 + 28);
    }
}
