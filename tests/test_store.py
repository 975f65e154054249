"""The result store and tcplab.sweep: layout, resuming, failures, tables, SQL and statistics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import tcplab
from tcplab.experiments.stats import mean_std_ci95
from tcplab.experiments.store import META_COLUMNS, Store
from tcplab.experiments.sweeps import plan_sweep

SCENARIO: dict[str, Any] = {
    "name": "store-test",
    "duration": "3s",
    "repetitions": 2,
    "links": [{"rate": "2.048Mbps", "delay": "100ms", "loss": 0.01}],
    "sweep": {"hosts.client.tcp.sndbuf": ["8KiB", "16KiB"], "links.0.delay": ["50ms", "100ms"]},
}
PATHS = ["hosts.client.tcp.sndbuf", "links.0.delay"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return tcplab.sweep(SCENARIO, out=tmp_path_factory.mktemp("store") / "grid", jobs=2)


def test_each_run_is_a_complete_folder_of_the_documented_layout(store: Store) -> None:
    runs = sorted((store.directory / "runs").iterdir())
    assert len(runs) == 8
    for run in runs:
        assert sorted(f.name for f in run.iterdir()) == [
            "flows.parquet", "hosts.parquet", "links.parquet", "media.parquet",
            "messages.parquet", "meta.json", "series.parquet", "summary.parquet",
            "trace.parquet",
        ]  # fmt: skip
        meta = json.loads((run / "meta.json").read_text())
        assert set(meta) == {"run_id", "point_id", "params", "repetition", "seed", "spec_hash",
                             "backend", "tcplab_version", "spec"}  # fmt: skip
        assert meta["run_id"] == run.name == f"{meta['spec_hash'][:16]}-{meta['seed']}"
        assert set(meta["params"]) == set(PATHS)
    manifest = store.manifest()
    assert {"name", "backend", "seed", "repetitions", "spec_hash", "scenario", "sweep", "points",
            "tcplab_version", "machine"} <= set(manifest)  # fmt: skip
    assert manifest["sweep"] == {"mode": "grid", "paths": PATHS}
    assert len(manifest["points"]) == 4
    assert {"hostname", "platform", "cpu_count", "python"} == set(manifest["machine"])


def test_the_summary_has_meta_params_and_flattened_fields(store: Store) -> None:
    summary = store.summary()
    assert list(summary["run_id"]) == sorted(store.run_ids())
    assert list(summary.columns[: len(META_COLUMNS) + 2]) == [*META_COLUMNS, *PATHS]
    assert {"goodput_bps", "retransmits", "timeouts", "limited_by_rwnd", "limited_by_cwnd"} <= set(
        summary.columns
    )
    assert sorted(set(summary["hosts.client.tcp.sndbuf"])) == [8192, 16384]
    assert sorted(set(summary["links.0.delay"])) == [50_000_000, 100_000_000]
    # Each run's rows carry its keys, so the tables join on run_id.
    for frame in (store.flows(), store.hosts(), store.links(), store.series(), store.trace()):
        assert set(frame["run_id"]) == store.run_ids()
        assert {"point_id", "repetition"} <= set(frame.columns)
    assert len(store.series()) == 8 * 3  # 3 one-second intervals per run


def test_a_stored_run_equals_the_same_scenario_run_alone(store: Store) -> None:
    row = store.summary().iloc[3]
    meta = json.loads((store.directory / "runs" / row["run_id"] / "meta.json").read_text())
    alone = tcplab.run(meta["spec"])
    assert alone.meta["spec_hash"] == row["spec_hash"]
    assert alone.summary["goodput_bps"] == row["goodput_bps"]
    assert alone.summary["limited_by"]["rwnd"] == row["limited_by_rwnd"]


def test_aggregate_gives_mean_spread_and_ci95_per_point(store: Store) -> None:
    means = store.aggregate()
    summary = store.summary()
    assert list(means["point_id"]) == [p["point_id"] for p in store.manifest()["points"]]
    assert list(means["runs"]) == [2, 2, 2, 2]
    for point in means.to_dict(orient="records"):
        runs = summary[summary["point_id"] == point["point_id"]]
        mean, std, ci95 = mean_std_ci95(list(runs["goodput_bps"]))
        assert point["goodput_bps"] == pytest.approx(mean)
        assert point["goodput_bps_std"] == pytest.approx(std)
        assert point["goodput_bps_ci95"] == pytest.approx(ci95)
        assert point["completed"] is True
        assert point["links.0.delay"] == runs["links.0.delay"].iloc[0]


def test_sql_and_dataframes_give_the_same_numbers(store: Store) -> None:
    answer = store.query(
        'SELECT "hosts.client.tcp.sndbuf" AS sndbuf, avg(goodput_bps) AS goodput, count(*) AS n'
        " FROM summary GROUP BY 1 ORDER BY 1"
    )
    expected = (
        store.summary().groupby("hosts.client.tcp.sndbuf")["goodput_bps"].agg(["mean", "size"])
    )
    assert list(answer["sndbuf"]) == list(expected.index)
    assert list(answer["goodput"]) == pytest.approx(list(expected["mean"]))
    assert list(answer["n"]) == list(expected["size"])
    joined = store.query(
        "SELECT count(*) AS n FROM series JOIN summary USING (run_id) WHERE summary.repetition = 0"
    )
    assert joined["n"].iloc[0] == 4 * 3


def test_a_bad_query_is_a_user_error_on_one_line(store: Store) -> None:
    with pytest.raises(
        tcplab.TcplabError, match="query failed: .*nosuch.*views: summary"
    ) as raised:
        store.query("SELECT * FROM nosuch")
    assert "\n" not in str(raised.value)


def test_a_sweep_again_finds_nothing_to_do_unless_forced(store: Store) -> None:
    assert plan_sweep(SCENARIO, out=store.directory).pending == []
    assert len(plan_sweep(SCENARIO, out=store.directory, force=True).pending) == 8
    # More repetitions keep the stored runs and add only the new ones.
    more = plan_sweep({**SCENARIO, "repetitions": 3}, out=store.directory)
    assert len(more.pending) == 4
    assert {run.repetition for run in more.pending} == {2}


def test_failed_runs_are_recorded_and_retried_without_stopping_the_sweep(tmp_path: Path) -> None:
    # The model backend has no model of Hybla, so those points fail; the others still run.
    scenario = {
        "name": "half-fails",
        "backend": "model",
        "links": [{"rate": "2.048Mbps", "delay": "275ms"}],
        "sweep": {"hosts.0.tcp.cc": ["reno", "hybla"], "links.0.delay": ["100ms", "275ms"]},
    }
    store = tcplab.sweep(scenario, out=tmp_path / "out", jobs=1)
    assert len(store.run_ids()) == 2
    failures = store.failures()
    assert len(failures) == 2
    assert all("no model of 'hybla'" in error for error in failures["error"])
    assert {row["hosts.0.tcp.cc"] for row in failures["params"]} == {"hybla"}
    assert list(store.points()["failed"]) == [0, 0, 1, 1]
    retried = plan_sweep(scenario, out=store.directory).pending
    assert {run.run_id for run in retried} == set(failures["run_id"])


def test_a_stored_run_clears_its_failure_and_replaces_an_older_copy(tmp_path: Path) -> None:
    store = Store(tmp_path)
    result = tcplab.run({"backend": "model", "links": [{"rate": "1Mbps", "delay": "1ms"}]})
    meta = {"run_id": "r-1", "point_id": "p", "params": {}, "repetition": 0, "seed": 1,
            "spec_hash": "h", "backend": "model", "tcplab_version": "0", "spec": {}}  # fmt: skip
    store.write_failure(meta, "boom")
    assert list(store.failures()["run_id"]) == ["r-1"]
    parts = {
        part: getattr(result, part)
        for part in ("summary", "flows", "hosts", "links", "media", "series", "trace", "messages")
    }
    first = store.write_run(meta, parts)
    store.write_run({**meta, "seed": 2}, parts)
    assert store.failures().empty
    assert store.run_ids() == {"r-1"}
    assert json.loads((first / "meta.json").read_text())["seed"] == 2


def test_half_written_runs_of_dead_processes_are_removed(tmp_path: Path) -> None:
    store = Store(tmp_path)
    dead = tmp_path / "runs" / ".tmp-abc-1-999999999"
    dead.mkdir(parents=True)
    (dead / "summary.parquet").write_bytes(b"half")
    assert store.run_ids() == set()
    assert store.summary().empty
    store.remove_leftovers()
    assert not dead.exists()


def test_open_results_needs_a_results_directory(tmp_path: Path) -> None:
    with pytest.raises(tcplab.TcplabError, match="not a results directory"):
        tcplab.open_results(tmp_path)


def test_run_refuses_a_scenario_with_a_sweep() -> None:
    with pytest.raises(tcplab.TcplabError, match="tcplab.sweep"):
        tcplab.run(SCENARIO)


def test_frames_are_pandas(store: Store) -> None:
    for frame in (store.summary(), store.aggregate(), store.points(), store.failures()):
        assert isinstance(frame, pd.DataFrame)
