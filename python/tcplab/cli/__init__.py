"""The `tcplab` command: one module per command (or group), registered here.

Exit codes: 0 success; 1 a sweep finished but some of its runs failed; 2 a problem with what
was asked (bad scenario, missing file, unknown backend, bad option), reported as one
`error: ...` line on stderr, never a traceback; 130 a sweep interrupted (SIGINT).
"""

from __future__ import annotations

import sys

import typer

from tcplab.cli import (
    calibrate,
    compare,
    emu,
    measure,
    report,
    reproduce,
    results,
    run,
    schema,
    sweep,
)
from tcplab.cli.common import USER_ERROR

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="A laboratory for TCP performance on hard paths.",
)
app.command("run")(run.run_command)
app.command("sweep")(sweep.sweep_command)
app.add_typer(results.results_app, name="results")
app.command("report")(report.report_command)
app.command("reproduce")(reproduce.reproduce_command)
app.command("schema")(schema.schema_command)
app.add_typer(measure.measure_app, name="measure")
app.add_typer(emu.emu_app, name="emu")
app.command("compare")(compare.compare_command)
app.command("calibrate")(calibrate.calibrate_command)


def main() -> None:
    """Console-script entry point: usage errors too become one `error:` line, exit 2."""
    try:
        code = app(standalone_mode=False)
    except typer.TyperException as error:
        typer.echo(f"error: {error.format_message()}", err=True)
        code = USER_ERROR
    sys.exit(code if isinstance(code, int) else 0)
