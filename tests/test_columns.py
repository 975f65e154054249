"""The result's long parts as column buffers (tcplab.columns): the same values the JSON
carries, in lists, Arrow tables and DataFrames, stacked over repetitions; and a run whose
columns would not fit the memory budget refused before it starts."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pandas as pd
import pytest

import tcplab
from tcplab import _sim
from tcplab.columns import Buffer, Columns, write_parquet
from tcplab.plan import resolve, topology_form
from tcplab.spec import load_spec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def sample() -> Columns:
    return Columns.from_sim(
        [
            ("t_s", "d", (struct.pack("<d", 0.5), struct.pack("<d", 1.0)), None, None, None),
            ("cwnd_bytes", "I", (struct.pack("<2I", 2920, 2**32 - 1),), None, None, None),
            ("cells", "Q", (struct.pack("<2Q", 7, 2**40),), None, None, None),
            ("direction", "B", (bytes([1]), bytes([0])), ["forward", "reverse"], None, None),
        ]
    )


def encoded(flows: int) -> Columns:
    """Two instants of `flows` rows each, as the trace sends them: the time run-end encoded,
    SRTT integer nanoseconds, a counter in the narrowest type it fits."""
    rows = 2 * flows
    return Columns.from_sim(
        [
            (
                "t_s",
                "d",
                (struct.pack("<2d", 0.01, 0.02),),
                None,
                (struct.pack("<2I", flows, rows),),
                None,
            ),
            ("srtt_s", "I", (struct.pack(f"<{rows}I", *range(1, rows + 1)),), None, None, 10**9),
            (
                "retransmits",
                "B" if flows < 256 else "H",
                (bytes(rows * (1 + (flows >= 256))),),
                None,
                None,
                None,
            ),
        ]
    )


def test_buffers_read_as_lists_tables_and_frames() -> None:
    columns = sample()
    assert list(columns) == ["t_s", "cwnd_bytes", "cells", "direction"]
    assert columns.rows == 2 and columns.nbytes == 16 + 8 + 16 + 2
    assert columns["t_s"] == [0.5, 1.0]
    assert columns["cwnd_bytes"] == [2920, 2**32 - 1]
    assert columns["cells"] == [7, 2**40]
    assert columns["direction"] == ["reverse", "forward"]
    table = columns.to_arrow()
    assert [str(t) for t in table.schema.types] == ["double", "int64", "int64", "string"]
    assert table.to_pydict() == columns.to_dict()
    frame = columns.to_pandas()
    # The dtypes a DataFrame of the same lists gets (int64, not the buffers' unsigned ones).
    assert list(frame.dtypes) == list(pd.DataFrame(columns.to_dict()).dtypes)
    assert frame.to_dict("list") == columns.to_dict()


def test_stacking_numbers_repetitions_and_joins_buffers() -> None:
    lists = Columns.of({"t_s": [9.0], "cwnd_bytes": [1], "cells": [2], "direction": ["forward"]})
    stacked = Columns.stack([sample(), sample(), lists])
    assert stacked["repetition"] == [0, 0, 1, 1, 2]
    assert stacked["t_s"] == [0.5, 1.0, 0.5, 1.0, 9.0]
    assert stacked["direction"] == ["reverse", "forward", "reverse", "forward", "forward"]
    twice = Columns.stack([sample(), sample()])
    assert isinstance(twice._columns["cells"], Buffer), "buffers stay buffers"


def test_runs_and_divisors_decode_to_the_values_of_plain_columns() -> None:
    columns = encoded(2)
    assert columns.rows == 4 and columns.nbytes == 16 + 8 + 16 + 4
    assert columns["t_s"] == [0.01, 0.01, 0.02, 0.02]
    # Divided as the simulator converts ns to s: the float of the integer over 1e9.
    assert columns["srtt_s"] == [n / 1e9 for n in range(1, 5)] == [1e-09, 2e-09, 3e-09, 4e-09]
    table = columns.to_arrow()
    assert [str(t) for t in table.schema.types] == ["double", "double", "int64"]
    assert table.to_pydict() == columns.to_dict()
    frame = columns.to_pandas()
    assert list(frame.dtypes) == list(pd.DataFrame(columns.to_dict()).dtypes)
    assert frame.to_dict("list") == columns.to_dict()


def test_a_trace_without_rows_reads_as_empty_columns() -> None:
    # A run without TCP connections (UDP media only) samples nothing: no instants.
    empty = Columns.from_sim(
        [
            ("t_s", "d", (), None, (), None),
            ("srtt_s", "B", (), None, None, 10**9),
            ("retransmits", "B", (), None, None, None),
        ]
    )
    assert empty.rows == 0 and empty["t_s"] == [] and empty["srtt_s"] == []
    assert empty.to_arrow().num_rows == 0 and len(empty.to_pandas()) == 0
    assert [str(t) for t in empty.to_arrow().schema.types] == ["double", "double", "int64"]
    assert Columns.stack([empty, encoded(1)])["t_s"] == [0.01, 0.02]


def test_stacking_joins_runs_and_widens_integers() -> None:
    stacked = Columns.stack([encoded(2), encoded(300)])
    buffers = stacked._columns
    assert isinstance(buffers["t_s"], Buffer) and isinstance(buffers["retransmits"], Buffer)
    assert buffers["retransmits"].code == "H", "the widest of the parts' types"
    assert stacked["t_s"] == [0.01] * 2 + [0.02] * 2 + [0.01] * 300 + [0.02] * 300
    assert stacked["repetition"] == [0] * 4 + [1] * 600
    assert stacked.to_pandas().to_dict("list") == stacked.to_dict()


def test_parquet_written_piece_by_piece_is_the_file_written_whole() -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    columns = Columns.stack([encoded(3), encoded(300)])
    pieces = list(columns.arrow_pieces(rows=4))
    assert [piece.num_rows for piece in pieces] == [4] * 151 + [2]
    assert pa.concat_tables(pieces).equals(columns.to_arrow())
    whole, piecewise = pa.BufferOutputStream(), pa.BufferOutputStream()
    pq.write_table(columns.to_arrow(), whole, row_group_size=4)
    assert pq.read_table(whole.getvalue()).to_pydict() == columns.to_dict()
    write_parquet(piecewise, columns.arrow_pieces(rows=4))
    assert whole.getvalue() == piecewise.getvalue()
    assert [p.num_rows for p in Columns().arrow_pieces()] == [0], "an empty piece, no file without"


def test_columns_of_a_run_hold_what_its_json_holds() -> None:
    # ABR: series, trace, the ATM queue and the ACR samples, with direction labels.
    spec = load_spec(EXAMPLES / "atm-abr.toml")
    plan = resolve(spec)
    expected = json.loads(_sim.run(json.dumps(topology_form(plan))))
    result = tcplab.run(spec)
    for part in ("series", "trace", "atm_queue", "abr_acr"):
        columns = getattr(result, part)
        assert isinstance(columns, Columns)
        assert columns.to_dict() == expected[part], part
    assert result.summary == expected["summary"]
    assert json.loads(result.to_json())["abr_acr"] == expected["abr_acr"]


def test_a_trace_too_large_for_memory_is_refused_before_the_run() -> None:
    scenario = {
        "duration": "1000s",
        "trace_interval": "1us",
        "links": [{"kind": "p2p", "rate": "1Mbps", "delay": "1ms"}],
    }
    with pytest.raises(tcplab.BackendError, match="trace_interval_ns: .* raise trace_interval"):
        tcplab.run(scenario)
