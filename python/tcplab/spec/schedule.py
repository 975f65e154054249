"""A link direction that changes over the run (docs/models/schedules.md): `[[links.schedule]]`
rows or a CSV file of them, and mahimahi delivery traces (`trace`).

A row sets, from its time `at` on, any of the direction's rate, delay, error model (loss,
ber or ebno_db) and state (up); a field no row sets keeps the link's own value. Files are
read when the scenario is loaded: a schedule's rows become part of the scenario (so its
hash covers them), a trace's path is taken relative to the scenario's directory.
"""

from __future__ import annotations

import csv
import difflib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from tcplab.errors import SpecError
from tcplab.spec.fields import Duration, PositiveDuration, Probability, Rate, StrictModel
from tcplab.spec.units import show_value

# The error fields of a row; at most one per row.
ROW_ERROR_FIELDS = ("loss", "ber", "ebno_db")
Interpolation = Literal["step", "linear"]
MS_NS = 1_000_000


class ScheduleRow(StrictModel):
    """From `at` on, the direction has the values this row gives."""

    at: Duration = Field(description="time since the run's start")
    rate: Rate | None = Field(None, description="the line's rate")
    delay: Duration | None = Field(None, description="one-way propagation delay")
    loss: Probability | None = Field(None, description="per-packet loss probability")
    ber: Probability | None = Field(None, description="bit error rate")
    ebno_db: float | None = Field(None, description="Eb/No in dB, on the direction's ber_curve")
    up: bool | None = Field(None, description="false: the line carries nothing (an outage)")

    @model_validator(mode="after")
    def _sets_something(self) -> ScheduleRow:
        given = [name for name in ROW_ERROR_FIELDS if getattr(self, name) is not None]
        if len(given) > 1:
            raise ValueError(f"{' and '.join(given)}: a row sets at most one error model")
        if not self.model_fields_set - {"at"}:
            fields = ", ".join(name for name in ScheduleRow.model_fields if name != "at")
            raise ValueError(f"sets nothing; give at least one of {fields}")
        return self


class Acm(StrictModel):
    """Adaptive coding and modulation: the carrier runs the DVB-S2 MODCOD of highest
    efficiency that is quasi-error-free at its Es/No (ETSI EN 302 307-1, Table 13)."""

    symbol_rate: float = Field(gt=0, description="symbols per second, e.g. 5e6")
    clear_sky_esno_db: float = Field(ge=-10, le=30, description="Es/No without rain, dB")
    margin_db: float = Field(0.0, ge=0, le=10, description="Es/No kept above a MODCOD's threshold")


class RainFade(StrictModel):
    """Rain attenuation synthesized by ITU-R P.1853-1 §2 (the Maseng-Bakken model) lowering
    the forward direction's Eb/No (docs/models/schedules.md)."""

    m: float = Field(ge=-10, le=10, description="mean of ln A, A the attenuation in dB")
    sigma: float = Field(gt=0, le=5, description="standard deviation of ln A")
    p_rain: Probability = Field(gt=0, lt=1, description="probability of rain")
    step: PositiveDuration = Field("1s", validate_default=True, description="sample interval")
    offset: Duration = Field(
        "0s", validate_default=True, description="where in the synthesized series the run starts"
    )
    acm: Acm | None = Field(None, description="adapt the rate to Es/No (DVB-S2 MODCODs)")


class Leo(StrictModel):
    """A low-Earth-orbit path: per-second delay from the serving satellite's geometry, and
    handovers at a fixed interval, each a delay step and an outage (both directions)."""

    altitude_km: float = Field(550.0, gt=100, le=2000, description="orbit altitude, km")
    min_elevation_deg: float = Field(
        25.0, ge=0, lt=90, description="lowest elevation a serving satellite has"
    )
    handover_interval: PositiveDuration = Field(
        "15s", validate_default=True, description="time between satellite reassignments"
    )
    outage: Duration = Field(
        "50ms", validate_default=True, description="how long the line is down at a handover"
    )

    @model_validator(mode="after")
    def _outage_within_interval(self) -> Leo:
        if self.outage >= self.handover_interval:
            raise ValueError("outage: must be shorter than handover_interval")
        return self


def _cell(column: str, text: str) -> Any:
    """A CSV cell as the TOML value a row would hold: numbers for the unitless fields,
    booleans for `up`, the text itself for quantities with units."""
    text = text.strip()
    if column == "up":
        return {"true": True, "false": False}.get(text.lower(), text)
    if column in ("loss", "ber", "ebno_db"):
        try:
            return float(text)
        except ValueError:
            return text
    return text


def read_schedule_csv(path: Path) -> list[dict[str, Any]]:
    """The rows of a schedule CSV: a header naming row fields (`at` first), then one row per
    line; an empty cell leaves that field unset in its row. ValueError names the file and
    what is wrong."""
    name = show_value(str(path))
    try:
        with path.open(newline="", encoding="utf-8") as file:
            lines = list(csv.reader(file))
    except (OSError, ValueError, csv.Error) as error:
        reason = error.strerror if isinstance(error, OSError) else error
        raise ValueError(f"cannot read the schedule file {name}: {reason}") from None
    if not lines:
        raise ValueError(f"{name} is empty; its first line names the columns (at, rate, ...)")
    header = [column.strip() for column in lines[0]]
    known = list(ScheduleRow.model_fields)
    for column in header:
        if column not in known:
            close = difflib.get_close_matches(column, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"{name}: column {show_value(column)} is not a schedule field{hint};"
                f" accepted: {', '.join(known)}"
            )
    rows = []
    for number, cells in enumerate(lines[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise ValueError(f"{name} line {number}: {len(cells)} cells for {len(header)} columns")
        rows.append(
            {
                column: _cell(column, cell)
                for column, cell in zip(header, cells, strict=True)
                if cell.strip()
            }
        )
    return rows


def read_mahimahi_trace(path: Path) -> list[int]:
    """A mahimahi packet-delivery trace: one delivery opportunity per line, its time in whole
    milliseconds, in order; the trace repeats with the last time as its period. Times in ns.
    ValueError names the file and what is wrong."""
    name = show_value(str(path))
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) else error
        raise ValueError(f"cannot read the trace file {name}: {reason}") from None
    times: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if not line.isdigit():
            raise ValueError(
                f"{name} line {number}: {show_value(line[:40])} is not a whole number of"
                " milliseconds"
            )
        ms = int(line)
        if times and ms * MS_NS < times[-1]:
            raise ValueError(f"{name} line {number}: {ms} ms comes before the line above")
        times.append(ms * MS_NS)
    if not times or times[-1] == 0:
        raise ValueError(f"{name}: a trace needs at least one opportunity after 0 ms")
    return times


def _schedule_fields(link: dict[str, Any]) -> Iterator[str]:
    yield from (
        name for name in ("schedule", "reverse_schedule") if isinstance(link.get(name), str)
    )


# The sweep paths whose values are files: a link direction's schedule or trace.
_SWEPT_FILE = re.compile(r"^links\.[0-9]+\.(reverse_)?(schedule|trace)$")


def inline_files(data: dict[str, Any], source: Path) -> None:
    """Read the schedule files the scenario file `source` names into its rows, and make
    its trace paths, and the files a sweep ranges over, relative to its directory absolute
    (a swept schedule file stays a path, which names the point in the results)."""
    directory = source.parent
    sweep = data.get("sweep")
    if isinstance(sweep, dict):
        for path, values in sweep.items():
            if _SWEPT_FILE.match(path) and isinstance(values, list):
                sweep[path] = [
                    str(directory.absolute() / v) if isinstance(v, str) else v for v in values
                ]
    links = data.get("links")
    if not isinstance(links, list):
        return
    for index, link in enumerate(links):
        if not isinstance(link, dict):
            continue
        for name in _schedule_fields(link):
            try:
                link[name] = read_schedule_csv(directory / link[name])
            except ValueError as error:
                raise SpecError([f"links.{index}.{name}: {error}"], source) from None
        for name in ("trace", "reverse_trace"):
            if isinstance(link.get(name), str):
                link[name] = str(directory.absolute() / link[name])
