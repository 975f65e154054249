//! tcplab's discrete-event simulator: TCP flows over networks of links and routers
//! (satellite hops, long fat pipes, shared bottlenecks), between hosts whose CPUs and
//! applications can be the bottleneck, with integer-nanosecond time and named, seeded random streams, so that the
//! same plan and seed give bit-identical results.
//!
//! The simulator knows nothing about Python, files or units: it runs a resolved [`Plan`]
//! (see docs/internals/plan-and-result.md) and returns a [`RunResult`].

pub mod atm;
pub mod columns;
pub mod engine;
mod error;
mod flow;
pub mod host;
pub mod media;
pub mod metrics;
pub mod net;
mod pep;
pub mod plan;
pub mod result;
mod sim;
pub mod tcp;
pub mod topology;
pub mod wlan;

pub use columns::Table;
pub use error::PlanError;
pub use plan::Plan;
pub use result::{Capture, RunResult};

/// Runs a validated plan to completion.
pub fn run(plan: Plan) -> RunResult {
    sim::Simulation::new(plan).run()
}

/// Parses, validates and runs a plan given as JSON; returns the result as JSON. A plan
/// that asks for packet captures is refused rather than run without them: use
/// [`run_json_capturing`].
pub fn run_json(plan_json: &str) -> Result<String, PlanError> {
    let plan = Plan::from_json(plan_json)?;
    if plan.trace.as_ref().is_some_and(|t| !t.pcap.is_empty()) {
        return Err(PlanError::field(
            "trace.pcap",
            "run_json returns no packet captures; use run_json_capturing",
        ));
    }
    Ok(serde_json::to_string(&run(plan))?)
}

/// Parses, validates and runs a plan given as JSON; returns the result as JSON and the
/// packet captures the plan asked for, as pcap file bytes.
pub fn run_json_capturing(plan_json: &str) -> Result<(String, Vec<Capture>), PlanError> {
    let plan = Plan::from_json(plan_json)?;
    let mut result = run(plan);
    let captures = std::mem::take(&mut result.captures);
    Ok((serde_json::to_string(&result)?, captures))
}

/// Parses and validates a plan given as JSON; returns when each of its flows opens (ns),
/// with the draw from its start jitter that the simulation makes: the one draw, so that the
/// emu backend opens its connections at the same instants. A flow that waits `after` another
/// opens once that one is received, later than this.
pub fn flow_openings_json(plan_json: &str) -> Result<Vec<u64>, PlanError> {
    let plan = Plan::from_json(plan_json)?;
    let openings = plan.flows.iter().enumerate();
    Ok(openings
        .map(|(k, f)| flow::opening_ns(k, f, plan.seed))
        .collect())
}

/// Parses, validates and runs a plan given as JSON; returns the result's rows and scalars
/// as JSON, its long parts as columns (crate::columns; absent from the JSON), and the
/// packet captures the plan asked for.
pub fn run_columnar(plan_json: &str) -> Result<(String, Vec<Table>, Vec<Capture>), PlanError> {
    let plan = Plan::from_json(plan_json)?;
    let mut result = run(plan);
    let captures = std::mem::take(&mut result.captures);
    let tables = result.take_tables();
    let mut rows = serde_json::to_value(&result)?;
    if let Some(parts) = rows.as_object_mut() {
        for table in &tables {
            parts.remove(table.name);
        }
    }
    Ok((rows.to_string(), tables, captures))
}
