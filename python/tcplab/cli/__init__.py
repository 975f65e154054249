"""The `tcplab` command: one module per command (or group), registered here.

Exit codes: 0 success; 1 a sweep finished but some of its runs failed, or a fault of
tcplab itself (reported with a folder of what to send, never blamed on the input); 2 a
problem with what was asked (bad scenario, missing file, unknown backend, a field a backend
cannot honour, bad option), reported as one `error: ...` line on stderr (with --json:
{"error": {...}} on stdout), never a traceback; 130 interrupted (SIGINT).
"""

from __future__ import annotations

import sys

import click
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
from tcplab.cli.common import (
    INTERNAL_ERROR,
    INTERRUPTED,
    USER_ERROR,
    internal_fault,
    report_error,
)

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
    """Console-script entry point: usage errors too become one `error:` line (exit 2); an
    exception no command expected is a fault of tcplab (exit 1, with what to report)."""
    try:
        code = app(standalone_mode=False)
    except typer.TyperException as error:
        report_error(error.format_message(), USER_ERROR, kind="usage")
        code = USER_ERROR
    except (KeyboardInterrupt, click.exceptions.Abort):
        code = INTERRUPTED
    except Exception as error:
        internal_fault(error, sys.argv[1:])
        code = INTERNAL_ERROR
    except BaseException as error:
        # The simulator's panics arrive as pyo3's PanicException, a BaseException.
        if isinstance(error, (SystemExit, GeneratorExit)):
            raise
        internal_fault(error, sys.argv[1:])
        code = INTERNAL_ERROR
    sys.exit(code if isinstance(code, int) else 0)
