"""Errors by cause. The user's to fix (TcplabError): the CLI prints them as one line and
exits with code 2. Anything else raised while running is a fault of tcplab itself: the CLI
exits with code 1 and asks for a report (tcplab.cli's `main`)."""

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
    """A backend that is unknown or not built, or that cannot honour a field of a valid
    scenario (`field`: its plan path, e.g. hosts.0.tcp.abc)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class FieldRefused(BackendError, ValueError):
    """A backend's check of one plan field: "field: why, and what it accepts". A ValueError
    too, as a backend's own validate() raises it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", field)
        self.message = message
