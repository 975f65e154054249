"""`tcplab run`: one scenario, its result printed beside the model's and saved."""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from tcplab import api
from tcplab.cli.common import (
    console,
    fail,
    print_json,
)
from tcplab.errors import TcplabError
from tcplab.extras import MissingExtra, require
from tcplab.report import REPORT_FILE, display
from tcplab.result import RESULT_FILE, RunResult
from tcplab.spec import Spec, canonical_dict, validate_spec

# What --format accepts besides the tables.
_FORMATS = ("json", "iperf3")

# Rows of the per-interval table before it wraps into another column group, and at most
# this many groups side by side, so a 100-interval run still fits a terminal.
_SERIES_ROWS = 25

_SERIES_GROUPS = 5


def run_command(
    file: Annotated[Path, typer.Argument(help="scenario file (TOML)", show_default=False)],
    json_output: Annotated[
        bool, typer.Option("--json", help="print the result as one JSON object instead")
    ] = False,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="iperf3: print the result as iperf3's JSON (iperf3 -J) instead; json: as --json",
        ),
    ] = None,
    backend: Annotated[
        str | None, typer.Option(help="sim, model or emu; overrides the scenario's backend")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="overrides the scenario's seed")] = None,
    out: Annotated[
        Path | None, typer.Option(help="where to save result.json and report.html")
    ] = None,
    no_save: Annotated[bool, typer.Option("--no-save", help="save nothing")] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="replace an earlier run saved in the same directory (without it, a re-run"
            " saves into results/<name>-2, -3, ..., and an --out holding a run is refused)",
        ),
    ] = False,
    pcap: Annotated[
        list[str] | None,
        typer.Option(
            help="capture a link direction (links.0, links.0.forward) into <out>/links.0.pcap,"
            " or what a host sends and receives (client) into <out>/client.pcap; repeatable;"
            " adds to the scenario's [trace] pcap"
        ),
    ] = None,
) -> None:
    """Run a scenario and print its result; save result.json and report.html.

    A scenario with a [sweep] table runs as `tcplab sweep FILE` does.
    """
    try:
        if output_format not in (None, *_FORMATS):
            raise TcplabError(
                f"--format: {output_format!r} is not a format; accepted: {', '.join(_FORMATS)}"
            )
        iperf3 = output_format == "iperf3"
        json_output = json_output or output_format == "json"
        spec = api.prepare(file, backend=backend, seed=seed)
        if iperf3 and (spec.sweep is not None or spec.repetitions > 1):
            raise TcplabError(
                "--format iperf3 prints one run; this scenario has"
                + (" a [sweep]" if spec.sweep is not None else f" {spec.repetitions} repetitions")
            )
        if spec.sweep is not None and no_save:
            raise TcplabError("a sweep stores each run in its results directory; drop --no-save")
        if pcap:
            if no_save or spec.sweep is not None:
                raise TcplabError("--pcap saves captures beside result.json of a single run")
            spec = _with_captures(spec, pcap)
        if overwrite and (no_save or spec.sweep is not None):
            raise TcplabError(
                "--overwrite replaces the saved result of a single run (a sweep resumes;"
                " its --force runs every point again)"
            )
        directory = None if no_save or spec.sweep is not None else _directory(spec, out, overwrite)
        if directory is not None:
            # Refused before the run, not after it: its long parts are saved as Parquet.
            require("store", "saving a run (tcplab run without --no-save)")
    except TcplabError as error:
        raise fail(error) from None
    if spec.sweep is not None:
        from tcplab.cli.sweep import sweep_file

        sweep_file(file, out=out, json_output=json_output, backend=backend, seed=seed)
        return
    try:
        result = api.run(spec)
        bounds = None if json_output or iperf3 else _model_summary(spec)
        saved = None if directory is None else _save(result, directory)
        report = None if saved is None else _write_report(result, saved.parent)
        if iperf3:
            print_json(result.to_iperf3())
            return
    except TcplabError as error:
        raise fail(error) from None
    if json_output:
        sys.stdout.write(result.to_json() + "\n")
        return
    _print_result(result, bounds)
    if saved is not None:
        console.print(f"saved {saved}" + (f" and {report}" if report is not None else ""))
        for name in result.captures:
            console.print(f"saved {saved.parent / name}.pcap")


def _directory(spec: Spec, out: Path | None, overwrite: bool) -> Path:
    """Where the run is saved: `out`, or results/<name>. Without `overwrite` an earlier
    run's result is never replaced: a re-run goes to results/<name>-2 (-3, ...), and an
    `out` that holds one is refused before anything runs."""
    if out is not None:
        if (out / RESULT_FILE).exists() and not overwrite:
            raise TcplabError(
                f"{out} holds an earlier run ({RESULT_FILE}); give --overwrite to replace it,"
                " or another --out"
            )
        return out
    base = Path("results") / spec.name
    directory, number = base, 1
    while (directory / RESULT_FILE).exists() and not overwrite:
        number += 1
        directory = base.with_name(f"{spec.name}-{number}")
    return directory


def _save(result: RunResult, directory: Path) -> Path:
    try:
        return result.save(directory)
    except OSError as error:
        raise TcplabError(f"cannot save into {directory}: {error.strerror or error}") from None


def _write_report(result: RunResult, directory: Path) -> Path | None:
    """report.html beside the saved result; without the 'report' extra, a note naming it
    instead (the result itself is saved: `tcplab report` draws it once the extra is in)."""
    try:
        require("report", "report.html")
    except MissingExtra as missing:
        typer.echo(f"note: no {REPORT_FILE} written: {missing}", err=True)
        return None
    from tcplab.report import write_report

    try:
        return write_report(result, directory / REPORT_FILE)
    except OSError as error:
        raise TcplabError(f"cannot save into {directory}: {error.strerror or error}") from None


def _with_captures(spec: Spec, paths: list[str]) -> Spec:
    """`spec` with `paths` added to its [trace] pcap list, validated like the file's own."""
    data = canonical_dict(spec)
    trace = data.get("trace", {})
    data["trace"] = {**trace, "pcap": [*trace.get("pcap", []), *paths]}
    return validate_spec(data)


def _model_summary(spec: Spec) -> Mapping[str, Any] | str | None:
    """The model backend's summary for the same scenario, to print beside a measurement.

    None when the run already is the model, or the model backend is not part of this
    installation; the model's refusal (a string) when it cannot model this scenario.
    """
    if spec.backend == "model" or importlib.util.find_spec("tcplab.backends.model") is None:
        return None
    try:
        # The model is deterministic: one run stands for every repetition. Its trace is not
        # shown: one sample, at the end, instead of one every trace_interval.
        update = {
            "backend": "model",
            "repetitions": 1,
            "trace": None,
            "trace_interval": spec.duration,
        }
        return api.run(spec.model_copy(update=update)).summary
    except TcplabError as error:
        return str(error)


def _print_result(result: RunResult, model: Mapping[str, Any] | str | None) -> None:
    meta = result.meta
    repetitions = meta.get("repetitions")
    title = f"{meta['name']} ({meta['backend']}, seed {meta['seed']}"
    title += f", mean ± 95 % CI of {repetitions} repetitions)" if repetitions else ")"
    table = Table(title=title)
    table.add_column("")
    columns: list[tuple[str, Mapping[str, Any]]] = [(meta["backend"], result.summary)]
    if isinstance(model, Mapping):
        columns.append(("model", model))
    for name, _ in columns:
        table.add_column(name, justify="right")
    for label, key, formatter in display.SUMMARY_ROWS:
        cells = [display.cell(summary, key, formatter) for _, summary in columns]
        if any(text != display.MISSING for text in cells):
            table.add_row(label, *cells)
    console.print(table)
    if isinstance(model, str):
        console.print(f"model: {model}")
    if result.media:
        header, lines = display.media_table(result.media)
        media = Table(title="media streams")
        for index, column in enumerate(header):
            media.add_column(column, justify="right" if index else "left")
        for line in lines:
            media.add_row(*line)
        console.print(media)
    console.print(_series_table(result))


def _series_table(result: RunResult) -> Table:
    # Repetitions share their stamps: the mean over them, stamp by stamp.
    by_stamp: dict[float, list[float]] = {}
    for t_s, goodput in zip(result.series["t_s"], result.interval_goodputs(), strict=True):
        by_stamp.setdefault(t_s, []).append(goodput)
    rows = [(t_s, sum(values) / len(values)) for t_s, values in sorted(by_stamp.items())]
    total = len(rows)
    # A long series would take the terminal minutes to print: its first intervals only.
    rows = rows[: _SERIES_ROWS * _SERIES_GROUPS]
    groups = min(_SERIES_GROUPS, max(1, math.ceil(len(rows) / _SERIES_ROWS)))
    height = math.ceil(len(rows) / groups) if rows else 0
    # One unit for the whole table keeps each column narrow enough for five side by side.
    factor, unit = display.rate_unit(max((goodput for _, goodput in rows), default=0.0))
    title = "goodput per interval"
    caption = (
        f"the first {len(rows)} of {total:,} intervals; all of them in series.parquet or --json"
        if total > len(rows)
        else None
    )
    table = Table(title=title, caption=caption, box=box.SIMPLE, min_width=len(title) + 4)
    for _ in range(groups):
        table.add_column("t (s)", justify="right")
        table.add_column(unit, justify="right")
    for row in range(height):
        cells: list[str] = []
        for group in range(groups):
            index = group * height + row
            if index < len(rows):
                t_s, goodput = rows[index]
                cells += [f"{t_s:g}", f"{goodput / factor:.4g}"]
            else:
                cells += ["", ""]
        table.add_row(*cells)
    return table
