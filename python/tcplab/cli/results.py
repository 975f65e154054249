"""`tcplab results list|query`: what a results directory holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tcplab.cli.common import (
    fail,
    print_json,
    print_table,
)
from tcplab.errors import TcplabError

results_app = typer.Typer(
    rich_markup_mode=None, no_args_is_help=True, help="List and query results directories."
)


@results_app.command("list")
def results_list_command(
    directory: Annotated[
        Path, typer.Argument(help="a results directory, or a folder of them")
    ] = Path("results"),
    json_output: Annotated[bool, typer.Option("--json", help="print JSON instead")] = False,
) -> None:
    """The points and runs of a results directory, or the results directories in a folder."""
    # The store's packages (the 'store' extra) load with the command, not with `tcplab --help`.
    from tcplab.cli.sweep import store_title
    from tcplab.cli.sweep_output import points_json, points_table, store_summary, stores_table
    from tcplab.experiments.store import MANIFEST_FILE, Store

    try:
        if (directory / MANIFEST_FILE).is_file():
            store = Store(directory)
            if json_output:
                print_json({**store_summary(store), "points": points_json(store)})
            else:
                print_table(points_table(store, store_title(store)))
            return
        found = sorted(path.parent for path in directory.glob(f"*/{MANIFEST_FILE}"))
        if not found:
            raise TcplabError(f"no results directories in {directory} (none has {MANIFEST_FILE})")
        if json_output:
            print_json([store_summary(Store(path)) for path in found])
        else:
            print_table(stores_table(found))
    except TcplabError as error:
        raise fail(error) from None


@results_app.command("query")
def results_query_command(
    directory: Annotated[
        Path, typer.Argument(help="the results directory, as `results list` takes it")
    ],
    sql: Annotated[
        str,
        typer.Argument(
            help="SQL over summary, flows, hosts, links, media, series, trace, messages"
        ),
    ],
    json_output: Annotated[
        bool, typer.Option("--json", help="print the rows as a JSON list of objects")
    ] = False,
) -> None:
    """Answer an SQL query (DuckDB) over the runs of a results directory."""
    from tcplab.cli.sweep_output import records_table
    from tcplab.experiments.store import MANIFEST_FILE, Store

    try:
        if not (directory / MANIFEST_FILE).is_file():
            raise TcplabError(
                f"{directory} is not a results directory (no {MANIFEST_FILE}); name one first,"
                " e.g. tcplab results query results/<name> 'SELECT ...'"
            )
        columns, rows = Store(directory).records(sql)
    except TcplabError as error:
        raise fail(error) from None
    if json_output:
        print_json([dict(zip(columns, row, strict=True)) for row in rows])
    else:
        print_table(records_table(columns, rows))
