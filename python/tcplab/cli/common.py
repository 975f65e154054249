"""What every command shares: exit codes, the console, and printing tables and JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from tcplab.cli.sweep_output import plain

RUNS_FAILED = 1
USER_ERROR = 2
INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C
# Markup off: field paths such as hosts[0] and user text must print as written.
console = Console(markup=False, highlight=False)


def fail(error: Exception) -> typer.Exit:
    typer.echo(f"error: {error}", err=True)
    return typer.Exit(USER_ERROR)

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
