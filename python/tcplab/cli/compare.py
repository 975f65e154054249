"""`tcplab compare`: one scenario on several backends, side by side."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from tcplab import api
from tcplab.cli.common import (
    console,
    fail,
)
from tcplab.errors import TcplabError
from tcplab.experiments.comparison import explain
from tcplab.report import (
    display,
)


def compare_command(
    file: Annotated[Path, typer.Argument(help="scenario file (TOML)", show_default=False)],
    backends: Annotated[
        str, typer.Option(help="comma-separated backends, e.g. sim,emu")
    ] = "sim,emu",
    json_output: Annotated[
        bool, typer.Option("--json", help="print {backend: result} as one JSON object")
    ] = False,
) -> None:
    """Run one scenario on several backends and print the results side by side."""
    names = [name.strip() for name in backends.split(",") if name.strip()]
    try:
        if len(names) < 2:
            raise TcplabError("--backends: name at least two backends, e.g. sim,emu")
        results = {name: api.run(file, backend=name) for name in names}
    except TcplabError as error:
        raise fail(error) from None
    if json_output:
        data = {name: result.to_dict() for name, result in results.items()}
        sys.stdout.write(json.dumps(data, sort_keys=True, allow_nan=False) + "\n")
        return
    summaries = {name: result.summary for name, result in results.items()}
    console.print(comparison_table(summaries))
    streams = list(dict.fromkeys(s for r in results.values() for s in r.summary.get("media", {})))
    if streams:
        console.print(comparison_table(summaries, display.media_summary_rows(streams)))
    console.print(
        series_table(
            {name: (r.series["t_s"], r.interval_goodputs()) for name, r in results.items()}
        )
    )
    for note in explain(summaries):
        console.print(f"- {note}")


def comparison_table(
    summaries: Mapping[str, Mapping[str, Any]],
    rows: Sequence[tuple[str, str, display.Formatter]] = display.SUMMARY_ROWS,
) -> Table:
    """The summaries side by side, a row per entry of `rows` that any of them has, with the
    second backend's value over the first's."""
    names = list(summaries)
    table = Table(title=f"{' vs '.join(names)}")
    table.add_column("")
    for name in names:
        table.add_column(name, justify="right")
    table.add_column(f"{names[1]} / {names[0]}", justify="right")
    for label, key, formatter in rows:
        cells = [display.cell(summaries[name], key, formatter) for name in names]
        if all(text == display.MISSING for text in cells):
            continue
        first, second = (display.lookup(summaries[n], key)[0] for n in names[:2])
        ratio = (
            f"{second / first:.3f}"
            if isinstance(first, (int, float))
            and isinstance(second, (int, float))
            and not isinstance(first, bool)
            and first
            else ""
        )
        table.add_row(label, *cells, ratio)
    return table


def series_table(series: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> Table:
    """Each backend's goodput per interval: `series` maps a backend to its interval stamps
    and goodputs."""
    names = list(series)
    table = Table(title="goodput per interval", box=box.SIMPLE)
    table.add_column("t (s)", justify="right")
    peak = max((max(goodputs, default=0.0) for _, goodputs in series.values()), default=0.0)
    factor, unit = display.rate_unit(peak)
    for name in names:
        table.add_column(f"{name} ({unit})", justify="right")
    columns = {
        name: list(zip(stamps, goodputs, strict=True))
        for name, (stamps, goodputs) in series.items()
    }
    for row in range(max(len(c) for c in columns.values())):
        cells = []
        t_s = None
        for name in names:
            if row < len(columns[name]):
                t_s, goodput = columns[name][row]
                cells.append(f"{goodput / factor:.4g}")
            else:
                cells.append("")
        table.add_row(f"{t_s:g}" if t_s is not None else "", *cells)
    return table
