//! The plan JSON entry point (`run_json`) never panics: every plan in the fuzz corpus
//! (fuzz/corpus/plan_json, the examples resolved with a 1 s duration) and deterministic
//! mutations of each (a field set to an extreme or a wrong type, or removed; 6 per plan,
//! PLAN_FUZZ_MUTATIONS=N for more) either runs or is refused with an error. The same target
//! runs under cargo-fuzz (fuzz/README.md).

use std::panic;
use std::path::Path;

use serde_json::{json, Value};

/// Values a mutation puts in place of a field.
fn extremes() -> Vec<Value> {
    vec![
        json!(0),
        json!(1),
        json!(2),
        json!(u32::MAX),
        json!(u64::from(u32::MAX) + 1),
        json!(u64::MAX),
        json!(-1),
        json!(0.5),
        json!(1e300),
        json!(-1e300),
        json!(""),
        json!("x"),
        json!(null),
        json!(true),
        json!([]),
        json!({}),
        json!([1, 2]),
    ]
}

/// A small deterministic generator (SplitMix64), so each mutation is reproducible from its
/// case number.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Every path to a leaf or a container of `value`.
fn paths(value: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                prefix.push(key.clone());
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                prefix.push(i.to_string());
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn mutate(plan: &mut Value, rng: &mut SplitMix) {
    let mut all = Vec::new();
    paths(plan, &mut Vec::new(), &mut all);
    let path = &all[rng.below(all.len())];
    let (last, parents) = path.split_last().expect("paths are not empty");
    let mut node = &mut *plan;
    for part in parents {
        node = match node {
            Value::Object(map) => map.get_mut(part).expect("the path exists"),
            Value::Array(items) => &mut items[part.parse::<usize>().expect("an index")],
            _ => unreachable!("a path goes through containers"),
        };
    }
    let values = extremes();
    let value = values[rng.below(values.len())].clone();
    match node {
        Value::Object(map) if rng.below(4) == 0 => {
            map.remove(last);
        }
        Value::Object(map) => {
            map.insert(last.clone(), value);
        }
        Value::Array(items) => items[last.parse::<usize>().expect("an index")] = value,
        _ => unreachable!("a parent is a container"),
    }
}

/// The fuzz target's body: any bytes, a result or an error, never a panic.
fn target(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tcplab_sim::run_json(text);
    }
}

#[test]
fn the_plan_entry_point_refuses_or_runs_every_mutated_plan() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/plan_json");
    let mut files: Vec<_> = std::fs::read_dir(&corpus)
        .expect("the corpus exists")
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{} corpus plans", files.len());
    // PLAN_FUZZ_MUTATIONS=N for a longer run (e.g. in release: cargo test --release).
    let mutations: u64 = std::env::var("PLAN_FUZZ_MUTATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(6);
    let mut panics = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a corpus plan");
        let original: Value = serde_json::from_str(&text).expect("corpus plans are JSON");
        let cases = std::iter::once(original.clone()).chain((0..mutations).map(|case| {
            let mut rng = SplitMix(case);
            let mut plan = original.clone();
            for _ in 0..=rng.below(2) {
                mutate(&mut plan, &mut rng);
            }
            plan
        }));
        for plan in cases {
            let bytes = plan.to_string().into_bytes();
            if std::env::var_os("PLAN_FUZZ_VERBOSE").is_some() {
                eprintln!("{}: {}", file.display(), plan);
            }
            if panic::catch_unwind(|| target(&bytes)).is_err() {
                panics.push(format!("{}: {}", file.display(), plan));
            }
        }
    }
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics.join("\n")
    );
}

#[test]
fn a_min_rto_above_the_largest_rto_is_refused_and_one_at_it_runs() {
    // Issue #15: min_rto = "61s" reached the RTO estimator's clamp(min, 60 s) and panicked.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/plan_json");
    let text = std::fs::read_to_string(corpus.join("geo-netperf.json")).expect("a corpus plan");
    let mut plan: Value = serde_json::from_str(&text).expect("JSON");
    plan["hosts"][0]["tcp"]["min_rto_ns"] = json!(tcplab_sim::plan::MAX_MIN_RTO_NS + 1);
    let err = tcplab_sim::run_json(&plan.to_string())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "hosts.0.tcp.min_rto_ns: 60000000001 ns is above the largest RTO; accepted: \
         0..=60000000000 ns (60 s)"
    );
    plan["hosts"][0]["tcp"]["min_rto_ns"] = json!(tcplab_sim::plan::MAX_MIN_RTO_NS);
    assert!(tcplab_sim::run_json(&plan.to_string()).is_ok());
}

#[test]
fn media_streams_whose_messages_exceed_the_budget_are_refused() {
    // Issue #15: a media stream with interval = 1 ns grew its message log until the
    // allocator gave up (SIGABRT).
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/plan_json");
    let text = std::fs::read_to_string(corpus.join("geo-videoconference.json")).expect("a plan");
    let mut plan: Value = serde_json::from_str(&text).expect("JSON");
    plan["flows"][0]["app"]["streams"][0]["interval_ns"] = json!(1);
    let err = tcplab_sim::run_json(&plan.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "flows.0.app.streams.0.interval_ns: the media streams' messages would take "
        ),
        "{err}"
    );
    assert!(err.contains("raise the streams' interval"), "{err}");
}

#[test]
fn a_socket_buffer_past_a_gibibyte_is_refused() {
    // Issue #15's fuzzing: sndbuf = 2^63 - 1 kept a bulk writer filling it forever.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/plan_json");
    let text = std::fs::read_to_string(corpus.join("geo-netperf.json")).expect("a corpus plan");
    let mut plan: Value = serde_json::from_str(&text).expect("JSON");
    plan["hosts"][0]["tcp"]["sndbuf"] = json!(i64::MAX);
    let err = tcplab_sim::run_json(&plan.to_string())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "hosts.0.tcp.sndbuf: 9223372036854775807 bytes; accepted: 1..=1073741824 or \"auto\""
    );
}

#[test]
fn times_past_the_clock_range_are_refused() {
    // Issue #15's plan fuzzing: trace_interval_ns = 2^64 - 1 wrapped the sampling clock
    // and grew the trace until the allocator aborted.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/plan_json");
    let text = std::fs::read_to_string(corpus.join("atm-abr.json")).expect("a corpus plan");
    for field in ["trace_interval_ns", "interval_ns", "duration_ns"] {
        let mut plan: Value = serde_json::from_str(&text).expect("JSON");
        plan[field] = json!(u64::MAX);
        let err = tcplab_sim::run_json(&plan.to_string())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(&format!(
            "{field}: 18446744073709551615 ns; accepted: at most"
        )));
    }
    let mut plan: Value = serde_json::from_str(&text).expect("JSON");
    plan["links"][0]["forward"]["delay_ns"] = json!(u64::MAX);
    let err = tcplab_sim::run_json(&plan.to_string())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("links.0.forward.delay_ns: "), "{err}");
}

#[test]
fn an_aal5_frame_past_its_largest_is_refused() {
    // Issue #15's plan fuzzing: encapsulation_bytes = 2^32 - 1 queued 4 GB of cells.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/plan_json");
    let text = std::fs::read_to_string(corpus.join("atm-lan.json")).expect("a corpus plan");
    let mut plan: Value = serde_json::from_str(&text).expect("JSON");
    plan["links"][1]["reverse"]["atm"]["encapsulation_bytes"] = json!(u32::MAX);
    let err = tcplab_sim::run_json(&plan.to_string())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("links.1.reverse.atm.encapsulation_bytes: 4294967295 + an MTU of"),
        "{err}"
    );
}
