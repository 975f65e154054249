//! ATM links and switches through the public entry point (docs/models/atm.md): cells are
//! deterministic under errors, a switch's buffer fills and discards, and the plan's ATM
//! fields are checked with errors that name them.

mod common;

use common::{atm_channel, atm_host_tcp as tcp, refused, run};
use serde_json::{json, Value};

fn link(nodes: [usize; 2], error: Value) -> Value {
    json!({"nodes": nodes, "forward": atm_channel(error), "reverse": atm_channel(json!({"kind": "none"}))})
}

/// Two sources (hosts 0, 1) into switch 4, a trunk to switch 5, two sinks (2, 3); the
/// trunk has bit errors and each switch port buffers 200 cells with EPD above 150.
fn dumbbell() -> Value {
    let host = |name: &str| json!({"name": name, "tcp": tcp()});
    let none = || json!({"kind": "none"});
    let switch = json!({"buffer_cells": 200, "discard": "epd", "epd_threshold_cells": 150,
        "feedback": {"kind": "none"}});
    json!({"seed": 3, "duration_ns": 500_000_000, "interval_ns": 100_000_000,
        "trace_interval_ns": 10_000_000,
        "hosts": [host("s0"), host("s1"), host("d0"), host("d1")],
        "routers": [{"name": "sw1", "switch": switch}, {"name": "sw2", "switch": switch}],
        "links": [link([0, 4], none()), link([1, 4], none()),
                  link([4, 5], json!({"kind": "ber", "ber": 1e-6})),
                  link([5, 2], none()), link([5, 3], none())],
        "flows": [{"src": 0, "dst": 2, "app": {"kind": "bulk", "message_size": 65536, "bytes": null}},
                  {"src": 1, "dst": 3, "app": {"kind": "bulk", "message_size": 65536, "bytes": null}}]})
}

#[test]
fn cells_share_the_trunk_deterministically() {
    let result = run(&dumbbell());
    let atm = &result["summary"]["atm"];
    // Two sources at line rate into one trunk: the switch discards.
    assert!(atm["cells_dropped"].as_u64().unwrap() > 0);
    let trunk = result["atm_ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["link"] == 2 && p["direction"] == "forward")
        .unwrap();
    assert_eq!(trunk["node"], "sw1");
    // The buffer never holds more than its 200 cells, and EPD refuses frames above 150.
    assert!(trunk["max_queue_cells"].as_u64().unwrap() <= 200);
    assert!(trunk["drops_epd"].as_u64().unwrap() > 0);
    // The trunk's bit errors hit some cells' payloads.
    assert!(trunk["cells_errored"].as_u64().unwrap() > 0);
    let efficiency = atm["efficiency"].as_f64().unwrap();
    assert!(efficiency > 0.0 && efficiency < 1.0, "{efficiency}");
    // Same plan and seed: the same cells dropped and errored, byte for byte.
    assert_eq!(run(&dumbbell()), result);
    let mut other = dumbbell();
    other["seed"] = json!(4);
    assert_ne!(run(&other)["summary"]["atm"], result["summary"]["atm"]);
}

#[test]
fn atm_plan_errors_name_the_field() {
    let mut p = dumbbell();
    p["links"][2]["reverse"]
        .as_object_mut()
        .unwrap()
        .remove("atm");
    assert!(refused(&p).starts_with("links.2: both directions"));
    let mut p = dumbbell();
    p["links"][0]["forward"]["atm"]["slot_octets"] = json!(48);
    assert!(refused(&p).starts_with("links.0.forward.atm.slot_octets"));
    let mut p = dumbbell();
    p["links"][0]["forward"]["error"] = json!({"kind": "gilbert_elliott", "p_gb": 0.1, "p_bg": 0.1, "loss_good": 0.0, "loss_bad": 1.0});
    assert!(refused(&p).starts_with("links.0.forward.error"));
    let mut p = dumbbell();
    p["routers"][0]["switch"]["epd_threshold_cells"] = json!(201);
    assert!(refused(&p).starts_with("routers.0.switch.epd_threshold_cells"));
    let mut p = dumbbell();
    p["routers"][1]["switch"]["buffer_cells"] = json!(0);
    assert!(refused(&p).starts_with("routers.1.switch.buffer_cells"));
    let mut p = dumbbell();
    for dir in ["forward", "reverse"] {
        p["links"][3][dir].as_object_mut().unwrap().remove("atm");
    }
    assert!(refused(&p).starts_with("links.3: joins ATM switch \"sw2\""));
    let mut p = dumbbell();
    p["links"][2]["forward"]["atm"]["mtu"] = json!(1500);
    p["links"][2]["reverse"]["atm"]["mtu"] = json!(1500);
    p["hosts"][1]["tcp"]["mss"] = json!(2000);
    p["hosts"][3]["tcp"]["mss"] = json!(2000);
    assert!(refused(&p).starts_with("hosts.1.tcp.mss: 2000 + 40 bytes"));
    let mut p = dumbbell();
    p["trace"] = json!({"pcap": [{"link": 2, "direction": "both"}], "snaplen": 128});
    assert!(refused(&p).starts_with("trace.pcap.0"));
}
