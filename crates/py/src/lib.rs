//! `tcplab._sim`: the simulator behind a JSON-in, JSON-out function. Plans are built and
//! results interpreted in Python (`tcplab.plan`, `tcplab.result`); nothing else crosses.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// Runs a plan (JSON text) and returns the result (JSON text). An invalid plan raises
/// ValueError naming the field; an internal fault raises RuntimeError instead of
/// unwinding into Python. The GIL is released while the simulation runs.
#[pyfunction]
fn run(py: Python<'_>, plan_json: &str) -> PyResult<String> {
    let outcome =
        py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| tcplab_sim::run_json(plan_json))));
    match outcome {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(e)) => Err(PyValueError::new_err(e.to_string())),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!(
                "tcplab simulator fault (please report): {what}"
            )))
        }
    }
}

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
