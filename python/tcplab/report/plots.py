"""Plots of results: metrics against swept parameters, bar charts, per-interval series, traces.

Every function takes a pandas DataFrame shaped like the result store's tables and returns a
matplotlib Figure; `save` writes it as PNG and SVG, `png_bytes` gives it for embedding.
Figures are built with the object-oriented API, not pyplot, so they need no display and
render headless on the Agg (PNG) and SVG canvases.

Axis labels carry units. A column's quantity (rate, size, time, ...) is known from its
name: the result fields by name or suffix (`goodput_bps`, `cwnd_bytes`, `srtt_s`), swept
parameters by the last part of their field path (`hosts.client.tcp.sndbuf` → socket send
buffer). Swept values, as the store holds them (base units, durations in ns) or as a
scenario writes them ("32KiB", "275ms"), are shown in a unit that suits their size.
"""

from __future__ import annotations

import io
import os
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tcplab.report import display, fonts
from tcplab.report.schedule import Track
from tcplab.spec import units

# The papers' Korean titles and quotes: drawn, where a CJK font is installed, not as boxes.
fonts.use_cjk_fallback()

# "time" is a result in seconds (t_s, srtt_s); "duration" a scenario field, which the store
# holds in integer nanoseconds and a scenario writes with a unit ("275ms").
Kind = Literal["rate", "size", "time", "duration", "db", "segments", "count", "share", "number"]

# Result fields and parameter names people plot, with what they are called on an axis.
_QUANTITIES: dict[str, tuple[str, Kind]] = {
    "goodput_bps": ("goodput", "rate"),
    "interval_bytes": ("delivered per interval", "size"),
    "bytes_delivered": ("bytes delivered", "size"),
    "bytes_written": ("bytes written", "size"),
    "cwnd_bytes": ("cwnd", "size"),
    "ssthresh_bytes": ("ssthresh", "size"),
    "flight_bytes": ("bytes in flight", "size"),
    "rwnd_bytes": ("receive window", "size"),
    "max_queue_bytes": ("peak queue", "size"),
    "t_s": ("time", "time"),
    "elapsed_s": ("elapsed time", "time"),
    "srtt_s": ("srtt", "time"),
    "min_rtt_s": ("minimum RTT", "time"),
    "retransmits": ("retransmitted segments", "count"),
    "fast_retransmits": ("fast retransmits", "count"),
    "timeouts": ("timeouts", "count"),
    "segments_sent": ("segments sent", "count"),
    "utilisation": ("utilisation", "share"),
    "efficiency": ("efficiency", "share"),
    "cpu_utilisation": ("CPU utilisation", "share"),
    "goodput_per_cpu_bps": ("goodput per unit of CPU", "rate"),
    "fairness": ("Jain fairness index", "number"),
    # A label that names itself ("flow 0: client → gateway").
    "connection": ("", "number"),
    "sndbuf": ("socket send buffer", "size"),
    "rcvbuf": ("socket receive buffer", "size"),
    "message_size": ("message size", "size"),
    # The bulk and file apps' message_size is the size of each write call (netperf -m),
    # not of a message the paper speaks of (seed 003's voice message is app.bytes).
    "app.message_size": ("write size", "size"),
    "read_size": ("read size", "size"),
    "write_delay": ("pause after each write", "duration"),
    "read_delay": ("pause after each read", "duration"),
    "bytes": ("file size", "size"),
    "mss": ("MSS", "size"),
    "rate": ("link rate", "rate"),
    "reverse_rate": ("reverse link rate", "rate"),
    "delay": ("one-way delay", "duration"),
    "reverse_delay": ("reverse one-way delay", "duration"),
    "duration": ("duration", "duration"),
    "min_rto": ("minimum RTO", "duration"),
    "delack_timeout": ("delayed-ACK timeout", "duration"),
    "interval": ("interval", "duration"),
    "ebno_db": ("Eb/No", "db"),
    "reverse_ebno_db": ("reverse Eb/No", "db"),
    "initial_window": ("initial window", "segments"),
    "ber": ("bit error rate", "number"),
    "loss": ("packet loss probability", "number"),
    # Columns whose values name a line themselves ("paper", "tcplab"; "cubic, IW 2560").
    "source": ("", "number"),
    "label": ("", "number"),
}
_SUFFIXES: tuple[tuple[str, Kind], ...] = (
    ("_bps", "rate"),
    ("_bytes", "size"),
    ("_s", "time"),
    ("_db", "db"),
)
_SIZE_UNITS = ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (1, "B"))
_PARSERS = {"rate": units.parse_rate, "size": units.parse_size}
FIGSIZE = (7.0, 4.0)
# Characters of tick labels that fit across a FIGSIZE figure at the default font size.
_TICK_CHARACTERS = 60
WIDE_FIGSIZE = (9.0, 3.2)


@dataclass(frozen=True)
class Quantity:
    """What a column holds: a name for people and the kind of unit it is measured in."""

    name: str
    kind: Kind


def quantity(column: str) -> Quantity:
    """The quantity of a result column or of a swept field path such as `links.0.ebno_db`."""
    if column in _QUANTITIES:
        return Quantity(*_QUANTITIES[column])
    leaf = column.rsplit(".", 1)[-1]
    if leaf in _QUANTITIES:
        return Quantity(*_QUANTITIES[leaf])
    for suffix, kind in _SUFFIXES:
        if leaf.endswith(suffix):
            return Quantity(leaf.removesuffix(suffix).replace("_", " "), kind)
    return Quantity(leaf.replace("_", " "), "number")


def numeric(values: pd.Series, kind: Kind) -> pd.Series:
    """`values` as floats in the base unit (bit/s, bytes, seconds).

    Values written as a scenario spells them ("32KiB", "275ms") are parsed with the
    scenario's own unit parsers. Raises ValueError for a value that is not a number of this
    kind.
    """
    if values.map(lambda value: isinstance(value, (bool, np.bool_))).any():
        raise ValueError("true/false is a category, not a number")
    if pd.api.types.is_numeric_dtype(values):
        return values.astype(float) / _plain_unit(kind)
    if kind == "duration":
        return values.map(lambda value: units.parse_duration(value) / 1e9).astype(float)
    parse = _PARSERS.get(kind)
    if parse is None:
        return values.map(float)
    return values.map(parse).astype(float)


def _plain_unit(kind: Kind) -> float:
    """A plain number of this kind in base units: durations come as integer nanoseconds."""
    return 1e9 if kind == "duration" else 1.0


def _is_numeric(values: pd.Series, kind: Kind) -> bool:
    try:
        numeric(values, kind)
    except (ValueError, TypeError):
        return False
    return True


@dataclass(frozen=True)
class Scale:
    """How a quantity is shown: divide base-unit values by `factor`, name the unit."""

    factor: float
    unit: str

    def label(self, name: str) -> str:
        return f"{name} ({self.unit})" if self.unit else name


def scale(kind: Kind, values: Iterable[float]) -> Scale:
    """The unit that suits the largest of `values` (e.g. kbit/s for a 2 Mb/s link's goodput)."""
    largest = max((abs(value) for value in values if np.isfinite(value)), default=0.0)
    if kind == "rate":
        return Scale(*display.rate_unit(largest))
    if kind == "size":
        return Scale(*next((f, u) for f, u in _SIZE_UNITS if largest >= f or f == 1))
    if kind in ("time", "duration"):
        return Scale(1e-3, "ms") if 0 < largest < 1 else Scale(1.0, "s")
    if kind == "share":
        return Scale(0.01, "%")
    return Scale(1.0, {"db": "dB", "segments": "segments"}.get(kind, ""))


def format_value(column: str, value: object) -> str:
    """One value of a column for a legend or a tick, with its unit: "32 KiB", "6.5 dB"."""
    kind = quantity(column).kind
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    ):
        # What `numeric` makes of a number, without a Series per cell (a table of a
        # thousand flows has tens of thousands).
        number = float(value) / _plain_unit(kind)
    else:
        try:
            number = float(numeric(pd.Series([value]), kind).iloc[0])
        except (ValueError, TypeError):
            return display.flag(bool(value)) if isinstance(value, (bool, np.bool_)) else str(value)
    shown = scale(kind, [number])
    text = f"{number / shown.factor:.4g}"
    return f"{text} {shown.unit}" if shown.unit else text


@dataclass(frozen=True)
class ReferenceLine:
    """A horizontal (axis "y") or vertical ("x") line at a value in the base unit."""

    value: float
    label: str
    axis: Literal["x", "y"] = "y"


# Each reference line of a plot its own colour and dash, so the legend tells them apart.
_REFERENCE_STYLES = (
    ("0.25", "--"),
    ("tab:red", "-."),
    ("tab:purple", ":"),
    ("tab:brown", (0, (6, 2, 1, 2, 1, 2))),
)


def _draw_references(axes: Axes, lines: Sequence[ReferenceLine], x: Scale, y: Scale) -> None:
    for index, line in enumerate(lines):
        color, style = _REFERENCE_STYLES[index % len(_REFERENCE_STYLES)]
        if line.axis == "y":
            axes.axhline(line.value / y.factor, color=color, linestyle=style, label=line.label)
        else:
            axes.axvline(line.value / x.factor, color=color, linestyle=style, label=line.label)


@dataclass(frozen=True)
class PaperPoints:
    """A source paper's published values, (x, y) in base units, drawn as markers without a
    line beside tcplab's, labelled (e.g. "paper, UBR")."""

    label: str
    points: Sequence[tuple[float, float]]


_PAPER_MARKERS = ("x", "+", "^", "s", "D", "v")


def _draw_paper(axes: Axes, paper: Sequence[PaperPoints], x: Scale, y: Scale) -> None:
    for index, published in enumerate(paper):
        if not published.points:
            continue
        xs, ys = zip(*published.points, strict=True)
        axes.plot(
            [value / x.factor for value in xs],
            [value / y.factor for value in ys],
            linestyle="none",
            marker=_PAPER_MARKERS[index % len(_PAPER_MARKERS)],
            markersize=8,
            color="black",
            label=published.label,
        )


def _paper_values(paper: Sequence[PaperPoints]) -> list[float]:
    return [point[1] for published in paper for point in published.points]


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> Iterator[tuple[str | None, pd.DataFrame]]:
    """Split `frame` into one group per combination of the `by` columns it has, labelled."""
    keys = [key for key in by if key in frame]
    if not keys:
        yield None, frame
        return
    groups = list(frame.groupby(keys, sort=False))
    # In the order of the values' magnitudes ("4KiB" before "16KiB"), else as they come.
    groups.sort(key=lambda item: tuple(_sort_key(k, v) for k, v in zip(keys, item[0], strict=True)))
    for values, group in groups:
        yield ", ".join(_label(key, value) for key, value in zip(keys, values, strict=True)), group


def _label(column: str, value: object) -> str:
    name = quantity(column).name
    return f"{name} {format_value(column, value)}" if name else str(value)


def _sort_key(column: str, value: object) -> float:
    values = pd.Series([value])
    kind = quantity(column).kind
    return float(numeric(values, kind).iloc[0]) if _is_numeric(values, kind) else 0.0


def _ci(frame: pd.DataFrame, y: str, ci: str | None) -> str | None:
    """The CI column to draw: the one named, else `<y>_ci95` when the frame has it."""
    if ci is not None:
        if ci not in frame:
            raise ValueError(f"no column {ci!r} for the confidence interval of {y!r}")
        return ci
    return f"{y}_ci95" if f"{y}_ci95" in frame else None


# Lines a legend names one by one; past them it names the first and counts the rest. A
# legend of a thousand flows would be taller than the plot, and drawing it took most of
# a report's time.
MAX_LEGEND_ENTRIES = 16


def _legend_entries(axes: Axes) -> tuple[list[Any], list[str]]:
    handles, labels = axes.get_legend_handles_labels()
    if len(handles) <= MAX_LEGEND_ENTRIES:
        return handles, labels
    shown = MAX_LEGEND_ENTRIES - 1
    more = Line2D([], [], linestyle="none")
    return [*handles[:shown], more], [*labels[:shown], f"and {len(handles) - shown} more"]


def _legend(axes: Axes) -> None:
    # A single unlabelled line needs no legend; several lines (or a reference line) do.
    handles, labels = _legend_entries(axes)
    if len(handles) > 3:
        # Under the plot rather than over its lines (constrained layout makes room).
        axes.figure.legend(handles, labels, loc="outside lower center", ncols=2, fontsize="small")
    elif handles:
        axes.legend(fontsize="small")


def _columns(names: str | Sequence[str]) -> list[str]:
    return [names] if isinstance(names, str) else list(names)


def _require(frame: pd.DataFrame, *columns: str | None) -> None:
    missing = [column for column in columns if column is not None and column not in frame]
    if missing:
        raise ValueError(f"the frame has no column {', '.join(map(repr, missing))}")


def metric_vs_param(
    frame: pd.DataFrame,
    x: str,
    y: str,
    *,
    series: str | Sequence[str] = (),
    ci: str | None = None,
    reference_lines: Sequence[ReferenceLine] = (),
    title: str | None = None,
    paper: Sequence[PaperPoints] = (),
) -> Figure:
    """`y` against the swept parameter `x`, one line per value of `series` (a column, or
    several: one line per combination), with CI bars.

    `frame` has one row per point (mean values); the error bars are the half-widths in
    column `ci`, by default `<y>_ci95` when present. A parameter whose values are not
    numbers (e.g. queue limits in packets and bytes) is drawn at evenly spaced categories.
    `paper` are a source paper's published values, drawn as black markers (numeric x only).
    """
    series = _columns(series)
    _require(frame, x, y, *series)
    x_kind, y_kind = quantity(x).kind, quantity(y).kind
    ci = _ci(frame, y, ci)
    categorical = not _is_numeric(frame[x], x_kind)
    categories = list(dict.fromkeys(frame[x])) if categorical else []
    xs = frame[x].map(categories.index).astype(float) if categorical else numeric(frame[x], x_kind)
    ys = numeric(frame[y], y_kind)
    x_scale = Scale(1.0, "") if categorical else scale(x_kind, xs)
    y_scale = scale(
        y_kind,
        [*ys, *(line.value for line in reference_lines if line.axis == "y"), *_paper_values(paper)],
    )
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    axes = figure.subplots()
    data = frame.assign(_x=xs, _y=ys)
    for label, group in _groups(data, series):
        group = group.sort_values("_x")
        errors = group[ci] / y_scale.factor if ci else None
        axes.errorbar(
            group["_x"] / x_scale.factor,
            group["_y"] / y_scale.factor,
            yerr=errors,
            marker="o",
            capsize=3,
            label=label,
        )
    _draw_references(axes, reference_lines, x_scale, y_scale)
    _draw_paper(axes, paper, x_scale, y_scale)
    if categorical:
        axes.set_xticks(range(len(categories)), [format_value(x, c) for c in categories])
    axes.set_xlabel(x_scale.label(quantity(x).name))
    axes.set_ylabel(y_scale.label(quantity(y).name))
    axes.set_ylim(bottom=0)
    if title:
        axes.set_title(title)
    _legend(axes)
    return figure


def bar_chart(
    frame: pd.DataFrame,
    category: str,
    y: str,
    *,
    series: str | Sequence[str] = (),
    ci: str | None = None,
    reference_lines: Sequence[ReferenceLine] = (),
    title: str | None = None,
) -> Figure:
    """`y` for each value of `category` as bars, grouped side by side by `series`.

    For tables such as efficiency or fairness per configuration. Error bars as in
    `metric_vs_param`.
    """
    series = _columns(series)
    _require(frame, category, y, *series)
    y_kind = quantity(y).kind
    ci = _ci(frame, y, ci)
    categories = list(dict.fromkeys(frame[category]))
    ys = numeric(frame[y], y_kind)
    y_scale = scale(y_kind, [*ys, *(line.value for line in reference_lines if line.axis == "y")])
    data = frame.assign(_y=ys)
    groups = list(_groups(data, series))
    width = 0.8 / len(groups)
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    axes = figure.subplots()
    for index, (label, group) in enumerate(groups):
        positions = group[category].map(categories.index) + (index - (len(groups) - 1) / 2) * width
        errors = group[ci] / y_scale.factor if ci else None
        axes.bar(
            positions, group["_y"] / y_scale.factor, width, yerr=errors, capsize=3, label=label
        )
    _draw_references(axes, reference_lines, Scale(1.0, ""), y_scale)
    # Long names ("PEP, satellite side cubic, IW 2560") wrapped to their bar's share of the
    # width (about 60 characters across the figure), so that neighbours do not overlap.
    share = max(8, _TICK_CHARACTERS // len(categories))
    ticks = [textwrap.fill(format_value(category, c), share) for c in categories]
    axes.set_xticks(range(len(categories)), ticks)
    axes.set_xlabel(quantity(category).name)
    axes.set_ylabel(y_scale.label(quantity(y).name))
    axes.set_ylim(bottom=0)
    if title:
        axes.set_title(title)
    _legend(axes)
    return figure


def _draw_track(axes: Axes, track: Track, factor: float) -> None:
    """A link's schedule drawn behind the run's own lines: thin, grey, dashed."""
    values = [v / factor for v in track.values]
    style: dict[str, Any] = {"color": "0.55", "linestyle": "--", "linewidth": 1.0, "zorder": 1}
    if track.linear:
        axes.plot(track.times_s, values, label=track.name, **style)
    else:
        axes.step(track.times_s, values, where="post", label=track.name, **style)


def _draw_db_tracks(axes: Axes, tracks: Sequence[Track]) -> None:
    """Eb/No tracks on an axis of their own, at the right."""
    db = [t for t in tracks if t.quantity == "db"]
    if not db:
        return
    right = axes.twinx()
    for track in db:
        _draw_track(right, track, 1.0)
    right.set_ylabel("Eb/No (dB)")
    right.legend(loc="lower right", fontsize="small")
    # The run's own lines in front of the schedule's axis.
    axes.set_zorder(right.get_zorder() + 1)
    axes.patch.set_visible(False)


def per_interval(
    frame: pd.DataFrame,
    y: str = "interval_bytes",
    *,
    series: Sequence[str] = ("repetition",),
    title: str | None = None,
    paper: Sequence[PaperPoints] = (),
    behind: Sequence[Track] = (),
) -> Figure:
    """Per-interval values (delivered bytes, or goodput) as steps over time.

    `frame` has `t_s` stamped at each interval's end (the first starts at 0), as in the
    result's series; one line per combination of the `series` columns present. `paper` are
    a source paper's (time, value) points, drawn as black markers (e.g. at the middle of
    each interval it reports). `behind`: a changing link's schedule (report/schedule.py),
    its rates on the same axis when `y` is a rate and its Eb/No on one at the right.
    """
    _require(frame, "t_s", y)
    y_kind = quantity(y).kind
    rates = [t for t in behind if t.quantity == "rate" and y_kind == "rate"]
    y_scale = scale(
        y_kind,
        [*numeric(frame[y], y_kind), *_paper_values(paper), *(v for t in rates for v in t.values)],
    )
    figure = Figure(figsize=WIDE_FIGSIZE, layout="constrained")
    axes = figure.subplots()
    for track in rates:
        _draw_track(axes, track, y_scale.factor)
    _draw_db_tracks(axes, behind)
    for label, group in _groups(frame, series):
        group = group.sort_values("t_s")
        edges = [0.0, *group["t_s"]]
        axes.stairs(numeric(group[y], y_kind) / y_scale.factor, edges, label=label)
    _draw_paper(axes, paper, Scale(1.0, ""), y_scale)
    axes.set_xlabel("time (s)")
    axes.set_ylabel(y_scale.label(quantity(y).name))
    axes.set_ylim(bottom=0)
    if title:
        axes.set_title(title)
    _legend(axes)
    return figure


def sender_trace(
    frame: pd.DataFrame,
    *,
    series: Sequence[str] = ("repetition", "flow"),
    title: str | None = None,
    behind: Sequence[Track] = (),
) -> Figure:
    """cwnd and srtt over time, side by side; one line per combination of `series`.
    `behind`: a changing link's schedule (report/schedule.py), its one-way delays drawn
    behind srtt."""
    _require(frame, "t_s", "cwnd_bytes", "srtt_s")
    delays = [t for t in behind if t.quantity == "time"]
    cwnd_scale = scale("size", frame["cwnd_bytes"])
    srtt_scale = scale("time", [*frame["srtt_s"], *(v for t in delays for v in t.values)])
    figure = Figure(figsize=WIDE_FIGSIZE, layout="constrained")
    cwnd_axes, srtt_axes = figure.subplots(1, 2)
    for track in delays:
        _draw_track(srtt_axes, track, srtt_scale.factor)
    if delays:
        srtt_axes.legend(loc="lower right", fontsize="small")
    for label, group in _groups(frame, series):
        cwnd_axes.plot(group["t_s"], group["cwnd_bytes"] / cwnd_scale.factor, label=label)
        # srtt is 0 until the first RTT sample: no line there rather than one from 0.
        srtt = group["srtt_s"].where(group["srtt_s"] > 0)
        srtt_axes.plot(group["t_s"], srtt / srtt_scale.factor, label=label)
    cwnd_axes.set_ylabel(cwnd_scale.label("cwnd"))
    srtt_axes.set_ylabel(srtt_scale.label("srtt"))
    _finish_over_time(figure, (cwnd_axes, srtt_axes), ncols=2, title=title)
    return figure


def _finish_over_time(
    figure: Figure, panels: Sequence[Axes], *, ncols: int, title: str | None
) -> None:
    """Panels over time side by side that draw the same lines: time axes from 0, and one
    legend under them all."""
    for axes in panels:
        axes.set_xlabel("time (s)")
        axes.set_ylim(bottom=0)
    handles, labels = _legend_entries(panels[0])
    if handles:
        figure.legend(handles, labels, loc="outside lower center", ncols=ncols, fontsize="small")
    if title:
        figure.suptitle(title)


# ssthresh before the first loss: "infinite", traced as 2^32 - 1 (not drawn).
_INFINITE_BYTES = 2**32 - 1


def window_trace(
    frame: pd.DataFrame, *, flows: int = 4, panel: str = "flow", title: str | None = None
) -> Figure:
    """Per flow (the first `flows` values of the `panel` column: e.g. `connection` for
    each TCP connection of a flow a PEP splits), its sender's windows over time: cwnd,
    ssthresh (once it is finite), the receive window the peer offers and the bytes in
    flight."""
    _require(frame, "t_s", panel, "cwnd_bytes", "ssthresh_bytes", "rwnd_bytes", "flight_bytes")
    shown = list(dict.fromkeys(frame[panel]))[:flows]
    if panel == "flow":
        shown.sort()
    finite = frame["ssthresh_bytes"].where(frame["ssthresh_bytes"] < _INFINITE_BYTES)
    values = [*frame["cwnd_bytes"], *frame["rwnd_bytes"], *finite.dropna()]
    size = scale("size", values)
    figure = Figure(figsize=(9.0, 2.6 * len(shown) + 0.6), layout="constrained")
    panels = np.atleast_1d(figure.subplots(len(shown), 1, sharex=True, squeeze=False)[:, 0])
    lines = (
        ("cwnd_bytes", "cwnd", "-"),
        ("ssthresh_bytes", "ssthresh", "--"),
        ("rwnd_bytes", "peer's receive window", ":"),
        ("flight_bytes", "in flight", "-"),
    )
    for axes, flow in zip(panels, shown, strict=True):
        group = frame[frame[panel] == flow].sort_values("t_s")
        for column, label, style in lines:
            values = group[column].where(group[column] < _INFINITE_BYTES)
            width = 0.8 if column == "flight_bytes" else 1.5
            axes.plot(group["t_s"], values / size.factor, style, lw=width, label=label)
        if panel == "flow":
            axes.set_ylabel(size.label(_label(panel, flow)))
        else:  # a longer name: above the panel
            axes.set_ylabel(size.label("window"))
            axes.set_title(_label(panel, flow), fontsize="medium")
        # A receive window far above cwnd (a large buffer) would flatten the rest: it is
        # cut at the top then, and the axis fits cwnd, ssthresh and the flight.
        own = [group[c].where(group[c] < _INFINITE_BYTES).max() for c, _, _ in lines]
        top = max((v for v in own[:2] + own[3:] if pd.notna(v)), default=0.0)
        top = max(top, own[2]) if pd.notna(own[2]) and own[2] <= 2 * top else top
        axes.set_ylim(0, 1.1 * top / size.factor if top > 0 else None)
    panels[-1].set_xlabel("time (s)")
    handles, labels = panels[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=4, fontsize="small")
    if title:
        figure.suptitle(title)
    return figure


def time_sequence(frame: pd.DataFrame, *, flow: int = 0, title: str | None = None) -> Figure:
    """A time-sequence diagram in the manner of tcptrace, from the sender's trace: bytes
    acknowledged (the ACK line), the highest byte sent (acknowledged + in flight), the
    window's right edge (acknowledged + the peer's window), and a mark where segments were
    retransmitted. Sampled every trace interval, not per segment (a host capture,
    docs/pcap.md, has every segment)."""
    _require(frame, "t_s", "flow", "acked_bytes", "flight_bytes", "rwnd_bytes", "retransmits")
    group = frame[frame["flow"] == flow].sort_values("t_s")
    acked = group["acked_bytes"].astype(float)
    size = scale("size", [*(acked + group["rwnd_bytes"])])
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    axes = figure.subplots()
    t = group["t_s"]
    axes.plot(t, (acked + group["rwnd_bytes"]) / size.factor, color="tab:orange", lw=1,
              label="window edge (ACK + peer's window)")  # fmt: skip
    axes.plot(t, (acked + group["flight_bytes"]) / size.factor, color="tab:blue", lw=1,
              label="highest sent (ACK + in flight)")  # fmt: skip
    axes.plot(t, acked / size.factor, color="tab:green", lw=1.5, label="acknowledged")
    retransmitted = group["retransmits"].astype(float).diff().fillna(0) > 0
    axes.plot(t[retransmitted], acked[retransmitted] / size.factor, "x", color="tab:red",
              label="retransmission(s) in the trace interval")  # fmt: skip
    axes.set_xlabel("time (s)")
    axes.set_ylabel(size.label(f"sequence offset, flow {flow}"))
    axes.set_ylim(bottom=0)
    axes.legend(fontsize="small", loc="upper left")
    if title:
        axes.set_title(title)
    return figure


def flow_goodput(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Each flow's goodput over time, as steps: `frame` has `flow`, `t_s` (each interval's
    end) and `goodput_bps`."""
    return per_interval(frame, "goodput_bps", series=("flow",), title=title)


def throughput_delay(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Goodput against delay, a point per row (Pantheon's plot): `frame` has `goodput_bps`
    and `srtt_s` and, to label the points, `flow` (or any first column)."""
    _require(frame, "goodput_bps", "srtt_s")
    rate = scale("rate", frame["goodput_bps"])
    time = scale("time", frame["srtt_s"])
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    axes = figure.subplots()
    for _, row in frame.iterrows():
        x, y = row["srtt_s"] / time.factor, row["goodput_bps"] / rate.factor
        axes.plot([x], [y], "o")
        axes.annotate(f"flow {row['flow']}" if "flow" in row else str(row.iloc[0]), (x, y),
                      textcoords="offset points", xytext=(4, 4), fontsize="small")  # fmt: skip
    # Pantheon draws delay growing to the left, so that better is up and to the right.
    axes.invert_xaxis()
    axes.set_xlabel(time.label("smoothed RTT at the end (srtt)"))
    axes.set_ylabel(rate.label("goodput"))
    axes.set_ylim(bottom=0)
    if title:
        axes.set_title(title)
    return figure


def queue_trace(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """Each link direction's queue per interval, as steps: mean occupancy (bytes) and the
    mean sojourn time of the packets that left it, side by side. `frame` is the result's
    `queue` part; directions that never queued are left out."""
    _require(frame, "t_s", "link", "direction", "bytes_mean", "bytes_max", "sojourn_mean_s")
    active = frame.groupby(["link", "direction"], observed=True)["bytes_max"].transform("max") > 0
    frame = frame[active]
    size = scale("size", frame["bytes_mean"])
    time = scale("time", frame["sojourn_mean_s"])
    figure = Figure(figsize=WIDE_FIGSIZE, layout="constrained")
    bytes_axes, sojourn_axes = figure.subplots(1, 2)
    for (link, direction), group in frame.groupby(["link", "direction"], observed=True):
        group = group.sort_values("t_s")
        edges = [0.0, *group["t_s"]]
        label = f"link {link} {direction}"
        bytes_axes.stairs(group["bytes_mean"] / size.factor, edges, label=label)
        sojourn_axes.stairs(group["sojourn_mean_s"] / time.factor, edges, label=label)
    bytes_axes.set_ylabel(size.label("queue (mean)"))
    sojourn_axes.set_ylabel(time.label("sojourn time (mean)"))
    _finish_over_time(figure, (bytes_axes, sojourn_axes), ncols=4, title=title)
    return figure


def delay_cdf(frame: pd.DataFrame, *, title: str | None = None) -> Figure:
    """The cumulative distribution of each stream's one-way delay: `frame` has `stream` and
    `delay_s` (NaN for a message that never arrived, which keeps its curve below 1)."""
    _require(frame, "stream", "delay_s")
    time = scale("time", frame["delay_s"].dropna())
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    axes = figure.subplots()
    for stream, group in frame.groupby("stream", sort=True):
        delays = np.sort(group["delay_s"].dropna().to_numpy()) / time.factor
        share = np.arange(1, len(delays) + 1) / len(group)
        axes.step(delays, share, where="post", label=str(stream))
    axes.set_xlabel(time.label("one-way delay"))
    axes.set_ylabel("share of messages")
    axes.set_ylim(0, 1.02)
    _legend(axes)
    if title:
        axes.set_title(title)
    return figure


def png_bytes(figure: Figure, dpi: int = 100) -> bytes:
    """The figure as a PNG file's bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def save(
    figure: Figure, path: str | os.PathLike[str], formats: Sequence[str] = ("png", "svg")
) -> list[Path]:
    """Write the figure as `path` with each format's suffix (plot.png, plot.svg)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        target = path.with_suffix(f".{fmt}")
        figure.savefig(target, format=fmt, dpi=100)
        written.append(target)
    return written
