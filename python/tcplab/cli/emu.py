"""`tcplab emu cleanup`: what a crashed emu run left behind, removed."""

from __future__ import annotations

from typing import Annotated

import typer

from tcplab.cli.common import (
    console,
    fail,
)
from tcplab.errors import TcplabError

emu_app = typer.Typer(
    rich_markup_mode=None, no_args_is_help=True, help="The emulator's housekeeping."
)

@emu_app.command("cleanup")
def emu_cleanup(
    all_: Annotated[
        bool,
        typer.Option("--all", help="also remove the namespaces of tcplab runs still going"),
    ] = False,
) -> None:
    """Remove what a crashed emu run left: its network namespaces, the TUN devices in them
    and the processes running there."""
    from tcplab.emu import cleanup, leftovers, require_root

    try:
        require_root()
    except TcplabError as error:
        raise fail(error) from None
    removed = cleanup(include_live=all_)
    for name in removed:
        console.print(f"removed {name}")
    kept = leftovers()
    if kept:
        console.print(
            f"kept {len(kept)} namespace(s) of running tcplab processes: {', '.join(kept)}"
        )
    if not removed and not kept:
        console.print("nothing to clean up")
