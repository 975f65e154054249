//! What the integration tests share: running a plan given as JSON through the public entry
//! point, and reading the error of one it refuses.

use serde_json::{json, Value};

pub fn run(plan: &Value) -> Value {
    serde_json::from_str(&tcplab_sim::run_json(&plan.to_string()).unwrap()).unwrap()
}

pub fn refused(plan: &Value) -> String {
    tcplab_sim::run_json(&plan.to_string())
        .unwrap_err()
        .to_string()
}

/// NewReno with 256 KiB buffers, IW 10 and a 200 ms minimum RTO: the ATM tests' hosts.
#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn atm_host_tcp() -> Value {
    json!({"cc": "newreno", "sndbuf": 262144, "rcvbuf": 262144, "mss": 1460,
        "initial_window": 10, "window_scaling": true, "sack": false, "timestamps": false,
        "abc": false, "hystart": false, "delayed_ack": true, "delack_timeout_ns": 200_000_000,
        "nagle": true, "fast_retransmit": true, "min_rto_ns": 200_000_000})
}

/// A 150 Mb/s cell stream with LLC/SNAP, 1 ms of propagation and the given error model.
#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn atm_channel(error: Value) -> Value {
    json!({"rate_bps": 150_000_000, "delay_ns": 1_000_000, "queue": {"packets": 100},
        "error": error, "framing": {"overhead_bytes": 0, "min_payload_bytes": 0},
        "atm": {"slot_octets": 53, "encapsulation_bytes": 8, "mtu": 9180}})
}
