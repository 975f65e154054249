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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tcplab.extras import needed

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

# The buffers are little-endian; `array` and memoryview read native order.
_NATIVE_LITTLE = sys.byteorder == "little"


@dataclass(frozen=True)
class Buffer:
    """One column as the simulator sent it: `array` type code (d, Q, I, or B with labels),
    its little-endian values in chunks, and for B the names its values index."""

    code: str
    chunks: tuple[bytes, ...]
    labels: tuple[str, ...] | None = None

    @property
    def nbytes(self) -> int:
        return sum(len(chunk) for chunk in self.chunks)

    def __len__(self) -> int:
        return self.nbytes // array(self.code).itemsize

    def values(self) -> array[Any]:
        values = array(self.code)
        for chunk in self.chunks:
            values.frombytes(chunk)
        if not _NATIVE_LITTLE:
            values.byteswap()
        return values

    def to_list(self) -> list[Any]:
        if self.labels is not None:
            labels = self.labels
            return [labels[code] for chunk in self.chunks for code in chunk]
        return self.values().tolist()


Column = Buffer | list[Any]


class Columns(Mapping[str, list[Any]]):
    """Named columns of equal length; `columns[name]` is the column as a list (built on each
    access: for long columns use `to_arrow()` or `to_pandas()`)."""

    def __init__(self, columns: Mapping[str, Column] | None = None) -> None:
        self._columns: dict[str, Column] = dict(columns or {})

    @classmethod
    def from_sim(
        cls, columns: Sequence[tuple[str, str, Sequence[bytes], Sequence[str] | None]]
    ) -> Columns:
        """The columns of one part as `tcplab._sim.run_columnar` returns them."""
        return cls(
            {
                name: Buffer(code, tuple(chunks), tuple(labels) if labels is not None else None)
                for name, code, chunks, labels in columns
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
        """A pyarrow Table: float columns wrap their buffers without a copy, integer columns
        become int64 (as the other backends' lists do), labels become strings."""
        with needed("Columns.to_arrow"):
            import pyarrow as pa

        arrays = {}
        for name, column in self._columns.items():
            if not isinstance(column, Buffer):
                arrays[name] = pa.array(column)
                continue
            code = "B" if column.labels is not None else column.code
            kind = _ARROW_TYPES[code](pa)
            width = array(code).itemsize
            chunks = pa.chunked_array(
                [
                    pa.Array.from_buffers(kind, len(chunk) // width, [None, pa.py_buffer(chunk)])
                    for chunk in column.chunks
                ],
                type=kind,
            )
            if column.labels is not None:
                labels = pa.array(column.labels, pa.string())
                arrays[name] = pa.chunked_array(
                    [
                        pa.DictionaryArray.from_arrays(codes, labels).dictionary_decode()
                        for codes in chunks.chunks
                    ],
                    type=pa.string(),
                )
            else:
                arrays[name] = chunks if code == "d" else chunks.cast(pa.int64())
        return pa.table(arrays)

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
            code = "B" if column.labels is not None else column.code
            kind = np.dtype(_NUMPY_TYPES[code])
            values = np.concatenate(
                [np.frombuffer(chunk, kind) for chunk in column.chunks] or [np.empty(0, kind)]
            )
            if column.labels is not None:
                data[name] = np.array(column.labels, dtype=object)[values]
            else:
                data[name] = values if code == "d" else values.astype(np.int64)
        return pd.DataFrame(data)

    @classmethod
    def from_arrow(cls, table: pa.Table) -> Columns:
        """The columns of a pyarrow Table (e.g. one `to_arrow` made): numbers without nulls
        as buffers, so a long column read back costs its values, not a list; any other
        column as a list."""
        columns: dict[str, Column] = {}
        for name, column in zip(table.column_names, table.columns, strict=True):
            code = _CODES_OF_ARROW.get(str(column.type))
            if code is None or column.null_count:
                columns[name] = column.to_pylist()
                continue
            values = column.to_numpy().astype(_NUMPY_TYPES[code], copy=False)
            columns[name] = Buffer(code, (values.tobytes(),))
        return cls(columns)

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
            if len(buffers) == len(columns) and len({(b.code, b.labels) for b in buffers}) == 1:
                first = buffers[0]
                chunks = tuple(chunk for b in buffers for chunk in b.chunks)
                stacked[name] = Buffer(first.code, chunks, first.labels)
            else:
                stacked[name] = [v for c in columns for v in _as_list(c)]
        return cls(stacked)


def _as_list(column: Column) -> list[Any]:
    return column.to_list() if isinstance(column, Buffer) else column


_ARROW_TYPES = {
    "d": lambda pa: pa.float64(),
    "q": lambda pa: pa.int64(),
    "Q": lambda pa: pa.uint64(),
    "I": lambda pa: pa.uint32(),
    "B": lambda pa: pa.uint8(),
}
_NUMPY_TYPES = {"d": "<f8", "q": "<i8", "Q": "<u8", "I": "<u4", "B": "u1"}
# The array type code a column read back from Arrow keeps as a buffer, by Arrow type name.
_CODES_OF_ARROW = {"double": "d", "int64": "q", "uint64": "Q", "uint32": "I"}
