"""What every command shares: exit codes, the console, and printing tables and JSON."""

from __future__ import annotations

import json
import math
import shutil
import sys
import tempfile
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

RUNS_FAILED = 1
INTERNAL_ERROR = 1  # a fault of tcplab itself, never of what was asked
USER_ERROR = 2
INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C
# Markup off: field paths such as hosts[0] and user text must print as written.
console = Console(markup=False, highlight=False)


def fail(error: Exception | str, code: int = USER_ERROR) -> typer.Exit:
    """Report a user-facing error (see `report_error`); raise what it returns."""
    report_error(error, code)
    return typer.Exit(code)


def report_error(error: BaseException | str, code: int, **details: Any) -> None:
    """One `error: ...` line on stderr; or, when the command was asked for JSON (--json),
    `{"error": {...}}` on stdout, as iperf3 -J does: the kind of error (spec, backend,
    user, usage, internal), its message, the exit code, and for a scenario its problems
    (`field: message` each) or the field a backend cannot honour."""
    from tcplab.errors import BackendError, SpecError, TcplabError

    message = str(error)
    if not _json_asked():
        typer.echo(f"error: {message}", err=True)
        return
    if isinstance(error, SpecError):
        details = {"kind": "spec", "problems": error.problems, **details}
    elif isinstance(error, BackendError):
        details = {"kind": "backend", "field": error.field, **details}
    elif isinstance(error, TcplabError):
        details = {"kind": "user", **details}
    details.setdefault("kind", "user" if code == USER_ERROR else "internal")
    print_json({"error": {**details, "message": message, "exit_code": code}})


def _json_asked() -> bool:
    arguments = sys.argv[1:]
    return "--json" in arguments or any(a.startswith("--format") for a in arguments)


def internal_fault(error: BaseException, argv: list[str]) -> None:
    """Report a fault of tcplab (exit code 1): save the traceback, the command line and
    the scenario files it names into a fresh directory for the bug report, and say where."""
    folder = Path(tempfile.mkdtemp(prefix="tcplab-fault-"))
    (folder / "traceback.txt").write_text("".join(traceback.format_exception(error)))
    (folder / "command.txt").write_text(" ".join(["tcplab", *argv]) + "\n")
    for arg in argv:
        path = Path(arg)
        if path.suffix == ".toml" and path.is_file():
            shutil.copy(path, folder / path.name)
    report_error(
        f"internal error in tcplab, not in what you asked (please report it with the files"
        f" in {folder}: the scenario, the command and the traceback):"
        f" {type(error).__name__}: {error}",
        INTERNAL_ERROR,
        kind="internal",
        report=str(folder),
    )


def print_table(table: Table) -> None:
    # A terminal wraps long lines itself; into a file or a pipe, print the table as wide as it
    # needs rather than squeeze a point's values into the 80 columns rich assumes there.
    if console.is_terminal:
        console.print(table)
        return
    width = console.measure(table, options=console.options.update_width(10_000)).maximum
    Console(markup=False, highlight=False, width=max(width, console.width)).print(table)


def print_json(value: Any) -> None:
    # allow_nan=False: NaN is not JSON; plain() has already turned it into null.
    sys.stdout.write(json.dumps(plain(value), allow_nan=False) + "\n")


def plain(value: Any) -> Any:
    """`value` as a JSON value: NaN and infinities become null, anything else unknown text."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)  # decimals, dates and times from SQL
