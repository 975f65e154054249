"""A self-contained HTML report of one run: the scenario, the summary and the plots.

Plots are PNGs embedded as base64, so the file can be mailed or archived on its own.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tcplab import display
from tcplab.result import RunResult, write_atomically

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
.meta { color: #666; font-size: 0.9em; }
"""

_HOST_COLUMNS = ("cc", "sndbuf", "rcvbuf", "mss", "initial_window", "window_scaling",
                 "delayed_ack", "nagle", "min_rto")  # fmt: skip
_ERROR_FIELDS = ("ber", "loss", "gilbert_elliott", "ebno_db")


def write_report(result: RunResult, path: str | os.PathLike[str]) -> Path:
    """Write the report of `result` to `path`; returns the path."""
    path = Path(path)
    write_atomically(path, render_report(result))
    return path


def render_report(result: RunResult) -> str:
    """The report as one HTML document."""
    meta = result.meta
    spec = meta["spec"]
    title = f"tcplab: {meta['name']}"
    runs = meta.get("repetitions", 1)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        '<p class="meta">'
        + _esc(
            f"backend {meta['backend']} · seed {spec['seed']} · {runs} repetition(s) · "
            f"duration {spec['duration']} · tcplab {meta['tcplab_version']} · "
            f"spec {meta['spec_hash'][:12]}"
        )
        + "</p>",
        "<h2>Scenario</h2>",
        "<h3>Hosts</h3>",
        _table(
            ("host", *_HOST_COLUMNS),
            [[host["name"], *(host["tcp"][c] for c in _HOST_COLUMNS)] for host in spec["hosts"]],
        ),
        "<h3>Path</h3>",
        _table(
            ("link", "kind", "rate", "delay", "queue", "errors", "reverse"),
            [_link_row(index, link) for index, link in enumerate(spec["links"])],
        ),
        "<h3>Application</h3>",
        _table(("kind", "message size", "bytes"), [_app_row(spec["app"])]),
        "<h2>Summary</h2>",
        _table(
            ("", meta["backend"]),
            [
                [label, display.cell(result.summary, key, formatter)]
                for label, key, formatter in display.SUMMARY_ROWS
                if display.lookup(result.summary, key)[0] is not None
            ],
        ),
        "<h2>Goodput per interval</h2>",
        _figure(_plot_goodput, result.to_pandas()),
        "<h2>Sender state</h2>",
        _figure(_plot_trace, result.trace_frame()),
        "<h2>Flows</h2>",
        _frame_table(result.flows_frame()),
        "<h2>Links</h2>",
        _frame_table(result.links_frame()),
        "<details><summary>Full scenario (canonical)</summary><pre>",
        _esc(json.dumps(spec, indent=2, sort_keys=True)),
        "</pre></details>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _esc(value: object) -> str:
    return html.escape(str(value))


def _td(value: object) -> str:
    if value is None:
        return f"<td>{display.MISSING}</td>"
    if isinstance(value, bool):
        return f"<td>{display.flag(value)}</td>"
    if isinstance(value, float):
        return f'<td class="num">{value:.6g}</td>'
    if isinstance(value, int):
        return f'<td class="num">{value}</td>'
    return f"<td>{_esc(value)}</td>"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{_esc(name)}</th>" for name in header)
    body = "".join("<tr>" + "".join(_td(value) for value in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _frame_table(frame: pd.DataFrame) -> str:
    return _table(list(frame.columns), frame.itertuples(index=False, name=None))


def _error_model(link: Mapping[str, Any], prefix: str) -> str:
    for name in _ERROR_FIELDS:
        value = link.get(prefix + name)
        if value is None:
            continue
        if name == "ebno_db":
            return f"Eb/No {value} dB ({link[prefix + 'ber_curve']})"
        if name == "gilbert_elliott":
            return "Gilbert-Elliott " + ", ".join(f"{k}={v}" for k, v in value.items())
        return f"{name} {value}"
    return "none"


def _link_row(index: int, link: Mapping[str, Any]) -> list[object]:
    reverse = (
        f"{link.get('reverse_rate', link['rate'])}, {link.get('reverse_delay', link['delay'])}, "
        f"queue {link.get('reverse_queue', link['queue'])['limit']}, "
        f"errors {_error_model(link, 'reverse_')}"
    )
    return [
        index,
        link["kind"],
        link["rate"],
        link["delay"],
        link["queue"]["limit"],
        _error_model(link, ""),
        reverse,
    ]


def _app_row(app: Mapping[str, Any]) -> list[object]:
    return [app["kind"], app["message_size"], app.get("bytes", display.MISSING)]


def _figure(plot: Any, frame: pd.DataFrame) -> str:
    if frame.empty:
        return "<p>No samples.</p>"
    figure = Figure(figsize=(9, 3.2), layout="constrained")
    plot(figure, frame)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="plot" src="data:image/png;base64,{encoded}">'


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> Iterable[tuple[str, pd.DataFrame]]:
    """Split a frame into the lines to draw: one per repetition and/or flow present."""
    keys = [key for key in by if key in frame]
    if not keys:
        yield "", frame
        return
    for values, group in frame.groupby(keys):
        yield ", ".join(f"{k} {v}" for k, v in zip(keys, values, strict=True)), group


def _plot_goodput(figure: Figure, frame: pd.DataFrame) -> None:
    axes = figure.subplots()
    for label, group in _groups(frame, ["repetition"]):
        # Each value covers the interval that ends at its stamp; the first starts at 0.
        edges = [0.0, *group["t_s"]]
        axes.stairs(group["goodput_bps"] / 1e3, edges, label=label or None)
    axes.set_xlabel("time (s)")
    axes.set_ylabel("goodput (kbit/s)")
    axes.set_ylim(bottom=0)
    _legend(axes)


def _plot_trace(figure: Figure, frame: pd.DataFrame) -> None:
    cwnd_axes, srtt_axes = figure.subplots(1, 2)
    for label, group in _groups(frame, ["repetition", "flow"]):
        cwnd_axes.plot(group["t_s"], group["cwnd_bytes"] / 1024, label=label or None)
        srtt_axes.plot(group["t_s"], group["srtt_s"] * 1e3, label=label or None)
    cwnd_axes.set_ylabel("cwnd (KiB)")
    srtt_axes.set_ylabel("srtt (ms)")
    for axes in (cwnd_axes, srtt_axes):
        axes.set_xlabel("time (s)")
        axes.set_ylim(bottom=0)
        _legend(axes)


def _legend(axes: Axes) -> None:
    # One line needs no legend; several (repetitions, flows) do.
    if len(axes.get_legend_handles_labels()[0]) > 1:
        axes.legend(fontsize="small")
