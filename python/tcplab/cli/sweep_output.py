"""What `tcplab sweep` and `tcplab results` show: the progress bar, and tables and JSON of a
results store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from tcplab.cli.common import plain
from tcplab.experiments.store import Store
from tcplab.experiments.sweeps import Run
from tcplab.report import display

# The per-point means a sweep table shows: (heading, summary column, formatter).
POINT_COLUMNS: tuple[tuple[str, str, display.Formatter], ...] = (
    ("goodput", "goodput_bps", display.rate),
    ("retransmits", "retransmits", display.count),
    ("timeouts", "timeouts", display.count),
)


class SweepProgress:
    """A progress bar of a sweep's runs (stored ones count as done), with ETA and failures.

    Use it as a context manager and pass it as `on_run` to tcplab.experiments.sweeps.run_sweep.
    """

    def __init__(self, console: Console, total: int, done: int, enabled: bool) -> None:
        self.failed = 0
        self._progress = Progress(
            TextColumn("runs"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled,
            transient=False,
        )
        self._task = self._progress.add_task("runs", total=total, completed=done, failed=0)

    def __enter__(self) -> SweepProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def __call__(self, run: Run, error: str | None) -> None:
        if error is not None:
            self.failed += 1
        self._progress.update(self._task, advance=1, failed=self.failed)


def points_table(store: Store, title: str) -> Table:
    """Each point of the store's manifest: its swept values, its runs, and the mean ± 95 %
    confidence half-width of goodput, retransmits and timeouts."""
    points = store.points()
    means = store.aggregate().set_index("point_id")
    paths = _paths(store)
    table = Table(title=title)
    for path in paths:
        table.add_column(path, justify="right")
    table.add_column("runs", justify="right")
    for heading, _, _ in POINT_COLUMNS:
        table.add_column(heading, justify="right")
    for row in points.to_dict(orient="records"):
        runs = f"{row['stored']}/{row['expected']}"
        if row["failed"]:
            runs += f" ({row['failed']} failed)"
        stats = means.loc[row["point_id"]] if row["point_id"] in means.index else None
        cells = [_mean_cell(stats, column, formatter) for _, column, formatter in POINT_COLUMNS]
        table.add_row(*[str(row[path]) for path in paths], runs, *cells)
    return table


def points_json(store: Store) -> list[dict[str, Any]]:
    """The manifest's points with their run counts and aggregated summary fields."""
    means = {row["point_id"]: row for row in _records(store.aggregate())}
    points = []
    for point, counts in zip(store.manifest()["points"], _records(store.points()), strict=True):
        stats = means.get(point["point_id"], {})
        points.append(
            {
                "point_id": point["point_id"],
                "params": point["params"],
                "labels": point["labels"],
                **{key: counts[key] for key in ("expected", "stored", "failed")},
                **{key: value for key, value in stats.items() if key not in point["params"]},
            }
        )
    return points


def stores_table(directories: Sequence[Path]) -> Table:
    """One row per results directory: its scenario, points and runs."""
    table = Table(title="results")
    for heading in ("directory", "backend", "points", "runs", "failed", "tcplab"):
        table.add_column(heading, justify="left" if heading == "directory" else "right")
    for directory in directories:
        summary = store_summary(Store(directory))
        table.add_row(
            str(directory),
            summary["backend"],
            str(summary["points"]),
            f"{summary['stored']}/{summary['expected']}",
            str(summary["failed"]),
            summary["tcplab_version"],
        )
    return table


def store_summary(store: Store) -> dict[str, Any]:
    """A results directory in a few numbers."""
    manifest = store.manifest()
    points = store.points()
    return {
        "directory": str(store.directory),
        "name": manifest["name"],
        "backend": manifest["backend"],
        "points": len(points),
        **{key: int(points[key].sum()) for key in ("expected", "stored", "failed")},
        "tcplab_version": manifest["tcplab_version"],
    }


def records_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A query's answer as a table."""
    table = Table()
    for column in columns:
        table.add_column(column, justify="left")
    for row in rows:
        table.add_row(*(_text(value) for value in row))
    return table


def _paths(store: Store) -> list[str]:
    return list((store.manifest().get("sweep") or {}).get("paths", []))


def _mean_cell(stats: pd.Series | None, column: str, formatter: display.Formatter) -> str:
    if stats is None or column not in stats or pd.isna(stats[column]):
        return display.MISSING
    ci95 = stats.get(f"{column}_ci95")
    return formatter(stats[column], None if pd.isna(ci95) else ci95)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    # .item() turns numpy scalars into Python ones, which JSON can write.
    return [
        {
            str(key): plain(value.item() if hasattr(value, "item") else value)
            for key, value in row.items()
        }
        for row in frame.to_dict(orient="records")
    ]


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
