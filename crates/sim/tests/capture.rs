//! Packet captures through the public entry point: every frame put on a captured link
//! direction is in the pcap file, error losses included, and nothing else.

mod common;

fn plan(trace: &str) -> String {
    let tcp = r#"{"cc":"newreno","sndbuf":65536,"rcvbuf":65536,"mss":1460,"initial_window":10,
        "window_scaling":true,"sack":true,"timestamps":true,"abc":false,"hystart":false,"delayed_ack":true,
        "delack_timeout_ns":200000000,"nagle":true,"nagle_variant":"rfc896","fast_retransmit":true,
        "min_rto_ns":1000000000,"cwnd_validation":false,"handshake":true,"loss_recovery":"classic","dsack":false,"frto":false,"undo":false,"slow_start_after_idle":false,"gso":false,"ecn":"off","sndbuf_accounting":"payload",
        "cubic_variant":"rfc9438","reno_variant":"rfc5681","hystart_variant":"rfc9406","quickack":false,
        "initial_rwnd":null,"rto_form":"rfc6298"}"#;
    let channel = |rate: u64, queue: u64, error: &str| {
        format!(
            r#"{{"rate_bps":{rate},"delay_ns":20000000,"queue":{{"packets":{queue}}},
            "error":{error},"framing":{{"overhead_bytes":2,"min_payload_bytes":0}}}}"#
        )
    };
    let none = r#"{"kind":"none"}"#;
    let partial = format!(
        r#"{{"seed":3,"duration_ns":10000000000,"interval_ns":1000000000,
        "trace_interval_ns":10000000,
        "hosts":[{{"name":"a","tcp":{tcp}}},{{"name":"b","tcp":{tcp}}}],
        "routers":[{{"name":"r"}}],
        "links":[{{"nodes":[0,2],"forward":{},"reverse":{}}},{{"nodes":[2,1],"forward":{},"reverse":{}}}],
        "flows":[{{"src":0,"dst":1,"app":{{"kind":"bulk","message_size":65536,"bytes":null}}}}],
        "trace":{trace}}}"#,
        channel(10_000_000, 100, none),
        channel(10_000_000, 100, none),
        channel(2_000_000, 10, r#"{"kind":"loss","p":0.001}"#),
        channel(2_000_000, 100, r#"{"kind":"loss","p":0.02}"#),
    );
    common::complete(&serde_json::from_str(&partial).unwrap())
}

/// (source address, total length, TCP payload length) of each record.
fn records(pcap: &[u8]) -> Vec<([u8; 4], usize, usize)> {
    let mut out = Vec::new();
    let mut rest = &pcap[24..];
    while !rest.is_empty() {
        let kept = u32::from_le_bytes(rest[8..12].try_into().unwrap()) as usize;
        let original = u32::from_le_bytes(rest[12..16].try_into().unwrap()) as usize;
        let ip = &rest[16..16 + kept];
        let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        assert_eq!(total, original);
        let tcp_header = usize::from(ip[32] >> 4) * 4;
        out.push((
            ip[12..16].try_into().unwrap(),
            total,
            total - 20 - tcp_header,
        ));
        rest = &rest[16 + kept..];
    }
    out
}

#[test]
fn captures_hold_every_frame_that_went_onto_the_wire() {
    let trace = r#"{"pcap":[{"link":1,"direction":"both"},{"link":0,"direction":"forward"}],
        "snaplen":65535}"#;
    let (json, captures) = tcplab_sim::run_json_capturing(&plan(trace)).unwrap();
    let result: serde_json::Value = serde_json::from_str(&json).unwrap();
    let links = result["links"].as_array().unwrap();
    let packets = |i: usize| links[i]["packets"].as_u64().unwrap() as usize;
    assert_eq!(captures.len(), 2);
    assert_eq!(captures[0].name, "links.1");
    assert_eq!(captures[1].name, "links.0.forward");

    // The bottleneck drops at its queue and loses frames on both directions.
    assert!(links[2]["drops_queue"].as_u64().unwrap() > 0);
    assert!(links[2]["drops_error"].as_u64().unwrap() > 0);
    let link1 = records(&captures[0].pcap);
    let from = |records: &[([u8; 4], usize, usize)], host: u8| {
        records.iter().filter(|r| r.0 == [10, 0, 0, host]).count()
    };
    assert_eq!(from(&link1, 1), packets(2));
    assert_eq!(from(&link1, 2), packets(3));

    // On the first link the sender's segments are all there: it drops nothing.
    let link0 = records(&captures[1].pcap);
    assert_eq!(link0.len(), packets(0));
    let data = link0.iter().filter(|r| r.2 > 0).count() as u64;
    assert_eq!(data, result["summary"]["segments_sent"].as_u64().unwrap());
}

#[test]
fn the_json_entry_point_refuses_a_plan_that_captures() {
    let trace = r#"{"pcap":[{"link":0,"direction":"both"}],"snaplen":128}"#;
    let err = tcplab_sim::run_json(&plan(trace)).unwrap_err().to_string();
    assert!(err.starts_with("trace.pcap:"), "{err}");
    let none = r#"{"pcap":[],"snaplen":128}"#;
    assert!(tcplab_sim::run_json(&plan(none)).is_ok());
}

#[test]
fn capture_plans_are_checked() {
    let check = |trace: &str| {
        tcplab_sim::run_json_capturing(&plan(trace))
            .unwrap_err()
            .to_string()
    };
    let far = check(r#"{"pcap":[{"link":2,"direction":"both"}],"snaplen":128}"#);
    assert_eq!(far, "trace.pcap.0.link: there is no link 2; the path has 2");
    let twice = check(
        r#"{"pcap":[{"link":0,"direction":"reverse"},{"link":0,"direction":"reverse"}],
        "snaplen":128}"#,
    );
    assert_eq!(twice, "trace.pcap.1: links.0.reverse is captured twice");
    let snaplen = check(r#"{"pcap":[],"snaplen":0}"#);
    assert!(snaplen.starts_with("trace.snaplen: "), "{snaplen}");
}
