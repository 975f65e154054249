//! Any bytes into the plan JSON entry point: a result or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tcplab_sim::run_json(text);
    }
});
