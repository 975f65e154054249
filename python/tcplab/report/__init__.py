"""Self-contained HTML reports: of one run (`tcplab run`), of a results directory
(`tcplab report`) and of a paper's reproduction (`tcplab reproduce`)."""

from __future__ import annotations

import os
from pathlib import Path

from tcplab.errors import TcplabError
from tcplab.experiments.store import MANIFEST_FILE, open_results
from tcplab.papers.pack import REPRODUCTION_FILE
from tcplab.report import html
from tcplab.report.reproduction import render_reproduction_report, write_reproduction_report
from tcplab.report.results import render_results_report, write_results_report
from tcplab.report.run import render_report, write_report

REPORT_FILE = "report.html"

__all__ = [
    "REPORT_FILE",
    "render_report",
    "write_directory_report",
    "write_report",
    "write_reproduction_report",
    "write_results_report",
]


def write_directory_report(
    directory: str | os.PathLike[str], out: str | os.PathLike[str] | None = None
) -> Path:
    """The report of a results directory (a sweep's store, or a `tcplab reproduce` output),
    written to `out` (default: report.html inside it); returns its path."""
    directory = Path(directory)
    target = Path(out) if out is not None else directory / REPORT_FILE
    if (directory / MANIFEST_FILE).is_file():
        document = render_results_report(open_results(directory))
    elif (directory / REPRODUCTION_FILE).is_file():
        # Imported here: the paper packs draw with tcplab.report's plots, so importing them
        # while this package initialises would be circular.
        from tcplab.papers import PACKS, load_reproduction

        document = render_reproduction_report(load_reproduction(directory, PACKS))
    elif directory.is_dir():
        raise TcplabError(
            f"{directory} is not a results directory: it has neither {MANIFEST_FILE} (written "
            f"by tcplab sweep) nor {REPRODUCTION_FILE} (written by tcplab reproduce)"
        )
    else:
        raise TcplabError(f"{directory}: no such directory")
    try:
        return html.write(target, document)
    except OSError as error:
        raise TcplabError(f"cannot write {target}: {error.strerror or error}") from None
