"""RunResult: frames, combining repetitions, deterministic JSON, atomic save; the t table."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tcplab.errors import BackendError, TcplabError
from tcplab.experiments.stats import mean_std_ci95, t975
from tcplab.result import RunResult

META = {"name": "x", "backend": "sim", "seed": 1, "spec_hash": "0" * 64}


def raw(goodput: float = 8000.0, retransmits: int = 0, completed: bool = True) -> dict[str, Any]:
    return {
        "summary": {
            "goodput_bps": goodput,
            "retransmits": retransmits,
            "completed": completed,
            "limited_by": {"rwnd": 0.75, "sndbuf": 0.0, "cwnd": 0.25, "app": 0.0},
        },
        "flows": [{"flow": 0, "src": "client", "dst": "server", "goodput_bps": goodput}],
        "hosts": [{"host": "client", "cpu_utilisation": 0.5}],
        "links": [{"link": 0, "direction": "forward", "packets": 10}],
        # The last interval is partial (2.0 s to 2.5 s).
        "series": {"t_s": [1.0, 2.0, 2.5], "interval_bytes": [1000, 2000, 500]},
        "trace": {"flow": [0, 0], "t_s": [0.01, 0.02], "cwnd_bytes": [2920, 4380]},
    }


def test_to_pandas_goodput_uses_each_intervals_true_length() -> None:
    frame = RunResult.from_backend(raw(), META).to_pandas()
    assert list(frame.columns) == ["t_s", "interval_bytes", "goodput_bps"]
    assert list(frame["goodput_bps"]) == [8000.0, 16000.0, 8000.0]


def test_frames_of_trace_flows_and_links() -> None:
    result = RunResult.from_backend(raw(), META)
    assert list(result.trace_frame()["cwnd_bytes"]) == [2920, 4380]
    assert result.flows_frame().loc[0, "src"] == "client"
    assert result.links_frame().loc[0, "packets"] == 10


def test_a_result_missing_a_part_is_refused() -> None:
    incomplete = raw()
    del incomplete["series"]
    with pytest.raises(BackendError, match="series"):
        RunResult.from_backend(incomplete, META)


def test_combine_gives_mean_spread_and_ci95_and_stacks_rows() -> None:
    runs = [
        RunResult.from_backend(
            raw(goodput=g, retransmits=r, completed=c), {**META, "repetition": i}
        )
        for i, (g, r, c) in enumerate([(1000.0, 1, True), (2000.0, 2, True), (3000.0, 3, False)])
    ]
    combined = RunResult.combine(runs, {**META, "repetitions": 3})
    summary = combined.summary
    assert summary["goodput_bps"] == 2000.0
    assert summary["goodput_bps_std"] == 1000.0
    assert summary["goodput_bps_ci95"] == pytest.approx(4.3027 * 1000.0 / math.sqrt(3))
    assert summary["retransmits"] == 2.0
    assert summary["completed"] is False
    assert summary["limited_by"]["rwnd"] == 0.75
    assert summary["limited_by"]["rwnd_std"] == 0.0
    assert [row["repetition"] for row in combined.flows] == [0, 1, 2]
    assert combined.series["repetition"] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    frame = combined.to_pandas()
    # Interval lengths restart with each repetition.
    assert list(frame["goodput_bps"]) == [8000.0, 16000.0, 8000.0] * 3
    assert combined.runs == runs


def test_combined_fields_are_numbers_over_the_repetitions_that_have_them() -> None:
    # Issue #15: with loss = 0.5 some repetitions deliver nothing, their fairness is null,
    # and the combined summary held the list of per-run values.
    summaries = [
        {"fairness": 0.5, "rr": None, "cc": "reno", "only_some": 3.0},
        {"fairness": None, "rr": None, "cc": "cubic"},
        {"fairness": 1.0, "rr": None, "cc": "reno", "only_some": None},
    ]
    runs = [
        RunResult.from_backend({**raw(), "summary": {**raw()["summary"], **summary}}, META)
        for summary in summaries
    ]
    summary = RunResult.combine(runs, {**META, "repetitions": 3}).summary
    assert summary["fairness"] == 0.75
    assert summary["fairness_n"] == 2
    assert summary["fairness_std"] == pytest.approx(math.sqrt(0.125))
    assert summary["only_some"] == 3.0
    assert summary["only_some_n"] == 1
    assert summary["only_some_std"] is None and summary["only_some_ci95"] is None
    assert summary["rr"] is None
    assert summary["cc"] == "reno"
    assert "goodput_bps_n" not in summary  # every repetition has it
    assert not [key for key, value in summary.items() if isinstance(value, list)]


def test_to_json_is_deterministic_sorted_and_carries_runs_by_summary() -> None:
    runs = [RunResult.from_backend(raw(goodput=g), {**META, "repetition": i})
            for i, g in enumerate([1.0, 2.0])]  # fmt: skip
    combined = RunResult.combine(runs, {**META, "repetitions": 2})
    text = combined.to_json()
    assert text == RunResult.combine(runs, {**META, "repetitions": 2}).to_json()
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert set(data) == {
        *("summary", "flows", "hosts", "links", "media", "series", "trace", "messages"),
        *("meta", "runs"),
    }
    assert data["runs"] == [{"meta": run.meta, "summary": run.summary} for run in runs]
    assert "runs" not in json.loads(runs[0].to_json())


def test_to_json_refuses_nan() -> None:
    with pytest.raises(ValueError):
        RunResult.from_backend(raw(goodput=math.nan), META).to_json()


def test_save_writes_the_long_parts_as_parquet_and_load_reads_the_result_back(
    tmp_path: Path,
) -> None:
    result = RunResult.from_backend(raw(), META)
    path = result.save(tmp_path / "deep" / "dir")
    assert path == tmp_path / "deep" / "dir" / "result.json"
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "result.json",
        "series.parquet",
        "trace.parquet",
    ]
    small = json.loads(path.read_text())
    assert "series" not in small and "trace" not in small
    assert small["summary"] == result.summary
    loaded = RunResult.load(path.parent)
    assert loaded.to_json() == result.to_json()
    assert loaded.trace.to_pandas().equals(result.trace.to_pandas())
    # An empty long part has no file, and a stale one from an earlier save goes.
    empty = RunResult.from_backend({**raw(), "trace": {}}, META)
    empty.save(path.parent)
    assert not (path.parent / "trace.parquet").exists()
    assert RunResult.load(path.parent).to_json() == empty.to_json()


def test_a_simulator_result_saved_and_loaded_is_the_same_result(tmp_path: Path) -> None:
    import tcplab

    scenario = {
        "name": "saved",
        "duration": "3s",
        "repetitions": 2,
        "links": [{"rate": "10Mbps", "delay": "20ms", "queue": {"limit": "20p"}}],
    }
    result = tcplab.run(scenario)
    result.save(tmp_path)
    loaded = RunResult.load(tmp_path)
    assert loaded.to_json() == result.to_json()
    assert [run.summary for run in loaded.runs] == [run.summary for run in result.runs]
    assert loaded.trace.to_arrow().equals(result.trace.to_arrow())
    assert loaded.trace.to_pandas().equals(result.trace.to_pandas())
    # Integers read back in the narrowest type that holds them: repetitions and flows in
    # a byte, not the file's int64.
    codes = {name: column.code for name, column in loaded.trace._columns.items()}
    assert codes["repetition"] == codes["flow"] == "B" and codes["t_s"] == "d"


def test_load_names_the_file_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(TcplabError, match="cannot read .*result.json"):
        RunResult.load(tmp_path)


def test_t975_table_and_expansion() -> None:
    assert t975(1) == 12.7062
    assert t975(30) == 2.0423
    # Beyond the table: within 1e-4 of the exact quantiles 2.0395 (31), 2.0003 (60), 1.9799 (120).
    assert t975(31) == pytest.approx(2.0395, abs=1e-4)
    assert t975(60) == pytest.approx(2.0003, abs=1e-4)
    assert t975(120) == pytest.approx(1.9799, abs=1e-4)
    assert t975(10**9) == pytest.approx(1.95996, abs=1e-5)
    with pytest.raises(ValueError):
        t975(0)


def test_mean_std_ci95() -> None:
    mean, std, ci95 = mean_std_ci95([2.0, 4.0, 6.0, 8.0])
    assert mean == 5.0
    assert std == pytest.approx(math.sqrt(20 / 3))
    assert ci95 == pytest.approx(3.1824 * std / 2)
    with pytest.raises(ValueError):
        mean_std_ci95([1.0])
