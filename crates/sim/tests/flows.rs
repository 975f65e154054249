//! Several flows over a topology, and hosts with CPU models, through the public entry
//! point: plan errors name their field, shared links are shared, slow receivers overflow.

mod common;

use common::{complete, refused, run};
use serde_json::{json, Value};

fn tcp() -> Value {
    json!({"cc": "newreno", "sndbuf": 65536, "rcvbuf": 65536, "mss": 1460,
        "initial_window": 10, "window_scaling": false, "sack": false, "timestamps": false,
        "abc": false, "hystart": false, "delayed_ack": true, "delack_timeout_ns": 200_000_000,
        "nagle": true, "nagle_variant": "rfc896",
        "fast_retransmit": true, "min_rto_ns": 1_000_000_000,
        "cwnd_validation": false, "handshake": true, "loss_recovery": "classic", "dsack": false, "frto": false, "undo": false, "slow_start_after_idle": false, "gso": false, "ecn": "off", "sndbuf_accounting": "payload",
        "cubic_variant": "rfc9438", "reno_variant": "rfc5681", "hystart_variant": "rfc9406", "quickack": false,
        "initial_rwnd": null, "rto_form": "rfc6298"})
}

fn channel(rate_bps: u64, delay_ns: u64) -> Value {
    json!({"rate_bps": rate_bps, "delay_ns": delay_ns, "queue": {"packets": 50},
        "error": {"kind": "none"}, "framing": {"overhead_bytes": 2, "min_payload_bytes": 0}})
}

fn link(nodes: [usize; 2], rate_bps: u64) -> Value {
    json!({"nodes": nodes, "forward": channel(rate_bps, 1_000_000),
        "reverse": channel(rate_bps, 1_000_000)})
}

fn bulk() -> Value {
    json!({"kind": "bulk", "message_size": 65536, "bytes": null})
}

/// Two sources (hosts 0, 1) into router 4, a 10 Mb/s link to router 5, two sinks (2, 3).
fn dumbbell() -> Value {
    let host = |name: &str| json!({"name": name, "tcp": tcp()});
    json!({"seed": 1, "duration_ns": 20_000_000_000u64, "interval_ns": 1_000_000_000,
        "trace_interval_ns": 100_000_000,
        "hosts": [host("s0"), host("s1"), host("d0"), host("d1")],
        "routers": [{"name": "r1"}, {"name": "r2"}],
        "links": [link([0, 4], 100_000_000), link([1, 4], 100_000_000),
                  link([4, 5], 10_000_000), link([5, 2], 100_000_000),
                  link([5, 3], 100_000_000)],
        "flows": [{"src": 0, "dst": 2, "app": bulk()}, {"src": 1, "dst": 3, "app": bulk()}]})
}

#[test]
fn flows_share_the_bottleneck_and_report_a_row_each() {
    let result = run(&dumbbell());
    let flows = result["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2);
    let goodput: Vec<f64> = flows
        .iter()
        .map(|f| f["goodput_bps"].as_f64().unwrap())
        .collect();
    let total: f64 = goodput.iter().sum();
    assert!(total > 9.0e6 && total < 10.0e6, "{goodput:?}");
    assert!(result["summary"]["fairness"].as_f64().unwrap() > 0.9);
    // The shared link's forward direction carried both flows' data.
    assert!(result["links"][4]["utilisation"].as_f64().unwrap() > 0.95);
    assert_eq!(run(&dumbbell()), result, "deterministic");
}

#[test]
fn a_connection_opened_without_a_handshake_finishes_one_round_trip_sooner() {
    // One 10 000-byte file inside the initial window (10 × 1460) over the dumbbell's 6 ms
    // round trip: the handshake (a SYN out and a SYN-ACK back) is the only difference.
    let file = json!({"kind": "file", "message_size": 65536, "bytes": 10_000});
    let completed = |handshake: bool| {
        let mut p = dumbbell();
        p["flows"] = json!([{"src": 0, "dst": 2, "app": file}]);
        p["hosts"][0]["tcp"]["handshake"] = json!(handshake);
        run(&p)["flows"][0]["completed_s"].as_f64().unwrap()
    };
    let (with, without) = (completed(true), completed(false));
    // The SYN and the SYN-ACK, 44 bytes each (headers and the MSS option) and 2 of framing,
    // serialise at 100, 10 and 100 Mb/s.
    let syn_round_trip = 6e-3 + 2.0 * 46.0 * 8.0 * (2.0 / 100e6 + 1.0 / 10e6);
    assert!(
        (with - without - syn_round_trip).abs() < 1e-9,
        "{with} {without}"
    );
}

#[test]
fn start_jitter_delays_a_flow_by_a_seeded_draw_below_it() {
    // A 10 000-byte file alone on the path: with 5 ms of jitter it opens somewhere in
    // [0, 5 ms), a different draw for each seed and the same for one seed.
    let file = json!({"kind": "file", "message_size": 65536, "bytes": 10_000});
    let completed = |jitter_ns: u64, seed: u64| {
        let mut p = dumbbell();
        p["seed"] = json!(seed);
        p["flows"] = json!([{"src": 0, "dst": 2, "app": file, "start_jitter_ns": jitter_ns}]);
        run(&p)["flows"][0]["completed_s"].as_f64().unwrap()
    };
    let at_once = completed(0, 1);
    let delays: Vec<f64> = (1..=5)
        .map(|seed| completed(5_000_000, seed) - at_once)
        .collect();
    assert_eq!(completed(5_000_000, 1) - at_once, delays[0]);
    for (k, delay) in delays.iter().enumerate() {
        assert!((0.0..5e-3).contains(delay), "{delays:?}");
        assert!(!delays[..k].contains(delay), "{delays:?}");
    }
    let mut p = dumbbell();
    p["flows"] = json!([{"src": 0, "dst": 2, "app": file},
        {"src": 1, "dst": 3, "app": file, "after": 0, "start_jitter_ns": 1}]);
    assert!(refused(&p).starts_with("flows.1.start_jitter_ns"));
}

#[test]
fn flow_openings_are_the_draws_the_simulation_opens_flows_at() {
    // What the emu backend opens its parallel connections at (tcplab._sim.flow_openings):
    // each flow its own draw after its start, the same for one seed.
    let file = json!({"kind": "file", "message_size": 65536, "bytes": 10_000});
    let plan = |seed: u64, flows: usize| {
        let mut p = dumbbell();
        p["seed"] = json!(seed);
        let flow = json!({"src": 0, "dst": 2, "app": file, "start_ns": 1_000_000,
            "start_jitter_ns": 20_000_000});
        p["flows"] = json!(vec![flow; flows]);
        p
    };
    let openings = |p: &Value| tcplab_sim::flow_openings_json(&complete(p)).unwrap();
    let four = openings(&plan(7, 4));
    assert_eq!(four, openings(&plan(7, 4)));
    assert_ne!(four, openings(&plan(8, 4)));
    for (k, at) in four.iter().enumerate() {
        assert!((1_000_000..21_000_000).contains(at), "{four:?}");
        assert!(!four[..k].contains(at), "{four:?}");
    }
    // A file alone on the path finishes later than one opened at 0 by exactly its opening.
    let alone = plan(7, 1);
    let mut at_zero = alone.clone();
    at_zero["flows"][0]["start_ns"] = json!(0);
    at_zero["flows"][0]["start_jitter_ns"] = json!(0);
    let completed = |p: &Value| run(p)["flows"][0]["completed_s"].as_f64().unwrap();
    let later = completed(&alone) - completed(&at_zero);
    assert!(
        (later - openings(&alone)[0] as f64 / 1e9).abs() < 1e-9,
        "{later}"
    );
    assert!(tcplab_sim::flow_openings_json("{}").is_err());
}

#[test]
fn plan_errors_name_the_field() {
    let mut p = dumbbell();
    p["flows"][0]["src"] = json!(7);
    assert!(refused(&p).starts_with("flows.0.src"));
    let mut p = dumbbell();
    p["links"][2]["nodes"] = json!([2, 2]);
    assert!(refused(&p).starts_with("links.2.nodes: a link joins two different nodes"));
    p["links"][2].as_object_mut().unwrap().remove("nodes");
    assert!(refused(&p).contains("missing field `nodes`"));
    let mut p = dumbbell();
    p["flows"] = json!([]);
    assert!(refused(&p).starts_with("flows: at least one flow"));
    let mut p = dumbbell();
    p["hosts"] = json!([p["hosts"][0]]);
    assert!(refused(&p).starts_with("hosts: at least 2 hosts"));
    let mut p = dumbbell();
    p["links"].as_array_mut().unwrap().remove(2);
    assert!(refused(&p).starts_with("flows.0: no path"));
    let mut p = dumbbell();
    p["flows"][1]["after"] = json!(0);
    assert!(refused(&p).starts_with("flows.1.after"));
    let mut p = dumbbell();
    p["flows"][0]["app"] = json!({"kind": "rr", "message_size": 1, "bytes": null});
    assert!(refused(&p).starts_with("flows.0.app.request_size"));
    let mut p = dumbbell();
    p["hosts"][0]["cpu"] = json!({"per_packet_ns": 1, "per_byte_ns": 0, "per_call_ns": 0,
        "storage_per_byte_ns": 0, "ring_packets": 0});
    assert!(refused(&p).starts_with("hosts.0.cpu.ring_packets"));
}

/// One flow to a receiver whose CPU needs 1.5 ms per packet behind a 100 Mb/s link: the
/// sender's initial window arrives in about 1.2 ms, far faster than it is processed.
fn slow_receiver(ring_packets: u64) -> Value {
    let mut p = dumbbell();
    p["flows"] = json!([{"src": 0, "dst": 2, "app": bulk()}]);
    p["hosts"][2]["cpu"] = json!({"per_packet_ns": 1_500_000, "per_byte_ns": 0,
        "per_call_ns": 0, "storage_per_byte_ns": 0, "ring_packets": ring_packets});
    p["links"][2] = link([4, 5], 100_000_000);
    p
}

#[test]
fn a_receiver_slower_than_the_link_overflows_a_small_ring_only() {
    let small = run(&slow_receiver(4));
    let large = run(&slow_receiver(1000));
    assert!(small["summary"]["ring_drops"].as_u64().unwrap() > 0);
    assert!(small["summary"]["retransmits"].as_u64().unwrap() > 0);
    assert_eq!(large["summary"]["ring_drops"], 0);
    // Either way the receiver's CPU is the bottleneck: it processes each data segment and
    // sends an ACK for every second one, 1460 bytes per 2.25 ms.
    for r in [&small, &large] {
        assert!(r["summary"]["goodput_bps"].as_f64().unwrap() < 1460.0 * 8.0 / 2.25e-3);
        assert!(r["hosts"][2]["cpu_utilisation"].as_f64().unwrap() > 0.85);
    }
}
