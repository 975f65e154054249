//! TCP as two state machines, a sender and a receiver, that do no I/O and own no clock:
//! the simulator hands them the time and the segments, and collects the segments they
//! emit and the next time they want to be woken (like smoltcp's `poll_at`).
//!
//! Sequence numbers are 64-bit offsets into the byte stream (data byte 0 has sequence 0),
//! so wrap-around and PAWS are outside the model; the SYN occupies no sequence space here.

pub mod cc;
mod ecn;
pub mod hystart;
pub mod hystart_linux;
mod ranges;
pub(crate) mod rcvbuf;
mod receiver;
mod rto;
pub mod sack;
mod segment;
mod sender;

pub use ecn::EcnMode;
pub use receiver::{Receiver, ReceiverConfig};
pub use rto::{RtoEstimator, RtoForm};
pub use segment::{Segment, Timestamps, MAX_SACK_BLOCKS, TIMESTAMPS_OPTION_BYTES};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::engine::Nanos;

/// A socket buffer: the size the application sets (SO_SNDBUF, SO_RCVBUF), or "auto", left
/// to the kernel's autotuning (tcp/rcvbuf.rs, sender/sndbuf.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum BufferSize {
    Bytes(u64),
    Auto(Auto),
}

/// The word "auto".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Auto {
    Auto,
}

impl BufferSize {
    pub fn is_auto(self) -> bool {
        matches!(self, BufferSize::Auto(_))
    }
}

/// The timestamp clock (RFC 7323 §5.4 asks for 1 ms to 1 s per tick): 1 ms, as Linux.
pub fn timestamp_clock(now: Nanos) -> u32 {
    (now / 1_000_000) as u32
}
pub use rcvbuf::TCP_RMEM;
pub use sender::{
    HyStartVariant, Limit, LossRecovery, NagleVariant, Sender, SenderConfig, SenderStats,
    SndbufAccounting, TCP_WMEM,
};

/// RFC 7323 §2.3: the smallest shift that lets the 16-bit window field describe the whole
/// receive buffer, at most 14.
pub fn window_shift_for(buffer: u64) -> u8 {
    let mut shift = 0u8;
    while shift < 14 && (buffer >> shift) > 65_535 {
        shift += 1;
    }
    shift
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_shift_is_the_smallest_that_fits_the_buffer() {
        assert_eq!(window_shift_for(65_535), 0);
        assert_eq!(window_shift_for(65_536), 1);
        assert_eq!(window_shift_for(64 << 20), 11);
        assert_eq!(window_shift_for(u64::MAX), 14);
    }
}
