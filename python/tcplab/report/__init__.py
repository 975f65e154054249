"""Self-contained HTML reports: of one run (`tcplab run`), of a results directory
(`tcplab report`) and of a paper's reproduction (`tcplab reproduce`)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcplab.errors import TcplabError
from tcplab.extras import require

if TYPE_CHECKING:
    from tcplab.report.reproduction import write_reproduction_report
    from tcplab.report.results import write_results_report
    from tcplab.report.run import render_report, write_report

REPORT_FILE = "report.html"

# The reports load on first use, with matplotlib and the store: `tcplab run --no-save`
# prints tables with tcplab.report.display and needs none of them.
_LAZY = {
    "render_report": "tcplab.report.run",
    "write_report": "tcplab.report.run",
    "write_reproduction_report": "tcplab.report.reproduction",
    "write_results_report": "tcplab.report.results",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'tcplab.report' has no attribute {name!r}")
    require("report", f"tcplab.report.{name}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


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
    """The report of a results directory (a sweep's store, a `tcplab reproduce` output, or
    one run that `tcplab run` saved), written to `out` (default: report.html inside it);
    returns its path."""
    require("report", "an HTML report")
    from tcplab.experiments.store import MANIFEST_FILE, open_results
    from tcplab.papers.pack import REPRODUCTION_FILE
    from tcplab.report import html
    from tcplab.report.reproduction import render_reproduction_report
    from tcplab.report.results import render_results_report
    from tcplab.report.run import write_report
    from tcplab.result import RESULT_FILE, RunResult

    directory = Path(directory)
    target = Path(out) if out is not None else directory / REPORT_FILE
    if (directory / MANIFEST_FILE).is_file():
        document = render_results_report(open_results(directory))
    elif (directory / REPRODUCTION_FILE).is_file():
        from tcplab.papers import PACKS, load_reproduction

        document = render_reproduction_report(load_reproduction(directory, PACKS))
    elif (directory / RESULT_FILE).is_file():
        try:
            return write_report(RunResult.load(directory), target)
        except OSError as error:
            raise TcplabError(f"cannot write {target}: {error.strerror or error}") from None
    elif directory.is_dir():
        raise TcplabError(
            f"{directory} is not a results directory: it has neither {MANIFEST_FILE} (written "
            f"by tcplab sweep), {REPRODUCTION_FILE} (written by tcplab reproduce) nor "
            f"{RESULT_FILE} (written by tcplab run)"
        )
    else:
        raise TcplabError(f"{directory}: no such directory")
    try:
        return html.write(target, document)
    except OSError as error:
        raise TcplabError(f"cannot write {target}: {error.strerror or error}") from None
