"""Strict parsing of the quantities people write in scenario files.

Every quantity becomes an integer in the unit the simulator works in: data rates in bit/s,
durations in nanoseconds, sizes in bytes. A value that does not fit one of the accepted
forms exactly is refused with a message that repeats what was given and lists what is
accepted, so a typo never turns into a silently different experiment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

RATE_UNITS: dict[str, int] = {
    "bps": 1,
    "kbps": 10**3,
    "Mbps": 10**6,
    "Gbps": 10**9,
    "bit/s": 1,
    "kbit/s": 10**3,
    "Mbit/s": 10**6,
    "Gbit/s": 10**9,
}
# The longest duration: 2^62 ns, the simulator's bound on any time in a plan
# (crates/sim/src/plan.rs MAX_TIME_NS), so that a clock reading plus a span fits in u64.
MAX_DURATION_NS = 1 << 62
DURATION_UNITS: dict[str, int] = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9}
SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}
PACKETS_UNIT = "p"

# Exponents and signs are left out on purpose: "1e6bps" and "+5ms" are not how people write
# these, and accepting them would only widen what a typo can silently mean.
_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
_QUANTITY = re.compile(rf"^(?P<number>{_NUMBER})\s*(?P<unit>.*)$")


class UnitError(ValueError):
    """A quantity that is not written in an accepted form (pydantic reports it on the field)."""


@dataclass(frozen=True)
class QueueLimit:
    """A drop-tail queue limit, counted either in packets or in bytes."""

    unit: Literal["packets", "bytes"]
    value: int


def show_value(value: object) -> str:
    """Echo a value the way the user wrote it, for error messages."""
    # TOML users write strings in double quotes, so echo them the same way.
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _accepted(units: Mapping[str, int]) -> str:
    return ", ".join(units)


def _parse(
    value: object,
    *,
    what: str,
    units: Mapping[str, int],
    base: str,
    example: str,
    bare_unit: str | None = None,
    positive: bool = False,
) -> int:
    """Parse `value` as a number followed by one of `units` into an integer base amount.

    `bare_unit` names the unit a plain integer is taken to be in (sizes: bytes); quantities
    without it must carry a unit, because a bare "60" could mean seconds or milliseconds.
    """

    def hint() -> str:
        # Only for the error: a spec of many links parses thousands of quantities.
        return f"accepted units: {_accepted(units)} (e.g. {show_value(example)})"

    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise UnitError(f"{show_value(value)} is not a {what}; write a string, {hint()}")
    if isinstance(value, int):
        if bare_unit is None:
            raise UnitError(f"{show_value(value)} has no unit; {hint()}")
        amount = value
    else:
        text = value.strip()
        if text.startswith("-"):
            raise UnitError(f"{show_value(value)} is negative; a {what} must not be negative")
        match = _QUANTITY.match(text)
        if match is None:
            raise UnitError(f"{show_value(value)} is not a {what}; {hint()}")
        unit = match["unit"] or bare_unit
        if unit is None:
            raise UnitError(f"{show_value(value)} has no unit; {hint()}")
        if unit not in units:
            raise UnitError(
                f"{show_value(value)} is not a {what}: unknown unit {show_value(unit)}; {hint()}"
            )
        exact = Decimal(match["number"]) * units[unit]
        if exact != exact.to_integral_value():
            raise UnitError(f"{show_value(value)} is not a whole number of {base}")
        amount = int(exact)
    if amount < 0:
        raise UnitError(f"{show_value(value)} is negative; a {what} must not be negative")
    if positive and amount == 0:
        raise UnitError(f"{show_value(value)} is zero; a {what} here must be greater than zero")
    return amount


def parse_rate(value: object, *, positive: bool = True) -> int:
    """A data rate such as "2.048Mbps" or "64kbit/s" → bit/s (decimal SI prefixes)."""
    return _parse(
        value,
        what="data rate",
        units=RATE_UNITS,
        base="bit/s",
        example="2.048Mbps",
        positive=positive,
    )


def parse_duration(value: object, *, positive: bool = False) -> int:
    """A duration such as "275ms", "1.5s" or "10us" → nanoseconds, at most MAX_DURATION_NS."""
    ns = _parse(
        value,
        what="duration",
        units=DURATION_UNITS,
        base="nanoseconds",
        example="275ms",
        positive=positive,
    )
    if ns > MAX_DURATION_NS:
        raise ValueError(
            f"{value!r:.40} is longer than the simulator's clock spans; accepted: at most"
            f" {format_duration(MAX_DURATION_NS)} (146 years)"
        )
    return ns


def parse_size(value: object, *, positive: bool = True) -> int:
    """A size such as "64KiB", "1.5MB" or a plain integer (bytes) → bytes."""
    return _parse(
        value,
        what="size",
        units=SIZE_UNITS,
        base="bytes",
        example="64KiB",
        bare_unit="B",
        positive=positive,
    )


def parse_queue_limit(value: object) -> QueueLimit:
    """A queue limit: "100p" for packets, or a size with its unit ("64KiB", "7500000B").

    A number without a unit is refused: a queue is as often counted in packets as in bytes,
    so the unit must be written.
    """
    if isinstance(value, QueueLimit):
        return value
    if isinstance(value, str) and value.strip().endswith(PACKETS_UNIT):
        packets = _parse(
            value,
            what="queue limit",
            units={PACKETS_UNIT: 1},
            base="packets",
            example="100p",
            positive=True,
        )
        return QueueLimit("packets", packets)
    try:
        size = _parse(
            value,
            what="queue limit",
            units=SIZE_UNITS,
            base="bytes",
            example="64KiB",
            positive=True,
        )
    except UnitError as error:
        raise UnitError(f'{error}; for a limit in packets write e.g. "100p"') from None
    return QueueLimit("bytes", size)


def _decimal_text(amount: int, factor: int) -> str:
    return format((Decimal(amount) / factor).normalize(), "f")


def _largest_unit(amount: int, units: Mapping[str, int]) -> str:
    """Write `amount` with the largest unit that leaves a value of at least one."""
    name, factor = max(
        ((name, factor) for name, factor in units.items() if factor <= max(amount, 1)),
        key=lambda item: item[1],
    )
    return f"{_decimal_text(amount, factor)}{name}"


def format_rate(bps: int) -> str:
    """The canonical spelling of a rate, e.g. 2048000 → "2.048Mbps" (parses back exactly)."""
    return _largest_unit(bps, {name: f for name, f in RATE_UNITS.items() if name.endswith("ps")})


def format_duration(ns: int) -> str:
    """The canonical spelling of a duration, e.g. 275000000 → "275ms" (parses back exactly)."""
    # Minutes are left out so that "60s" stays "60s" and "90s" never becomes "1.5min".
    return _largest_unit(ns, {name: f for name, f in DURATION_UNITS.items() if name != "min"})


def format_size(size: int) -> str:
    """The canonical spelling of a size: whole binary units where exact, else bytes."""
    for name in ("GiB", "MiB", "KiB"):
        if size and size % SIZE_UNITS[name] == 0:
            return f"{size // SIZE_UNITS[name]}{name}"
    return f"{size}B"


def format_queue_limit(limit: QueueLimit) -> str:
    """The canonical spelling of a queue limit: "100p" or a size."""
    if limit.unit == "packets":
        return f"{limit.value}{PACKETS_UNIT}"
    return format_size(limit.value)


def _pattern(units: Mapping[str, int], *, unit_optional: bool = False) -> str:
    alternatives = "|".join(re.escape(name) for name in units)
    unit = f"({alternatives})" + ("?" if unit_optional else "")
    return rf"^{_NUMBER}\s*{unit}$"


RATE_JSON_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": _pattern(RATE_UNITS),
    "description": f"data rate, decimal SI prefixes; units: {_accepted(RATE_UNITS)}",
    "examples": ["2.048Mbps", "100Mbps", "64kbps"],
}
DURATION_JSON_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": _pattern(DURATION_UNITS),
    "description": f"duration; units: {_accepted(DURATION_UNITS)}",
    "examples": ["275ms", "100s", "10us"],
}
SIZE_JSON_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "integer", "minimum": 0, "description": "bytes"},
        {"type": "string", "pattern": _pattern(SIZE_UNITS, unit_optional=True)},
    ],
    "description": f"size; a plain integer is bytes; units: {_accepted(SIZE_UNITS)}",
    "examples": ["64KiB", "1460B", "1.5MB"],
}
QUEUE_LIMIT_JSON_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": rf"^([0-9]+\s*{PACKETS_UNIT}|{_pattern(SIZE_UNITS)[1:-1]})$",
    "description": 'drop-tail limit: packets ("100p") or a size ("64KiB")',
    "examples": ["100p", "64KiB", "7500000B"],
}
