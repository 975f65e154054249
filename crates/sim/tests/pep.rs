//! A split-connection PEP (RFC 3135 §2.4) through the public entry point: each segment
//! runs its own TCP, the relay's bounded buffer pushes back on the upstream sender, bytes
//! are conserved, and on seed 004's satellite path a PEP with a large initial window on
//! the satellite side beats the unsplit connection.

mod common;

use common::{path, refused, run};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;
const MSS: u64 = 1460;

/// Linux-like TCP (the linux-4.18 profile's settings) with `cc` and initial window `iw`.
fn tcp(cc: &str, iw: u32) -> Value {
    json!({"cc": cc, "sndbuf": 4_194_304, "rcvbuf": 3_145_728, "mss": MSS,
        "initial_window": iw, "window_scaling": true, "sack": true, "timestamps": true,
        "abc": true, "hystart": false, "delayed_ack": true, "delack_timeout_ns": 40 * MS,
        "nagle": true, "fast_retransmit": true, "min_rto_ns": 200 * MS,
        "cubic_variant": "rfc9438", "reno_variant": "rfc5681", "hystart_variant": "rfc9406", "quickack": false,
        "initial_rwnd": null, "nagle_variant": "rfc896", "rto_form": "rfc6298",
        "cwnd_validation": false, "handshake": true, "loss_recovery": "classic", "dsack": false, "frto": false, "undo": false, "slow_start_after_idle": false, "gso": false, "ecn": "off", "sndbuf_accounting": "payload"})
}

fn channel(rate_bps: u64, delay_ns: u64, queue_bytes: u64) -> Value {
    json!({"rate_bps": rate_bps, "delay_ns": delay_ns, "queue": {"bytes": queue_bytes},
        "error": {"kind": "none"}, "framing": {"overhead_bytes": 18, "min_payload_bytes": 46}})
}

fn link(rate_bps: u64, delay_ns: u64, queue_bytes: u64) -> Value {
    let ch = channel(rate_bps, delay_ns, queue_bytes);
    json!({"forward": ch, "reverse": ch})
}

/// Seed 004's path behind a short terrestrial hop: 100 Mb/s, 5 ms, then the 100 Mb/s,
/// 300 ms satellite link with a queue of one bandwidth-delay product (7.5 MB); the client
/// runs Reno with Linux's initial window of 10 segments.
fn seed004(duration_ns: u64, app: Value) -> Value {
    path(
        json!({"seed": 1, "duration_ns": duration_ns, "interval_ns": 1_000_000_000u64,
        "trace_interval_ns": 100 * MS,
        "hosts": [{"name": "client", "tcp": tcp("reno", 10)},
                  {"name": "server", "tcp": tcp("reno", 10)}],
        "links": [link(100_000_000, 5 * MS, 7_500_000), link(100_000_000, 300 * MS, 7_500_000)],
        "app": app}),
    )
}

/// A PEP between the two links (node 2: the router after link 0).
fn pep(client_side: Value, server_side: Value, buffer: u64) -> Value {
    json!({"name": "gateway", "node": 2, "buffer": buffer, "client_side": client_side,
        "server_side": server_side})
}

fn with_pep(mut plan: Value, pep: Value) -> Value {
    plan["peps"] = json!([pep]);
    plan
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn a_satellite_side_with_a_large_initial_window_beats_the_unsplit_connection() {
    // Issue 7, item 4, on seed 004's path for the paper's 10 s: end to end, a PEP whose
    // satellite side runs CUBIC with an initial window of 2560 segments delivers more than
    // the unsplit Reno connection with 10.
    let bulk = json!({"kind": "bulk", "message_size": 131_072, "bytes": null});
    let unsplit = run(&seed004(10_000 * MS, bulk.clone()));
    let split = run(&with_pep(
        seed004(10_000 * MS, bulk),
        pep(tcp("reno", 10), tcp("cubic", 2560), 4 << 20),
    ));
    let (alone, through) = (
        u(&unsplit["summary"]["bytes_delivered"]),
        u(&split["summary"]["bytes_delivered"]),
    );
    assert!(
        through as f64 > 1.2 * alone as f64,
        "PEP {through} B vs unsplit {alone} B"
    );
    // The flow row is the end-to-end view: client to server, what the server read.
    let row = &split["flows"][0];
    assert_eq!(
        (row["src"].as_str(), row["dst"].as_str()),
        (Some("client"), Some("server"))
    );
    assert_eq!(u(&row["bytes_delivered"]), through);
    // Each connection's own row: the terrestrial one ends at the gateway.
    let segments = split["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 2);
    assert_eq!(segments[0]["dst"], "gateway");
    assert_eq!(segments[1]["src"], "gateway");
    assert_eq!(u(&segments[1]["bytes_delivered"]), through);
    assert!(unsplit.get("segments").is_none(), "no PEP, no segment rows");
}

#[test]
fn with_the_same_tcp_on_both_sides_the_pep_costs_nothing() {
    // Why the split transfer cannot finish later, with the client's TCP on both sides and
    // no loss. The gateway's connection sends its SYN the instant the client's SYN reaches
    // the gateway, which is when the unsplit SYN passes it; from then on the gateway's
    // sender is the unsplit sender moved to the gateway: the same TCP, over the same
    // satellite link, but with a 600 ms round trip instead of 610 ms, so each of its
    // rounds (and each window it may send) comes no later than the unsplit one's. It could
    // only fall behind if it had nothing to send, and it never does: the client's
    // connection, with the same TCP, a 10 ms round trip and as fast a link, has its data
    // at the gateway before the satellite side's window asks for it, and the 4 MiB relay
    // exceeds the 3 MiB window the satellite side can have in flight. The relay itself
    // copies in no time, so the PEP costs at most its relay's delay, which is zero here;
    // it finishes earlier by what the shorter round trips save.
    let file = json!({"kind": "file", "message_size": 131_072, "bytes": 20_000 * MSS});
    let unsplit = run(&seed004(60_000 * MS, file.clone()));
    let split = run(&with_pep(
        seed004(60_000 * MS, file),
        pep(tcp("reno", 10), tcp("reno", 10), 4 << 20),
    ));
    let done = |r: &Value| f(&r["flows"][0]["completed_s"]);
    assert!(split["summary"]["completed"].as_bool().unwrap());
    assert!(
        done(&split) <= done(&unsplit),
        "PEP {} s vs unsplit {} s",
        done(&split),
        done(&unsplit)
    );
}

#[test]
fn a_full_relay_closes_the_upstream_window_and_no_byte_is_lost() {
    // The gateway onwards runs at 2 Mb/s: the relay's 64 KiB fill, the relay stops
    // reading, the gateway's receive buffer fills and the client's sender is held back by
    // the window it advertises. Bytes are conserved: what the relay read is at the server,
    // in the gateway's send buffer or the relay (a file completes with equal counts).
    let buffer: u64 = 65_536;
    let mut small = tcp("reno", 10);
    small["sndbuf"] = json!(65_536);
    small["rcvbuf"] = json!(65_536);
    let bulk = json!({"kind": "bulk", "message_size": 131_072, "bytes": null});
    let mut plan = with_pep(
        seed004(5_000 * MS, bulk),
        pep(small.clone(), small.clone(), buffer),
    );
    let ch = channel(2_000_000, 300 * MS, 7_500_000);
    plan["links"][1]["forward"] = ch.clone();
    plan["links"][1]["reverse"] = ch;
    let result = run(&plan);
    let segments = result["segments"].as_array().unwrap();
    assert_eq!(u(&segments[0]["relay_peak_bytes"]), buffer);
    assert!(segments[1]["relay_peak_bytes"].is_null());
    let read_by_relay = u(&segments[0]["bytes_delivered"]);
    let at_server = u(&segments[1]["bytes_delivered"]);
    // The server reads at once, so what is between them sits in the relay or in the
    // gateway's send buffer.
    assert!(at_server <= read_by_relay);
    assert!(read_by_relay - at_server <= buffer + 65_536);
    assert!(f(&result["summary"]["limited_by"]["rwnd"]) > 0.5);

    let file = json!({"kind": "file", "message_size": 131_072, "bytes": 300 * MSS + 7});
    plan["flows"][0]["app"] = file;
    plan["duration_ns"] = json!(60_000 * MS);
    let result = run(&plan);
    assert!(result["summary"]["completed"].as_bool().unwrap());
    let segments = result["segments"].as_array().unwrap();
    for s in segments {
        assert_eq!(u(&s["bytes_delivered"]), 300 * MSS + 7);
    }
}

#[test]
fn a_pep_sits_at_a_router_and_relays_one_way_transfers() {
    let bulk = json!({"kind": "bulk", "message_size": 131_072, "bytes": null});
    let mut plan = with_pep(seed004(MS, bulk), pep(tcp("reno", 10), tcp("reno", 10), 1));
    plan["peps"][0]["node"] = json!(1);
    assert!(refused(&plan).starts_with("peps.0.node: a PEP sits at a router node, 2 to 2"));
    plan["peps"][0]["node"] = json!(2);
    plan["peps"][0]["buffer"] = json!(0);
    assert!(refused(&plan).starts_with("peps.0.buffer"));
    plan["peps"][0]["buffer"] = json!(1);
    plan["peps"][0]["server_side"]["cc"] = json!("vegas");
    assert!(refused(&plan).starts_with("peps.0.server_side.cc: unknown congestion control"));
    plan["peps"][0]["server_side"]["cc"] = json!("reno");
    plan["flows"][0]["app"] = json!({"kind": "rr", "message_size": 1, "bytes": null,
        "request_size": 1, "response_size": 1});
    assert!(refused(&plan).starts_with("flows.0.app.kind: a PEP relays one-way transfers"));
}

#[test]
fn a_message_sent_back_is_split_the_other_way() {
    // A message from the server to the client: the gateway accepts the server's
    // connection (its client side faces the server) and opens one to the client.
    let message = json!({"kind": "message", "message_size": 65_536, "bytes": 100_000});
    let mut plan = seed004(10_000 * MS, message);
    plan["flows"][0]["src"] = json!(1);
    plan["flows"][0]["dst"] = json!(0);
    let result = run(&with_pep(
        plan,
        pep(tcp("reno", 10), tcp("reno", 10), 1 << 20),
    ));
    assert!(result["summary"]["completed"].as_bool().unwrap());
    let row = &result["flows"][0];
    assert_eq!(
        (row["src"].as_str(), row["dst"].as_str()),
        (Some("server"), Some("client"))
    );
    assert_eq!(result["segments"][0]["src"], "server");
    assert_eq!(result["segments"][0]["dst"], "gateway");
    assert_eq!(u(&result["summary"]["bytes_delivered"]), 100_000);
}
