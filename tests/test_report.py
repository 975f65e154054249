"""The HTML report: self-contained, describing the scenario, with embedded plots."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import tcplab
from tcplab.report import write_report

SCENARIO = {
    "name": "report-test",
    "duration": "3s",
    "links": [{"kind": "ethernet", "rate": "10Mbps", "delay": "20ms", "loss": 0.001}],
}


def images(html: str) -> list[bytes]:
    return [
        base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    ]


def test_report_is_self_contained_with_scenario_summary_and_two_plots(tmp_path: Path) -> None:
    result = tcplab.run(SCENARIO)
    path = write_report(result, tmp_path / "report.html")
    html = path.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "report-test" in html and "10Mbps" in html and "loss 0.001" in html
    assert "goodput" in html and "limited by cwnd" in html
    pngs = images(html)
    assert len(pngs) == 2 and all(png.startswith(b"\x89PNG") for png in pngs)
    # Nothing fetched from elsewhere: no external scripts, styles or images.
    assert not re.search(r'(src|href)="(?!data:)', html)


def test_report_of_repetitions_draws_each(tmp_path: Path) -> None:
    result = tcplab.run({**SCENARIO, "repetitions": 2})
    html = write_report(result, tmp_path / "report.html").read_text()
    assert "2 repetition(s)" in html
    assert "±" in html
    assert len(images(html)) == 2


def test_report_escapes_what_it_shows(tmp_path: Path) -> None:
    result = tcplab.run(SCENARIO, backend="model")
    result.meta["backend"] = "<b>x</b>"
    html = write_report(result, tmp_path / "r.html").read_text()
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
