"""What a run's changing links did over time (docs/models/schedules.md), to draw behind
its goodput and sender plots: each forward direction's rate (zero while it is down, a
trace's in 100 ms bins), delay and Eb/No, from the scenario the result holds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tcplab.errors import TcplabError
from tcplab.plan import resolve, schedule_rows
from tcplab.spec import validate_spec

NS_PER_S = 1e9
TRACE_BIN_S = 0.1


@dataclass(frozen=True)
class Track:
    """One quantity of one link direction: `values[i]` from `times_s[i]` on (`linear`:
    changing linearly to the next point), the last point at the run's end."""

    name: str
    quantity: Literal["rate", "time", "db"]
    times_s: list[float]
    values: list[float]
    linear: bool = False


def _at(table: list[list[Any]], t: float) -> Any:
    """The step value of a plan table at `t` ns."""
    return [value for at, value in table if at <= t][-1]


def _rate(schedule: Mapping[str, Any], base_bps: int, end_ns: int) -> Track | None:
    trace = schedule["trace"]
    if trace is not None:
        period = trace["opportunities_ns"][-1]
        bits = trace["bytes_per_opportunity"] * 8
        bins = [0] * (int(end_ns / NS_PER_S / TRACE_BIN_S) + 1)
        for cycle in range(end_ns // period + 1):
            for at in trace["opportunities_ns"]:
                k = int((cycle * period + at) / NS_PER_S / TRACE_BIN_S)
                if k < len(bins):
                    bins[k] += bits
        times = [k * TRACE_BIN_S for k in range(len(bins))]
        return Track("rate", "rate", times, [b / TRACE_BIN_S for b in bins])
    if schedule["rate_bps"] is None and not schedule["up"]:
        return None
    # A part the schedule leaves fixed (null, or no rows): the link's own rate, always up.
    rate = schedule["rate_bps"] or {"linear": False, "points": [[0, base_bps]]}
    up = schedule["up"] or [[0, True]]
    breaks = sorted({at for at, _ in rate["points"]} | {at for at, _ in up})
    values = [(_at(rate["points"], t) if _at(up, t) else 0) for t in breaks]
    return Track("rate", "rate", [t / NS_PER_S for t in breaks], values, rate["linear"])


def tracks(spec: Mapping[str, Any]) -> list[Track]:
    """The tracks of every forward direction that has a schedule; none for a scenario that
    no longer resolves (a trace file since moved)."""
    try:
        validated = validate_spec(spec)
        plan = resolve(validated)
    except TcplabError:
        return []
    end_ns = validated.duration
    out: list[Track] = []
    for index, (link, planned) in enumerate(zip(validated.links, plan["links"], strict=True)):
        schedule = planned["forward"]["schedule"]
        if schedule is None:
            continue
        label = f"links.{index}" if len(validated.links) > 1 else "link"
        rate = _rate(schedule, planned["forward"]["rate_bps"], end_ns)
        if rate is not None:
            out.append(Track(f"{label} rate", "rate", *_to_end(rate, end_ns), rate.linear))
        table = schedule["delay_ns"]
        if table is not None:
            times = [at / NS_PER_S for at, _ in table["points"]]
            values = [ns / NS_PER_S for _, ns in table["points"]]
            track = Track("", "time", times, values)
            out.append(Track(f"{label} delay", "time", *_to_end(track, end_ns), table["linear"]))
        ebno = [
            (row.at / NS_PER_S, float(row.ebno_db))
            for row in schedule_rows(link, index, "", validated)
            if row.ebno_db is not None
        ]
        if ebno:
            track = Track("", "db", [t for t, _ in ebno], [v for _, v in ebno])
            out.append(Track(f"{label} Eb/No", "db", *_to_end(track, end_ns)))
    return out


def _to_end(track: Track, end_ns: int) -> tuple[list[float], list[float]]:
    """The track's points up to the run's end, with a last point there."""
    end_s = end_ns / NS_PER_S
    kept = [(t, v) for t, v in zip(track.times_s, track.values, strict=True) if t < end_s]
    return [t for t, _ in kept] + [end_s], [v for _, v in kept] + [kept[-1][1]]
