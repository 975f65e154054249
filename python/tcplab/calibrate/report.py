"""The calibration report: one HTML file with the verdict, the sim-vs-kernel goodput
scatter (log axes, a point per grid point, coloured by cc), the per-point table, and for
the worst points their per-interval goodput and cwnd, simulator and kernel overlaid."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tcplab.calibrate import Calibration
from tcplab.calibrate.metrics import BANDS
from tcplab.report import display, html, plots

# How many of the points furthest from the kernel get overlay plots.
WORST = 10
CC_COLOURS = {"reno": "tab:blue", "newreno": "tab:blue", "cubic": "tab:orange", "bbr": "tab:green"}
TABLE_COLUMNS = {
    "point": "point",
    "goodput_sim_bps": "sim (bit/s)",
    "goodput_kernel_bps": "kernel (bit/s)",
    "goodput_ratio": "sim / kernel",
    "retransmits_sim": "retrans sim",
    "retransmits_kernel": "retrans kernel",
    "timeouts_sim": "RTOs sim",
    "timeouts_kernel": "RTOs kernel",
    "nrmse": "NRMSE",
    "nrmse_kernel": "NRMSE of the kernel's runs",
    "timing_p99_us": "emulator p99 late (µs)",
    "loadavg_1min": "load",
    "flag": "flag",
}


def scatter(points: pd.DataFrame) -> Figure | None:
    """Simulator against kernel goodput on log axes; the diagonal and the 10 % band;
    flagged points hollow."""
    data = points.dropna(subset=["goodput_sim_bps", "goodput_kernel_bps"])
    data = data[(data["goodput_sim_bps"] > 0) & (data["goodput_kernel_bps"] > 0)]
    if data.empty:
        return None
    figure = Figure(figsize=(6.4, 6.0), layout="constrained")
    axes = figure.subplots()
    for cc, group in data.groupby("cc", sort=True):
        colour = CC_COLOURS.get(str(cc), "tab:gray")
        for trusted, marker in ((True, colour), (False, "none")):
            part = group[group["trusted"] == trusted]
            if part.empty:
                continue
            axes.scatter(
                part["goodput_kernel_bps"] / 1e6,
                part["goodput_sim_bps"] / 1e6,
                facecolors=marker,
                edgecolors=colour,
                label=f"{cc}" if trusted else f"{cc} (flagged: emulator timing)",
                s=28,
            )
    values = np.concatenate([data["goodput_sim_bps"], data["goodput_kernel_bps"]]) / 1e6
    low, high = values.min() / 1.5, values.max() * 1.5
    line = np.array([low, high])
    axes.plot(line, line, color="black", linewidth=0.8, label="sim = kernel")
    band = BANDS[-1]
    axes.fill_between(
        line,
        line * (1 - band),
        line * (1 + band),
        color="gray",
        alpha=0.2,
        label=f"within {100 * band:.0f} %",
    )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(low, high)
    axes.set_ylim(low, high)
    axes.set_xlabel("kernel goodput (Mbit/s)")
    axes.set_ylabel("simulator goodput (Mbit/s)")
    axes.legend(fontsize="small")
    return figure


def worst(points: pd.DataFrame, count: int = WORST) -> list[str]:
    """The trusted points furthest from the kernel's goodput, worst first."""
    trusted = points[points["trusted"]].sort_values("goodput_error", ascending=False)
    return [str(name) for name in trusted["point"].head(count)]


def _sides(sim: pd.DataFrame, kernel: pd.DataFrame, point: str) -> pd.DataFrame:
    parts = [
        frame[frame["point"] == point].assign(backend=side)
        for side, frame in (("sim", sim), ("kernel", kernel))
        if not frame.empty
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def overlay(result: Calibration, point: str) -> list[str]:
    """The point's per-interval goodput and its sender trace, both sides on each plot."""
    series = _sides(result.sim_series, result.kernel_series, point)
    trace = _sides(result.sim_trace, result.kernel_trace, point)
    parts = []
    if not series.empty:
        interval = series.groupby("backend")["t_s"].transform(lambda t: t.diff().fillna(t.iloc[0]))
        series = series.assign(goodput_bps=8 * series["interval_bytes"] / interval)
        figure = plots.per_interval(series, "goodput_bps", series=("backend",), title=point)
        parts.append(html.figure(figure, f"goodput per interval of {point}"))
    if not trace.empty:
        figure = plots.sender_trace(trace, series=("backend",), title=point)
        parts.append(html.figure(figure, f"cwnd and srtt of {point}"))
    return parts


def _cell(column: str, value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    if column.startswith("goodput_") and column.endswith("_bps") and value is not None:
        return display.rate(float(value))  # type: ignore[arg-type]
    return value


def write_report(result: Calibration, path: str | os.PathLike[str]) -> Path:
    """Write the calibration report to `path` (one self-contained HTML file)."""
    points = result.points
    machine = result.kernel.machine if result.kernel else {}
    meta = (
        f"grid {result.grid.path}; kernel {machine.get('kernel', 'not measured')} on"
        f" {machine.get('machine', '?')}; {len(points)} points"
    )
    rows = [
        [_cell(column, row.get(column)) for column in TABLE_COLUMNS]
        for row in points.to_dict("records")
    ]
    parts = [
        html.paragraph(result.verdict.line()),
        "<h2>Goodput, simulator against kernel</h2>",
        html.figure(scatter(points), "simulator against kernel goodput"),
        "<h2>Every point</h2>",
        html.table(list(TABLE_COLUMNS.values()), rows),
        f"<h2>The {WORST} points furthest from the kernel</h2>",
    ]
    for point in worst(points):
        parts += [f"<h3>{html.esc(point)}</h3>", *overlay(result, point)]
    return html.write(path, html.page(f"calibration: {result.grid.name}", meta, parts))
