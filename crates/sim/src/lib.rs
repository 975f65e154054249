//! tcplab's discrete-event simulator: TCP over point-to-point paths (satellite hops, long
//! fat pipes), with integer-nanosecond time and named, seeded random streams, so that the
//! same plan and seed give bit-identical results.
//!
//! The simulator knows nothing about Python, files or units: it runs a resolved [`Plan`]
//! (see docs/internals/plan-and-result.md) and returns a [`RunResult`].

pub mod engine;
mod error;
pub mod host;
pub mod metrics;
pub mod net;
pub mod plan;
pub mod result;
mod sim;
pub mod tcp;

pub use error::PlanError;
pub use plan::Plan;
pub use result::RunResult;

/// Runs a validated plan to completion.
pub fn run(plan: Plan) -> RunResult {
    sim::Simulation::new(plan).run()
}

/// Parses, validates and runs a plan given as JSON; returns the result as JSON.
pub fn run_json(plan_json: &str) -> Result<String, PlanError> {
    let plan = Plan::from_json(plan_json)?;
    Ok(serde_json::to_string(&run(plan))?)
}
