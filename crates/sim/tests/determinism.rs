//! Same plan and seed → the same result, byte for byte; another seed → another draw.

mod common;

fn plan(seed: u64) -> String {
    let tcp = r#"{"cc":"newreno","sndbuf":32768,"rcvbuf":32768,"mss":1460,"initial_window":10,
        "window_scaling":false,"sack":false,"timestamps":false,"abc":false,"hystart":false,"delayed_ack":true,"delack_timeout_ns":200000000,
        "nagle":true,"nagle_variant":"rfc896","fast_retransmit":true,"min_rto_ns":1000000000,"cwnd_validation":false,"handshake":true,"loss_recovery":"classic","dsack":false,"frto":false,"undo":false,"slow_start_after_idle":false,"gso":false,"ecn":"off","sndbuf_accounting":"payload",
        "cubic_variant":"rfc9438","reno_variant":"rfc5681","hystart_variant":"rfc9406","quickack":false,
        "initial_rwnd":null,"rto_form":"rfc6298"}"#;
    let channel = |error: &str| {
        format!(
            r#"{{"rate_bps":2048000,"delay_ns":275000000,"queue":{{"packets":100}},
            "error":{error},"framing":{{"overhead_bytes":2,"min_payload_bytes":0}}}}"#
        )
    };
    let partial = format!(
        r#"{{"seed":{seed},"duration_ns":60000000000,"interval_ns":1000000000,
        "trace_interval_ns":10000000,
        "hosts":[{{"name":"a","tcp":{tcp}}},{{"name":"b","tcp":{tcp}}}],
        "links":[{{"nodes":[0,1],"forward":{},"reverse":{}}}],
        "flows":[{{"src":0,"dst":1,"app":{{"kind":"bulk","message_size":2097152,"bytes":null}}}}]}}"#,
        channel(r#"{"kind":"ber","ber":3e-6}"#),
        channel(r#"{"kind":"loss","p":0.001}"#),
    );
    common::complete(&serde_json::from_str(&partial).unwrap())
}

#[test]
fn same_plan_and_seed_give_identical_json() {
    let a = tcplab_sim::run_json(&plan(7)).unwrap();
    let b = tcplab_sim::run_json(&plan(7)).unwrap();
    assert_eq!(a, b);
    assert!(a.contains("\"retransmits\""));
}

#[test]
fn another_seed_draws_other_errors() {
    let a = tcplab_sim::run_json(&plan(7)).unwrap();
    let b = tcplab_sim::run_json(&plan(8)).unwrap();
    assert_ne!(a, b);
}

#[test]
fn invalid_plans_are_errors_naming_the_field() {
    let bad = plan(1).replace("\"rate_bps\":2048000", "\"rate_bps\":0");
    let err = tcplab_sim::run_json(&bad).unwrap_err().to_string();
    assert!(err.starts_with("links.0.forward.rate_bps"), "{err}");
    let unknown = plan(1).replace("\"seed\"", "\"sed\"");
    assert!(tcplab_sim::run_json(&unknown).is_err());
}
