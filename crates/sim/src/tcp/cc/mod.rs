//! Congestion control behind one small trait, shaped like Linux's `tcp_congestion_ops`:
//! the algorithm decides the window's growth and its reduction on loss; loss detection
//! and recovery live in the sender, not here.

mod reno;

pub use reno::Reno;

/// The `tcp.cc` names the simulator accepts.
pub const NAMES: &[&str] = &["newreno"];

pub trait CongestionControl {
    /// Slow-start threshold after a loss is detected, given the data in flight.
    fn ssthresh_after_loss(&mut self, flight: u64, mss: u64) -> u64;
    /// Grows `cwnd` on an ACK of `acked` new bytes outside loss recovery.
    fn on_ack(&mut self, cwnd: &mut u64, ssthresh: u64, acked: u64, mss: u64);
}

/// The algorithm for a validated `tcp.cc` name (the plan check guarantees it is known).
pub fn build(name: &str) -> Box<dyn CongestionControl> {
    match name {
        "newreno" => Box::new(Reno),
        other => unreachable!("plan validation admits only {NAMES:?}, got {other}"),
    }
}
