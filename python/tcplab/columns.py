"""A result's long parts (series, trace, ATM queue and ABR rate samples) as named columns.

The simulator hands each column over as `bytes` objects (chunks of up to 1 Mi values)
holding its values little-endian in the layout of an Arrow primitive array
(docs/internals/plan-and-result.md, "Long parts as columns"), so a trace costs memory in
proportion to its samples and nothing parses it. `Columns` keeps those buffers as they came
and builds from them what a reader asks for: a list per column (`columns["t_s"]`), a pyarrow
Table (`to_arrow`, no copy of float columns) or a pandas DataFrame (`to_pandas`). The other
backends' columns are lists and stay lists. pyarrow, numpy and pandas load only when a table
or frame is asked for.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tcplab.extras import needed

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from tcplab import _sim

# Rows per row group: pyarrow's own default for write_table, so that a table written
# piece by piece (write_parquet) is the file written whole.
PARQUET_ROWS = 1 << 20
# The buffers are little-endian; `array` and memoryview read native order.
_NATIVE_LITTLE = sys.byteorder == "little"


@dataclass(frozen=True)
class Buffer:
    """One column as the simulator sent it: `array` type code (d, Q, I, H, or B, also for
    labels), its little-endian values in chunks, and three encodings of the column from
    them (docs/internals/plan-and-result.md): `labels`, the names B values index; `run_ends`,
    chunks of u32 ends of each value's run of rows (Arrow's run-end encoding); `divisor`, the
    integer the values are divided by to give the column's floats (nanoseconds as seconds)."""

    code: str
    chunks: tuple[bytes, ...]
    labels: tuple[str, ...] | None = None
    run_ends: tuple[bytes, ...] | None = None
    divisor: int | None = None

    @property
    def nbytes(self) -> int:
        return sum(len(chunk) for chunk in self.chunks + (self.run_ends or ()))

    def __len__(self) -> int:
        if self.run_ends is not None:
            last = b"".join(self.run_ends)[-4:]
            return int.from_bytes(last, "little") if last else 0
        return sum(len(chunk) for chunk in self.chunks) // array(self.code).itemsize

    def stored(self) -> array[Any]:
        """The values as sent: one per run with `run_ends`, integers with `divisor`."""
        return _native(self.code, self.chunks)

    def ends(self) -> array[Any]:
        """Where each value's run of rows ends (no runs: each row its own)."""
        if self.run_ends is None:
            return array("I", range(1, len(self) + 1))
        return _native("I", self.run_ends)

    def values(self) -> array[Any]:
        """One value per row: runs repeated, divided values as floats ('d')."""
        stored = self.stored()
        if self.divisor is not None:
            divisor = self.divisor
            stored = array("d", (float(v) / divisor for v in stored))
        if self.run_ends is None:
            return stored
        values, start = array(stored.typecode), 0
        for value, end in zip(stored, self.ends(), strict=True):
            values.extend(array(stored.typecode, [value]) * (end - start))
            start = end
        return values

    def to_list(self) -> list[Any]:
        if self.labels is not None:
            labels = self.labels
            return [labels[code] for chunk in self.chunks for code in chunk]
        return self.values().tolist()

    def to_numpy(self) -> Any:
        """One value per row as a numpy array: floats float64, integers as sent (unsigned),
        labels their codes (u1)."""
        import numpy as np

        values = _numpy(self.code, self.chunks)
        if self.divisor is not None:
            values = values.astype(np.float64) / self.divisor
        if self.run_ends is not None:
            values = np.repeat(values, np.diff(_numpy("I", self.run_ends), prepend=0))
        return values

    @staticmethod
    def concat(buffers: Sequence[Buffer]) -> Buffer | None:
        """The buffers' rows one after another as one buffer, integers in the widest of their
        types; None when they differ in labels, divisor or kind of number."""
        first = buffers[0]
        if any((b.labels, b.divisor) != (first.labels, first.divisor) for b in buffers):
            return None
        codes = {b.code for b in buffers}
        if len(codes) > 1 and not codes <= set(_UNSIGNED):
            return None
        code = max(codes, key=_UNSIGNED.index) if len(codes) > 1 else first.code
        if len(codes) > 1:
            # Only integers widen; their runs and divisor stay as they are.
            buffers = [
                Buffer(code, (_little(array(code, b.stored())),), b.labels, b.run_ends, b.divisor)
                for b in buffers
            ]
        chunks = tuple(chunk for b in buffers for chunk in b.chunks)
        if all(b.run_ends is None for b in buffers):
            return Buffer(code, chunks, first.labels, None, first.divisor)
        ends, offset = array("I"), 0
        for b in buffers:
            ends.extend(end + offset for end in b.ends())
            offset += len(b)
        return Buffer(code, chunks, first.labels, (_little(ends),), first.divisor)


def _numpy(code: str, chunks: tuple[bytes, ...]) -> Any:
    import numpy as np

    kind = np.dtype(_NUMPY_TYPES[code])
    return np.concatenate([np.frombuffer(chunk, kind) for chunk in chunks] or [np.empty(0, kind)])


def _native(code: str, chunks: tuple[bytes, ...]) -> array[Any]:
    values = array(code)
    for chunk in chunks:
        values.frombytes(chunk)
    if not _NATIVE_LITTLE:
        values.byteswap()
    return values


def _little(values: array[Any]) -> bytes:
    if not _NATIVE_LITTLE:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


Column = Buffer | list[Any]


class Columns(Mapping[str, list[Any]]):
    """Named columns of equal length; `columns[name]` is the column as a list (built on each
    access: for long columns use `to_arrow()` or `to_pandas()`)."""

    def __init__(self, columns: Mapping[str, Column] | None = None) -> None:
        self._columns: dict[str, Column] = dict(columns or {})

    @classmethod
    def from_sim(cls, columns: Sequence[_sim.Column]) -> Columns:
        """The columns of one part as `tcplab._sim.run_columnar` returns them."""
        return cls(
            {
                name: Buffer(
                    code,
                    tuple(chunks),
                    tuple(labels) if labels is not None else None,
                    tuple(run_ends) if run_ends is not None else None,
                    divisor,
                )
                for name, code, chunks, labels, run_ends, divisor in columns
            }
        )

    @classmethod
    def of(cls, columns: Mapping[str, Sequence[Any]] | Columns) -> Columns:
        """`columns` itself if it is already Columns, else its lists as Columns."""
        if isinstance(columns, Columns):
            return columns
        return cls({name: list(values) for name, values in columns.items()})

    def __getitem__(self, name: str) -> list[Any]:
        return _as_list(self._columns[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __repr__(self) -> str:
        return f"Columns({', '.join(self._columns)}; {self.rows} rows)"

    @property
    def rows(self) -> int:
        return len(next(iter(self._columns.values()), []))

    @property
    def nbytes(self) -> int:
        """Bytes held by the columns that came as buffers."""
        return sum(c.nbytes for c in self._columns.values() if isinstance(c, Buffer))

    def to_dict(self) -> dict[str, list[Any]]:
        """Every column as a list (for JSON)."""
        return {name: self[name] for name in self._columns}

    def to_arrow(self) -> pa.Table:
        """A pyarrow Table: float columns wrap their buffers without a copy (those with runs
        or a divisor are decoded), integer columns become int64 (as the other backends'
        lists do), labels become strings."""
        table, divisors = self._arrow()
        return _decoded(table, divisors)

    def arrow_pieces(self, rows: int = PARQUET_ROWS) -> Iterator[pa.Table]:
        """`to_arrow()`'s table `rows` rows at a time (one, empty, for no rows), each piece
        decoded and widened on its own: writing a long trace takes its buffers and one
        piece, not a table of int64 and f64 columns."""
        table, divisors = self._arrow()
        for start in range(0, max(table.num_rows, 1), rows):
            yield _decoded(table.slice(start, rows), divisors)

    def _arrow(self) -> tuple[pa.Table, dict[str, int]]:
        """The columns as Arrow arrays as they came, wrapped without a copy: integers in their
        types, runs as run-end encoded arrays, labels as strings; and the divisor of each
        column that has one."""
        with needed("Columns.to_arrow"):
            import pyarrow as pa

        arrays = {}
        for name, column in self._columns.items():
            if not isinstance(column, Buffer):
                arrays[name] = pa.array(column)
                continue
            chunks = _wrapped(pa, column.code, column.chunks)
            if column.labels is not None:
                labels = pa.array(column.labels, pa.string())
                arrays[name] = pa.chunked_array(
                    [
                        pa.DictionaryArray.from_arrays(codes, labels).dictionary_decode()
                        for codes in chunks.chunks
                    ],
                    type=pa.string(),
                )
            elif column.run_ends is not None:
                ends = _wrapped(pa, "I", column.run_ends).combine_chunks().cast(pa.int32())
                runs = pa.RunEndEncodedArray.from_arrays(ends, chunks.combine_chunks())
                arrays[name] = pa.chunked_array([runs])
            else:
                arrays[name] = chunks
        divisors = {
            name: column.divisor
            for name, column in self._columns.items()
            if isinstance(column, Buffer) and column.divisor is not None
        }
        return pa.table(arrays), divisors

    def to_pandas(self) -> pd.DataFrame:
        """A DataFrame of the columns (integers as int64, labels as strings)."""
        import numpy as np

        with needed("a DataFrame"):
            import pandas as pd

        data: dict[str, Any] = {}
        for name, column in self._columns.items():
            if not isinstance(column, Buffer):
                data[name] = column
                continue
            values = column.to_numpy()
            if column.labels is not None:
                data[name] = np.array(column.labels, dtype=object)[values]
            else:
                data[name] = values if values.dtype.kind == "f" else values.astype(np.int64)
        # Each column its own block: the default would copy them all into one 2-D block.
        return pd.DataFrame(data, copy=False)

    @classmethod
    def from_parquet(cls, source: Any) -> Columns:
        """The columns of a Parquet file (e.g. one `write_parquet` wrote; `source` a path or
        a pyarrow buffer), read one column at a time: numbers without nulls as buffers,
        integers in the narrowest unsigned type that holds them all (int64 with a negative
        one), so that a long trace read back costs about what it took in the run, not an
        int64 table and its copy; any other column as a list."""
        with needed("reading Parquet"):
            import pyarrow.parquet as pq

        file = pq.ParquetFile(source)
        return cls(
            {name: _from_arrow(file.read([name]).column(0)) for name in file.schema_arrow.names}
        )

    @classmethod
    def stack(cls, parts: Sequence[Columns]) -> Columns:
        """The parts one after another, with a `repetition` column first numbering them."""
        repetition = array("I")
        for rep, part in enumerate(parts):
            repetition.extend([rep] * part.rows)
        if sys.byteorder != "little":
            repetition.byteswap()
        stacked: dict[str, Column] = {"repetition": Buffer("I", (repetition.tobytes(),))}
        names = list(dict.fromkeys(name for part in parts for name in part._columns))
        for name in names:
            columns = [part._columns.get(name, []) for part in parts]
            buffers = [c for c in columns if isinstance(c, Buffer)]
            joined = Buffer.concat(buffers) if len(buffers) == len(columns) else None
            stacked[name] = (
                joined if joined is not None else [v for c in columns for v in _as_list(c)]
            )
        return cls(stacked)


def _wrapped(pa: Any, code: str, chunks: tuple[bytes, ...]) -> pa.ChunkedArray:
    """The chunks as one Arrow array of their type, without a copy."""
    kind = _ARROW_TYPES[code](pa)
    width = array(code).itemsize
    return pa.chunked_array(
        [
            pa.Array.from_buffers(kind, len(chunk) // width, [None, pa.py_buffer(chunk)])
            for chunk in chunks
        ],
        type=kind,
    )


def _decoded(table: pa.Table, divisors: Mapping[str, int]) -> pa.Table:
    """`Columns._arrow`'s table as `to_arrow` gives it: runs repeated, divisors divided
    (the float of each integer over it), unsigned integers int64."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_run_end_encoded(column.type):
            column = pc.run_end_decode(column)
        if name in divisors:
            column = pc.divide(column.cast(pa.float64()), float(divisors[name]))
        elif pa.types.is_unsigned_integer(column.type):
            column = column.cast(pa.int64())
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def write_parquet(where: Any, pieces: Iterable[pa.Table]) -> None:
    """Writes the tables (of one schema, at most PARQUET_ROWS rows each, e.g. from
    `Columns.arrow_pieces`) one after another as one Parquet file at `where` (a path or a
    pyarrow sink): the file `pyarrow.parquet.write_table` writes of them joined, one row
    group per piece, without them ever joined in memory."""
    with needed("writing Parquet"):
        import pyarrow.parquet as pq

    tables = iter(pieces)
    table = next(tables)
    with pq.ParquetWriter(where, table.schema) as writer:
        while table is not None:
            writer.write_table(table)
            # Not held while the next piece is made.
            table = None
            table = next(tables, None)


def _from_arrow(column: pa.ChunkedArray) -> Column:
    code = _CODES_OF_ARROW.get(str(column.type))
    if code is None or column.null_count:
        return list(column.to_pylist())
    values = column.to_numpy()
    if code != "d" and len(values):
        code = "q" if values.min() < 0 else _narrowest(int(values.max()))
    return Buffer(code, (values.astype(_NUMPY_TYPES[code], copy=False).tobytes(),))


def _narrowest(largest: int) -> str:
    """The type code of the narrowest unsigned integer that holds 0 to `largest`."""
    return next(code for code in _UNSIGNED if largest < 1 << (8 * array(code).itemsize))


def _as_list(column: Column) -> list[Any]:
    return column.to_list() if isinstance(column, Buffer) else column


_ARROW_TYPES = {
    "d": lambda pa: pa.float64(),
    "q": lambda pa: pa.int64(),
    "Q": lambda pa: pa.uint64(),
    "I": lambda pa: pa.uint32(),
    "H": lambda pa: pa.uint16(),
    "B": lambda pa: pa.uint8(),
}
_NUMPY_TYPES = {"d": "<f8", "q": "<i8", "Q": "<u8", "I": "<u4", "H": "<u2", "B": "u1"}
# The unsigned type codes, narrowest first.
_UNSIGNED = ("B", "H", "I", "Q")
# The array type code a column read back from Arrow keeps as a buffer, by Arrow type name.
_CODES_OF_ARROW = {"double": "d", "int64": "q", "uint64": "Q", "uint32": "I"}
