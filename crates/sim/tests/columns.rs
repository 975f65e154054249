//! The result's long parts as columns (src/columns.rs): the same values the JSON carries,
//! and a plan whose columns would not fit the budget refused before it runs.

mod common;

use serde_json::Value;
use tcplab_sim::columns::{Column, Values, BUDGET_BYTES};

fn plan(duration_ns: u64, trace_interval_ns: u64) -> String {
    let tcp = r#"{"cc":"newreno","sndbuf":65536,"rcvbuf":65536,"mss":1460,"initial_window":10,
        "window_scaling":false,"sack":false,"timestamps":false,"abc":false,"hystart":false,
        "delayed_ack":true,"delack_timeout_ns":200000000,"nagle":true,"nagle_variant":"rfc896",
        "fast_retransmit":true,"min_rto_ns":1000000000,"cwnd_validation":false,"handshake":true,
        "cubic_variant":"rfc9438","reno_variant":"rfc5681","hystart_variant":"rfc9406","quickack":false,
        "initial_rwnd":null,"rto_form":"rfc6298","loss_recovery":"classic","dsack":false,"frto":false,"undo":false,"slow_start_after_idle":false,"gso":false,"ecn":"off","sndbuf_accounting":"payload"}"#;
    let channel = r#"{"rate_bps":10000000,"delay_ns":20000000,"queue":{"packets":20},
        "error":{"kind":"loss","p":0.01},"framing":{"overhead_bytes":2,"min_payload_bytes":0}}"#;
    let partial = format!(
        r#"{{"seed":3,"duration_ns":{duration_ns},"interval_ns":1000000000,
        "trace_interval_ns":{trace_interval_ns},
        "hosts":[{{"name":"a","tcp":{tcp}}},{{"name":"b","tcp":{tcp}}}],
        "links":[{{"nodes":[0,1],"forward":{channel},"reverse":{channel}}}],
        "flows":[{{"src":0,"dst":1,"app":{{"kind":"bulk","message_size":2097152,"bytes":null}}}}]}}"#
    );
    common::complete(&serde_json::from_str(&partial).unwrap())
}

/// A column's value per row: runs repeated, divided integers divided.
fn decoded(column: &Column) -> Vec<f64> {
    let stored: Vec<f64> = match (&column.values, column.values.unsigned()) {
        (Values::F64(v), _) => v.clone(),
        (_, Some(v)) => v.iter().map(|&x| x as f64).collect(),
        (values, None) => panic!("{}: {values:?} is not a number column", column.name),
    };
    let stored = match column.divisor {
        Some(d) => stored.iter().map(|&x| x / d as f64).collect(),
        None => stored,
    };
    let Some(ends) = &column.run_ends else {
        return stored;
    };
    let mut rows = Vec::new();
    let mut start = 0;
    for (&value, &end) in stored.iter().zip(ends) {
        rows.extend(std::iter::repeat_n(value, (end - start) as usize));
        start = end;
    }
    rows
}

/// A JSON column as the numbers it holds.
fn numbers(column: &Value) -> Vec<f64> {
    let values = column.as_array().expect("a column is an array");
    values.iter().map(|v| v.as_f64().unwrap()).collect()
}

#[test]
fn columns_hold_what_the_json_holds() {
    let plan = plan(5_000_000_000, 10_000_000);
    let json: Value = serde_json::from_str(&tcplab_sim::run_json(&plan).unwrap()).unwrap();
    let (rows, tables, _) = tcplab_sim::run_columnar(&plan).unwrap();
    let rows: Value = serde_json::from_str(&rows).unwrap();
    assert_eq!(rows["summary"], json["summary"]);
    assert!(rows.get("trace").is_none() && rows.get("series").is_none());
    let names: Vec<_> = tables.iter().map(|t| t.name).collect();
    assert_eq!(names, ["series", "trace", "queue"]);
    for table in &tables {
        for column in &table.columns {
            let json_column = &json[table.name][column.name];
            if let Values::Labels { codes, labels } = &column.values {
                let names: Vec<&str> = codes.iter().map(|&c| labels[usize::from(c)]).collect();
                let expected: Vec<&str> = json_column
                    .as_array()
                    .expect("a column is an array")
                    .iter()
                    .map(|v| v.as_str().expect("a label"))
                    .collect();
                assert_eq!(names, expected, "{}.{}", table.name, column.name);
                continue;
            }
            let got = decoded(column);
            // serde_json parses decimals to within one unit in the last place.
            let expected = numbers(json_column);
            assert_eq!(got.len(), expected.len(), "{}.{}", table.name, column.name);
            for (g, e) in got.iter().zip(&expected) {
                assert!(
                    (g - e).abs() <= e.abs() * 1e-15,
                    "{}.{}: {g} vs {e}",
                    table.name,
                    column.name
                );
            }
        }
    }
    let trace = &tables[1].columns;
    // The time once per instant, SRTT in integer nanoseconds, counters as narrow as they
    // fit: a flow number and retransmissions below 256 in one byte.
    let t_s = trace.iter().find(|c| c.name == "t_s").unwrap();
    assert_eq!(t_s.run_ends.as_ref().map(Vec::len), Some(500));
    let srtt = trace.iter().find(|c| c.name == "srtt_s").unwrap();
    assert_eq!(srtt.divisor, Some(1_000_000_000));
    assert_eq!(trace[0].values.type_code(), 'B');
    // 500 samples of one flow.
    assert_eq!(tables[1].columns[0].values.len(), 500);
}

#[test]
fn a_trace_beyond_the_budget_is_refused_naming_its_interval() {
    // One flow sampled every microsecond for an hour: 3.6e9 samples of at most 44 bytes and
    // their instants' 12 (and a second's queue rows of each link direction).
    let err = tcplab_sim::run_json(&plan(3_600_000_000_000, 1_000))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("trace_interval_ns: "), "{err}");
    assert!(err.contains("raise trace_interval"), "{err}");
    assert!(err.contains("192261.7 MiB"), "{err}");
    assert!(
        err.contains(&format!("{} MiB budget", BUDGET_BYTES >> 20)),
        "{err}"
    );
}

#[test]
fn a_series_beyond_the_budget_is_refused_naming_interval() {
    // A nanosecond series over an hour: 3.6e12 intervals.
    let plan = plan(3_600_000_000_000, 1_000_000_000)
        .replace(r#""interval_ns":1000000000"#, r#""interval_ns":1"#);
    let err = tcplab_sim::run_json(&plan).unwrap_err().to_string();
    assert!(err.starts_with("interval_ns: "), "{err}");
    assert!(err.contains("raise interval or shorten duration"), "{err}");
}
