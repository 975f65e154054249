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
    too: a backend raises it from run() for a plan it cannot read or this machine cannot give."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", field)
        self.message = message


class Unsupported(BackendError):
    """A field of a valid scenario that `backend` does not honour, found by the capability
    registry (tcplab.backends.capabilities) before anything runs. `field` is its plan path
    (hosts.0.tcp.cc), `value` the plan's value there, `supported_by` the backends that do
    honour it (empty when none does, e.g. an iperf3 option iperf3 lacks)."""

    def __init__(
        self, field: str, backend: str, value: object, reason: str, supported_by: Sequence[str]
    ) -> None:
        scalar = value is None or isinstance(value, str | int | float | bool)
        what = f"{field} = {value!r}" if scalar else field
        runs_on = (
            f"{what} runs on: {', '.join(supported_by)}"
            if supported_by
            else f"no backend runs {what}"
        )
        super().__init__(
            f"the {backend} backend cannot run this scenario: {field}: {reason} ({runs_on})", field
        )
        self.backend = backend
        self.value = value
        self.reason = reason
        self.supported_by = tuple(supported_by)
