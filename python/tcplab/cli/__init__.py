"""The `tcplab` command: one module per command (or group), registered here.

Exit codes: 0 success; 1 a sweep finished but some of its runs failed, or a fault of
tcplab itself (reported with a folder of what to send, never blamed on the input); 2 a
problem with what was asked (bad scenario, missing file, unknown backend, a field a backend
cannot honour, bad option), reported as one `error: ...` line on stderr (with --json:
{"error": {...}} on stdout), never a traceback; 130 interrupted (SIGINT).
"""

from __future__ import annotations

import importlib
import sys
from typing import Annotated, Any

import typer

from tcplab.cli.common import (
    INTERNAL_ERROR,
    INTERRUPTED,
    USER_ERROR,
    internal_fault,
    report_error,
)
from tcplab.extras import MissingExtra, missing_extra
from tcplab.version import __version__

# Each command: its module, the function (or Typer group) there, and whether it is a group.
# A run of one command imports only its module, so `tcplab run` does not load what
# `tcplab sweep`, `report` or `calibrate` need (pandas, matplotlib, the paper packs).
_COMMANDS = {
    "run": ("run", "run_command", False),
    "sweep": ("sweep", "sweep_command", False),
    "results": ("results", "results_app", True),
    "report": ("report", "report_command", False),
    "reproduce": ("reproduce", "reproduce_command", False),
    "schema": ("schema", "schema_command", False),
    "measure": ("measure", "measure_app", True),
    "emu": ("emu", "emu_app", True),
    "compare": ("compare", "compare_command", False),
    "calibrate": ("calibrate", "calibrate_command", False),
}


def build_app(only: str | None = None) -> typer.Typer:
    """The `tcplab` command with every subcommand, or with `only` that one."""
    app = typer.Typer(
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        help="A laboratory for TCP performance on hard paths.",
    )
    # The callback also keeps a Typer of one command a group: `tcplab run FILE`.
    app.callback()(_root)
    for name, (module, attribute, group) in _COMMANDS.items():
        if only in (None, name):
            command = getattr(importlib.import_module(f"tcplab.cli.{module}"), attribute)
            if group:
                app.add_typer(command, name=name)
            else:
                app.command(name)(command)
    return app


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"tcplab {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    pass


def __getattr__(name: str) -> Any:
    # `tcplab.cli.app`, the whole command, is built on first use (tests and docs use it).
    if name != "app":
        raise AttributeError(f"module 'tcplab.cli' has no attribute {name!r}")
    app = build_app()
    globals()["app"] = app
    return app


def main() -> None:
    """Console-script entry point: usage errors too become one `error:` line (exit 2); an
    exception no command expected is a fault of tcplab (exit 1, with what to report)."""
    asked = sys.argv[1] if len(sys.argv) > 1 else None
    # `tcplab --version` needs none of the commands (whose modules take a while to import).
    only = asked if asked in _COMMANDS or asked == "--version" else None
    app = build_app(only)
    try:
        code = app(standalone_mode=False)
    except typer.TyperException as error:
        report_error(error.format_message(), USER_ERROR, kind="usage")
        code = USER_ERROR
    except (KeyboardInterrupt, typer.Abort):
        code = INTERRUPTED
    except MissingExtra as error:
        report_error(error, USER_ERROR)
        code = USER_ERROR
    except ModuleNotFoundError as error:
        # A package of an extra that is not installed: the user's to install, not a fault.
        extra = missing_extra(error, f"tcplab {asked}" if only == asked else None)
        if extra is None:
            internal_fault(error, sys.argv[1:])
            code = INTERNAL_ERROR
        else:
            report_error(extra, USER_ERROR)
            code = USER_ERROR
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
