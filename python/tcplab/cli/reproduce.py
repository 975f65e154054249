"""`tcplab reproduce`: a source paper's experiments, tcplab's numbers beside the paper's."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tcplab.cli.common import (
    INTERRUPTED,
    RUNS_FAILED,
    console,
    fail,
    print_json,
    print_table,
)
from tcplab.errors import TcplabError
from tcplab.extras import require
from tcplab.report import REPORT_FILE


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
    # The packs and their report need the 'report' extra: they load with the command, not
    # with `tcplab --help`.
    require("report", "tcplab reproduce")
    from tcplab import papers
    from tcplab.cli.reproduce_output import comparisons_table, packs_table, verdicts_table
    from tcplab.papers.pack import RunsFailed
    from tcplab.report import write_reproduction_report

    if list_packs:
        print_table(packs_table(papers.PACKS.values()))
        return
    try:
        if paper is None:
            raise TcplabError("name a paper pack, e.g. tcplab reproduce seed000 (or --list)")
        pack = papers.get_pack(paper)
        directory = out or Path("results") / "reproduce" / (f"{paper}-quick" if quick else paper)
        reproduction = papers.reproduce(pack, directory, quick=quick, jobs=jobs, force=force)
        report = write_reproduction_report(reproduction, directory / REPORT_FILE)
    except RunsFailed as error:
        raise fail(error, RUNS_FAILED) from None
    except TcplabError as error:
        raise fail(error) from None
    except OSError as error:
        raise fail(f"cannot write {directory}: {error.strerror or error}") from None
    except KeyboardInterrupt:
        typer.echo(
            f"interrupted: the runs finished so far are stored in {directory}; run the same"
            " command again to resume",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    if json_output:
        print_json(reproduction.to_dict())
        return
    print_table(comparisons_table(reproduction))
    print_table(verdicts_table(reproduction))
    console.print(f"{pack.name}: {reproduction.verdict_counts()}")
    console.print(f"results in {directory}; report {report}")
