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
from tcplab.columns import Buffer, Columns
from tcplab.plan import resolve, topology_form
from tcplab.spec import load_spec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def sample() -> Columns:
    return Columns.from_sim(
        [
            ("t_s", "d", [struct.pack("<d", 0.5), struct.pack("<d", 1.0)], None),
            ("cwnd_bytes", "I", [struct.pack("<2I", 2920, 2**32 - 1)], None),
            ("cells", "Q", [struct.pack("<2Q", 7, 2**40)], None),
            ("direction", "B", [bytes([1]), bytes([0])], ["forward", "reverse"]),
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
