"""Plots: PNG and SVG files with axes labelled in units, one line per series, CI bars."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcplab.report import plots


def points() -> pd.DataFrame:
    """Per-point means of a sndbuf × Eb/No sweep, as the store aggregates them."""
    rows = []
    for ebno in (6.0, 8.0):
        for kib in (4, 8, 16, 32):
            goodput = kib * 1024 * 8 / 0.55 * (0.3 if ebno == 6.0 else 0.95)
            rows.append(
                {
                    "hosts.client.tcp.sndbuf": f"{kib}KiB",
                    "links.0.ebno_db": ebno,
                    "goodput_bps": goodput,
                    "goodput_bps_ci95": 0.05 * goodput,
                }
            )
    return pd.DataFrame(rows)


def axes_texts(figure: Figure) -> list[tuple[str, str]]:
    return [(axes.get_xlabel(), axes.get_ylabel()) for axes in figure.axes]


def test_metric_against_a_swept_size_has_units_lines_per_series_and_error_bars(
    tmp_path: Path,
) -> None:
    bound = plots.ReferenceLine(65536 * 8 / 0.55, "window bound 64 KiB / 550 ms")
    figure = plots.metric_vs_param(
        points(),
        "hosts.client.tcp.sndbuf",
        "goodput_bps",
        series="links.0.ebno_db",
        reference_lines=[bound],
    )
    assert axes_texts(figure) == [("socket send buffer (KiB)", "goodput (kbit/s)")]
    (axes,) = figure.axes
    labels = axes.get_legend_handles_labels()[1]
    assert sorted(labels) == ["Eb/No 6 dB", "Eb/No 8 dB", "window bound 64 KiB / 550 ms"]
    # "32KiB" was parsed to 32 KiB: the last point of each line sits at x = 32.
    lines = [line for line in axes.get_lines() if line.get_marker() == "o"]
    assert [list(line.get_xdata()) for line in lines] == [[4, 8, 16, 32]] * 2
    assert len(axes.containers) == 2  # one errorbar container per series
    written = plots.save(figure, tmp_path / "goodput-vs-sndbuf")
    assert [path.name for path in written] == ["goodput-vs-sndbuf.png", "goodput-vs-sndbuf.svg"]
    assert written[0].read_bytes().startswith(b"\x89PNG")
    svg = written[1].read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_eb_no_on_the_x_axis_and_buffer_sizes_in_the_legend() -> None:
    figure = plots.metric_vs_param(
        points(), "links.0.ebno_db", "goodput_bps", series="hosts.client.tcp.sndbuf"
    )
    (axes,) = figure.axes
    assert axes.get_xlabel() == "Eb/No (dB)"
    # Ordered by size, not as text ("16KiB" < "4KiB").
    assert axes.get_legend_handles_labels()[1] == [
        "socket send buffer 4 KiB",
        "socket send buffer 8 KiB",
        "socket send buffer 16 KiB",
        "socket send buffer 32 KiB",
    ]


def test_values_that_are_not_numbers_become_categories() -> None:
    frame = pd.DataFrame({"links.0.queue.limit": ["100p", "64KiB"], "goodput_bps": [1e6, 2e6]})
    figure = plots.metric_vs_param(frame, "links.0.queue.limit", "goodput_bps")
    (axes,) = figure.axes
    assert [tick.get_text() for tick in axes.get_xticklabels()] == ["100p", "64KiB"]
    assert axes.get_ylabel() == "goodput (Mbit/s)"


def test_true_and_false_are_categories() -> None:
    frame = pd.DataFrame({"hosts.client.tcp.sack": [False, True], "goodput_bps": [1e6, 2e6]})
    (axes,) = plots.metric_vs_param(frame, "hosts.client.tcp.sack", "goodput_bps").axes
    assert [tick.get_text() for tick in axes.get_xticklabels()] == ["no", "yes"]
    assert axes.get_xlabel() == "sack"


def test_bar_chart_groups_series_side_by_side() -> None:
    frame = pd.DataFrame(
        {
            "switch": ["ubr", "ubr", "epd", "epd"],
            "vcs": [10, 70, 10, 70],
            "efficiency": [0.6, 0.4, 0.9, 0.85],
            "efficiency_ci95": [0.02, 0.03, 0.01, 0.02],
        }
    )
    figure = plots.bar_chart(frame, "switch", "efficiency", series="vcs")
    (axes,) = figure.axes
    assert axes.get_ylabel() == "efficiency (%)"
    assert axes.get_xlabel() == "switch"
    assert [tick.get_text() for tick in axes.get_xticklabels()] == ["ubr", "epd"]
    assert len(axes.patches) == 4
    assert sorted(round(bar.get_height()) for bar in axes.patches) == [40, 60, 85, 90]
    assert axes.get_legend_handles_labels()[1] == ["vcs 10", "vcs 70"]


def test_per_interval_bytes_and_trace_have_time_axes(tmp_path: Path) -> None:
    series = pd.DataFrame(
        {
            "repetition": [0, 0, 1, 1],
            "t_s": [1.0, 2.0, 1.0, 2.0],
            "interval_bytes": [2_000_000, 4_000_000, 1_000_000, 5_000_000],
        }
    )
    figure = plots.per_interval(series)
    assert axes_texts(figure) == [("time (s)", "delivered per interval (MiB)")]
    assert figure.axes[0].get_legend_handles_labels()[1] == ["repetition 0", "repetition 1"]
    trace = pd.DataFrame({"t_s": [0.5, 1.0], "cwnd_bytes": [14600, 29200], "srtt_s": [0.0, 0.55]})
    figure = plots.sender_trace(trace)
    assert axes_texts(figure) == [("time (s)", "cwnd (KiB)"), ("time (s)", "srtt (ms)")]
    for path in plots.save(figure, tmp_path / "trace"):
        assert path.stat().st_size > 1000


def test_a_legend_of_many_flows_names_the_first_and_counts_the_rest() -> None:
    flows = 40
    series = pd.DataFrame(
        {
            "flow": [f for f in range(flows) for _ in (1, 2)],
            "t_s": [t for _ in range(flows) for t in (1.0, 2.0)],
            "goodput_bps": [1e6] * (2 * flows),
        }
    )
    figure = plots.per_interval(series, "goodput_bps", series=("flow",))
    assert len(figure.axes[0].get_lines()) + len(figure.axes[0].patches) == flows
    (legend,) = figure.legends
    labels = [text.get_text() for text in legend.get_texts()]
    shown = plots.MAX_LEGEND_ENTRIES - 1
    assert labels == [*(f"flow {f}" for f in range(shown)), f"and {flows - shown} more"]
    trace = pd.DataFrame(
        {
            "flow": list(range(flows)),
            "t_s": [1.0] * flows,
            "cwnd_bytes": [14600] * flows,
            "srtt_s": [0.05] * flows,
        }
    )
    (legend,) = plots.sender_trace(trace, series=("flow",)).legends
    assert len(legend.get_texts()) == plots.MAX_LEGEND_ENTRIES


def test_quantities_and_values_carry_their_units() -> None:
    assert plots.quantity("links.0.delay") == plots.Quantity("one-way delay", "duration")
    assert plots.quantity("jitter_s") == plots.Quantity("jitter", "time")
    # A scenario's durations: as written, or as the store holds them (nanoseconds).
    assert plots.format_value("links.0.delay", "275ms") == "275 ms"
    assert plots.format_value("links.0.delay", 275_000_000) == "275 ms"
    assert plots.format_value("srtt_s", 0.55) == "550 ms"
    assert plots.format_value("hosts.client.tcp.sack", True) == "yes"
    assert plots.format_value("links.0.rate", "2.048Mbps") == "2.048 Mbit/s"
    assert plots.format_value("hosts.client.tcp.initial_window", 2560) == "2560 segments"


def test_a_missing_column_is_named() -> None:
    with pytest.raises(ValueError, match="'goodput_bps_ci99'"):
        plots.metric_vs_param(points(), "links.0.ebno_db", "goodput_bps", ci="goodput_bps_ci99")
    with pytest.raises(ValueError, match="'nope'"):
        plots.bar_chart(points(), "nope", "goodput_bps")


def test_a_papers_values_are_markers_without_a_line_in_the_same_units() -> None:
    frame = points()[points()["links.0.ebno_db"] == 8.0]
    published = plots.PaperPoints("paper, Fig. 11", [(32 * 1024, 710e3)])
    figure = plots.metric_vs_param(
        frame, "hosts.client.tcp.sndbuf", "goodput_bps", paper=[published]
    )
    axes = figure.axes[0]
    marker = next(line for line in axes.get_lines() if line.get_label() == "paper, Fig. 11")
    assert marker.get_linestyle() == "None" and marker.get_marker() == "x"
    # Drawn in the axes' units (kbit/s and KiB here), like tcplab's own line.
    assert "kbit/s" in axes.get_ylabel()
    assert list(marker.get_ydata()) == [710.0] and list(marker.get_xdata()) == [32.0]
    # The y axis reaches the paper's value even where tcplab's stays below it.
    assert axes.get_ylim()[1] >= 710.0


def sender_samples() -> pd.DataFrame:
    """A flow's trace: slow start to a loss at 0.3 s (ssthresh set), a retransmission."""
    return pd.DataFrame(
        {
            "flow": [0, 0, 0, 0],
            "t_s": [0.1, 0.2, 0.3, 0.4],
            "cwnd_bytes": [14600, 29200, 14600, 16060],
            "ssthresh_bytes": [2**32 - 1, 2**32 - 1, 14600, 14600],
            "rwnd_bytes": [65535] * 4,
            "flight_bytes": [14600, 29200, 13140, 16060],
            "srtt_s": [0.0, 0.05, 0.05, 0.06],
            "acked_bytes": [0, 14600, 43800, 58400],
            "retransmits": [0, 0, 1, 1],
        }
    )


def test_srtt_is_not_drawn_before_the_first_sample() -> None:
    srtt_line = plots.sender_trace(sender_samples()).axes[1].get_lines()[0]
    assert pd.isna(srtt_line.get_ydata()[0]) and srtt_line.get_ydata()[1] == pytest.approx(50)


def test_windows_draw_cwnd_with_a_finite_ssthresh_and_the_peers_window() -> None:
    figure = plots.window_trace(sender_samples())
    (axes,) = figure.axes
    lines = {line.get_label(): line.get_ydata() for line in axes.get_lines()}
    assert list(lines) == ["cwnd", "ssthresh", "peer's receive window", "in flight"]
    # "Infinite" ssthresh before the loss is no point on the axis.
    assert pd.isna(lines["ssthresh"][:2]).all() and lines["ssthresh"][2] == pytest.approx(14.2578)
    assert axes.get_ylabel() == "flow 0 (KiB)"


def test_time_sequence_marks_retransmissions_on_the_ack_line() -> None:
    (axes,) = plots.time_sequence(sender_samples()).axes
    lines = {line.get_label(): line for line in axes.get_lines()}
    marks = lines["retransmission(s) in the trace interval"]
    assert list(marks.get_xdata()) == [0.3]
    edge = lines["window edge (ACK + peer's window)"].get_ydata()
    assert edge[0] == pytest.approx(65535 / 1024)
    assert axes.get_ylabel() == "sequence offset, flow 0 (KiB)"


def test_delay_cdf_keeps_lost_messages_below_one_and_throughput_delay_per_flow() -> None:
    messages = pd.DataFrame({"stream": ["a"] * 4, "delay_s": [0.1, 0.2, 0.3, float("nan")]})
    (axes,) = plots.delay_cdf(messages).axes
    assert max(axes.get_lines()[0].get_ydata()) == pytest.approx(0.75)
    assert axes_texts(plots.delay_cdf(messages)) == [("one-way delay (ms)", "share of messages")]
    flows = pd.DataFrame({"flow": [0, 1], "goodput_bps": [4e6, 1e6], "srtt_s": [0.02, 0.08]})
    (axes,) = plots.throughput_delay(flows).axes
    assert axes.xaxis_inverted() and axes.get_ylabel() == "goodput (Mbit/s)"


def test_reference_lines_differ_in_colour_and_dash() -> None:
    # Seed 000's window bound and Fig. 11 value were both grey dashed lines.
    lines = [plots.ReferenceLine(5e5, "window bound"), plots.ReferenceLine(4e5, "Fig. 11")]
    figure = plots.metric_vs_param(points(), "hosts.client.tcp.sndbuf", "goodput_bps",
                                   reference_lines=lines)  # fmt: skip
    named = ("window bound", "Fig. 11")
    drawn = [line for line in figure.axes[0].get_lines() if line.get_label() in named]
    styles = {(str(line.get_color()), str(line.get_linestyle())) for line in drawn}
    assert len(drawn) == 2 and len(styles) == 2


def test_long_bar_names_wrap_without_overlapping() -> None:
    # Seed 004's PEP bars: four configurations whose names ran into each other.
    names = ["unsplit (reno, IW 10)", "PEP, satellite side reno, IW 10",
             "PEP, satellite side cubic, IW 2560", "PEP, satellite side hybla, IW 10"]  # fmt: skip
    frame = pd.DataFrame({"path": names, "goodput_bps": [20e6, 21e6, 36e6, 36e6]})
    figure = plots.bar_chart(frame, "path", "goodput_bps")
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    boxes = [t.get_window_extent(canvas.get_renderer()) for t in figure.axes[0].get_xticklabels()]
    assert all(left.x1 < right.x0 for left, right in zip(boxes, boxes[1:], strict=False))


def test_a_bulk_apps_message_size_is_its_write_size() -> None:
    # app.message_size is the size of each write call (seed 003's Fig. 5 axis), a media
    # stream's message_size the size of its messages.
    assert plots.quantity("app.message_size").name == "write size"
    assert plots.quantity("app.streams.0.message_size").name == "message size"
