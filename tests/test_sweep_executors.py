"""A sweep killed half-way resumes and loses nothing; a Dask cluster gives the local results."""

from __future__ import annotations

import json
import multiprocessing
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
import psutil
import pytest
from typer.testing import CliRunner

import tcplab
from tcplab.cli import app
from tcplab.experiments import executors

# 8 runs of about 0.2 s each (a 1 Gb/s path for 5 s): long enough to stop a sweep between
# runs, short enough for the whole file to take seconds.
SLOW = """\
name = "slow"
duration = "5s"
trace_interval = "1s"
repetitions = 2

[[hosts]]
name = "client"
[hosts.tcp]
sndbuf = "4MiB"
rcvbuf = "4MiB"

[[hosts]]
name = "server"
[hosts.tcp]
sndbuf = "4MiB"
rcvbuf = "4MiB"

[[links]]
rate = "1Gbps"
delay = "5ms"
loss = 1e-5
queue = { limit = "10000p" }

[sweep]
"links.0.delay" = ["2ms", "10ms"]
"hosts.client.tcp.sndbuf" = ["2MiB", "4MiB"]
"""
RUNS = 8
# Upper bounds on waits, far above what they take, so that a hang fails instead of blocking.
WAIT_S = 120

QUICK = {
    "name": "quick",
    "duration": "3s",
    "repetitions": 2,
    # Recovery by duplicate ACKs, which the model's loss response (PFTK) describes.
    "hosts": [
        {"name": "client", "tcp": {"loss_recovery": "classic"}},
        {"name": "server", "tcp": {"loss_recovery": "classic"}},
    ],
    "links": [{"rate": "2.048Mbps", "delay": "100ms", "loss": 0.02}],
    "sweep": {"hosts.client.tcp.sndbuf": ["8KiB", "32KiB"]},
}


def stored(out: Path) -> dict[str, int]:
    """The stored runs by name, with their folders' inode numbers (a re-run changes them)."""
    runs = out / "runs"
    if not runs.is_dir():
        return {}
    return {f.name: f.stat().st_ino for f in runs.iterdir() if not f.name.startswith(".")}


def by_run(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["run_id"], kind="stable").reset_index(drop=True)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("slow") / "slow.toml"
    path.write_text(SLOW)
    return path


@pytest.fixture(scope="module")
def uninterrupted(scenario: Path) -> tcplab.Store:
    return tcplab.sweep(scenario, out=scenario.parent / "uninterrupted", jobs=2)


def sweep_command(scenario: Path, out: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "tcplab", "sweep", str(scenario), "--out", str(out), *options]


def default_sigint() -> None:
    # A child inherits an ignored SIGINT (a test run started in the background has one);
    # the sweep must see Ctrl-C as a terminal would deliver it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("kill", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_killed_sweep_resumes_running_only_the_missing_runs(
    scenario: Path, uninterrupted: tcplab.Store, tmp_path: Path, kill: signal.Signals
) -> None:
    out = tmp_path / "out"
    log = tmp_path / "stderr"
    with log.open("w") as stderr:
        sweep = subprocess.Popen(
            sweep_command(scenario, out, "-j", "2"),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            preexec_fn=default_sigint,
        )
        deadline = time.monotonic() + WAIT_S
        while len(stored(out)) < 2 and sweep.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        pool = psutil.Process(sweep.pid).children(recursive=True)
        sweep.send_signal(kill)
        code = sweep.wait(timeout=WAIT_S)
    before = stored(out)
    assert 2 <= len(before) < RUNS, "the sweep was not stopped half-way"
    if kill == signal.SIGINT:
        assert code == 130
        lines = log.read_text().strip().splitlines()
        assert len(lines) == 1, "\n".join(lines)
        assert lines[0] == (
            f"interrupted: {len(before)} of {RUNS} runs are stored in {out}; run the same"
            " command again to resume"
        )
    else:
        assert code == -signal.SIGKILL
    # The pool does not outlive its sweep, even one killed without a chance to clean up.
    gone, alive = psutil.wait_procs(pool, timeout=30)
    assert not alive

    resumed = subprocess.run(
        sweep_command(scenario, out, "-j", "2", "--json"),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["runs"] == {
        "total": RUNS,
        "ran": RUNS - len(before),
        "failed": 0,
    }
    after = stored(out)
    assert {name: after[name] for name in before} == before  # stored runs were not run again
    assert not [f for f in (out / "runs").iterdir() if f.name.startswith(".")]
    store = tcplab.open_results(out)
    pd.testing.assert_frame_equal(by_run(store.summary()), by_run(uninterrupted.summary()))
    pd.testing.assert_frame_equal(store.series(), uninterrupted.series())


def test_a_local_pool_stopped_early_leaves_no_thread_behind() -> None:
    # A manager thread left running races the interpreter's exit on CPython 3.11
    # (gh-125451) and can print a traceback after the sweep's "interrupted" line.
    before = set(threading.enumerate())
    pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))
    futures = [pool.submit(time.sleep, 30) for _ in range(4)]
    while not any(f.running() for f in futures):
        time.sleep(0.01)
    executors._stop(pool)
    assert set(threading.enumerate()) <= before


def test_a_dask_cluster_gives_the_local_pools_results(tmp_path: Path) -> None:
    from distributed import LocalCluster

    local = tcplab.sweep(QUICK, out=tmp_path / "local", jobs=2)
    # In-process workers (threads): a cluster that costs the two test cores nothing extra.
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        on_dask = tcplab.sweep(
            QUICK, out=tmp_path / "dask", executor="dask", scheduler=cluster.scheduler_address
        )
        scenario = tmp_path / "quick.toml"
        scenario.write_text(
            'name = "quick"\nduration = "3s"\nrepetitions = 2\n'
            '[[hosts]]\nname = "client"\ntcp = { loss_recovery = "classic" }\n'
            '[[hosts]]\nname = "server"\ntcp = { loss_recovery = "classic" }\n'
            '[[links]]\nrate = "2.048Mbps"\ndelay = "100ms"\nloss = 0.02\n'
            '[sweep]\n"hosts.0.tcp.sndbuf" = ["8KiB", "32KiB"]\n'
        )
        result = CliRunner().invoke(
            app,
            ["sweep", str(scenario), "--out", str(tmp_path / "cli"), "--executor", "dask",
             "--scheduler", cluster.scheduler_address, "--json"],
        )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["runs"] == {"total": 4, "ran": 4, "failed": 0}
    pd.testing.assert_frame_equal(by_run(on_dask.summary()), by_run(local.summary()))
    pd.testing.assert_frame_equal(on_dask.trace(), local.trace())
    cli = tcplab.open_results(tmp_path / "cli").summary()
    assert list(by_run(cli)["goodput_bps"]) == list(by_run(local.summary())["goodput_bps"])


def test_an_unreachable_scheduler_is_a_user_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(executors, "DASK_CONNECT_TIMEOUT_S", 1)
    with pytest.raises(tcplab.TcplabError, match="cannot reach the Dask scheduler at tcp://"):
        tcplab.sweep(QUICK, out=tmp_path, executor="dask", scheduler="tcp://127.0.0.1:9")


@pytest.mark.parametrize(
    ("how", "jobs"), [("stdin", 1), ("stdin", 2), ("unguarded script", 2), ("-c", 1)]
)
def test_a_sweep_runs_from_stdin_a_repl_or_a_script_without_a_main_guard(
    tmp_path: Path, how: str, jobs: int
) -> None:
    """The workers never run the caller's main module again: piped into `python -` (no file
    to run), or as a script whose top level calls tcplab.sweep (it would sweep again in each
    worker), a sweep works as from the command line, as it does in a notebook."""
    out = tmp_path / "out"
    code = (
        "import sys, tcplab\n"
        f"store = tcplab.sweep({QUICK!r}, out={str(out)!r}, jobs={jobs}, backend='model')\n"
        "print(len(store.summary()))\n"
    )
    if how == "stdin":
        command, stdin = [sys.executable, "-"], code
    elif how == "-c":
        command, stdin = [sys.executable, "-c", code], None
    else:
        script = tmp_path / "unguarded.py"
        script.write_text(code)
        command, stdin = [sys.executable, str(script)], None
    completed = subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=WAIT_S, cwd=tmp_path
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == "4\n"
    assert completed.stderr == ""
