"""The `tcplab` command.

Exit codes: 0 success; 1 a sweep finished but some of its runs failed; 2 a problem with what
was asked (bad scenario, missing file, unknown backend, bad option), reported as one
`error: ...` line on stderr, never a traceback; 130 a sweep interrupted (SIGINT).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from tcplab import api, display, papers, sweeps
from tcplab.cli_calibrate import register as register_calibrate_command
from tcplab.cli_emu import register as register_emu_commands
from tcplab.errors import TcplabError
from tcplab.papers.pack import RunsFailed
from tcplab.report import (
    REPORT_FILE,
    write_directory_report,
    write_report,
    write_reproduction_report,
)
from tcplab.reproduce_output import comparisons_table, packs_table, verdicts_table
from tcplab.result import RunResult
from tcplab.spec import Spec, canonical_dict, json_schema, validate_spec
from tcplab.store import MANIFEST_FILE, Store
from tcplab.sweep_output import (
    SweepProgress,
    plain,
    points_json,
    points_table,
    records_table,
    store_summary,
    stores_table,
)

RUNS_FAILED = 1
USER_ERROR = 2
INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C
# Rows of the per-interval table before it wraps into another column group, and at most
# this many groups side by side, so a 100-interval run still fits a terminal.
_SERIES_ROWS = 25
_SERIES_GROUPS = 5

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="A laboratory for TCP performance on hard paths.",
)
results_app = typer.Typer(
    rich_markup_mode=None, no_args_is_help=True, help="List and query results directories."
)
app.add_typer(results_app, name="results")
# Markup off: field paths such as hosts[0] and user text must print as written.
console = Console(markup=False, highlight=False)


@app.command("run")
def run_command(
    file: Annotated[Path, typer.Argument(help="scenario file (TOML)", show_default=False)],
    json_output: Annotated[
        bool, typer.Option("--json", help="print the result as one JSON object instead")
    ] = False,
    backend: Annotated[
        str | None, typer.Option(help="sim, model or emu; overrides the scenario's backend")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="overrides the scenario's seed")] = None,
    out: Annotated[
        Path | None, typer.Option(help="where to save result.json and report.html")
    ] = None,
    no_save: Annotated[bool, typer.Option("--no-save", help="save nothing")] = False,
    pcap: Annotated[
        list[str] | None,
        typer.Option(
            help="capture a link direction (links.0, links.0.forward) into <out>/links.0.pcap;"
            " repeatable; adds to the scenario's [trace] pcap"
        ),
    ] = None,
) -> None:
    """Run a scenario and print its result; save result.json and report.html.

    A scenario with a [sweep] table runs as `tcplab sweep FILE` does.
    """
    try:
        spec = api.prepare(file, backend=backend, seed=seed)
        if spec.sweep is not None and no_save:
            raise TcplabError("a sweep stores each run in its results directory; drop --no-save")
        if pcap:
            if no_save or spec.sweep is not None:
                raise TcplabError("--pcap saves captures beside result.json of a single run")
            spec = _with_captures(spec, pcap)
    except TcplabError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USER_ERROR) from None
    if spec.sweep is not None:
        _sweep(file, out=out, json_output=json_output, backend=backend, seed=seed)
        return
    try:
        result = api.run(spec)
        bounds = None if json_output else _model_summary(spec)
        saved = None if no_save else _save(result, out or Path("results") / spec.name)
    except TcplabError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USER_ERROR) from None
    if json_output:
        sys.stdout.write(result.to_json() + "\n")
        return
    _print_result(result, bounds)
    if saved is not None:
        console.print(f"saved {saved} and {saved.parent / REPORT_FILE}")
        for name in result.captures:
            console.print(f"saved {saved.parent / name}.pcap")


@app.command("sweep")
def sweep_command(
    file: Annotated[Path, typer.Argument(help="scenario file (TOML)", show_default=False)],
    jobs: Annotated[
        int | None,
        typer.Option("-j", "--jobs", min=1, help="local processes [default: one per CPU]"),
    ] = None,
    executor: Annotated[str, typer.Option(help="local or dask")] = "local",
    scheduler: Annotated[
        str | None, typer.Option(help="Dask scheduler address, e.g. tcp://10.0.0.5:8786")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="run again the runs already stored")
    ] = False,
    out: Annotated[
        Path | None, typer.Option(help="results directory [default: results/<name>]")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="print the points as one JSON object instead")
    ] = False,
    backend: Annotated[
        str | None, typer.Option(help="sim, model or emu; overrides the scenario's backend")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="overrides the scenario's seed")] = None,
) -> None:
    """Run every point of a scenario's [sweep], `repetitions` times each, into a results store.

    Runs already stored are not run again, so an interrupted sweep resumes where it stopped.
    """
    _sweep(
        file,
        out=out,
        json_output=json_output,
        backend=backend,
        seed=seed,
        jobs=jobs,
        executor=executor,
        scheduler=scheduler,
        force=force,
    )


@results_app.command("list")
def results_list_command(
    directory: Annotated[
        Path, typer.Argument(help="a results directory, or a folder of them")
    ] = Path("results"),
    json_output: Annotated[bool, typer.Option("--json", help="print JSON instead")] = False,
) -> None:
    """The points and runs of a results directory, or the results directories in a folder."""
    try:
        if (directory / MANIFEST_FILE).is_file():
            store = Store(directory)
            if json_output:
                _print_json({**store_summary(store), "points": points_json(store)})
            else:
                _print_table(points_table(store, _title(store)))
            return
        found = sorted(path.parent for path in directory.glob(f"*/{MANIFEST_FILE}"))
        if not found:
            raise TcplabError(f"no results directories in {directory} (none has {MANIFEST_FILE})")
        if json_output:
            _print_json([store_summary(Store(path)) for path in found])
        else:
            _print_table(stores_table(found))
    except TcplabError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USER_ERROR) from None


@results_app.command("query")
def results_query_command(
    sql: Annotated[
        str,
        typer.Argument(
            help="SQL over summary, flows, hosts, links, media, series, trace, messages"
        ),
    ],
    directory: Annotated[Path, typer.Option("--dir", help="the results directory")] = Path("."),
    json_output: Annotated[
        bool, typer.Option("--json", help="print the rows as a JSON list of objects")
    ] = False,
) -> None:
    """Answer an SQL query (DuckDB) over the runs of a results directory."""
    try:
        if not (directory / MANIFEST_FILE).is_file():
            raise TcplabError(
                f"{directory} is not a results directory (no {MANIFEST_FILE}); name one with"
                " --dir, e.g. --dir results/<name>"
            )
        columns, rows = Store(directory).records(sql)
    except TcplabError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USER_ERROR) from None
    if json_output:
        _print_json([dict(zip(columns, row, strict=True)) for row in rows])
    else:
        _print_table(records_table(columns, rows))


@app.command("report")
def report_command(
    directory: Annotated[
        Path,
        typer.Argument(
            help="results directory (of tcplab sweep or tcplab reproduce)", show_default=False
        ),
    ],
    out: Annotated[
        Path | None, typer.Option(help="where to write the report [default: DIR/report.html]")
    ] = None,
) -> None:
    """Write one self-contained HTML report of a results directory: scenario, per-point
    mean ± 95 % CI, and plots (or, for a reproduction, the paper beside tcplab)."""
    try:
        path = write_directory_report(directory, out)
    except TcplabError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USER_ERROR) from None
    console.print(f"wrote {path}")


@app.command("reproduce")
def reproduce_command(
    paper: Annotated[
        str | None,
        typer.Argument(help="paper pack, e.g. seed000 (see --list)", show_default=False),
    ] = None,
    list_packs: Annotated[bool, typer.Option("--list", help="list the paper packs")] = False,
    quick: Annotated[
        bool,
        typer.Option("--quick", help="shorter runs and fewer repetitions, for a first look"),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(help="results directory [default: results/reproduce/PAPER[-quick]]"),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("-j", "--jobs", min=1, help="local processes [default: one per CPU]"),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="run again the runs already stored")
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="print the comparisons and verdicts as JSON")
    ] = False,
) -> None:
    """Re-run a source paper's experiments and set tcplab's numbers beside the paper's.

    Each of the paper's conclusions is marked held, not held, or not checkable yet; the
    exit status is 0 whatever the verdicts (a conclusion that does not hold is a finding,
    not an error).
    """
    if list_packs:
        _print_table(packs_table(papers.PACKS.values()))
        return
    try:
        if paper is None:
            raise TcplabError("name a paper pack, e.g. tcplab reproduce seed000 (or --list)")
        pack = papers.get_pack(paper)
        directory = out or Path("results") / "reproduce" / (f"{paper}-quick" if quick else paper)
        reproduction = papers.reproduce(pack, directory, quick=quick, jobs=jobs, force=force)
        report = write_reproduction_report(reproduction, directory / REPORT_FILE)
    except RunsFailed as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(RUNS_FAILED) from None
    except TcplabError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USER_ERROR) from None
    except OSError as error:
        typer.echo(f"error: cannot write {directory}: {error.strerror or error}", err=True)
        raise typer.Exit(USER_ERROR) from None
    except KeyboardInterrupt:
        typer.echo(
            f"interrupted: the runs finished so far are stored in {directory}; run the same"
            " command again to resume",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    if json_output:
        _print_json(reproduction.to_dict())
        return
    _print_table(comparisons_table(reproduction))
    _print_table(verdicts_table(reproduction))
    console.print(f"{pack.name}: {reproduction.verdict_counts()}")
    console.print(f"results in {directory}; report {report}")


@app.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of scenario files (for editors and validators)."""
    sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")


def _sweep(
    file: Path,
    *,
    out: Path | None,
    json_output: bool,
    backend: str | None,
    seed: int | None,
    jobs: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    force: bool = False,
) -> None:
    try:
        plan = sweeps.plan_sweep(file, out=out, force=force, backend=backend, seed=seed)
    except TcplabError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USER_ERROR) from None
    store = plan.store
    total = len(plan.runs)
    show_progress = not json_output and console.is_terminal
    try:
        with SweepProgress(console, total, total - len(plan.pending), show_progress) as progress:
            sweeps.run_sweep(plan, executor, jobs, scheduler, on_run=progress)
    except TcplabError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USER_ERROR) from None
    except KeyboardInterrupt:
        stored = len(store.run_ids() & {run.run_id for run in plan.runs})
        typer.echo(
            f"interrupted: {stored} of {total} runs are stored in {store.directory}; run the"
            " same command again to resume",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    stored_ids = store.run_ids()
    failed = [run for run in plan.runs if run.run_id not in stored_ids]
    if json_output:
        counts = {"total": total, "ran": len(plan.pending), "failed": len(failed)}
        _print_json(
            {"directory": str(store.directory), "runs": counts, "points": points_json(store)}
        )
    else:
        _print_table(points_table(store, _title(store)))
        console.print(
            f"{total - len(failed)} of {total} runs stored in {store.directory};"
            f" {len(plan.pending)} ran now"
        )
    if failed:
        errors = store.failures().set_index("run_id")["error"]
        typer.echo(
            f"error: {len(failed)} of {total} runs failed, e.g. {failed[0].run_id}:"
            f" {errors.get(failed[0].run_id)}; the errors are in {store.directory}/failures/,"
            " and running the sweep again retries them",
            err=True,
        )
        raise typer.Exit(RUNS_FAILED)


def _title(store: Store) -> str:
    manifest = store.manifest()
    title = f"{manifest['name']} ({manifest['backend']}"
    repetitions = manifest["repetitions"]
    return title + (f", mean ± 95 % CI of {repetitions} repetitions)" if repetitions > 1 else ")")


def _print_table(table: Table) -> None:
    # A terminal wraps long lines itself; into a file or a pipe, print the table as wide as it
    # needs rather than squeeze a point's values into the 80 columns rich assumes there.
    if console.is_terminal:
        console.print(table)
        return
    width = console.measure(table, options=console.options.update_width(10_000)).maximum
    Console(markup=False, highlight=False, width=max(width, console.width)).print(table)


def _print_json(value: Any) -> None:
    # allow_nan=False: NaN is not JSON; plain() has already turned it into null.
    sys.stdout.write(json.dumps(plain(value), allow_nan=False) + "\n")


def _save(result: RunResult, directory: Path) -> Path:
    try:
        path = result.save(directory)
        write_report(result, directory / REPORT_FILE)
    except OSError as error:
        raise TcplabError(f"cannot save into {directory}: {error.strerror or error}") from None
    return path


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
        # The model is deterministic: one run stands for every repetition.
        return api.run(
            spec.model_copy(update={"backend": "model", "repetitions": 1, "trace": None})
        ).summary
    except TcplabError as error:
        return str(error)


def _print_result(result: RunResult, model: Mapping[str, Any] | str | None) -> None:
    meta = result.meta
    repetitions = meta.get("repetitions")
    title = f"{meta['name']} ({meta['backend']}, seed {meta['seed']}"
    title += f", mean ± 95 % CI of {repetitions} repetitions)" if repetitions else ")"
    table = Table(title=title)
    table.add_column("")
    columns = [(meta["backend"], result.summary)]
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
    frame = result.to_pandas()
    if "repetition" in frame:
        frame = frame.groupby("t_s", as_index=False)["goodput_bps"].mean()
    rows = list(zip(frame["t_s"], frame["goodput_bps"], strict=True))
    groups = min(_SERIES_GROUPS, max(1, math.ceil(len(rows) / _SERIES_ROWS)))
    height = math.ceil(len(rows) / groups) if rows else 0
    # One unit for the whole table keeps each column narrow enough for five side by side.
    factor, unit = display.rate_unit(max((goodput for _, goodput in rows), default=0.0))
    title = "goodput per interval"
    table = Table(title=title, box=box.SIMPLE, min_width=len(title) + 4)
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


# `measure server|client`, `emu cleanup` and `compare` live in tcplab.cli_emu.
register_emu_commands(app)
# `calibrate` lives in tcplab.cli_calibrate.
register_calibrate_command(app)


def main() -> None:
    """Console-script entry point: usage errors too become one `error:` line, exit 2."""
    try:
        code = app(standalone_mode=False)
    except typer.TyperException as error:
        typer.echo(f"error: {error.format_message()}", err=True)
        code = USER_ERROR
    sys.exit(code if isinstance(code, int) else 0)
