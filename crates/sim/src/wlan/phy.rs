//! IEEE 802.11b HR/DSSS timing (IEEE 802.11-1999 §9.2.3, §15.3.3; 802.11b §18.3): the
//! interframe spaces, the slot, and how long a frame occupies the air. Every airtime in the
//! medium comes from here.

use crate::engine::{serialization_ns, Nanos};
use crate::plan::Preamble;

pub const SLOT_NS: Nanos = 20_000;
pub const SIFS_NS: Nanos = 10_000;
/// §9.2.3.3: DIFS = SIFS + 2 · aSlotTime.
pub const DIFS_NS: Nanos = SIFS_NS + 2 * SLOT_NS;
/// §9.2.3.4: EIFS = SIFS + DIFS + the time of an ACK at 1 Mb/s with the long PLCP
/// (192 µs + 112 bits): 364 µs.
pub const EIFS_NS: Nanos = SIFS_NS + DIFS_NS + LONG_PLCP_NS + 112_000;
/// aCWmin and aCWmax of the DSSS PHY (§15.3.3), in slots.
pub const CW_MIN: u32 = 31;
pub const CW_MAX: u32 = 1023;
/// An ACK frame: frame control 2, duration 2, receiver address 6, FCS 4 (§7.2.1.3).
pub const ACK_BYTES: u64 = 14;

/// The PLCP preamble and header (§18.2.2): long 192 µs, short 96 µs.
pub const LONG_PLCP_NS: Nanos = 192_000;
pub const SHORT_PLCP_NS: Nanos = 96_000;

#[derive(Debug, Clone, Copy)]
pub struct Phy {
    plcp_ns: Nanos,
    ack_rate_bps: u64,
}

impl Phy {
    pub fn new(preamble: Preamble, ack_rate_bps: u64) -> Self {
        let plcp_ns = match preamble {
            Preamble::Long => LONG_PLCP_NS,
            Preamble::Short => SHORT_PLCP_NS,
        };
        Self {
            plcp_ns,
            ack_rate_bps,
        }
    }

    /// A frame of `bytes` (MAC header, body, FCS) at `rate_bps`: the PLCP preamble and
    /// header, then the MPDU's bits.
    pub fn frame_ns(&self, bytes: u64, rate_bps: u64) -> Nanos {
        self.plcp_ns + serialization_ns(bytes, rate_bps)
    }

    /// The ACK to a frame sent at `data_rate_bps` goes at the ACK rate, but never faster than
    /// the frame it answers (§9.6: the highest basic rate not above the eliciting frame's).
    pub fn ack_ns(&self, data_rate_bps: u64) -> Nanos {
        self.frame_ns(ACK_BYTES, self.ack_rate_bps.min(data_rate_bps))
    }

    /// How long a sender waits for the ACK after its frame ends before it counts the
    /// attempt as failed: SIFS + ACK + one slot, as ns-3 sets it.
    pub fn ack_timeout_ns(&self, data_rate_bps: u64) -> Nanos {
        SIFS_NS + self.ack_ns(data_rate_bps) + SLOT_NS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interframe_spaces_of_the_dsss_phy() {
        // IEEE 802.11-1999 §9.2.3: DIFS 50 µs; EIFS 10 + 50 + 304 = 364 µs.
        assert_eq!(DIFS_NS, 50_000);
        assert_eq!(EIFS_NS, 364_000);
    }

    #[test]
    fn airtime_of_a_full_segment_and_its_ack() {
        let phy = Phy::new(Preamble::Long, 2_000_000);
        // 1500-byte IP packet + 8 LLC/SNAP + 28 MAC = 1536 bytes at 11 Mb/s after 192 µs.
        assert_eq!(phy.frame_ns(1536, 11_000_000), 192_000 + 1_117_091);
        // 14-byte ACK at 2 Mb/s: 192 + 56 µs; at 1 Mb/s to a 1 Mb/s frame: 192 + 112 µs.
        assert_eq!(phy.ack_ns(11_000_000), 248_000);
        assert_eq!(phy.ack_ns(1_000_000), 304_000);
        assert_eq!(phy.ack_timeout_ns(11_000_000), 278_000);
        let short = Phy::new(Preamble::Short, 2_000_000);
        assert_eq!(short.ack_ns(11_000_000), 152_000);
    }
}
