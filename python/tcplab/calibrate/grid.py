"""A calibration grid: the paths on which the simulator is measured against the kernel.

A grid file (calibration/*.toml) names a `base` scenario and `sets` of axes; each set is the
product of its axes. A point is one single-bottleneck path (rate, one-way delay, drop-tail
queue in bandwidth-delay products), one TCP setting (cc, SACK, random loss, initial
window, buffers) and the number of connections that share the path. The whole grid becomes one
scenario with a zip sweep over every point, so that the sweep machinery
(tcplab.experiments.sweeps) runs it on either backend and the result store holds it.
The points are named (`10Mbps-10ms-q1bdp-cubic`), and the name, a swept field, is what
matches a simulator run with the kernel's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tcplab.errors import SpecError
from tcplab.spec import (
    Spec,
    canonical_dict,
    format_problem,
    located_problems,
    units,
    validate_spec,
)
from tcplab.spec.apps import MAX_PARALLEL
from tcplab.spec.fields import Duration, Probability, Rate
from tcplab.spec.loading import read_toml

# The bytes of one full packet on the wire's queue (IP MTU): a queue of q BDP holds
# q x BDP / this many packets.
PACKET_BYTES = 1500
# A queue of fewer than two packets cannot hold a packet behind the one being sent.
MIN_QUEUE_PACKETS = 2
# "auto" buffers: room for the path's whole pipe and queue twice over, so that the path,
# not a window, limits the sender; never below 4 MiB (the linux profile's sndbuf)...
AUTO = "auto"
MIN_AUTO_BUFFER = 4 * 2**20
# ... and never above 512 MiB: the emu backend sets the namespace's tcp_wmem and tcp_rmem
# to twice the buffer, and Linux refuses a value above 2^31 - 1 there.
MAX_AUTO_BUFFER = 2**29
# The swept fields of the grid's scenario, in this order; `name` first labels the point.
SWEPT = (
    "name",
    "links.0.kind",
    "links.0.rate",
    "links.0.delay",
    "links.0.queue.limit",
    "links.0.loss",
    "hosts.0.tcp.cc",
    "hosts.1.tcp.cc",
    "hosts.0.tcp.sack",
    "hosts.1.tcp.sack",
    "hosts.0.tcp.initial_window",
    "hosts.0.tcp.sndbuf",
    "hosts.1.tcp.rcvbuf",
    "app.parallel",
    "app.start_jitter",
)
Cc = Literal["reno", "newreno", "cubic", "bbr"]


class _Axes(BaseModel):
    """One set of points: every combination of these lists."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    kind: list[Literal["p2p", "ethernet"]] = Field(
        ["p2p"], min_length=1, description="the link's framing: p2p (PPP) or ethernet"
    )
    rate: list[Rate] = Field(min_length=1)
    delay: list[Duration] = Field(min_length=1, description="one-way propagation delay")
    queue_bdp: list[Annotated[float, Field(gt=0)]] = Field(
        min_length=1, description="drop-tail queue in bandwidth-delay products (at least 2 p)"
    )
    cc: list[Cc] = Field(min_length=1)
    sack: list[bool] = Field(
        [True],
        min_length=1,
        description="SACK on both hosts (tcp.sack); false: the recovery without SACK",
    )
    loss: list[Probability] = Field([0.0], min_length=1, description="random packet loss")
    initial_window: list[int] = Field(
        [], description="the sender's initial window in segments; empty: the profile's"
    )
    sndbuf: list[str] = Field([AUTO], min_length=1, description='a size, or "auto"')
    rcvbuf: list[str] = Field([AUTO], min_length=1, description='a size, or "auto"')
    flows: list[Annotated[int, Field(ge=1, le=MAX_PARALLEL)]] = Field(
        [1],
        min_length=1,
        description="connections from the sender to the receiver at once, competing for the"
        " path's bottleneck (app.parallel)",
    )
    start_jitter: Duration | None = Field(
        None,
        description="the connections of a point with flows above 1 open at times drawn from"
        " [0, this) (app.start_jitter); default: all at once",
    )


class _GridFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    description: str = ""
    base: dict[str, Any] = Field(default_factory=dict)
    sets: list[_Axes] = Field(min_length=1)


@dataclass(frozen=True)
class GridPoint:
    """One path and TCP setting of a grid, with everything derived from it."""

    name: str
    kind: str
    rate_bps: int
    delay_ns: int
    queue_bdp: float
    queue_packets: int
    cc: str
    sack: bool
    loss: float
    initial_window: int | None
    sndbuf: int
    rcvbuf: int
    flows: int
    start_jitter_ns: int | None = None

    @property
    def rtt_s(self) -> float:
        """The base round trip: twice the one-way delay, no queueing or serialization."""
        return 2 * self.delay_ns / 1e9

    @property
    def bdp_bytes(self) -> float:
        return self.rate_bps * self.rtt_s / 8

    @property
    def queue_drain_s(self) -> float:
        """How long the full drop-tail queue takes to leave at the link's rate."""
        return self.queue_packets * PACKET_BYTES * 8 / self.rate_bps

    def params(self) -> dict[str, Any]:
        """The values of the grid scenario's swept fields (SWEPT) for this point."""
        values = (
            self.name,
            self.kind,
            units.format_rate(self.rate_bps),
            units.format_duration(self.delay_ns),
            f"{self.queue_packets}p",
            self.loss,
            self.cc,
            self.cc,
            self.sack,
            self.sack,
            self.initial_window,
            units.format_size(self.sndbuf),
            units.format_size(self.rcvbuf),
            # One connection leaves the app as the profile has it (no parallel field).
            self.flows if self.flows > 1 else None,
            None if self.start_jitter_ns is None else units.format_duration(self.start_jitter_ns),
        )
        return dict(zip(SWEPT, values, strict=True))


@dataclass(frozen=True)
class Grid:
    """A loaded grid: its points, the scenario that sweeps them, and where its data lives."""

    name: str
    description: str
    path: Path
    points: list[GridPoint]
    spec: Spec

    @property
    def data_dir(self) -> Path:
        """calibration/<grid>/ beside the grid file: the kernel's data and the bounds."""
        return self.path.with_suffix("")

    def point(self, name: str) -> GridPoint:
        return next(p for p in self.points if p.name == name)


def load_grid(path: str | PathLike[str]) -> Grid:
    """Read a grid file; every problem is raised together as one SpecError naming its field."""
    path = Path(path)
    try:
        grid = _GridFile.model_validate(read_toml(path))
    except ValidationError as error:
        found = [format_problem(loc, message) for loc, message in located_problems(error)]
        raise SpecError(found, path) from None
    points: dict[str, GridPoint] = {}
    problems: list[str] = []
    for index, axes in enumerate(grid.sets):
        try:
            for point in _expand(axes):
                points.setdefault(point.name, point)
        except ValueError as error:
            problems.append(format_problem(("sets", index), str(error)))
    base = {"hosts": [{"name": "sender"}, {"name": "receiver"}], "app": {"kind": "bulk"}}
    base.update(grid.base)
    problems += [
        f"base.{key}: the grid makes the path and its sweep"
        for key in ("sweep", "links", "flows", "peps", "routers")
        if key in grid.base
    ]
    if len(base["hosts"]) != 2:
        problems.append("base.hosts: a grid point has two hosts, sender and receiver")
    if problems:
        raise SpecError(problems, path)
    return Grid(grid.name, grid.description, path, list(points.values()), _spec(grid, base, points))


def _size(text: str, auto: int, field: str) -> int:
    if text == AUTO:
        return auto
    try:
        return units.parse_size(text)
    except ValueError as error:
        raise ValueError(f"{field}: {error}") from None


def _expand(axes: _Axes) -> list[GridPoint]:
    if axes.start_jitter and max(axes.flows) < 2:
        raise ValueError(
            "start_jitter: only for a set with flows above 1, whose connections it spreads"
        )
    points = []
    windows: list[int | None] = [*axes.initial_window] if axes.initial_window else [None]
    # The hosts' cc and SACK as pairs: itertools.product is typed for up to ten iterables.
    choices = itertools.product(
        axes.kind,
        axes.rate,
        axes.delay,
        axes.queue_bdp,
        itertools.product(axes.cc, axes.sack),
        axes.loss,
        windows,
        axes.sndbuf,
        axes.rcvbuf,
        axes.flows,
    )
    for kind, rate, delay, queue_bdp, (cc, sack), loss, window, sndbuf, rcvbuf, flows in choices:
        bdp = rate * 2 * delay / 1e9 / 8
        queue = max(MIN_QUEUE_PACKETS, round(queue_bdp * bdp / PACKET_BYTES))
        need = 2 * (bdp + queue * PACKET_BYTES)
        auto = min(MAX_AUTO_BUFFER, max(MIN_AUTO_BUFFER, 2 ** math.ceil(math.log2(need))))
        name = f"{units.format_rate(rate)}-{units.format_duration(delay)}-q{queue_bdp:g}bdp-{cc}"
        if kind != "p2p":
            name += f"-{kind}"
        if loss:
            name += f"-loss{loss:g}"
        if window is not None:
            name += f"-iw{window}"
        for label, text in (("snd", sndbuf), ("rcv", rcvbuf)):
            if text != AUTO:
                name += f"-{label}{units.format_size(_size(text, auto, label + 'buf'))}"
        if flows > 1:
            name += f"-flows{flows}"
        if not sack:
            name += "-nosack"
        points.append(
            GridPoint(
                name=name,
                kind=kind,
                rate_bps=rate,
                delay_ns=delay,
                queue_bdp=queue_bdp,
                queue_packets=queue,
                cc=cc,
                sack=sack,
                loss=loss,
                initial_window=window,
                sndbuf=_size(sndbuf, auto, "sndbuf"),
                rcvbuf=_size(rcvbuf, auto, "rcvbuf"),
                flows=flows,
                start_jitter_ns=axes.start_jitter if flows > 1 and axes.start_jitter else None,
            )
        )
    return points


def _spec(grid: _GridFile, base: dict[str, Any], points: Mapping[str, GridPoint]) -> Spec:
    """One scenario whose zip sweep runs every point of the grid."""
    first = next(iter(points.values()))
    data = {
        **base,
        "name": grid.name,
        "links": [{"kind": "p2p", "rate": first.params()["links.0.rate"], "delay": "1ms"}],
    }
    data["hosts"] = [dict(host) for host in base["hosts"]]
    profile_window = validate_spec(data).hosts[0].tcp.initial_window
    sweep: dict[str, list[Any]] = {path: [] for path in SWEPT}
    for point in points.values():
        for path, value in point.params().items():
            unset = value is None and path == "hosts.0.tcp.initial_window"
            sweep[path].append(profile_window if unset else value)
    return validate_spec({**canonical_dict(validate_spec(data)), "sweep": {"mode": "zip", **sweep}})
