"""`tcplab calibrate`: the simulator measured against this machine's kernel on a grid.

    import tcplab.calibrate as calibrate
    result = calibrate.calibrate("calibration/regression.toml", mode="sim")
    print(result.verdict.line())
    print(result.points[["point", "goodput_ratio", "nrmse"]])

`mode` is "both" (run the grid on the simulator and measure it on the kernel, as root),
"sim" (the simulator against the kernel results committed in calibration/<grid>/kernel/)
or "kernel" (measure the kernel again and commit-ready write its results there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from tcplab.calibrate.bounds import check_bounds, write_bounds
from tcplab.calibrate.grid import Grid, GridPoint, load_grid
from tcplab.calibrate.metrics import MAX_TIMING_ERROR, Verdict, compare, verdict
from tcplab.calibrate.run import KernelData, OnRun, load_kernel, measure_kernel, run_sim, select
from tcplab.errors import TcplabError
from tcplab.spec import units
from tcplab.spec.scenario import MAX_REPETITIONS

Mode = Literal["both", "sim", "kernel"]
MODES: tuple[Mode, ...] = ("both", "sim", "kernel")

__all__ = [
    "Calibration",
    "Grid",
    "GridPoint",
    "KernelData",
    "Verdict",
    "calibrate",
    "check_bounds",
    "load_grid",
    "load_kernel",
    "nrmse_bins",
    "write_bounds",
]


@dataclass(frozen=True)
class Calibration:
    """A grid's comparison: `points` has one row per point (metrics.compare's columns),
    the series and traces of both sides have a `point` column naming theirs."""

    grid: Grid
    points: pd.DataFrame
    verdict: Verdict
    sim_series: pd.DataFrame
    kernel_series: pd.DataFrame
    sim_trace: pd.DataFrame
    kernel_trace: pd.DataFrame
    kernel: KernelData | None

    def to_dict(self) -> dict[str, Any]:
        """The verdict and the points as plain JSON values (NaN and infinity as None)."""
        rows = [
            {key: _plain(value) for key, value in row.items()}
            for row in self.points.to_dict("records")
        ]
        kernel = self.kernel.machine.get("kernel") if self.kernel else None
        return {
            "grid": self.grid.name,
            "kernel": kernel,
            "verdict": self.verdict.to_dict(),
            "points": rows,
        }


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _plain(value.item())
    return value


def calibrate(
    grid: str | PathLike[str] | Grid,
    mode: Mode = "both",
    points: Sequence[str] | None = None,
    out: str | PathLike[str] | None = None,
    jobs: int | None = None,
    force: bool = False,
    max_timing_error: float = MAX_TIMING_ERROR,
    on_run: OnRun | None = None,
    repetitions: int = 1,
    nrmse_interval: str | int | None = None,
) -> Calibration:
    """Run `grid` (a grid file or a loaded Grid) and compare the simulator with the kernel.

    `points`: glob patterns of point names (default: all). `out`: the scratch results
    directory (default results/calibrate/<grid>), holding the simulator's store in sim/
    and the kernel's in kernel/. `jobs`: simulator processes. `force`: measure kernel
    points again that the kernel store already holds. A kernel point whose emulator p99
    lateness exceeds `max_timing_error` of its base RTT is flagged and not counted.
    `on_run(point, error)` is called as each run finishes. `repetitions`: kernel runs per
    point (each with its own seed, the first with the simulator's); the simulator runs
    each point at the seed of every kernel run of it and its run at the seed of the median
    kernel run is compared with that run (tcplab.calibrate.metrics). `nrmse_interval`
    (e.g. "1s"; default the grid's `interval`) is the interval over which the per-interval
    series are compared, a whole multiple of the grid's.
    """
    if mode not in MODES:
        raise ValueError(f"mode: {mode!r}; accepted: {', '.join(MODES)}")
    if not 1 <= repetitions <= MAX_REPETITIONS:
        raise TcplabError(f"repetitions: {repetitions}; accepted: 1 to {MAX_REPETITIONS}")
    if repetitions > 1 and mode == "sim":
        raise TcplabError(
            "repetitions: measures the kernel that many times; with the simulator only"
            " (--sim-only) there is nothing to repeat"
        )
    loaded = grid if isinstance(grid, Grid) else load_grid(grid)
    bins = nrmse_bins(loaded, nrmse_interval)
    names = select(loaded, points)
    scratch = Path("results") / "calibrate" / loaded.name if out is None else Path(out)
    if mode in ("both", "kernel"):
        kernel = measure_kernel(loaded, scratch / "kernel", names, force, on_run, repetitions)
    else:
        kernel = load_kernel(loaded)
    kernel = _only(kernel, names)
    empty = pd.DataFrame(columns=["point"])
    sim_summary, sim_series, sim_trace = empty, empty, empty
    if mode in ("both", "sim"):
        counts = (
            {str(name): int(n) for name, n in kernel.summary.groupby("point").size().items()}
            if not kernel.summary.empty
            else {}
        )
        sim_summary, sim_series, sim_trace = run_sim(
            loaded, scratch / "sim", names, jobs, on_run, counts
        )
    points_frame = compare(
        loaded, sim_summary, kernel.summary, sim_series, kernel.series, max_timing_error, bins
    )
    return Calibration(
        loaded,
        points_frame,
        verdict(loaded, points_frame, bins),
        sim_series,
        kernel.series,
        sim_trace,
        kernel.trace,
        kernel,
    )


def nrmse_bins(grid: Grid, nrmse_interval: str | int | None) -> int:
    """How many of the grid's intervals make one interval of `nrmse_interval`."""
    if nrmse_interval is None:
        return 1
    step = grid.spec.interval
    try:
        wanted = units.parse_duration(nrmse_interval, positive=True)
    except ValueError as error:
        raise TcplabError(f"nrmse_interval: {error}") from None
    if wanted % step:
        raise TcplabError(
            f"nrmse_interval: {nrmse_interval!r}; accepted: a whole multiple of the grid's"
            f" interval ({units.format_duration(step)})"
        )
    return wanted // step


def _only(kernel: KernelData, names: set[str]) -> KernelData:
    def keep(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["point"].isin(names)] if not frame.empty else frame

    return KernelData(keep(kernel.summary), keep(kernel.series), keep(kernel.trace), kernel.machine)
