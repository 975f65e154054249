"""`tcplab sweep`, `tcplab run` on a sweep, and `tcplab results list | query`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import tcplab
from tcplab.cli import app
from tcplab.cli.sweep_output import SweepProgress

SWEEP = """\
name = "cli-sweep"
duration = "3s"
repetitions = 2

# Recovery by duplicate ACKs, which the model's loss response (PFTK) describes.
[[hosts]]
name = "client"
tcp = { loss_recovery = "classic" }

[[hosts]]
name = "server"
tcp = { loss_recovery = "classic" }

[[links]]
rate = "2.048Mbps"
delay = "100ms"
loss = 0.01

[sweep]
"hosts.client.tcp.sndbuf" = ["8KiB", "16KiB"]
"links.0.delay" = ["50ms", "100ms"]
"""

runner = CliRunner()


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A finished sweep by the CLI: its results directory and its --json output."""
    folder = tmp_path_factory.mktemp("cli-sweep")
    out = folder / "out"
    result = runner.invoke(app, ["sweep", str(write(folder, SWEEP)), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    return out, json.loads(result.stdout)


def test_sweep_json_has_each_point_with_its_statistics(swept: tuple[Path, dict]) -> None:
    out, data = swept
    assert data["directory"] == str(out)
    assert data["runs"] == {"total": 8, "ran": 8, "failed": 0}
    assert [p["labels"] for p in data["points"]] == [
        {"hosts.client.tcp.sndbuf": "8KiB", "links.0.delay": "50ms"},
        {"hosts.client.tcp.sndbuf": "8KiB", "links.0.delay": "100ms"},
        {"hosts.client.tcp.sndbuf": "16KiB", "links.0.delay": "50ms"},
        {"hosts.client.tcp.sndbuf": "16KiB", "links.0.delay": "100ms"},
    ]
    means = tcplab.open_results(out).aggregate()
    for point, (_, row) in zip(data["points"], means.iterrows(), strict=True):
        assert point["stored"] == point["runs"] == 2
        assert point["goodput_bps"] == pytest.approx(row["goodput_bps"])
        assert point["goodput_bps_ci95"] == pytest.approx(row["goodput_bps_ci95"])


def test_a_second_sweep_runs_nothing_and_prints_the_table(swept: tuple[Path, dict]) -> None:
    out, _ = swept
    path = out.parent / "sweep.toml"
    result = runner.invoke(app, ["sweep", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    for text in ("hosts.client.tcp.sndbuf", "links.0.delay", "16KiB", "100ms", "2/2", "goodput",
                 "retransmits", "timeouts", "mean ± 95 % CI of 2 repetitions"):  # fmt: skip
        assert text in result.stdout
    assert "8 of 8 runs stored in" in result.stdout
    assert "0 ran now" in result.stdout


def test_run_on_a_sweep_file_sweeps(swept: tuple[Path, dict]) -> None:
    out, expected = swept
    path = out.parent / "sweep.toml"
    result = runner.invoke(app, ["run", str(path), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["runs"] == {"total": 8, "ran": 0, "failed": 0}
    assert data["points"] == expected["points"]
    refused = runner.invoke(app, ["run", str(path), "--no-save"])
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: a sweep stores each run")


def test_results_query_answers_sql_with_the_python_api_numbers(swept: tuple[Path, dict]) -> None:
    out, _ = swept
    sql = (
        'SELECT "links.0.delay" AS delay, avg(goodput_bps) AS goodput, max(timeouts) AS timeouts'
        " FROM summary GROUP BY 1 ORDER BY 1"
    )
    result = runner.invoke(app, ["results", "query", str(out), sql, "--json"])
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    summary = tcplab.open_results(out).summary()
    expected = summary.groupby("links.0.delay").agg(
        goodput=("goodput_bps", "mean"), timeouts=("timeouts", "max")
    )
    assert [row["delay"] for row in rows] == list(expected.index)
    assert [row["goodput"] for row in rows] == pytest.approx(list(expected["goodput"]))
    assert [row["timeouts"] for row in rows] == list(expected["timeouts"])
    table = runner.invoke(app, ["results", "query", str(out), sql])
    assert table.exit_code == 0, table.stderr
    assert "delay" in table.stdout and "goodput" in table.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["results", "query", "{out}", "SELECT * FROM nosuch"], "error: query failed: "),
        (["results", "query", "{tmp}", "SELECT 1"], "is not a results directory"),
        (["results", "list", "{tmp}"], "error: no results directories in"),
    ],
)
def test_results_user_errors_exit_2(
    swept: tuple[Path, dict], tmp_path: Path, args: list[str], expected: str
) -> None:
    out, _ = swept
    result = runner.invoke(app, [arg.format(out=out, tmp=tmp_path) for arg in args])
    assert result.exit_code == 2
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_results_list_shows_a_directory_or_the_directories_in_a_folder(
    swept: tuple[Path, dict],
) -> None:
    out, _ = swept
    points = runner.invoke(app, ["results", "list", str(out)])
    assert points.exit_code == 0, points.stderr
    assert "16KiB" in points.stdout and "2/2" in points.stdout
    folder = runner.invoke(app, ["results", "list", str(out.parent), "--json"])
    assert folder.exit_code == 0, folder.stderr
    (entry,) = json.loads(folder.stdout)
    assert entry | {"tcplab_version": None} == {
        "directory": str(out), "name": "cli-sweep", "backend": "sim", "points": 4,
        "expected": 8, "stored": 8, "failed": 0, "tcplab_version": None,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("sweep", "path"),
    [
        ('"hosts.client.tcp.sndbf" = ["4KiB"]', 'sweep."hosts.client.tcp.sndbf": unknown field'),
        ('"hosts.0.tcp.sndbuf" = []', 'sweep."hosts.0.tcp.sndbuf": an empty list'),
        ('mode = "zip"\n"links.0.delay" = ["1ms", "2ms"]\n"app.message_size" = [1]',
         'sweep: mode = "zip" pairs the i-th values'),
        ('"hosts.0.tcp.sndbuf" = ["4KiB", "-4KiB"]', 'sweep."hosts.0.tcp.sndbuf": "-4KiB" is'),
    ],
)  # fmt: skip
def test_bad_sweep_input_exits_2_naming_the_path(tmp_path: Path, sweep: str, path: str) -> None:
    text = SWEEP.split("[sweep]")[0] + "[sweep]\n" + sweep + "\n"
    for command in ("sweep", "run"):
        result = runner.invoke(app, [command, str(write(tmp_path, text)), "--out", str(tmp_path)])
        assert result.exit_code == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert path in lines[0]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--executor", "dask"], "error: --executor dask needs --scheduler"),
        (["--scheduler", "tcp://127.0.0.1:1"], "error: --scheduler is for --executor dask"),
        (["--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "-j", "2"],
         "error: -j is for the local executor"),
        (["--executor", "ray"], "error: unknown executor 'ray'; accepted: local, dask"),
    ],
)  # fmt: skip
def test_executor_options_are_checked(tmp_path: Path, options: list[str], expected: str) -> None:
    path = write(tmp_path, SWEEP)
    result = runner.invoke(app, ["sweep", str(path), "--out", str(tmp_path / "o"), *options])
    assert result.exit_code == 2
    assert result.stderr.startswith(expected)


def test_failed_runs_are_stored_as_failures_and_exit_1(tmp_path: Path) -> None:
    # The model backend has no model of Hybla: that point fails, the other is stored.
    text = SWEEP.split("[sweep]")[0] + '[sweep]\n"hosts.0.tcp.cc" = ["reno", "hybla"]\n'
    path = write(tmp_path, text)
    out = tmp_path / "out"
    result = runner.invoke(app, ["sweep", str(path), "--backend", "model", "--out", str(out)])
    assert result.exit_code == 1
    assert "2 of 4 runs stored" in result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: 2 of 4 runs failed, e.g. ")
    assert "no model of 'hybla'" in line and "failures/" in line
    assert len(list((out / "failures").glob("*.json"))) == 2


def test_the_progress_bar_counts_stored_runs_and_failures() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    with SweepProgress(console, total=4, done=1, enabled=True) as progress:
        progress(None, None)
        progress(None, "boom")
    text = screen.getvalue()
    assert "3/4" in text
    assert "1 failed" in text
    assert "ETA" in text


def test_a_second_sweep_into_a_directory_in_use_is_refused_naming_the_holder(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    scenario = write(tmp_path, SWEEP)
    with tcplab.Store(out).locked():
        result = runner.invoke(app, ["sweep", str(scenario), "--out", str(out), "--force"])
        assert result.exit_code == 2
        assert f"{out} is in use by another sweep (pid " in result.stderr
        assert "wait for it to end, or write elsewhere (--out)" in result.stderr
        assert not (out / "runs").exists()
    # Released with its holder, the directory takes the sweep.
    result = runner.invoke(app, ["sweep", str(scenario), "--out", str(out), "-j", "1"])
    assert result.exit_code == 0, result.stderr
