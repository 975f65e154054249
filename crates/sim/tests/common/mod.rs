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
        "nagle": true, "fast_retransmit": true, "min_rto_ns": 200_000_000,
        "cubic_variant": "rfc9438", "hystart_variant": "rfc9406", "quickack": false,
        "initial_rwnd": null, "nagle_variant": "rfc896", "rto_form": "rfc6298",
        "cwnd_validation": false, "handshake": true, "loss_recovery": "classic", "gso": false})
}

/// A 150 Mb/s cell stream with LLC/SNAP, 1 ms of propagation and the given error model.
#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn atm_channel(error: Value) -> Value {
    json!({"rate_bps": 150_000_000, "delay_ns": 1_000_000, "queue": {"packets": 100},
        "error": error, "framing": {"overhead_bytes": 0, "min_payload_bytes": 0},
        "atm": {"slot_octets": 53, "encapsulation_bytes": 8, "mtu": 9180}})
}

/// A two-host plan whose links run in a row from host 0 to host 1 and whose one flow carries
/// `plan["app"]` that way: what tcplab.plan.topology_form makes of a path-form scenario (the
/// router after link k is node k + 2, named `after-links.k`).
#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn path(mut plan: Value) -> Value {
    let object = plan.as_object_mut().unwrap();
    let app = object.remove("app").unwrap();
    let links = object["links"].as_array_mut().unwrap();
    let count = links.len();
    let node = |k: usize| match k {
        0 => 0,
        k if k == count => 1,
        k => k + 1,
    };
    for (k, link) in links.iter_mut().enumerate() {
        link["nodes"] = json!([node(k), node(k + 1)]);
    }
    object.insert(
        "routers".into(),
        (0..count - 1)
            .map(|k| json!({"name": format!("after-links.{k}")}))
            .collect(),
    );
    object.insert("flows".into(), json!([{"src": 0, "dst": 1, "app": app}]));
    plan
}
