"""The report of one run (`tcplab run` saves it beside result.json): scenario, summary, plots."""

from __future__ import annotations

import os
from pathlib import Path

from tcplab.report import display, html, plots
from tcplab.result import RunResult


def write_report(result: RunResult, path: str | os.PathLike[str]) -> Path:
    """Write the report of `result` to `path`; returns the path."""
    return html.write(path, render_report(result))


def render_report(result: RunResult) -> str:
    """The report as one HTML document."""
    meta = result.meta
    spec = meta["spec"]
    runs = meta.get("repetitions", 1)
    series = result.to_pandas()
    trace = result.trace_frame()
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
        "<h2>Goodput per interval</h2>",
        html.figure(
            plots.per_interval(series, "goodput_bps") if not series.empty else None,
            "goodput per interval",
        ),
        "<h2>Sender state</h2>",
        html.figure(
            plots.sender_trace(trace) if not trace.empty else None, "cwnd and srtt over time"
        ),
        "<h2>Flows</h2>",
        html.frame_table(result.flows_frame()),
        *(
            [
                "<h2>PEP segments</h2>",
                "<p>Each TCP connection of a flow a PEP splits; the flow's row above is "
                "end to end.</p>",
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
