//! The result's long parts (the per-interval series, the sender trace, the ATM queue and
//! ABR rate samples) as columns of plain values: one buffer per column in the layout of an
//! Arrow primitive array (little-endian values, no nulls), so that they cross into Python
//! as bytes that pyarrow or numpy wrap without parsing, instead of as JSON text.
//!
//! Their size is known from the plan before the run ([`estimate_bytes`]); a plan whose
//! columns would exceed [`BUDGET_BYTES`] is refused up front rather than run out of memory.

use crate::plan::Plan;

/// The most the result's columns may take, in bytes (1 GiB).
pub const BUDGET_BYTES: u64 = 1 << 30;

/// Bytes per sample at most: a trace row (crate::metrics::Trace: flow and segment, cwnd,
/// ssthresh, flight, rwnd and retransmits at most u32, srtt and acked bytes at most u64; its
/// time is one value per sampling instant, [`INSTANT_BYTES`]), an ATM queue or ABR rate row
/// (t_s f64, link or flow u64, direction u8, cells u64 or rate f64), a series row (t_s f64,
/// bytes u64).
const TRACE_ROW_BYTES: u64 = 7 * 4 + 2 * 8;
/// A sampling instant of the trace: its time (f64) and the end of its rows (u32).
const INSTANT_BYTES: u64 = 8 + 4;
const PORT_ROW_BYTES: u64 = 8 + 8 + 1 + 8;
const SERIES_ROW_BYTES: u64 = 8 + 8;
/// A queue row (metrics/queue.rs): time, link, direction, seven figures; the meter keeps
/// about as much per interval while the run lasts.
const QUEUE_ROW_BYTES: u64 = 8 + 8 + 1 + 6 * 8;
/// A media message: its size and send time (u64), its arrival time (Option<u64>).
const MESSAGE_ROW_BYTES: u64 = 8 + 8 + 16;

/// Which direction of a link or VC a row is about.
pub const DIRECTIONS: &[&str] = &["forward", "reverse"];

/// One column's values.
#[derive(Debug, PartialEq)]
pub enum Values {
    F64(Vec<f64>),
    U64(Vec<u64>),
    U32(Vec<u32>),
    U16(Vec<u16>),
    U8(Vec<u8>),
    /// Each row's index into `labels` (an Arrow dictionary array with u8 indices).
    Labels {
        codes: Vec<u8>,
        labels: &'static [&'static str],
    },
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::U32(v) => v.len(),
            Values::U16(v) => v.len(),
            Values::U8(v) => v.len(),
            Values::Labels { codes, .. } => codes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The Python `struct`/`array` type code of one value: d, Q, I, H, or B (also for
    /// labels).
    pub fn type_code(&self) -> char {
        match self {
            Values::F64(_) => 'd',
            Values::U64(_) => 'Q',
            Values::U32(_) => 'I',
            Values::U16(_) => 'H',
            Values::U8(_) | Values::Labels { .. } => 'B',
        }
    }

    /// Bytes of one value.
    pub fn width(&self) -> usize {
        match self {
            Values::F64(_) | Values::U64(_) => 8,
            Values::U32(_) => 4,
            Values::U16(_) => 2,
            Values::U8(_) | Values::Labels { .. } => 1,
        }
    }

    /// The unsigned integers, widened to u64 (none for f64 values or labels).
    pub fn unsigned(&self) -> Option<Vec<u64>> {
        fn wide<T: Copy + Into<u64>>(v: &[T]) -> Option<Vec<u64>> {
            Some(v.iter().map(|&x| x.into()).collect())
        }
        match self {
            Values::U64(v) => Some(v.clone()),
            Values::U32(v) => wide(v),
            Values::U16(v) => wide(v),
            Values::U8(v) => wide(v),
            Values::F64(_) | Values::Labels { .. } => None,
        }
    }

    pub fn byte_len(&self) -> usize {
        self.len() * self.width()
    }

    /// The label names, for a labels column.
    pub fn labels(&self) -> Option<&'static [&'static str]> {
        match self {
            Values::Labels { labels, .. } => Some(labels),
            _ => None,
        }
    }

    /// Writes the values from `from` on little-endian into `out`, which holds exactly
    /// them.
    pub fn write_le(&self, from: usize, out: &mut [u8]) {
        fn put<const N: usize, T: Copy>(out: &mut [u8], values: &[T], le: impl Fn(T) -> [u8; N]) {
            for (chunk, &v) in out.chunks_exact_mut(N).zip(values) {
                chunk.copy_from_slice(&le(v));
            }
        }
        match self {
            Values::F64(v) => put(out, &v[from..], f64::to_le_bytes),
            Values::U64(v) => put(out, &v[from..], u64::to_le_bytes),
            Values::U32(v) => put(out, &v[from..], u32::to_le_bytes),
            Values::U16(v) => put(out, &v[from..], u16::to_le_bytes),
            Values::U8(v) | Values::Labels { codes: v, .. } => out.copy_from_slice(&v[from..]),
        }
    }

    /// Keeps the first `len` values and gives the memory of the rest back.
    pub fn truncate(&mut self, len: usize) {
        fn cut<T>(v: &mut Vec<T>, len: usize) {
            v.truncate(len);
            v.shrink_to_fit();
        }
        match self {
            Values::F64(v) => cut(v, len),
            Values::U64(v) => cut(v, len),
            Values::U32(v) => cut(v, len),
            Values::U16(v) => cut(v, len),
            Values::U8(v) | Values::Labels { codes: v, .. } => cut(v, len),
        }
    }
}

/// An unsigned integer column kept in the narrowest width (8, 16, 32 or 64 bits) that holds
/// every value pushed so far, widened (one copy) when a value needs more: a counter costs
/// one byte per row while it stays below 256, and a column of byte counts four, not eight,
/// until one passes 4 GiB.
#[derive(Debug)]
pub struct Uints {
    values: Values,
    /// The rows reserved, kept when the column widens.
    capacity: usize,
}

impl Default for Uints {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl Uints {
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            values: Values::U8(Vec::with_capacity(capacity)),
            capacity,
        }
    }

    /// Appends the values, widening the column first (once) if one of them needs it.
    /// `values` is walked twice, for the widest and to copy, so that each value costs a
    /// compare and a store (the trace takes a row per connection at every sample).
    pub fn extend<I: Iterator<Item = u64> + Clone>(&mut self, values: I) {
        let widest = values.clone().max().unwrap_or(0);
        while !self.holds(widest) {
            self.widen();
        }
        // The casts cannot truncate: every value is at most `widest`, which the width holds.
        match &mut self.values {
            Values::U8(v) => v.extend(values.map(|x| x as u8)),
            Values::U16(v) => v.extend(values.map(|x| x as u16)),
            Values::U32(v) => v.extend(values.map(|x| x as u32)),
            Values::U64(v) => v.extend(values),
            Values::F64(_) | Values::Labels { .. } => unreachable!("unsigned values"),
        }
    }

    fn holds(&self, value: u64) -> bool {
        match &self.values {
            Values::U8(_) => value <= u64::from(u8::MAX),
            Values::U16(_) => value <= u64::from(u16::MAX),
            Values::U32(_) => value <= u64::from(u32::MAX),
            Values::U64(_) => true,
            Values::F64(_) | Values::Labels { .. } => unreachable!("unsigned values"),
        }
    }

    /// The values in the next wider type, with the column's reserved rows.
    fn widen(&mut self) {
        fn to<T: Copy, U: From<T>>(v: &[T], capacity: usize) -> Vec<U> {
            let mut wide = Vec::with_capacity(capacity.max(v.len() + 1));
            wide.extend(v.iter().map(|&x| U::from(x)));
            wide
        }
        let capacity = self.capacity;
        self.values = match &self.values {
            Values::U8(v) => Values::U16(to(v, capacity)),
            Values::U16(v) => Values::U32(to(v, capacity)),
            Values::U32(v) => Values::U64(to(v, capacity)),
            Values::U64(_) | Values::F64(_) | Values::Labels { .. } => {
                unreachable!("only a column narrower than u64 widens")
            }
        };
    }

    pub fn values(&self) -> &Values {
        &self.values
    }

    pub fn into_values(self) -> Values {
        self.values
    }
}

/// A named column. `run_ends` (an Arrow run-end encoded array) makes `values` one value per
/// run of equal rows, run k covering the rows from the end of run k − 1 up to `run_ends[k]`
/// (exclusive); `divisor` makes the column's values `values` / divisor as f64 (integer
/// nanoseconds read as seconds, divided as [`crate::engine`]'s conversion divides).
#[derive(Debug, PartialEq)]
pub struct Column {
    pub name: &'static str,
    pub values: Values,
    pub run_ends: Option<Vec<u32>>,
    pub divisor: Option<u64>,
}

impl Column {
    /// A column of one value per row.
    pub fn new(name: &'static str, values: Values) -> Self {
        Self {
            name,
            values,
            run_ends: None,
            divisor: None,
        }
    }
}

/// One long part of the result, by its name in the result (`series`, `trace`, ...).
#[derive(Debug, PartialEq)]
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<Column>,
}

/// Codes for a column of directions.
pub fn direction_labels(directions: &[&'static str]) -> Values {
    let codes = directions
        .iter()
        .map(|d| {
            DIRECTIONS
                .iter()
                .position(|known| known == d)
                .expect("a direction is forward or reverse") as u8
        })
        .collect();
    Values::Labels {
        codes,
        labels: DIRECTIONS,
    }
}

/// The most memory `plan`'s result columns can take, in bytes, and the part that takes
/// most of it: ("trace_interval", bytes) for the samples taken every trace interval,
/// ("interval", bytes) for the per-interval series.
pub fn estimate_bytes(plan: &Plan) -> (u64, &'static str) {
    let samples = (plan.duration_ns / plan.trace_interval_ns).max(1);
    let flows = plan.flows.len() as u64;
    let ports = plan
        .links
        .iter()
        .flat_map(|l| [&l.forward, &l.reverse])
        .filter(|ch| ch.atm.is_some())
        .count() as u64;
    let vcs = if plan.abr.is_some() { 2 * flows } else { 0 };
    // Each TCP connection is traced: a flow crossing every PEP runs as peps + 1 of them.
    let connections = flows.saturating_mul(plan.peps.len() as u64 + 1);
    let traced = samples.saturating_mul(
        connections.saturating_mul(TRACE_ROW_BYTES)
            + INSTANT_BYTES
            + (ports + vcs) * PORT_ROW_BYTES,
    );
    // Every direction with a serializer of its own measures its queue (ATM and wlan
    // directions are counted too: a bound, not an exact count).
    let directions = 2 * plan.links.len() as u64;
    let series = plan
        .duration_ns
        .div_ceil(plan.interval_ns)
        .saturating_mul(SERIES_ROW_BYTES + 2 * directions * QUEUE_ROW_BYTES);
    // Every message a media stream sends is kept (its size, send and arrival times).
    let messages = plan
        .flows
        .iter()
        .flat_map(|flow| &flow.app.streams)
        .map(|s| {
            let count = plan.duration_ns.saturating_sub(s.start_ns) / s.interval_ns.max(1) + 1;
            count.saturating_mul(MESSAGE_ROW_BYTES)
        })
        .fold(0u64, u64::saturating_add);
    let part = if messages >= traced.max(series) {
        "streams"
    } else if traced >= series {
        "trace_interval"
    } else {
        "interval"
    };
    (traced.saturating_add(series).saturating_add(messages), part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_little_endian() {
        let mut v = Values::U32(vec![1, 0x0102_0304]);
        let mut out = vec![0; v.byte_len()];
        v.write_le(0, &mut out);
        assert_eq!(out, [1, 0, 0, 0, 4, 3, 2, 1]);
        let mut tail = vec![0; 4];
        v.write_le(1, &mut tail);
        assert_eq!(tail, [4, 3, 2, 1]);
        v.truncate(1);
        assert_eq!(v, Values::U32(vec![1]));
        let f = Values::F64(vec![0.5]);
        let mut out = vec![0; 8];
        f.write_le(0, &mut out);
        assert_eq!(f64::from_le_bytes(out.try_into().unwrap()), 0.5);
    }

    #[test]
    fn unsigned_columns_widen_only_when_a_value_needs_it() {
        let mut c = Uints::with_capacity(4);
        c.extend([255].into_iter());
        assert_eq!(c.values(), &Values::U8(vec![255]));
        c.extend([256, 7].into_iter());
        assert_eq!(c.values(), &Values::U16(vec![255, 256, 7]));
        c.extend([1 << 32].into_iter());
        assert_eq!(c.values(), &Values::U64(vec![255, 256, 7, 1 << 32]));
        c.extend([u64::MAX].into_iter());
        c.extend(std::iter::empty());
        let values = c.into_values();
        assert_eq!(
            values.unsigned(),
            Some(vec![255, 256, 7, 1 << 32, u64::MAX])
        );
        assert_eq!((values.type_code(), values.width()), ('Q', 8));
        let mut small = Uints::default();
        small.extend([3, 70_000, 5].into_iter());
        assert_eq!(small.values(), &Values::U32(vec![3, 70_000, 5]));
        let mut out = vec![0; 2];
        Values::U16(vec![0x0102]).write_le(0, &mut out);
        assert_eq!(out, [2, 1]);
    }

    #[test]
    fn directions_become_codes_into_their_labels() {
        let v = direction_labels(&["reverse", "forward", "reverse"]);
        assert_eq!(v.type_code(), 'B');
        assert_eq!(v.labels(), Some(DIRECTIONS));
        let mut out = vec![0; v.byte_len()];
        v.write_le(0, &mut out);
        assert_eq!(out, [1, 0, 1]);
    }
}
