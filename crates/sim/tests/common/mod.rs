//! What the integration tests share: running a plan given as JSON through the public entry
//! point, and reading the error of one it refuses.

use serde_json::Value;

pub fn run(plan: &Value) -> Value {
    serde_json::from_str(&tcplab_sim::run_json(&plan.to_string()).unwrap()).unwrap()
}

pub fn refused(plan: &Value) -> String {
    tcplab_sim::run_json(&plan.to_string())
        .unwrap_err()
        .to_string()
}
