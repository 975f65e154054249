//! What runs on the hosts above TCP. For now the applications write and read without CPU
//! cost; host CPU models join here later.

mod app;

pub use app::Writer;
