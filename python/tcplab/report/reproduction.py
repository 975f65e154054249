"""The report of a paper's reproduction (`tcplab reproduce`): the conclusions and whether
they held, the paper's numbers beside tcplab's, the known differences, the experiments and
the paper-specific tables and plots."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from tcplab.papers.pack import HELD, NOT_HELD, Reproduction
from tcplab.report import html
from tcplab.report.results import sweep_section
from tcplab.version import __version__

# Held and not held in colour; a tie, a fit, a check needing the full run and one not
# checkable yet are all "open": neither evidence for the paper nor against it.
_STATUS_CLASS = {HELD: "held", NOT_HELD: "failed"}


def write_reproduction_report(reproduction: Reproduction, path: str | os.PathLike[str]) -> Path:
    """Write the report of `reproduction` to `path`; returns the path."""
    return html.write(path, render_reproduction_report(reproduction))


def render_reproduction_report(reproduction: Reproduction) -> str:
    pack = reproduction.pack
    results = reproduction.results
    parts = [
        html.paragraph(pack.citation),
        html.paragraph(pack.summary),
        "<h2>Conclusions</h2>",
        html.paragraph(reproduction.verdict_counts() + "."),
        _verdicts(reproduction),
        "<h2>Published numbers</h2>",
        html.paragraph(
            "tcplab's value beside the paper's; ratio = tcplab / paper. A fitted number is one a "
            "model parameter was fitted to: it shows the fit, not a prediction."
        ),
        html.table(
            ("what", "source", "paper", "tcplab", "ratio", "note"),
            [
                [
                    c.what,
                    c.source,
                    c.paper_text,
                    c.tcplab_text,
                    None if c.ratio is None else f"{c.ratio:.3f}",
                    f"fitted: {c.fitted}. {c.note}" if c.fitted else c.note,
                ]
                for c in reproduction.comparisons
            ],
            prose=True,
        ),
        *(
            [
                "<h2>Investigations</h2>",
                html.paragraph(
                    "Why the conclusions that did not hold, or tied, came out as they did."
                ),
                "<ul>"
                + "".join(f"<li>{html.esc(text)}</li>" for text in pack.investigations)
                + "</ul>",
            ]
            if pack.investigations
            else []
        ),
        "<h2>Known differences</h2>",
        "<ul>" + "".join(f"<li>{html.esc(text)}</li>" for text in pack.differences) + "</ul>",
    ]
    for exhibit in pack.exhibits(results):
        content = (
            html.frame_table(exhibit.content)
            if isinstance(exhibit.content, pd.DataFrame)
            else html.figure(exhibit.content, exhibit.heading)
        )
        parts += [f"<h2>{html.esc(exhibit.heading)}</h2>", html.paragraph(exhibit.caption), content]
    for experiment in pack.experiments:
        store = results.stores[experiment.name]
        manifest = store.manifest()
        scenario = {key: value for key, value in manifest["scenario"].items() if key != "sweep"}
        parts += [
            f"<h2>Experiment {html.esc(experiment.name)}</h2>",
            html.paragraph(
                f"{experiment.description}. Stored in {experiment.name}/ "
                f"({len(store.run_ids())} runs; tcplab report {experiment.name} for every "
                "point's numbers)."
            ),
            *html.scenario(scenario),
            *sweep_section(manifest),
        ]
    mode = "quick (shortened runs, fewer repetitions)" if results.quick else "full"
    return html.page(
        f"tcplab reproduce {pack.name}: {pack.title}",
        f"{mode} · tcplab {__version__} · {reproduction.directory}",
        parts,
    )


def _verdicts(reproduction: Reproduction) -> str:
    rows = []
    for check, verdict in reproduction.verdicts:
        kind = _STATUS_CLASS.get(verdict.status, "open")
        status = f'<td class="{kind}">{html.esc(verdict.status)}</td>'
        cells = "".join(
            f"<td>{html.esc(text)}</td>" for text in (check.claim, check.source, verdict.evidence)
        )
        rows.append(status + cells)
    return html.raw_table(("verdict", "conclusion", "source", "evidence"), rows, prose=True)
