"""The pieces every tcplab report is made of: page, tables, scenario description, figures.

A report is one HTML file with nothing fetched from elsewhere: styles inline, plots as
base64 PNG data URLs, so it can be mailed or archived on its own.
"""

from __future__ import annotations

import base64
import html
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from tcplab.report import display, fonts, plots
from tcplab.result import write_atomically

_STYLE = (
    f"\nbody {{ font-family: {fonts.CSS_FAMILY};"
    " margin: 2em auto; max-width: 60em; color: #222; }"
    + """
table { border-collapse: collapse; margin: 0.5em 0 1.5em; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
th { overflow-wrap: anywhere; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
div.table { overflow-x: auto; }
img { max-width: 100%; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
.meta { color: #666; font-size: 0.9em; }
.held { color: #126b12; font-weight: bold; }
.failed { color: #a11; font-weight: bold; }
.open { color: #8a5a00; font-weight: bold; }
"""
)

_HOST_COLUMNS = ("cc", "sndbuf", "rcvbuf", "mss", "initial_window", "window_scaling",
                 "delayed_ack", "nagle", "min_rto")  # fmt: skip
_ERROR_FIELDS = ("ber", "loss", "gilbert_elliott", "ebno_db")


def esc(value: object) -> str:
    return html.escape(str(value))


def page(title: str, meta_line: str, parts: Iterable[str]) -> str:
    """A whole HTML document: title, a grey line of provenance, then the parts in order."""
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f'<p class="meta">{esc(meta_line)}</p>',
    ]
    return "\n".join([*head, *parts, "</body></html>"]) + "\n"


def write(path: str | os.PathLike[str], document: str) -> Path:
    """Write a rendered report atomically; returns its path."""
    path = Path(path)
    write_atomically(path, document)
    return path


def paragraph(text: str, css_class: str | None = None) -> str:
    attribute = f' class="{css_class}"' if css_class else ""
    return f"<p{attribute}>{esc(text)}</p>"


def _td(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return f"<td>{display.MISSING}</td>"
    if isinstance(value, bool):
        return f"<td>{display.flag(value)}</td>"
    if isinstance(value, float):
        return f'<td class="num">{value:.6g}</td>'
    if isinstance(value, int):
        return f'<td class="num">{value}</td>'
    return f"<td>{esc(value)}</td>"


def table(header: Sequence[str], rows: Iterable[Sequence[object]], prose: bool = False) -> str:
    """A table of values: numbers right-aligned, None as a dash, text escaped.

    A table wider than the page wraps its cells between words (a number and its unit are
    joined by a no-break space, so they stay together) rather than scroll; `prose` marks a
    table of sentences.
    """
    return raw_table(
        header,
        ("".join(_td(value) for value in row) for row in rows),
        prose=prose,
    )


def raw_table(header: Sequence[str], rows: Iterable[str], prose: bool = False) -> str:
    """A table from rows of ready-made <td> cells (for cells that need their own class)."""
    head = "".join(f"<th>{esc(name)}</th>" for name in header)
    body = "".join(f"<tr>{row}</tr>" for row in rows)
    attribute = ' class="prose"' if prose else ""
    # In a div that scrolls, so that a wide table does not widen the page.
    return f'<div class="table"><table{attribute}><tr>{head}</tr>{body}</table></div>'


def frame_table(frame: pd.DataFrame) -> str:
    """A table of result rows, each number shown in its column's unit ("2.01 Mbit/s",
    "32 KiB", "550.4 ms", "22.5 %"), as tcplab.report.plots names the column's quantity."""
    columns = list(frame.columns)
    rows = (
        "".join(
            _quantity_td(column, value.item() if hasattr(value, "item") else value)
            for column, value in zip(columns, row, strict=True)
        )
        for row in frame.itertuples(index=False, name=None)
    )
    return raw_table(columns, rows)


def _quantity_td(column: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or pd.isna(value):
        return _td(value)
    if plots.quantity(column).kind in ("rate", "size", "time", "share"):
        text = plots.format_value(column, value)
    elif isinstance(value, int):
        text = f"{value:,}" if abs(value) >= 10_000 else str(value)
    else:
        text = f"{value:.4g}"
    return f'<td class="num">{esc(text).replace(" ", "&nbsp;")}</td>'


def figure(plot: Figure | None, alt: str) -> str:
    """A figure as an <img> with the PNG inline; a note when there was nothing to draw."""
    if plot is None:
        return "<p>No samples.</p>"
    encoded = base64.b64encode(plots.png_bytes(plot)).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{encoded}">'


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


def scenario(spec: Mapping[str, Any]) -> list[str]:
    """The scenario (canonical dict) as tables of hosts, path and application, and the
    whole of it as JSON folded away."""
    app = spec["app"]
    return [
        "<h3>Hosts</h3>",
        table(
            ("host", *_HOST_COLUMNS),
            [[host["name"], *(host["tcp"][c] for c in _HOST_COLUMNS)] for host in spec["hosts"]],
        ),
        "<h3>Path</h3>",
        table(
            ("link", "kind", "rate", "delay", "queue", "errors", "reverse"),
            [_link_row(index, link) for index, link in enumerate(spec["links"])],
        ),
        "<h3>Application</h3>",
        table(
            ("kind", "message size", "bytes"),
            [[app["kind"], app["message_size"], app.get("bytes", display.MISSING)]],
        ),
        "<details><summary>Full scenario (canonical)</summary><pre>",
        esc(json.dumps(spec, indent=2, sort_keys=True)),
        "</pre></details>",
    ]
