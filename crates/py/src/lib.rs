//! `tcplab._sim`: the simulator and the link emulator. Plans go in as JSON; results come
//! out as JSON for their rows and scalars and as column buffers (crates/sim/src/columns.rs)
//! for their long parts. Plans are built and results interpreted in Python (`tcplab.plan`,
//! `tcplab.result`); nothing else crosses.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

/// Runs a plan (JSON text) and returns the result (JSON text). An invalid plan raises
/// ValueError naming the field; an internal fault raises RuntimeError instead of
/// unwinding into Python. The GIL is released while the simulation runs.
#[pyfunction]
fn run(py: Python<'_>, plan_json: &str) -> PyResult<String> {
    simulated(
        py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| tcplab_sim::run_json(plan_json)))),
    )
}

/// What the core returned, or the Python exception of its error: ValueError for a plan it
/// refuses, RuntimeError for a panic, which must not unwind into Python.
fn simulated<T>(outcome: std::thread::Result<Result<T, tcplab_sim::PlanError>>) -> PyResult<T> {
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(PyValueError::new_err(e.to_string())),
        Err(panic) => Err(PyRuntimeError::new_err(format!(
            "tcplab simulator fault (please report): {}",
            panic_message(&*panic)
        ))),
    }
}

/// Runs a plan (JSON text) that may ask for packet captures. Returns the result's rows
/// and scalars (JSON text), its long parts as a dict from each part's name (`series`,
/// `trace`, `atm_queue`, `abr_acr`) to its columns, and a dict from each capture's name
/// (`links.0`, `links.0.forward`) to its pcap file's bytes. A column is a tuple (name,
/// type code of the `array` module: d, Q, I, H or B, a tuple of bytes objects holding its
/// little-endian values in order, labels: None or the names its B values index, run ends:
/// None or a tuple of bytes objects of u32, the end of each value's run of rows, divisor:
/// None or the integer its values are divided by to give the column's floats).
/// Errors as `run`.
#[pyfunction]
fn run_columnar<'py>(py: Python<'py>, plan_json: &str) -> PyResult<Bound<'py, PyTuple>> {
    let outcome =
        py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| tcplab_sim::run_columnar(plan_json))));
    let (result, tables, captures) = simulated(outcome)?;
    let parts = PyDict::new(py);
    for table in tables {
        parts.set_item(table.name, columns(py, table)?)?;
    }
    let files = PyDict::new(py);
    for capture in captures {
        files.set_item(capture.name, PyBytes::new(py, &capture.pcap))?;
    }
    PyTuple::new(
        py,
        [
            result.into_pyobject(py)?.into_any(),
            parts.into_any(),
            files.into_any(),
        ],
    )
}

/// Values per bytes object of a column: 1 Mi values, 8 MiB of f64.
const CHUNK_VALUES: usize = 1 << 20;

/// A table's columns as Python tuples (name, type code, chunks, labels, run ends, divisor;
/// crate::columns::Column). Each column's values are written into bytes objects of at most
/// [`CHUNK_VALUES`] values, from its end, and each chunk's memory is given back as soon as
/// it is written, so a long trace is never held twice over: at most one chunk more than the
/// trace itself.
fn columns<'py>(py: Python<'py>, table: tcplab_sim::Table) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for column in table.columns {
        let code = column.values.type_code().to_string();
        let labels = column.values.labels().map(|l| l.to_vec());
        let chunks = chunked(py, column.values)?;
        let run_ends = column
            .run_ends
            .map(|ends| chunked(py, tcplab_sim::columns::Values::U32(ends)))
            .transpose()?;
        list.append((column.name, code, chunks, labels, run_ends, column.divisor))?;
    }
    Ok(list)
}

/// The values as a tuple of bytes objects, written from the end and given back chunk by
/// chunk.
fn chunked(
    py: Python<'_>,
    mut values: tcplab_sim::columns::Values,
) -> PyResult<Bound<'_, PyTuple>> {
    let mut chunks = Vec::new();
    while !values.is_empty() {
        let from = values.len().saturating_sub(CHUNK_VALUES);
        let bytes = (values.len() - from) * values.width();
        chunks.push(PyBytes::new_with(py, bytes, |out| {
            values.write_le(from, out);
            Ok(())
        })?);
        values.truncate(from);
    }
    chunks.reverse();
    PyTuple::new(py, chunks)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// When each flow of a plan (JSON text) opens, in ns from the run's start: its start plus
/// its seeded draw from its start jitter, as the simulator opens it. Errors as `run`.
#[pyfunction]
fn flow_openings(plan_json: &str) -> PyResult<Vec<u64>> {
    simulated(catch_unwind(|| tcplab_sim::flow_openings_json(plan_json)))
}

/// Runs the link emulator (crates/emu) with a config given as JSON until its stop
/// descriptor is readable or its time is up; returns its report as JSON. Blocks, with the
/// GIL released, so Python runs it on a thread of its own. An invalid config raises
/// ValueError, a failing system call OSError.
#[pyfunction]
fn emu_run(py: Python<'_>, config_json: &str) -> PyResult<String> {
    let outcome =
        py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| tcplab_emu::run_json(config_json))));
    match outcome {
        Ok(Ok(report)) => Ok(report),
        Ok(Err(e @ tcplab_emu::EmuError::Config(_))) => Err(PyValueError::new_err(e.to_string())),
        Ok(Err(e)) => Err(PyOSError::new_err(e.to_string())),
        Err(panic) => Err(PyRuntimeError::new_err(format!(
            "tcplab emulator fault (please report): {}",
            panic_message(&*panic)
        ))),
    }
}

/// The names and constants Python shares with the simulator, defined once in the core:
/// `{"congestion_controls": [...], "tcp_ip_header_bytes": 40, "timestamps_option_bytes": 12,
/// "wlan": {"slot_ns", "sifs_ns",
/// "difs_ns", "cw_min", "ack_bytes", "plcp_ns": {"long", "short"}}, ...}`, and the JSON Schemas
/// of the plan and the result (JSON text) generated from the core's types.
#[pyfunction]
fn constants(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use tcplab_sim::wlan::phy;
    let wlan = PyDict::new(py);
    wlan.set_item("slot_ns", phy::SLOT_NS)?;
    wlan.set_item("sifs_ns", phy::SIFS_NS)?;
    wlan.set_item("difs_ns", phy::DIFS_NS)?;
    wlan.set_item("cw_min", phy::CW_MIN)?;
    wlan.set_item("ack_bytes", phy::ACK_BYTES)?;
    let plcp = PyDict::new(py);
    plcp.set_item("long", phy::LONG_PLCP_NS)?;
    plcp.set_item("short", phy::SHORT_PLCP_NS)?;
    wlan.set_item("plcp_ns", plcp)?;
    let out = PyDict::new(py);
    out.set_item("congestion_controls", tcplab_sim::tcp::cc::NAMES)?;
    out.set_item("tcp_ip_header_bytes", tcplab_sim::plan::TCP_IP_HEADER_BYTES)?;
    out.set_item(
        "timestamps_option_bytes",
        tcplab_sim::tcp::TIMESTAMPS_OPTION_BYTES,
    )?;
    // Linux 6.18's autotuned buffers, which the emu backend gives a host whose rcvbuf or
    // sndbuf is "auto" (crates/sim/src/tcp/rcvbuf.rs, sender/sndbuf.rs).
    out.set_item("tcp_rmem", tcplab_sim::tcp::TCP_RMEM)?;
    out.set_item("tcp_wmem", tcplab_sim::tcp::TCP_WMEM)?;
    out.set_item("wlan", wlan)?;
    out.set_item("result_columns", tcplab_sim::result::columns_json())?;
    out.set_item("plan_schema", tcplab_sim::plan::schema_json())?;
    out.set_item("result_schema", tcplab_sim::result::schema_json())?;
    // TM 4.0's ABR source parameters (rates in cells/s, times in ns); PCR is negotiated.
    let tm4 = tcplab_sim::atm::abr::SourceParams::tm4_defaults(1.0);
    let abr = PyDict::new(py);
    abr.set_item("mcr_cells_s", tm4.mcr)?;
    abr.set_item("tcr_cells_s", tm4.tcr)?;
    abr.set_item("rif", tm4.rif)?;
    abr.set_item("rdf", tm4.rdf)?;
    abr.set_item("cdf", tm4.cdf)?;
    abr.set_item("nrm", tm4.nrm)?;
    abr.set_item("mrm", tm4.mrm)?;
    abr.set_item("trm_ns", tm4.trm)?;
    abr.set_item("adtf_ns", tm4.adtf)?;
    abr.set_item("tbe_cells", tm4.tbe)?;
    abr.set_item("frtt_ns", tm4.frtt)?;
    out.set_item("abr_tm4", abr)?;
    Ok(out)
}

#[pymodule]
fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(constants, m)?)?;
    m.add_function(wrap_pyfunction!(run_columnar, m)?)?;
    m.add_function(wrap_pyfunction!(emu_run, m)?)?;
    m.add_function(wrap_pyfunction!(flow_openings, m)?)?;
    // The package's version (maturin takes it from this crate's), read by tcplab.version
    // without importlib.metadata, whose import costs a small run a tenth of its CPU.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
