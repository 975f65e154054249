//! Media streams through the public entry point: exact one-way delays on a clean path, the
//! configured loss on a lossy one, and TCP's head-of-line blocking on a lossy GEO hop.

mod common;

use common::{refused, run};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
/// PPP framing as tcplab.links gives it (p2p): 2 bytes per frame.
const PPP: u64 = 2;

fn tcp() -> Value {
    json!({"cc": "newreno", "sndbuf": 65536, "rcvbuf": 65536, "mss": 1460,
        "initial_window": 10, "window_scaling": false, "sack": false, "timestamps": false,
        "abc": false, "hystart": false, "delayed_ack": true, "delack_timeout_ns": 200 * MS,
        "nagle": false, "fast_retransmit": true, "min_rto_ns": S,
        "cubic_variant": "rfc9438", "reno_variant": "rfc5681", "hystart_variant": "rfc9406", "quickack": false,
        "initial_rwnd": null, "nagle_variant": "rfc896", "rto_form": "rfc6298",
        "cwnd_validation": false, "handshake": true, "loss_recovery": "classic", "dsack": false, "frto": false, "undo": false, "slow_start_after_idle": false, "gso": false, "ecn": "off", "sndbuf_accounting": "payload"})
}

fn channel(rate_bps: u64, delay_ns: u64, error: Value) -> Value {
    json!({"rate_bps": rate_bps, "delay_ns": delay_ns, "queue": {"packets": 100},
        "error": error, "framing": {"overhead_bytes": PPP, "min_payload_bytes": 0}})
}

fn link(rate_bps: u64, delay_ns: u64, error: Value) -> Value {
    json!({"forward": channel(rate_bps, delay_ns, error),
        "reverse": channel(rate_bps, delay_ns, json!({"kind": "none"}))})
}

fn stream(name: &str, transport: &str, interval_ns: u64, size: u64) -> Value {
    json!({"name": name, "transport": transport, "interval_ns": interval_ns,
        "message_size": size})
}

/// Hosts a and b over `links` in a row, each stream on its own flow: from a to b, or from b
/// to a for a stream marked `"direction": "downstream"`.
fn plan(duration_ns: u64, links: Vec<Value>, streams: Vec<Value>) -> Value {
    let host = |name: &str| json!({"name": name, "tcp": tcp()});
    let flows: Vec<Value> = streams
        .into_iter()
        .map(|mut stream| {
            // The flow runs the stream's way; the plan's streams have no direction.
            let direction = stream.as_object_mut().unwrap().remove("direction");
            let down = direction == Some(json!("downstream"));
            let app = json!({"kind": "media", "message_size": 1, "streams": [stream]});
            json!({"src": usize::from(down), "dst": usize::from(!down), "app": app})
        })
        .collect();
    let mut plan = common::path(
        json!({"seed": 1, "duration_ns": duration_ns, "interval_ns": S,
        "trace_interval_ns": S, "hosts": [host("a"), host("b")], "links": links,
        "app": {"kind": "bulk", "message_size": 1}}),
    );
    plan["flows"] = json!(flows);
    plan
}

/// `plan` with all its streams on the first flow's one connection.
fn shared(mut plan: Value) -> Value {
    let streams: Vec<Value> = plan["flows"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["app"]["streams"].as_array().unwrap().clone())
        .collect();
    plan["flows"][0]["app"]["streams"] = json!(streams);
    plan["flows"][0]["app"]["shared_connection"] = json!(true);
    plan["flows"] = json!([plan["flows"][0].clone()]);
    plan
}

fn ns(values: &Value) -> Vec<Option<u64>> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(Value::as_u64)
        .collect()
}

/// Each message's one-way delay; None for one that never arrived.
fn delays(stream: &Value) -> Vec<Option<u64>> {
    let sent = ns(&stream["sent_ns"]);
    ns(&stream["received_ns"])
        .into_iter()
        .zip(sent)
        .map(|(r, s)| Some(r? - s?))
        .collect()
}

/// Serialization of `ip_bytes` in a PPP frame at `rate_bps`, in whole ns (rates here divide
/// evenly).
fn wire_ns(ip_bytes: u64, rate_bps: u64) -> u64 {
    (ip_bytes + PPP) * 8 * S / rate_bps
}

#[test]
fn a_udp_stream_on_a_clean_path_takes_exactly_propagation_plus_serialization() {
    // Two store-and-forward hops; 160-byte audio every 20 ms: IP 20 + UDP 8 + 160 bytes.
    let rate = 2_000_000;
    let links = vec![
        link(rate, 250 * MS, json!({"kind": "none"})),
        link(8_000_000, 5 * MS, json!({"kind": "none"})),
    ];
    let p = plan(10 * S, links, vec![stream("audio", "udp", 20 * MS, 160)]);
    let result = run(&p);
    let audio = &result["streams"][0];
    assert_eq!(audio["stream"], "audio");
    assert_eq!(audio["transport"], "udp");
    let expected = 250 * MS + wire_ns(188, rate) + 5 * MS + wire_ns(188, 8_000_000);
    let d = delays(audio);
    // Messages due at 0, 20 ms, ..., 9.98 s; those sent in the last 255 ms are in flight.
    assert_eq!(d.len(), 500);
    let arrived: Vec<u64> = d.iter().flatten().copied().collect();
    assert_eq!(
        arrived.len(),
        500 - 12,
        "those sent by 9.744 s arrive by 10 s"
    );
    assert!(
        arrived.iter().all(|&x| x == expected),
        "{expected} {arrived:?}"
    );
    // Inter-arrival equals the send interval.
    let received: Vec<u64> = ns(&audio["received_ns"]).into_iter().flatten().collect();
    assert!(received.windows(2).all(|w| w[1] - w[0] == 20 * MS));
    let sent = ns(&audio["sent_ns"]);
    assert_eq!(sent[1], Some(20 * MS));
}

#[test]
fn a_udp_message_above_the_mtu_arrives_with_its_last_fragment() {
    // 3000 bytes + 8 of UDP header over a 1500-byte MTU (MSS 1460): IP payloads of 1480,
    // 1480 and 48 bytes, serialized back to back; the message is in when the last one is.
    let rate = 1_000_000;
    let p = plan(
        2 * S,
        vec![link(rate, 100 * MS, json!({"kind": "none"}))],
        vec![stream("video", "udp", 500 * MS, 3000)],
    );
    let result = run(&p);
    let frames = wire_ns(1500, rate) * 2 + wire_ns(68, rate);
    assert_eq!(delays(&result["streams"][0])[0], Some(frames + 100 * MS));
    assert_eq!(result["links"][0]["packets"], 3 * 4);
}

#[test]
fn a_tcp_stream_on_an_open_window_takes_exactly_propagation_plus_serialization() {
    // Nagle off and a window far above the stream's needs: each 1000-byte message goes out as
    // one segment (IP 20 + TCP 20 + 1000 bytes) the moment it is written.
    let rate = 2_000_000;
    let p = plan(
        5 * S,
        vec![link(rate, 250 * MS, json!({"kind": "none"}))],
        vec![stream("video", "tcp", 100 * MS, 1000)],
    );
    let result = run(&p);
    let video = &result["streams"][0];
    let d = delays(video);
    let expected = 250 * MS + wire_ns(1040, rate);
    // Sent every 100 ms from the open at 0.5 s; those sent by 4.75 s are in by 5 s.
    assert_eq!(d.iter().flatten().count(), 43);
    assert!(d.iter().flatten().all(|&x| x == expected), "{d:?}");
    // The stream starts once the connection is open: one round trip of handshake, a SYN and
    // a SYN-ACK of 44 bytes each (IP and TCP headers and the MSS option).
    let open = 2 * (250 * MS + wire_ns(44, rate));
    assert_eq!(ns(&video["sent_ns"])[0], Some(open));
}

#[test]
fn a_lossy_path_loses_the_configured_share_of_udp_messages() {
    let p = plan(
        20 * S,
        vec![link(
            10_000_000,
            10 * MS,
            json!({"kind": "loss", "p": 0.05}),
        )],
        vec![stream("audio", "udp", 10 * MS, 160)],
    );
    let d = delays(&run(&p)["streams"][0]);
    // Sent before 19.98 s: all but the in-flight last message had time to arrive.
    let judged = &d[..d.len() - 2];
    let lost = judged.iter().filter(|x| x.is_none()).count() as f64;
    let ratio = lost / judged.len() as f64;
    // 1998 messages: the binomial standard deviation is 0.0049; allow four of them.
    assert!((ratio - 0.05).abs() < 0.02, "loss ratio {ratio}");
}

#[test]
fn tcp_head_of_line_blocking_on_a_lossy_geo_hop_delays_messages_by_round_trips() {
    // Seed 000's videoconference over TCP: a 2.048 Mb/s GEO hop, 275 ms each way.
    let rate = 2_048_000;
    let one_way = 275 * MS;
    let rtt = 2 * one_way;
    let run_with = |error: Value| {
        let p = plan(
            60 * S,
            vec![link(rate, one_way, error)],
            vec![stream("video", "tcp", 66 * MS, 1000)],
        );
        delays(&run(&p)["streams"][0])
            .into_iter()
            .flatten()
            .collect::<Vec<u64>>()
    };
    let clean = run_with(json!({"kind": "none"}));
    let lossy = run_with(json!({"kind": "ber", "ber": 2e-5}));
    let mean = |d: &[u64]| d.iter().sum::<u64>() as f64 / d.len() as f64;
    let max_clean = *clean.iter().max().unwrap();
    assert!(max_clean < one_way + 10 * MS, "clean: {max_clean}");
    // A lost segment is resent at best one round trip later (fast retransmit), and every
    // message behind it waits in the receive buffer until it arrives.
    let max_lossy = *lossy.iter().max().unwrap();
    assert!(max_lossy >= one_way + rtt, "lossy max {max_lossy}");
    assert!(mean(&lossy) > mean(&clean) + 10.0 * MS as f64);
}

#[test]
fn plan_errors_name_the_stream_field() {
    let clean = || link(1_000_000, MS, json!({"kind": "none"}));
    let mut p = plan(S, vec![clean()], vec![stream("a", "udp", 0, 10)]);
    assert!(refused(&p).starts_with("flows.0.app.streams.0.interval_ns"));
    p["flows"][0]["app"]["streams"] = json!([]);
    assert!(refused(&p).starts_with("flows.0.app.streams:"));
    p = shared(plan(
        S,
        vec![clean()],
        vec![stream("a", "tcp", MS, 10), stream("a", "tcp", MS, 10)],
    ));
    assert!(refused(&p).starts_with("flows.0.app.streams.1.name"));
    p = plan(
        S,
        vec![clean()],
        vec![stream("a", "udp", MS, 10), stream("a", "tcp", MS, 10)],
    );
    assert!(refused(&p).starts_with("flows.1.app.streams.0.name"));
    p = plan(S, vec![clean()], vec![stream("a", "udp", MS, 70_000)]);
    assert!(refused(&p).starts_with("flows.0.app.streams.0.message_size"));
    p = plan(S, vec![clean()], vec![stream("a", "udp", MS, 10)]);
    p["flows"][0]["app"]["kind"] = json!("bulk");
    assert!(refused(&p).starts_with("flows.0.app.streams:"));
    p = shared(plan(
        S,
        vec![clean()],
        vec![stream("a", "tcp", MS, 10), stream("b", "udp", MS, 10)],
    ));
    assert!(refused(&p).starts_with("flows.0.app.streams:"));
    p = plan(S, vec![clean()], vec![stream("a", "udp", MS, 10)]);
    p["trace"] = json!({"pcap": [{"link": 0, "direction": "both"}], "snaplen": 100});
    assert!(tcplab_sim::run_json_capturing(&common::complete(&p))
        .unwrap_err()
        .to_string()
        .starts_with("trace.pcap"));
}

#[test]
fn media_runs_are_deterministic_and_downstream_streams_leave_the_server() {
    let mut down = stream("video", "udp", 30 * MS, 500);
    down["direction"] = json!("downstream");
    down["max_message_size"] = json!(900);
    let p = plan(
        3 * S,
        vec![link(
            1_000_000,
            20 * MS,
            json!({"kind": "ber", "ber": 1e-5}),
        )],
        vec![down, stream("audio", "tcp", 20 * MS, 160)],
    );
    let result = run(&p);
    assert_eq!(result, run(&p));
    assert_eq!(result["streams"][0]["src"], "b");
    assert_eq!(result["streams"][1]["src"], "a");
    // The downstream datagrams used the reverse direction of the link.
    assert_eq!(result["links"][1]["direction"], "reverse");
    assert!(result["links"][1]["packets"].as_u64().unwrap() >= 100);
}

#[test]
fn a_skipping_tcp_sender_drops_frames_instead_of_queueing_them() {
    // 2000-byte frames every 10 ms (1.6 Mb/s) into a 1 Mb/s link: the stream cannot keep
    // up. Queued, each frame waits behind all the earlier ones; skipped, a frame is dropped
    // while the last is not all in the 16 KiB send buffer, so none waits much longer than
    // it takes that buffer and the frame to drain.
    let rate = 1_000_000;
    let run_with = |skip: bool| {
        let mut video = stream("video", "tcp", 10 * MS, 2000);
        video["skip_when_blocked"] = json!(skip);
        let mut p = plan(
            20 * S,
            vec![link(rate, 10 * MS, json!({"kind": "none"}))],
            vec![video],
        );
        for host in 0..2 {
            p["hosts"][host]["tcp"]["sndbuf"] = json!(16_384);
        }
        run(&p)["streams"][0].clone()
    };
    let queued = run_with(false);
    let skipped = run_with(true);
    assert_eq!(queued["skipped"], 0);
    let max = |s: &Value| delays(s).into_iter().flatten().max().unwrap();
    assert!(
        max(&queued) > 5 * S,
        "queued frames fall behind without bound"
    );
    let drain = wire_ns(16_384 + 2000 + 40 * 14, rate) + 10 * MS;
    assert!(max(&skipped) < drain, "{} >= {drain}", max(&skipped));
    // About 1 Mb/s of 1.6 Mb/s gets through: some 35-40 % of the frames are dropped. The
    // stream starts after the handshake (20 ms), so 1998 fall due.
    let dropped = skipped["skipped"].as_u64().unwrap();
    let sent = skipped["sent_ns"].as_array().unwrap().len() as u64;
    assert_eq!(dropped + sent, 1998);
    assert!((600..900).contains(&dropped), "{dropped}");
}

#[test]
fn streams_sharing_a_connection_wait_behind_each_other() {
    // Video offered at 1.6 Mb/s into 1 Mb/s, and 160-byte audio every 20 ms, both over TCP.
    // On their own connections the audio only shares the link's queue with the video; on
    // one connection every audio message also waits behind the video's unsent backlog
    // (head-of-line blocking in the sender), which grows without bound.
    let run_with = |shared: bool| {
        let p = plan(
            20 * S,
            vec![link(1_000_000, 10 * MS, json!({"kind": "none"}))],
            vec![
                stream("video", "tcp", 10 * MS, 2000),
                stream("audio", "tcp", 20 * MS, 160),
            ],
        );
        run(&if shared { self::shared(p) } else { p })
    };
    let max = |s: &Value| delays(s).into_iter().flatten().max().unwrap_or(u64::MAX);
    let separate = run_with(false);
    let shared = run_with(true);
    assert_eq!(separate["flows"].as_array().unwrap().len(), 2);
    assert_eq!(shared["flows"].as_array().unwrap().len(), 1);
    assert_eq!(shared["streams"][1]["stream"], "audio");
    assert_eq!(shared["streams"][0]["flow"], shared["streams"][1]["flow"]);
    let (alone, behind) = (max(&separate["streams"][1]), max(&shared["streams"][1]));
    // Alone, the audio waits at most for the link's queue (100 packets, about 1.2 s at
    // 1 Mb/s) and a retransmission; behind the video, for seconds of backlog.
    assert!(
        behind > 5 * alone,
        "alone {alone}, behind the video {behind}"
    );
    let mut p = plan(
        S,
        vec![link(1_000_000, MS, json!({"kind": "none"}))],
        vec![stream("video", "tcp", 10 * MS, 2000)],
    );
    p["flows"][0]["app"] = json!({"kind": "bulk", "message_size": 1, "shared_connection": true});
    assert!(refused(&p).starts_with("flows.0.app.shared_connection"));
    // A pause between reads belongs to a bulk, file or message receiver only.
    p["flows"][0]["app"] = json!({"kind": "rr", "message_size": 1, "request_size": 1,
        "response_size": 1, "read_delay_ns": 1});
    assert!(refused(&p).starts_with("flows.0.app.read_delay_ns"));
}
