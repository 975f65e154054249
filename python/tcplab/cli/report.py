"""`tcplab report`: the HTML report of a results directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tcplab.cli.common import (
    console,
    fail,
)
from tcplab.errors import TcplabError
from tcplab.report import (
    write_directory_report,
)


def report_command(
    directory: Annotated[
        Path,
        typer.Argument(
            help="results directory (of tcplab sweep, tcplab reproduce or tcplab run)",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None, typer.Option(help="where to write the report [default: DIR/report.html]")
    ] = None,
) -> None:
    """Write one self-contained HTML report of a results directory: scenario, per-point
    mean ± 95 % CI, and plots (or, for a reproduction, the paper beside tcplab; for one
    run, the report `tcplab run` saves)."""
    try:
        path = write_directory_report(directory, out)
    except TcplabError as error:
        raise fail(error) from None
    console.print(f"wrote {path}")
