//! ABR through the public entry point (docs/models/abr.md): ERICA's VCs run deterministic
//! and lossless on the ATM dumbbell, and the plan's ABR fields are checked with errors that
//! name them.

mod common;

use common::{atm_channel, atm_host_tcp as tcp, refused, run};
use serde_json::{json, Value};

fn link(nodes: [usize; 2]) -> Value {
    json!({"nodes": nodes, "forward": atm_channel(json!({"kind": "none"})), "reverse": atm_channel(json!({"kind": "none"}))})
}

fn abr() -> Value {
    json!({"mcr_cells_s": 0.0, "tcr_cells_s": 10.0, "rif": 0.0625, "rdf": 0.0625,
        "cdf": 0.0625, "nrm": 32, "mrm": 2, "trm_ns": 100_000_000, "adtf_ns": 500_000_000,
        "tbe_cells": 16_777_215, "frtt_ns": 0})
}

/// Two sources (hosts 0, 1) into switch 4, whose ports run ERICA, a trunk to switch 5,
/// two sinks (2, 3); 1000-cell buffers.
fn dumbbell() -> Value {
    let host = |name: &str| json!({"name": name, "tcp": tcp()});
    let erica = json!({"kind": "erica", "target_utilization": 0.9, "delta": 0.1,
        "fair_share": "active",
        "interval_ns": 1_000_000, "measure_ccr": true});
    let sw1 = json!({"buffer_cells": 1000, "discard": "drop_tail", "epd_threshold_cells": 800,
        "feedback": erica});
    let sw2 = json!({"buffer_cells": 1000, "discard": "drop_tail", "epd_threshold_cells": 800,
        "feedback": {"kind": "none"}});
    let app = json!({"kind": "bulk", "message_size": 65536, "bytes": null});
    json!({"seed": 3, "duration_ns": 500_000_000, "interval_ns": 100_000_000,
        "trace_interval_ns": 10_000_000,
        "hosts": [host("s0"), host("s1"), host("d0"), host("d1")],
        "routers": [{"name": "sw1", "switch": sw1}, {"name": "sw2", "switch": sw2}],
        "links": [link([0, 4]), link([1, 4]), link([4, 5]), link([5, 2]), link([5, 3])],
        "flows": [{"src": 0, "dst": 2, "app": app}, {"src": 1, "dst": 3, "app": app}],
        "abr": abr()})
}

#[test]
fn erica_vcs_share_the_trunk_without_loss_deterministically() {
    let result = run(&dumbbell());
    let atm = &result["summary"]["atm"];
    assert_eq!(atm["cells_dropped"], 0);
    assert!(atm["rm_cells"].as_u64().unwrap() > 0);
    assert!(result["summary"]["fairness"].as_f64().unwrap() > 0.99);
    // Two forward and two reverse VCs, sampled every 10 ms.
    let acr = &result["abr_acr"];
    assert_eq!(acr["t_s"].as_array().unwrap().len(), 4 * 50);
    assert_eq!(run(&dumbbell()), result);
}

#[test]
fn abr_plan_errors_name_the_field() {
    let mut p = dumbbell();
    p.as_object_mut().unwrap().remove("abr");
    assert!(refused(&p).starts_with("abr: routers.0.switch gives ABR feedback"));
    let mut p = dumbbell();
    p["abr"]["rif"] = json!(0.0);
    assert!(refused(&p).starts_with("abr.rif:"));
    let mut p = dumbbell();
    p["routers"][0]["switch"]["feedback"]["interval_ns"] = json!(0);
    assert!(refused(&p).starts_with("routers.0.switch.feedback.interval_ns:"));
    let mut p = dumbbell();
    p["routers"][0]["switch"]["feedback"] =
        json!({"kind": "efci", "mark": "efci", "q_hi_cells": 10, "q_lo_cells": 20});
    assert!(refused(&p).starts_with("routers.0.switch.feedback.q_lo_cells:"));
}

#[test]
fn an_abr_connection_keeps_to_one_run_of_atm_links() {
    // Sink 2 hangs off IP router 7, reached from switch 4 through IP router 6 over a packet
    // link: flow 0's path leaves ATM at router 6 and enters it again at router 7.
    let mut p = dumbbell();
    let packet = json!({"rate_bps": 150_000_000, "delay_ns": 1_000_000,
        "queue": {"packets": 100}, "error": {"kind": "none"},
        "framing": {"overhead_bytes": 0, "min_payload_bytes": 0}});
    let routers = p["routers"].as_array_mut().unwrap();
    routers.push(json!({"name": "ip1"}));
    routers.push(json!({"name": "ip2"}));
    let links = p["links"].as_array_mut().unwrap();
    links.remove(3);
    links.push(link([4, 6]));
    links.push(json!({"nodes": [6, 7], "forward": packet.clone(), "reverse": packet}));
    links.push(link([7, 2]));
    let reason = refused(&p);
    assert!(
        reason.starts_with("flows.0: crosses a switch with ABR feedback"),
        "{reason}"
    );
}
