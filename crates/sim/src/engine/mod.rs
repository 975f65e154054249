//! The simulation kernel: integer-nanosecond time, a deterministic event queue and named,
//! seeded random streams. Nothing here knows about networks.

mod prefetch;
mod queue;
mod rng;
mod time;

pub use prefetch::prefetch;
pub use queue::EventQueue;
pub use rng::RngStream;
pub use time::{serialization_ns, Nanos, NS_PER_S};
