"""The HTML report: self-contained, describing the scenario, with embedded plots."""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

import tcplab
from tcplab.report import write_report
from tcplab.report.run import report_figures

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

SCENARIO = {
    "name": "report-test",
    "duration": "3s",
    "links": [{"kind": "ethernet", "rate": "10Mbps", "delay": "20ms", "loss": 0.001}],
}


def images(html: str) -> list[bytes]:
    return [
        base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    ]


# The link's queue builds up too, so its plot follows (docs/models/aqm.md).
PLOTS = ["goodput", "sender", "windows", "time-sequence", "queue"]


def test_report_is_self_contained_with_scenario_summary_and_its_plots(tmp_path: Path) -> None:
    result = tcplab.run(SCENARIO)
    path = write_report(result, tmp_path / "report.html")
    html = path.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "report-test" in html and "10Mbps" in html and "loss 0.001" in html
    assert "goodput" in html and "limited by cwnd" in html
    pngs = images(html)
    assert len(pngs) == len(PLOTS) and all(png.startswith(b"\x89PNG") for png in pngs)
    # Nothing fetched from elsewhere: no external scripts, styles or images.
    assert not re.search(r'(src|href)="(?!data:)', html)
    # Each plot also beside the report, as the PNG embedded and as SVG, for a paper.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["report.html", *(f"report-{name}.{ext}" for name in PLOTS for ext in ("png", "svg"))]
    )
    for name in PLOTS:
        assert (tmp_path / f"report-{name}.png").read_bytes().startswith(b"\x89PNG")
        assert (tmp_path / f"report-{name}.svg").read_text().lstrip().startswith("<?xml")


def test_report_tables_show_numbers_in_their_units(tmp_path: Path) -> None:
    result = tcplab.run(SCENARIO)
    html = write_report(result, tmp_path / "report.html").read_text()
    flows = html.split("<h2>Flows</h2>")[1].split("<h2>Hosts</h2>")[0]
    links = html.split("<h2>Links</h2>")[1]
    # No raw floats (2.0089e+07, 0.224844): rates, sizes, times and shares with units.
    assert not re.search(r"\d\.\d{5,}|e[+-]\d\d", flows + links)
    assert re.search(r">[\d.]+&nbsp;Mbit/s<", flows)  # goodput
    assert re.search(r">[\d.]+&nbsp;ms<", flows)  # srtt, min RTT
    assert re.search(r">[\d.]+&nbsp;(KiB|MiB)<", links)  # bytes, peak queue
    assert re.search(r">[\d.]+&nbsp;%<", links)  # utilisation


def test_a_multi_flow_report_draws_each_flows_goodput_and_throughput_against_delay(
    tmp_path: Path,
) -> None:
    link = {"rate": "10Mbps", "delay": "10ms", "queue": {"limit": "50p"}}
    result = tcplab.run(
        {
            "name": "two-flows",
            "duration": "4s",
            "hosts": [{"name": n} for n in ("a", "b", "c")],
            "routers": [{"name": "r"}],
            "links": [
                {**link, "between": ["a", "r"]},
                {**link, "between": ["b", "r"]},
                {**link, "between": ["r", "c"], "rate": "5Mbps"},
            ],
            "flows": [{"src": "a", "dst": "c"}, {"src": "b", "dst": "c", "start": "1s"}],
        }
    )
    html = write_report(result, tmp_path / "report.html").read_text()
    assert len(images(html)) == len(PLOTS) + 2
    assert "Goodput of each flow" in html and "Throughput and delay" in html
    assert (tmp_path / "report-flow-goodput.svg").exists()


def test_report_of_repetitions_draws_each(tmp_path: Path) -> None:
    result = tcplab.run({**SCENARIO, "repetitions": 2})
    html = write_report(result, tmp_path / "report.html").read_text()
    assert "2 repetition(s)" in html
    assert "±" in html
    assert len(images(html)) == len(PLOTS)


def test_report_escapes_what_it_shows(tmp_path: Path) -> None:
    # The model's loss response is recovery by duplicate ACKs' (it refuses RACK-TLP).
    tcp = {"loss_recovery": "classic"}
    hosts = [{"name": "a", "tcp": tcp}, {"name": "b", "tcp": tcp}]
    result = tcplab.run({**SCENARIO, "hosts": hosts}, backend="model")
    result.meta["backend"] = "<b>x</b>"
    html = write_report(result, tmp_path / "r.html").read_text()
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_a_media_report_draws_each_streams_delay_distribution(tmp_path: Path) -> None:
    spec = tcplab.load_spec(Path(__file__).parents[1] / "examples" / "geo-videoconference.toml")
    result = tcplab.run(spec.model_copy(update={"duration": 10 * 10**9}))
    html = write_report(result, tmp_path / "report.html").read_text()
    assert "One-way delay" in html
    assert (tmp_path / "report-delay-cdf.png").exists()


def test_a_spread_that_is_only_rounding_is_not_shown() -> None:
    from tcplab.report import display

    # Three repetitions that agree: their mean and deviation differ in the last bits only.
    assert display.rate(56830.0, 2.214e-14) == "56.83 kbit/s"
    assert display.rate(56830.0, 1200.0) == "56.83 ± 1.2 kbit/s"
    assert display.percent(0.5, 1e-17) == "50.0 %"


def test_a_pep_report_draws_both_legs(tmp_path: Path) -> None:
    # examples/satellite-pep.toml, shortened: the terrestrial and the satellite connection
    # each get their lines in the sender plot and a panel of windows.
    scenario = tomllib.loads((ROOT / "examples" / "satellite-pep.toml").read_text())
    result = tcplab.run({**scenario, "duration": "2s"})
    figures = report_figures(result)
    labels = [line.get_label() for line in figures["sender"].axes[0].get_lines()]
    assert labels == ["flow 0: client → gateway", "flow 0: gateway → server"]
    titles = [axes.get_title() for axes in figures["windows"].axes]
    assert titles == ["flow 0: client → gateway", "flow 0: gateway → server"]
    # Each its own path's round trip: its smallest srtt 10 ms terrestrial, 600 ms over the
    # satellite (one unit for both lines in the srtt panel).
    lines = figures["sender"].axes[1].get_lines()
    srtt = {line.get_label(): np.nanmin(line.get_ydata()) for line in lines}
    assert srtt["flow 0: gateway → server"] > 30 * srtt["flow 0: client → gateway"]
    html = write_report(result, tmp_path / "report.html").read_text()
    assert "draw every connection" in html


def test_a_changing_links_schedule_is_drawn_behind_goodput_and_srtt() -> None:
    def labels(figure: Any) -> set[str]:
        return {line.get_label() for axes in figure.axes for line in axes.get_lines()}

    rows = [{"at": "1s", "rate": "2Mbps", "delay": "30ms"}]
    link = {"rate": "10Mbps", "delay": "10ms", "schedule": rows}
    figures = report_figures(tcplab.run({**SCENARIO, "links": [link]}))
    assert "link rate" in labels(figures["goodput"])
    assert "link delay" in labels(figures["sender"])
    faded = {
        **link,
        "ber_curve": "qpsk",
        "ebno_db": 9.0,
        "schedule": [{"at": "1s", "ebno_db": 8.0}],
    }
    assert "link Eb/No" in labels(
        report_figures(tcplab.run({**SCENARIO, "links": [faded]}))["goodput"]
    )
    # A run without a schedule draws nothing more.
    plain = report_figures(tcplab.run(SCENARIO))
    assert not {"link rate", "link delay"} & (labels(plain["goodput"]) | labels(plain["sender"]))
