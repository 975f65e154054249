//! 802.11b links through the public entry point: the plan's wlan fields are checked and
//! name the field at fault, and a run over a shared medium is deterministic.

mod common;

use common::{refused, run};
use serde_json::{json, Value};

fn tcp() -> Value {
    json!({"cc": "newreno", "sndbuf": 65536, "rcvbuf": 65536, "mss": 1460,
        "initial_window": 2, "window_scaling": false, "sack": false, "timestamps": false,
        "abc": false, "hystart": false, "delayed_ack": true, "delack_timeout_ns": 200_000_000,
        "nagle": true, "fast_retransmit": true, "min_rto_ns": 1_000_000_000,
        "cubic_variant": "rfc9438", "reno_variant": "rfc5681", "hystart_variant": "rfc9406", "quickack": false,
        "initial_rwnd": null, "nagle_variant": "rfc896", "rto_form": "rfc6298",
        "cwnd_validation": false, "handshake": true, "loss_recovery": "classic", "dsack": false, "frto": false, "undo": false, "slow_start_after_idle": false, "gso": false, "ecn": "off", "sndbuf_accounting": "payload"})
}

fn channel(rate_bps: u64) -> Value {
    json!({"rate_bps": rate_bps, "delay_ns": 1_000, "queue": {"packets": 100},
        "error": {"kind": "none"}, "framing": {"overhead_bytes": 36, "min_payload_bytes": 0}})
}

fn wlan_link(nodes: [usize; 2]) -> Value {
    json!({"nodes": nodes, "forward": channel(11_000_000), "reverse": channel(11_000_000),
        "wlan": {"ap_end": 0, "ack_rate_bps": 2_000_000, "preamble": "long",
                 "retry_limit": 7, "ap_queue": {"packets": 50}}})
}

/// Two stations (hosts 0, 1) on access point router 3, wired to a server (host 2).
fn two_stations() -> Value {
    let host = |name: &str| json!({"name": name, "tcp": tcp()});
    let bulk = json!({"kind": "bulk", "message_size": 65536, "bytes": null});
    json!({"seed": 1, "duration_ns": 2_000_000_000u64, "interval_ns": 1_000_000_000,
        "trace_interval_ns": 100_000_000,
        "hosts": [host("sta1"), host("sta2"), host("server")],
        "routers": [{"name": "ap"}],
        "links": [wlan_link([3, 0]), wlan_link([3, 1]),
                  {"nodes": [3, 2], "forward": channel(100_000_000),
                   "reverse": channel(100_000_000)}],
        "flows": [{"src": 0, "dst": 2, "app": bulk}, {"src": 2, "dst": 1, "app": bulk}]})
}

#[test]
fn a_shared_medium_runs_the_same_every_time() {
    let result = run(&two_stations());
    assert_eq!(result, run(&two_stations()));
    for row in &result["links"].as_array().unwrap()[..4] {
        assert!(row["packets"].as_u64().unwrap() > 0, "{row}");
        assert!(row["retries"].is_u64() && row["collisions"].is_u64());
    }
    assert!(
        result["links"][4].get("retries").is_none(),
        "only wlan rows have them"
    );
}

#[test]
fn wlan_plan_errors_name_the_field() {
    let mut p = two_stations();
    p["links"][0]["forward"]["rate_bps"] = json!(54_000_000);
    assert!(refused(&p).starts_with("links.0.forward.rate_bps"));
    let mut p = two_stations();
    p["links"][1]["wlan"]["ack_rate_bps"] = json!(5_500_000);
    assert!(refused(&p).starts_with("links.1.wlan.ack_rate_bps"));
    let mut p = two_stations();
    p["links"][1]["wlan"]["ap_end"] = json!(2);
    assert!(refused(&p).starts_with("links.1.wlan.ap_end"));
    let mut p = two_stations();
    p["links"][1]["wlan"]["retry_limit"] = json!(4);
    assert!(refused(&p).starts_with("links.1.wlan:"));
    let mut p = two_stations();
    p["links"][1]["nodes"] = json!([3, 0]);
    p["flows"][1]["dst"] = json!(0);
    assert!(refused(&p).starts_with("links.1:"));
    let mut p = two_stations();
    p["links"][1]["wlan"]["ap_end"] = json!(1);
    p["links"][1]["wlan"]["medium"] = json!("m");
    p["links"][0]["wlan"]["medium"] = json!("m");
    assert!(refused(&p).starts_with("links.1.wlan.medium"));
}
