"""The result as the Python backends (model, emu) build it: one typed part per part of the
simulator's result (crates/sim/src/result.rs), so that every backend fills the same
columns and none writes a row by hand.

A column a backend cannot know is None (a model has no retransmission count, iperf3 no
limited-by times), which is why most counters default to None here. `to_dict` gives each
part its columns in the order the Rust core declares them (`tcplab.shared.RESULT_COLUMNS`),
and tests/test_rows.py checks that each part has exactly the core's columns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

from tcplab.shared import RESULT_COLUMNS

NS_PER_S = 1_000_000_000
# The contract caps a still-"infinite" ssthresh at 2^32 - 1.
SSTHRESH_INFINITE_BYTES = 2**32 - 1


def _ordered(part: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` in the order of the core's columns of `part`; a backend's own after them."""
    columns = RESULT_COLUMNS[part]
    return {
        **{name: values[name] for name in columns if name in values},
        **{name: value for name, value in values.items() if name not in columns},
    }


@dataclass(frozen=True)
class _Row:
    """A row of the result's part `PART`: its fields are the part's columns."""

    PART: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        return _ordered(self.PART, asdict(self))


@dataclass(frozen=True)
class SenderState:
    """A flow row's columns that describe its sender, as the tool that measured it reports
    them (None: not reported)."""

    retransmits: int | None = None
    timeouts: int | None = None
    persist_probes: int | None = None
    srtt_s: float | None = None
    min_rtt_s: float | None = None
    final_cwnd_bytes: int | None = None

    def row(self, flow: int, src: str, dst: str, goodput_bps: float, delivered: int) -> FlowRow:
        """The flow row of a connection with this sender that delivered `delivered` bytes."""
        return FlowRow(flow, src, dst, goodput_bps, delivered, self)


@dataclass(frozen=True)
class FlowRow(_Row):
    """A `flows` row: one connection between two hosts, its sender's state at the end."""

    PART = "flows"
    flow: int
    src: str
    dst: str
    goodput_bps: float
    bytes_delivered: int
    sender: SenderState = SenderState()
    window_updates: int | None = None
    completed_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        sender = values.pop("sender")
        return _ordered(self.PART, {**values, **sender})


@dataclass(frozen=True)
class SegmentRow:
    """A `segments` row: one TCP connection of a flow a PEP splits."""

    segment: int
    relay_peak_bytes: int | None
    connection: FlowRow

    def to_dict(self) -> dict[str, Any]:
        row = {"segment": self.segment, "relay_peak_bytes": self.relay_peak_bytes}
        return _ordered("segments", {**row, **self.connection.to_dict()})


@dataclass(frozen=True)
class HostRow(_Row):
    """A `hosts` row: the host's CPU time and the work it did."""

    PART = "hosts"
    host: str
    cpu_utilisation: float | None
    goodput_per_cpu_bps: float | None = None
    packets: int | None = None
    calls: int | None = None
    ring_drops: int | None = None


@dataclass(frozen=True)
class LinkRow(_Row):
    """A `links` row: one direction of a link."""

    PART = "links"
    link: int
    direction: str
    utilisation: float
    packets: int | None = None
    bytes: int | None = None
    drops_queue: int | None = None
    drops_error: int | None = None
    max_queue_bytes: int | None = None


@dataclass(frozen=True)
class Counts:
    """The summary's counters, each None where the backend cannot count it."""

    segments_sent: int | None = None
    retransmits: int | None = None
    fast_retransmits: int | None = None
    timeouts: int | None = None
    persist_probes: int | None = None
    window_updates: int | None = None
    ring_drops: int | None = None


@dataclass(frozen=True)
class Summary:
    """The run's scalars, its counters in `counts`. `rr` (request/response transactions)
    is left out when None, as the simulator leaves it out; `backend` holds what only this
    backend can tell, under its name (`summary["model"]`, `summary["emu"]`)."""

    goodput_bps: float
    elapsed_s: float
    bytes_delivered: int
    bytes_written: int | None
    completed: bool
    events: int
    limited_by: Mapping[str, float | None]
    cpu_utilisation: float | None
    fairness: float | None = 1.0
    goodput_per_cpu_bps: float | None = None
    counts: Counts = Counts()
    rr: Mapping[str, float] | None = None
    backend: tuple[str, Mapping[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "counts"}
        values.update(asdict(self.counts))
        values["limited_by"] = dict(self.limited_by)
        own = values.pop("backend")
        if values["rr"] is None:
            del values["rr"]
        if own is not None:
            values[own[0]] = dict(own[1])
        return _ordered("summary", values)


UNKNOWN_LIMITS: Mapping[str, float | None] = {
    "rwnd": None,
    "sndbuf": None,
    "cwnd": None,
    "app": None,
}
"""`limited_by` of a run whose tool reports no limited-by times."""


@dataclass(frozen=True)
class Result:
    """A whole result: what `run(plan)` of a backend returns, as `to_dict()`."""

    summary: Summary
    flows: Sequence[FlowRow]
    hosts: Sequence[HostRow]
    links: Sequence[LinkRow]
    series: Mapping[str, list[Any]]
    trace: Mapping[str, list[Any]]
    streams: Sequence[Mapping[str, Any]] = ()
    segments: Sequence[SegmentRow] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "summary": self.summary.to_dict(),
            "flows": [row.to_dict() for row in self.flows],
            "hosts": [row.to_dict() for row in self.hosts],
            "links": [row.to_dict() for row in self.links],
            "series": _ordered("series", self.series),
            "trace": _ordered("trace", self.trace),
            "streams": list(self.streams),
        }
        if self.segments:
            out["segments"] = [row.to_dict() for row in self.segments]
        return out


def empty_trace() -> dict[str, list[Any]]:
    """The result's trace table with no rows yet."""
    return {column: [] for column in RESULT_COLUMNS["trace"]}


def interval_ends(interval_ns: int, elapsed_s: float) -> list[float]:
    """The series' timestamps: the end of each `interval_ns` up to `elapsed_s`, the last
    (partial) interval stamped with `elapsed_s`; at least one."""
    count = max(1, math.ceil(elapsed_s * NS_PER_S / interval_ns - 1e-9))
    return [min((k + 1) * interval_ns / NS_PER_S, elapsed_s) for k in range(count)]


def series(ends: Sequence[float], interval_bytes: Sequence[int]) -> dict[str, list[Any]]:
    """The per-interval series: bytes delivered in each interval, stamped with its end."""
    return {"t_s": list(ends), "interval_bytes": list(interval_bytes)}
