"""Running a grid: the simulator into a scratch store, the kernel into the grid's data.

Both go through the sweep machinery (tcplab.experiments.sweeps) on the grid's scenario with
the backend
overridden. The kernel's runs are then packed into calibration/<grid>/kernel/ (one Parquet
file per table for the whole grid, and machine.json: the kernel version, the sysctls each
namespace ran with and the machine's load while each point ran), which is what the
repository keeps and what `--sim-only` compares with.
"""

from __future__ import annotations

import datetime
import fnmatch
import json
import os
import platform
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from tcplab.calibrate.grid import Grid
from tcplab.errors import TcplabError
from tcplab.experiments import sweeps
from tcplab.experiments.store import Store
from tcplab.plan import resolve
from tcplab.result import write_atomically
from tcplab.version import __version__

KERNEL_DIR = "kernel"
MACHINE_FILE = "machine.json"
# The kernel's tables that calibration keeps: one row per point, and its two time series.
TABLES = ("summary", "series", "trace")
# Niceness of a kernel measurement (root only): the endpoints inherit it, so the compiles
# of others on the machine take the CPU from them less. The emulator thread itself asks for
# SCHED_FIFO (docs/emu.md).
KERNEL_NICENESS = -10
# Machine-wide settings that shape the kernel's TCP and that no namespace overrides.
MODULE_PARAMETERS = ("/sys/module/tcp_cubic/parameters", "/sys/module/tcp_bbr/parameters")
# The prefixes of a fresh namespace's sysctls that are recorded as its defaults.
SYSCTL_PREFIXES = ("net.ipv4.tcp_", "net.core.")

OnRun = Callable[[str, str | None], None]


@dataclass(frozen=True)
class KernelData:
    """The kernel's committed results for a grid: a row per point (`point` names it) in
    `summary`, the per-interval delivered bytes in `series`, the TCP_INFO samples in
    `trace`, and `machine` (machine.json)."""

    summary: pd.DataFrame
    series: pd.DataFrame
    trace: pd.DataFrame
    machine: dict[str, Any]


def select(grid: Grid, patterns: Sequence[str] | None) -> set[str]:
    """The names of the grid's points that match any of the glob `patterns` (all if None)."""
    names = [point.name for point in grid.points]
    if not patterns:
        return set(names)
    chosen = {name for name in names if any(fnmatch.fnmatchcase(name, p) for p in patterns)}
    if not chosen:
        raise TcplabError(
            f"--points {' '.join(patterns)}: no point of {grid.name} matches; its points are"
            f" named like {names[0]}"
        )
    return chosen


def _plan(
    grid: Grid,
    backend: str,
    out: Path,
    names: set[str],
    force: bool,
    repetitions: int | dict[str, int] = 1,
) -> sweeps.SweepPlan:
    """The sweep of the chosen points with `repetitions` runs each (a count for all, or one
    per point name, 1 for a name it lacks). Repetition k has the same seed and run id on
    every backend."""

    def count(name: str) -> int:
        return repetitions.get(name, 1) if isinstance(repetitions, dict) else repetitions

    most = max((count(name) for name in names), default=1)
    spec = grid.spec.model_copy(update={"repetitions": most})
    plan = sweeps.plan_sweep(spec, out=out, force=force, backend=backend)
    pending = [
        run
        for run in plan.pending
        if run.point.params["name"] in names and run.repetition < count(run.point.params["name"])
    ]
    return replace(plan, pending=pending)


def run_sim(
    grid: Grid,
    out: Path,
    names: set[str],
    jobs: int | None = None,
    on_run: OnRun | None = None,
    repetitions: dict[str, int] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Run the chosen points on the simulator into the store at `out`, always afresh (the
    simulator changes under the same scenario, and a stored run would hide that); their
    summary, series and trace tables, each with the point's name as `point`.
    `repetitions`: runs per point name (default one), so that the simulator runs at the
    seed of each of the kernel's runs of the point (random loss, start jitter and the
    algorithms' draws then come from the same seed on both sides)."""
    plan = _plan(grid, "sim", out, names, force=True, repetitions=repetitions or 1)
    store = sweeps.run_sweep(plan, jobs=jobs, on_run=_reporting(on_run))
    runs = {run.run_id: run.point.params["name"] for run in plan.pending}
    summary, series, trace = (_named(getattr(store, table)(), runs) for table in TABLES)
    return summary, series, trace


def _named(frame: pd.DataFrame, runs: dict[str, str]) -> pd.DataFrame:
    """The rows of `runs` (run id -> point name), with the name as a first column `point`."""
    if frame.empty:
        return pd.DataFrame(columns=["point"])
    frame = frame[frame["run_id"].isin(runs)].copy()
    frame.insert(0, "point", frame["run_id"].map(runs))
    return frame


def measure_kernel(
    grid: Grid,
    out: Path,
    names: set[str],
    force: bool = False,
    on_run: OnRun | None = None,
    repetitions: int = 1,
) -> KernelData:
    """Measure the chosen points on this machine's kernel (root), `repetitions` runs each
    (repetition 0 with the grid's seed, the simulator's), one at a time, into the store at
    `out` (an interrupted measurement resumes; `force` measures stored points again), then
    write them into the grid's data directory over their earlier rows."""
    plan = _plan(grid, "emu", out, names, force, repetitions)
    if plan.pending and os.geteuid() == 0:
        os.setpriority(os.PRIO_PROCESS, 0, KERNEL_NICENESS)
    loads: dict[str, dict[str, Any]] = {}

    def record(run: sweeps.Run, error: str | None) -> None:
        one, five, _ = os.getloadavg()
        stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        loads[run.run_id] = {"loadavg_1min": one, "loadavg_5min": five, "measured_at": stamp}
        if on_run is not None:
            on_run(run.point.params["name"], error)

    sweeps.run_sweep(plan, jobs=1, on_run=record)
    _write_loads(plan.store, loads)
    return pack(grid, plan, names)


def _reporting(on_run: OnRun | None) -> Callable[[sweeps.Run, str | None], None] | None:
    if on_run is None:
        return None
    return lambda run, error: on_run(run.point.params["name"], error)


LOADS_FILE = "loads.json"


def _write_loads(store: Store, loads: dict[str, dict[str, Any]]) -> None:
    """Keep each run's load beside the store, since the store has no column for it."""
    path = store.directory / LOADS_FILE
    known = json.loads(path.read_text()) if path.exists() else {}
    known.update(loads)
    write_atomically(path, json.dumps(known, indent=1, sort_keys=True) + "\n")


def pack(grid: Grid, plan: sweeps.SweepPlan, names: set[str]) -> KernelData:
    """Write the stored kernel runs of the chosen points into calibration/<grid>/kernel/,
    replacing those points' earlier rows and keeping every other point's."""
    store = plan.store
    stored = store.run_ids()
    runs = {
        run.run_id: run.point.params["name"]
        for run in plan.runs
        if run.run_id in stored and run.point.params["name"] in names
    }
    old = load_kernel(grid) if (grid.data_dir / KERNEL_DIR / MACHINE_FILE).exists() else None
    loads_path = store.directory / LOADS_FILE
    loads = json.loads(loads_path.read_text()) if loads_path.exists() else {}
    tables = {}
    for table in TABLES:
        frame = _named(getattr(store, table)(), runs) if runs else pd.DataFrame(columns=["point"])
        if table == "summary" and not frame.empty:
            for column in ("loadavg_1min", "loadavg_5min", "measured_at"):
                frame[column] = frame["run_id"].map(lambda r, c=column: loads.get(r, {}).get(c))
        if old is not None:
            kept = getattr(old, table)
            kept = kept[~kept["point"].isin(set(runs.values()))]
            frame = pd.concat([kept, frame], ignore_index=True) if not frame.empty else kept
        order = {point.name: i for i, point in enumerate(grid.points)}
        frame = frame.sort_values("point", key=lambda s: s.map(order), kind="stable")
        tables[table] = frame.reset_index(drop=True)
    machine = _machine(grid, old.machine if old else None, set(runs.values()))
    directory = grid.data_dir / KERNEL_DIR
    directory.mkdir(parents=True, exist_ok=True)
    for table, frame in tables.items():
        frame.to_parquet(directory / f"{table}.parquet", index=False, compression="zstd")
    write_atomically(directory / MACHINE_FILE, json.dumps(machine, indent=1) + "\n")
    return KernelData(tables["summary"], tables["series"], tables["trace"], machine)


def load_kernel(grid: Grid) -> KernelData:
    """The kernel's committed results for `grid`."""
    directory = grid.data_dir / KERNEL_DIR
    if not (directory / MACHINE_FILE).exists():
        raise TcplabError(
            f"{directory} holds no kernel results for {grid.name}; measure them as root with"
            f" tcplab calibrate {grid.path} --kernel-only"
        )
    frames = {table: pd.read_parquet(directory / f"{table}.parquet") for table in TABLES}
    machine = json.loads((directory / MACHINE_FILE).read_text())
    return KernelData(frames["summary"], frames["series"], frames["trace"], machine)


def _machine(grid: Grid, old: dict[str, Any] | None, measured: set[str]) -> dict[str, Any]:
    """machine.json: where and how the kernel ran, and the sysctls of each point's hosts."""
    from tcplab.backends import emu

    points = dict(old["points"]) if old else {}
    for point in sweeps.expand(grid.spec):
        name = point.params["name"]
        if name not in measured:
            continue
        plan = resolve(point.spec)
        sender, receiver = plan["hosts"][0]["tcp"], plan["hosts"][-1]["tcp"]
        hosts = {
            "sender": emu.host_setup(sender, receiver),
            "receiver": emu.host_setup(receiver, sender),
        }
        points[name] = {
            side: {"sysctls": setup.sysctls, "route_options": setup.route_options}
            for side, setup in hosts.items()
        }
    return {
        "grid": grid.name,
        "kernel": platform.release(),
        "machine": platform.node(),
        "cpu_count": os.cpu_count(),
        "tcplab_version": __version__,
        "niceness": os.getpriority(os.PRIO_PROCESS, 0),
        "packed_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "module_parameters": _module_parameters(),
        "namespace_defaults": _namespace_defaults(),
        "points": {p.name: points[p.name] for p in grid.points if p.name in points},
    }


def _module_parameters() -> dict[str, str]:
    values = {}
    for folder in map(Path, MODULE_PARAMETERS):
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            values[f"{folder.parent.name}.{path.name}"] = path.read_text().strip()
    return values


def _namespace_defaults() -> dict[str, str]:
    """The TCP and core sysctls of a fresh network namespace, as each run's namespaces
    started with before the backend set its own (docs/emu.md). The namespace has no
    name: it ends with the `sysctl` process, however this one ends."""
    out = subprocess.run(
        ["unshare", "--net", "sysctl", "-a"], check=True, capture_output=True, text=True
    ).stdout
    values = {}
    for line in out.splitlines():
        key, _, value = line.partition(" = ")
        if key.startswith(SYSCTL_PREFIXES):
            values[key] = " ".join(value.split())
    return values
