"""The report of a results directory (`tcplab report`): the scenario and its sweep, the mean
± 95 % confidence half-width of each point, and plots of goodput against each swept
parameter and over time."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from tcplab.experiments.store import Store
from tcplab.report import display, html, plots

# More points than this and the per-interval and trace plots show only the points with the
# highest and the lowest mean goodput: forty overlapping lines inform nobody.
MAX_LINES = 10
# The summary fields of the per-point table: what limits goodput, not every counter, so that
# a two-parameter sweep still fits the page.
POINT_FIELDS = ("goodput_bps", "elapsed_s", "retransmits", "timeouts", "limited_by.rwnd",
                "limited_by.sndbuf", "limited_by.cwnd", "limited_by.app")  # fmt: skip


def write_results_report(store: Store, path: str | os.PathLike[str]) -> Path:
    """Write the report of the results in `store` to `path`; returns the path."""
    return html.write(path, render_results_report(store))


def render_results_report(store: Store) -> str:
    """The report of a results directory as one HTML document."""
    manifest = store.manifest()
    scenario = {key: value for key, value in manifest["scenario"].items() if key != "sweep"}
    points = store.points()
    means = store.aggregate()
    paths = _swept_paths(manifest)
    dimensions = sweep_dimensions(points, paths)
    hidden = [path for path in paths if path not in dimensions]
    parts = [
        "<h2>Scenario</h2>",
        *html.scenario(scenario),
        *sweep_section(manifest),
        "<h2>Results per point</h2>",
        html.paragraph(
            f"Mean ± half-width of the 95 % confidence interval over each point's runs "
            f"(Student t; none with a single run). {int(points['stored'].sum())} of "
            f"{int(points['expected'].sum())} runs stored."
            + (
                f" Not shown as columns (fixed, or changing with a field shown): "
                f"{', '.join(hidden)}."
                if hidden
                else ""
            )
        ),
        _points_table(points, means, dimensions),
        *_failures(store),
        *_result_plots(store, means, dimensions),
    ]
    machine = manifest.get("machine", {})
    return html.page(
        f"tcplab: {manifest['name']}",
        f"backend {manifest['backend']} · seed {manifest['seed']} · "
        f"{manifest['repetitions']} repetition(s) · {len(points)} point(s) · "
        f"tcplab {manifest['tcplab_version']} · spec {manifest['spec_hash'][:12]} · "
        f"ran on {machine.get('hostname', '?')} ({machine.get('platform', '?')})",
        parts,
    )


def _swept_paths(manifest: Mapping[str, Any]) -> list[str]:
    """The field paths a results directory's sweep varies, in the scenario's order."""
    return list((manifest.get("sweep") or {}).get("paths", []))


def sweep_dimensions(points: pd.DataFrame, paths: Sequence[str]) -> list[str]:
    """The swept paths that vary independently, one path standing for each group of paths
    that always change together (a zip sweep of both hosts' buffers is one dimension)."""
    dimensions: list[str] = []
    for path in paths:
        if points[path].nunique() < 2:
            continue
        if not any(_together(points, path, kept) for kept in dimensions):
            dimensions.append(path)
    return dimensions


def _together(points: pd.DataFrame, a: str, b: str) -> bool:
    pairs = points[[a, b]].drop_duplicates()
    return len(pairs) == points[a].nunique() == points[b].nunique()


def sweep_section(manifest: Mapping[str, Any]) -> list[str]:
    """The sweep's mode and each swept field with its values as written."""
    sweep = manifest.get("sweep")
    if not sweep:
        return []
    values: dict[str, list[str]] = {path: [] for path in sweep["paths"]}
    for point in manifest["points"]:
        for path in sweep["paths"]:
            if point["labels"][path] not in values[path]:
                values[path].append(point["labels"][path])
    return [
        "<h3>Sweep</h3>",
        html.paragraph(
            f"mode {sweep['mode']}: "
            + (
                "every combination of the values"
                if sweep["mode"] == "grid"
                else "the i-th values of each list together"
            )
        ),
        html.table(("field", "values"), [[path, ", ".join(values[path])] for path in values]),
    ]


def _plain(value: Any) -> Any:
    """A table value as Python: numpy scalars unwrapped, NaN (no spread) as None."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and math.isnan(value) else value


def _metric_columns(means: pd.DataFrame) -> list[tuple[str, str, display.Formatter]]:
    """The POINT_FIELDS of display.SUMMARY_ROWS that the aggregated table has, as
    (heading, column, formatter); nested fields are flattened in the store (limited_by_rwnd)."""
    return [
        (label, key.replace(".", "_"), formatter)
        for label, key, formatter in display.SUMMARY_ROWS
        if key in POINT_FIELDS and key.replace(".", "_") in means
    ]


def _points_table(points: pd.DataFrame, means: pd.DataFrame, paths: Sequence[str]) -> str:
    """One row per point: the swept values as written, the runs, and mean ± ci95 of each
    summary field."""
    columns = _metric_columns(means)
    by_point = {
        row["point_id"]: {str(key): _plain(value) for key, value in row.items()}
        for row in means.to_dict(orient="records")
    }
    rows = []
    for point in points.to_dict(orient="records"):
        stats = by_point.get(point["point_id"], {})
        runs = f"{point['stored']}/{point['expected']}"
        if point["failed"]:
            runs += f" ({point['failed']} failed)"
        rows.append(
            [
                *(point[path] for path in paths),
                runs,
                *(display.cell(stats, column, formatter) for _, column, formatter in columns),
            ]
        )
    return html.table([*paths, "runs", *(heading for heading, _, _ in columns)], rows)


def _failures(store: Store) -> list[str]:
    failures = store.failures()
    if failures.empty:
        return []
    return [
        "<h2>Failed runs</h2>",
        html.frame_table(failures[["run_id", "point_id", "repetition", "error"]]),
    ]


def _result_plots(store: Store, means: pd.DataFrame, dimensions: Sequence[str]) -> list[str]:
    """Goodput against each swept dimension (one line per value of the others), then the
    per-interval delivered bytes and the sender trace of the points shown."""
    if means.empty:
        return []
    parts = []
    for x in dimensions:
        others = [d for d in dimensions if d != x]
        figure = plots.metric_vs_param(means, x, "goodput_bps", series=others)
        name = plots.quantity(x).name
        parts += [f"<h2>Goodput against {html.esc(name)}</h2>", html.figure(figure, name)]
    shown = _shown_points(means)
    note = (
        ""
        if len(shown) == len(means)
        else f" Of the {len(means)} points, the ones with the highest and the lowest mean goodput."
    )
    labels = means.set_index("point_id").loc[shown, list(dimensions)]
    series = _with_point_params(store.series(), shown, labels)
    trace = _with_point_params(store.trace(), shown, labels)
    per_point = list(dimensions)
    parts += [
        "<h2>Goodput per interval</h2>",
        html.paragraph(f"Mean over each point's runs.{note}"),
        html.figure(_interval_means(series, per_point), "goodput per interval"),
        "<h2>Sender state</h2>",
        html.paragraph(f"The first run of each point.{note}"),
        html.figure(
            plots.sender_trace(trace[trace["repetition"] == 0], series=per_point)
            if not trace.empty
            else None,
            "cwnd and srtt over time",
        ),
        "<h2>Throughput and delay</h2>",
        html.paragraph(
            "Each point's mean goodput against its flows' mean smoothed RTT at the end of"
            " the run (delay grows to the left, so that better is up and to the right)."
        ),
        html.figure(_throughput_delay(store, means, dimensions), "goodput against srtt"),
    ]
    return parts


def _throughput_delay(
    store: Store, means: pd.DataFrame, dimensions: Sequence[str]
) -> Figure | None:
    delays = store.query(
        "SELECT s.point_id, avg(f.srtt_s) AS srtt_s FROM flows f JOIN summary s USING (run_id)"
        " WHERE f.srtt_s > 0 GROUP BY s.point_id"
    )
    if delays.empty:
        return None
    frame = means.merge(delays, on="point_id")
    label = frame.apply(
        lambda row: ", ".join(plots.format_value(d, row[d]) for d in dimensions) or "scenario",
        axis=1,
    )
    return plots.throughput_delay(
        pd.DataFrame(
            {"point": label, "goodput_bps": frame["goodput_bps"], "srtt_s": frame["srtt_s"]}
        )
    )


def _shown_points(means: pd.DataFrame) -> list[str]:
    """The points whose series are drawn: all, or the extremes of mean goodput."""
    if len(means) <= MAX_LINES:
        return list(means["point_id"])
    ordered = means.sort_values("goodput_bps")["point_id"]
    return list(dict.fromkeys([ordered.iloc[-1], ordered.iloc[0]]))


def _with_point_params(
    frame: pd.DataFrame, shown: Sequence[str], labels: pd.DataFrame
) -> pd.DataFrame:
    """The rows of the shown points, with their swept values as columns to label lines by."""
    if frame.empty:
        return frame
    frame = frame[frame["point_id"].isin(shown)]
    return frame.join(labels, on="point_id") if len(labels.columns) else frame


def _interval_means(series: pd.DataFrame, per_point: Sequence[str]) -> Figure | None:
    """Each shown point's goodput per interval (in the run report's unit: bit/s over each
    interval's own length), the mean over its runs."""
    if series.empty:
        return None
    series = series.sort_values(["run_id", "t_s"])
    starts = series.groupby("run_id")["t_s"].shift(fill_value=0.0)
    series = series.assign(goodput_bps=8 * series["interval_bytes"] / (series["t_s"] - starts))
    keys = ["point_id", *per_point, "t_s"]
    means = series.groupby(keys, sort=False)["goodput_bps"].mean().reset_index()
    return plots.per_interval(means, "goodput_bps", series=per_point)
