//! What the integration tests share: running a plan given as JSON through the public entry
//! point, and reading the error of one it refuses.

use serde_json::{json, Value};

#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn run(plan: &Value) -> Value {
    serde_json::from_str(&tcplab_sim::run_json(&complete(plan)).unwrap()).unwrap()
}

#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn refused(plan: &Value) -> String {
    tcplab_sim::run_json(&complete(plan))
        .unwrap_err()
        .to_string()
}

/// The plan as JSON text with every field it leaves out written as the zero of its type in
/// the plan's schema (null, 0, false, an empty list), so that a test writes only the fields
/// it is about. The core itself takes no defaults: every field of a plan is required.
#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn complete(plan: &Value) -> String {
    let root: Value = serde_json::from_str(&tcplab_sim::plan::schema_json()).unwrap();
    let mut plan = plan.clone();
    fill(&mut plan, &root, &root);
    plan.to_string()
}

/// The schema `$ref` points at, or the schema itself.
fn deref<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(path) => root.pointer(path.trim_start_matches('#')).unwrap(),
        None => schema,
    }
}

fn fill(node: &mut Value, schema: &Value, root: &Value) {
    let schema = deref(schema, root);
    // An Option's or an enum's variants: fill as the one the node is.
    let variants = schema.get("anyOf").or_else(|| schema.get("oneOf"));
    if let Some(variants) = variants.and_then(Value::as_array) {
        if let Some(variant) = variants.iter().find(|v| is_variant(node, deref(v, root))) {
            fill(node, variant, root);
        }
        return;
    }
    match node {
        Value::Object(map) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (name, property) in properties {
                if !map.contains_key(name) {
                    if let Some(zero) = zero(deref(property, root)) {
                        map.insert(name.clone(), zero);
                    }
                }
                if let Some(child) = map.get_mut(name) {
                    fill(child, property, root);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                items.iter_mut().for_each(|i| fill(i, item, root));
            }
        }
        _ => {}
    }
}

/// Whether `node` is of this variant: its `kind` (a tagged enum's), or else its keys.
fn is_variant(node: &Value, variant: &Value) -> bool {
    let (Some(node), Some(properties)) = (
        node.as_object(),
        variant.get("properties").and_then(Value::as_object),
    ) else {
        return false;
    };
    match properties.get("kind").and_then(|k| k.get("const")) {
        Some(kind) => node.get("kind") == Some(kind),
        None => node.keys().all(|key| properties.contains_key(key)),
    }
}

fn zero(schema: &Value) -> Option<Value> {
    let nullable = |s: &Value| s.get("type") == Some(&json!("null"));
    if let Some(variants) = schema.get("anyOf").and_then(Value::as_array) {
        return variants.iter().any(nullable).then_some(Value::Null);
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    match types.as_slice() {
        [.., "null"] => Some(Value::Null),
        ["array"] if schema.get("minItems").is_none() => Some(json!([])),
        ["integer"] => Some(json!(0)),
        ["boolean"] => Some(json!(false)),
        _ => None,
    }
}

/// NewReno with 256 KiB buffers, IW 10 and a 200 ms minimum RTO: the ATM tests' hosts.
#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn atm_host_tcp() -> Value {
    json!({"cc": "newreno", "sndbuf": 262144, "rcvbuf": 262144, "mss": 1460,
        "initial_window": 10, "window_scaling": true, "sack": false, "timestamps": false,
        "abc": false, "hystart": false, "delayed_ack": true, "delack_timeout_ns": 200_000_000,
        "nagle": true, "fast_retransmit": true, "min_rto_ns": 200_000_000,
        "cubic_variant": "rfc9438", "reno_variant": "rfc5681", "hystart_variant": "rfc9406", "quickack": false,
        "initial_rwnd": null, "nagle_variant": "rfc896", "rto_form": "rfc6298",
        "cwnd_validation": false, "handshake": true, "loss_recovery": "classic", "dsack": false, "frto": false, "undo": false, "slow_start_after_idle": false, "gso": false, "ecn": "off", "sndbuf_accounting": "payload"})
}

/// A 150 Mb/s cell stream with LLC/SNAP, 1 ms of propagation and the given error model.
#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn atm_channel(error: Value) -> Value {
    json!({"rate_bps": 150_000_000, "delay_ns": 1_000_000, "queue": {"packets": 100},
        "error": error, "framing": {"overhead_bytes": 0, "min_payload_bytes": 0},
        "atm": {"slot_octets": 53, "encapsulation_bytes": 8, "mtu": 9180}})
}

/// A two-host plan whose links run in a row from host 0 to host 1 and whose one flow carries
/// `plan["app"]` that way: what tcplab.plan.topology_form makes of a path-form scenario (the
/// router after link k is node k + 2, named `after-links.k`).
#[allow(dead_code)] // each test crate compiles this module and uses a part of it
pub fn path(mut plan: Value) -> Value {
    let object = plan.as_object_mut().unwrap();
    let app = object.remove("app").unwrap();
    let links = object["links"].as_array_mut().unwrap();
    let count = links.len();
    let node = |k: usize| match k {
        0 => 0,
        k if k == count => 1,
        k => k + 1,
    };
    for (k, link) in links.iter_mut().enumerate() {
        link["nodes"] = json!([node(k), node(k + 1)]);
    }
    object.insert(
        "routers".into(),
        (0..count - 1)
            .map(|k| json!({"name": format!("after-links.{k}")}))
            .collect(),
    );
    object.insert("flows".into(), json!([{"src": 0, "dst": 1, "app": app}]));
    plan
}
