//! What runs on the hosts above TCP: the applications' socket calls and the CPU that pays
//! for them and for every packet (docs/models/hosts.md).

mod app;
mod cpu;

pub use app::{Reader, Writer};
pub use cpu::{Cpu, CpuCosts, CpuStats};
