"""`tcplab calibrate GRID`: the simulator against the kernel on a grid's points, as a table
with a verdict line, as JSON, or as an HTML report. Registered on the main command by
tcplab.cli."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from tcplab.cli.common import RUNS_FAILED, console, fail, print_table
from tcplab.errors import TcplabError
from tcplab.extras import require
from tcplab.report import display

if TYPE_CHECKING:  # imported where it runs: the calibration needs the store extra
    from tcplab.calibrate import Mode

BOUNDS_EXCEEDED = 1


def calibrate_command(
    grid: Annotated[
        Path, typer.Argument(help="grid file, e.g. calibration/standard.toml", show_default=False)
    ],
    sim_only: Annotated[
        bool,
        typer.Option(
            "--sim-only", help="run the simulator against the committed kernel results (no root)"
        ),
    ] = False,
    kernel_only: Annotated[
        bool,
        typer.Option(
            "--kernel-only", help="measure the kernel (root) and write its results, no simulator"
        ),
    ] = False,
    points: Annotated[
        list[str] | None,
        typer.Option(help="only the points whose names match this glob (repeat for more)"),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("-j", "--jobs", min=1, help="simulator processes [default: one per CPU]"),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="scratch results directory [default: results/calibrate/<grid>]"),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="measure again the kernel points the scratch store holds"),
    ] = False,
    repetitions: Annotated[
        int,
        typer.Option(
            min=1,
            help="kernel runs per point; the simulator is compared with the median one",
        ),
    ] = 1,
    max_timing_error: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="flag a kernel point whose emulator p99 lateness exceeds this share of its RTT",
        ),
    ] = 0.05,
    nrmse_interval: Annotated[
        str | None,
        typer.Option(
            help="compare the per-interval series over this interval, a whole multiple of"
            " the grid's (e.g. 1s) [default: the grid's interval]",
        ),
    ] = None,
    write_bounds: Annotated[
        bool,
        typer.Option(
            "--write-bounds", help="write today's errors as the grid's bounds (bounds.json)"
        ),
    ] = False,
    check_bounds: Annotated[
        bool,
        typer.Option("--check-bounds", help="exit 1 if a point exceeds the grid's bounds"),
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="print the verdict and the points as one JSON object")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(help="also write the HTML report (scatter, table, worst points) here"),
    ] = None,
) -> None:
    """Run a grid's points on the simulator and on this machine's kernel (through the
    emulator) and report, per point, how far the simulator is from the kernel."""
    # Before any point runs: the points are stored, and --html draws them.
    require("report" if html is not None else "store", "tcplab calibrate")
    from tcplab import calibrate as calibration
    from tcplab.calibrate.bounds import BOUNDS_FILE

    try:
        if sim_only and kernel_only:
            raise TcplabError("--sim-only and --kernel-only exclude each other")
        mode: Mode = "sim" if sim_only else "kernel" if kernel_only else "both"
        if (write_bounds or check_bounds) and mode == "kernel":
            raise TcplabError("--write-bounds and --check-bounds need the simulator's runs")
        failed: list[str] = []

        def progress(point: str, error: str | None) -> None:
            if error is not None:
                failed.append(point)
            if not json_output:
                _progress(point, error)

        result = calibration.calibrate(
            grid,
            mode,
            points,
            out,
            jobs,
            force,
            max_timing_error,
            progress,
            repetitions,
            nrmse_interval,
        )
        bounds = result.grid.data_dir / BOUNDS_FILE
        if write_bounds:
            calibration.write_bounds(result.points, bounds)
        exceeded = calibration.check_bounds(result.points, bounds) if check_bounds else []
        if html is not None:
            from tcplab.calibrate.report import write_report

            write_report(result, html)
    except (TcplabError, OSError) as error:
        raise fail(error) from None
    if json_output:
        data = {**result.to_dict(), "bounds_exceeded": exceeded, "runs_failed": failed}
        sys.stdout.write(json.dumps(data, allow_nan=False) + "\n")
    else:
        print_table(points_table(result.points, result.grid.name))
        console.print(result.verdict.line())
        if write_bounds:
            console.print(f"bounds written to {bounds}")
        if html is not None:
            console.print(f"report written to {html}")
        for line in exceeded:
            console.print(f"bound exceeded: {line}")
        if failed:
            console.print(f"{len(failed)} runs failed: {', '.join(sorted(set(failed)))}")
    if exceeded or failed:
        raise typer.Exit(BOUNDS_EXCEEDED if exceeded else RUNS_FAILED)


def _progress(point: str, error: str | None) -> None:
    typer.echo(f"{point}: {'failed: ' + error if error else 'done'}", err=True)


def _absent(value: Any) -> bool:
    """A column without a value for this point (None, or NaN from pandas)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _ratio(value: Any) -> str:
    if _absent(value):
        return display.MISSING
    return "inf" if math.isinf(value) else f"{value:.2f}"


def _count(value: Any) -> str:
    if _absent(value):
        return display.MISSING
    return f"{value:,.0f}"


def _rate(value: Any) -> str:
    if _absent(value):
        return display.MISSING
    return display.rate(value)


def _main_limit(row: dict[str, Any], side: str) -> str:
    from tcplab.calibrate.metrics import LIMITS

    given = {limit: row.get(f"limited_by_{limit}_{side}") for limit in LIMITS}
    shares = {k: v for k, v in given.items() if isinstance(v, float) and not math.isnan(v)}
    if not shares:
        return display.MISSING
    top = max(shares, key=lambda k: shares[k])
    return f"{top} {100 * shares[top]:.0f}%"


def _fairness(row: dict[str, Any]) -> str:
    """Jain's index on both sides where several connections share the path."""
    if row.get("flows", 1) <= 1:
        return display.MISSING
    return f"{_ratio(row['fairness_sim'])}/{_ratio(row['fairness_kernel'])}"


def _nrmse(row: dict[str, Any]) -> str:
    """The simulator's NRMSE and, where the kernel ran the point more than once, its own
    runs' (the largest against the compared run)."""
    kernel = row.get("nrmse_kernel")
    if _absent(kernel):
        return _ratio(row["nrmse"])
    return f"{_ratio(row['nrmse'])}/{_ratio(kernel)}"


def _kernel_runs(row: dict[str, Any]) -> str:
    """How many kernel runs the point has and, for several, their lowest and highest
    goodput over the compared (median) run's."""
    count = row.get("kernel_runs") or 0
    median = row["goodput_kernel_bps"]
    if count <= 1 or not isinstance(median, float) or not median > 0:
        return str(count) if count else display.MISSING
    low, high = row["goodput_kernel_min_bps"] / median, row["goodput_kernel_max_bps"] / median
    return f"{count} ({low:.2f}-{high:.2f})"


def points_table(points: Any, name: str) -> Table:
    """A row per point: goodput on both sides and their ratio, the kernel's runs and their
    spread, retransmissions and timeouts (sim / kernel), the main limit on each side, NRMSE
    (the simulator's, and the kernel's own runs' where it ran the point more than once), the
    fairness of competing connections and the point's flag."""
    table = Table(title=f"calibration: {name} (sim vs kernel)", box=box.SIMPLE)
    columns = [
        "point",
        "sim",
        "kernel",
        "sim/kernel",
        "kernel runs",
        "retrans s/k",
        "RTOs s/k",
        "limit sim",
        "limit kernel",
        "NRMSE s/k",
        "Jain s/k",
        "p99 late (µs)",
        "flag",
    ]
    for column in columns:
        table.add_column(column, justify="left" if column in ("point", "flag") else "right")
    for row in points.to_dict("records"):
        table.add_row(
            row["point"],
            _rate(row["goodput_sim_bps"]),
            _rate(row["goodput_kernel_bps"]),
            _ratio(row["goodput_ratio"]),
            _kernel_runs(row),
            f"{_count(row['retransmits_sim'])}/{_count(row['retransmits_kernel'])}",
            f"{_count(row['timeouts_sim'])}/{_count(row['timeouts_kernel'])}",
            _main_limit(row, "sim"),
            _main_limit(row, "kernel"),
            _nrmse(row),
            _fairness(row),
            _count(row["timing_p99_us"]),
            row["flag"],
        )
    return table
