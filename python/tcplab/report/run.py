"""The report of one run (`tcplab run` saves it beside result.json): scenario, summary, plots.

Each plot is embedded in the report and also written beside it, as `<report>-<plot>.png`
and `.svg` (report-goodput.png, report-windows.svg, ...), for a paper.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from tcplab.iperf3 import flow_intervals
from tcplab.report import display, html, plots, schedule
from tcplab.result import RunResult

# Plots of the first flows only: a report of 100 flows would be all windows.
_WINDOW_PANELS = 4


def write_report(result: RunResult, path: str | os.PathLike[str]) -> Path:
    """Write the report of `result` to `path`, and each of its plots beside it as PNG and
    SVG (`<stem>-<plot>.png`, `.svg`); returns the report's path."""
    figures = report_figures(result)
    path = html.write(path, _render(result, figures))
    for name, figure in figures.items():
        if figure is not None:
            plots.save(figure, path.with_name(f"{path.stem}-{name}"))
    return path


def render_report(result: RunResult) -> str:
    """The report as one HTML document."""
    return _render(result, report_figures(result))


def report_figures(result: RunResult) -> dict[str, Figure | None]:
    """The report's plots by file name (None: nothing to draw), in the report's order."""
    series = result.to_pandas()
    trace = result.trace_frame()
    if "repetition" in trace:
        trace = trace[trace["repetition"] == 0]
    traced = not trace.empty and trace["acked_bytes"].notna().all()
    connections = _connections(result, trace)
    # A flow a PEP splits: each of its TCP connections drawn, labelled by its ends.
    lines, panel = (("connection",), "connection") if connections is not None else ((), "flow")
    if connections is not None:
        trace = connections
    first = trace[trace["segment"] == 0] if "segment" in trace else trace
    behind = schedule.tracks(result.meta["spec"])
    figures: dict[str, Figure | None] = {
        "goodput": (
            plots.per_interval(series, "goodput_bps", behind=behind) if not series.empty else None
        ),
        "sender": (
            plots.sender_trace(trace, series=lines or ("repetition", "flow"), behind=behind)
            if not trace.empty
            else None
        ),
        "windows": (
            plots.window_trace(trace, flows=_WINDOW_PANELS, panel=panel)
            if not trace.empty
            else None
        ),
        "time-sequence": plots.time_sequence(first) if traced else None,
    }
    # Each flow's goodput is cut from its trace: only when every flow is a traced TCP one.
    every_flow = set(trace["flow"]) == {flow["flow"] for flow in result.flows}
    if len(result.flows) > 1 and not result.runs and traced and every_flow:
        frame = pd.DataFrame(flow_intervals(result))
        starts = frame.groupby("flow")["t_s"].shift(fill_value=0.0)
        frame["goodput_bps"] = 8 * frame["bytes"] / (frame["t_s"] - starts)
        figures["flow-goodput"] = plots.flow_goodput(frame)
        figures["throughput-delay"] = plots.throughput_delay(result.flows_frame())
    if result.messages.get("delay_s"):
        figures["delay-cdf"] = plots.delay_cdf(result.messages_frame())
    queue = result.queue_frame() if result.queue else None
    if queue is not None and "repetition" in queue:
        queue = queue[queue["repetition"] == 0]
    if queue is not None and not queue.empty and queue["bytes_max"].max() > 0:
        figures["queue"] = plots.queue_trace(queue)
    return figures


def _connections(result: RunResult, trace: pd.DataFrame) -> pd.DataFrame | None:
    """For a run with a PEP, the trace with a `connection` column naming each TCP
    connection by its flow and its two ends (from the `segments` rows); else None."""
    if not result.segments or "segment" not in trace or trace.empty:
        return None
    ends = {
        (row["flow"], row["segment"]): f"flow {row['flow']}: {row['src']} → {row['dst']}"
        for row in result.segments
        if row.get("repetition", 0) == 0
    }
    labelled = trace.copy()
    labelled["connection"] = [
        ends.get((flow, segment), f"flow {flow}, connection {segment}")
        for flow, segment in zip(labelled["flow"], labelled["segment"], strict=True)
    ]
    return labelled.sort_values(["flow", "segment", "t_s"], kind="stable")


_CAPTIONS = {
    "goodput": ("Goodput per interval", "goodput per interval"),
    "sender": ("Sender state", "cwnd and srtt over time"),
    "windows": (
        "Windows",
        f"cwnd, ssthresh, the peer's receive window and bytes in flight (first "
        f"{_WINDOW_PANELS} flows)",
    ),
    "time-sequence": ("Time-sequence diagram", "acknowledged, highest sent and window edge"),
    "flow-goodput": ("Goodput of each flow", "each flow's goodput per interval"),
    "throughput-delay": ("Throughput and delay", "each flow's goodput against its srtt"),
    "delay-cdf": ("One-way delay", "distribution of each media stream's one-way delay"),
    "queue": (
        "Link queues",
        "each link direction's mean queue and sojourn time per interval",
    ),
}


def _render(result: RunResult, figures: dict[str, Figure | None]) -> str:
    meta = result.meta
    spec = meta["spec"]
    runs = meta.get("repetitions", 1)
    parts = [
        "<h2>Scenario</h2>",
        *html.scenario(spec),
        "<h2>Summary</h2>",
        html.table(
            ("", meta["backend"]),
            [
                [label, display.cell(result.summary, key, formatter)]
                for label, key, formatter in display.SUMMARY_ROWS
                if display.lookup(result.summary, key)[0] is not None
            ],
        ),
    ]
    for name, figure in figures.items():
        heading, alt = _CAPTIONS[name]
        parts += [f"<h2>{heading}</h2>", html.figure(figure, alt)]
    parts += [
        "<h2>Flows</h2>",
        html.frame_table(result.flows_frame()),
        *(
            [
                "<h2>PEP segments</h2>",
                "<p>Each TCP connection of a flow a PEP splits; the flow's row above is "
                "end to end. The sender and window plots above draw every connection; the "
                "time-sequence diagram the first.</p>",
                html.frame_table(result.segments_frame()),
            ]
            if result.segments
            else []
        ),
        "<h2>Hosts</h2>",
        html.frame_table(result.hosts_frame()),
        "<h2>Links</h2>",
        html.frame_table(result.links_frame()),
    ]
    if result.media:
        parts += [
            "<h2>Media streams</h2>",
            html.table(*display.media_table(result.media)),
        ]
    return html.page(
        f"tcplab: {meta['name']}",
        f"backend {meta['backend']} · seed {spec['seed']} · {runs} repetition(s) · "
        f"duration {spec['duration']} · tcplab {meta['tcplab_version']} · "
        f"spec {meta['spec_hash'][:12]}",
        parts,
    )
