"""Errors that are the user's to fix; the CLI prints them as one line and exits with code 2."""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike


class TcplabError(Exception):
    """A problem with what the user asked for, as opposed to a bug in tcplab."""


class SpecError(TcplabError):
    """A scenario that cannot be run; each problem reads `field.path: message`."""

    def __init__(self, problems: Sequence[str], source: str | PathLike[str] | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        prefix = f"{source}: " if source is not None else ""
        # One line, so that the CLI's error stays a single line however many problems there are.
        super().__init__(prefix + "; ".join(self.problems))


class BackendError(TcplabError):
    """A backend that is unknown, not built, or that refused the plan it was given."""
