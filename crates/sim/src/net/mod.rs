//! Links and what happens to packets on them: framing, queues and their disciplines,
//! serialization, propagation, error models, schedules that change them over time, and
//! packet captures of what goes onto the wire.

pub mod aqm;
mod capture;
mod channel;
mod error_model;
mod framing;
mod line;
mod packet;
mod pcap;
mod queue;
mod schedule;

pub use capture::Taps;
pub use channel::{Channel, ChannelStats, Departure};
pub use error_model::ErrorProcess;
pub use framing::Framing;
pub use line::Line;
pub use packet::{Packet, PacketRef, Packets, Udp};
pub use pcap::{Datagram, Endpoint, PcapFile, INITIAL_TTL};
pub use queue::{DropTail, Queued};
pub use schedule::Schedule;
