//! ABR (available bit rate) traffic management per the ATM Forum's Traffic Management
//! Specification 4.0 (af-tm-0056.000, April 1996): the source and destination end-system
//! rules, resource-management (RM) cells, and two switch feedback schemes, binary (EFCI/CI)
//! and explicit rate (ERICA, ERICA+).
//!
//! Everything here is a pure state machine driven by the caller with the current time and
//! queue length; the cell-level network (links, switch ports, SAR) owns the events.
//! Rates are in cells per second, as in TM 4.0; times are integer nanoseconds.

pub mod destination;
pub mod efci;
pub mod end_system;
pub mod erica;
pub mod net;
pub mod rm;
pub mod source;

#[cfg(test)]
mod testbed;

pub use destination::AbrDestination;
pub use efci::{BinaryFeedback, BinarySwitch};
pub use end_system::{EndSystem, Out};
pub use erica::{EricaParams, EricaPlus, EricaPort};
pub use net::{AbrNet, Feedback};
pub use rm::{Dir, RmCell};
pub use source::{AbrSource, SourceParams, Tx};
