"""Reports as a browser sees them: self-contained, every plot loads in headless Chromium.

Screenshots are kept under tests/artifacts/ (not in git) for a person to look at.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from browser import assert_renders, wide_tables
from typer.testing import CliRunner

import tcplab
from tcplab.cli import app
from tcplab.report import write_report

runner = CliRunner()
SWEEP = {
    "name": "report-sweep",
    "duration": "5s",
    "repetitions": 2,
    "hosts": [
        {"name": "client", "tcp": {"sndbuf": "8KiB", "window_scaling": False}},
        {"name": "server", "tcp": {"window_scaling": False}},
    ],
    "links": [{"rate": "2.048Mbps", "delay": "275ms", "loss": 0.01}],
    "sweep": {"hosts.client.tcp.sndbuf": ["8KiB", "32KiB"], "links.0.loss": [0.0, 0.01]},
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tcplab.Store:
    return tcplab.sweep(SWEEP, out=tmp_path_factory.mktemp("results") / "sweep", jobs=1)


def pngs(html: str) -> list[bytes]:
    return [
        base64.b64decode(data) for data in re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    ]


def assert_self_contained(html: str) -> None:
    assert html.startswith("<!DOCTYPE html>")
    # Nothing to fetch: no external scripts, styles, images, fonts or links.
    assert not re.search(r'(src|href)\s*=\s*"(?!data:)', html)
    assert not re.search(r"url\(|@import|https?://", html)


def test_report_command_writes_a_self_contained_report_of_a_sweep(store: tcplab.Store) -> None:
    result = runner.invoke(app, ["report", str(store.directory)])
    assert result.exit_code == 0, result.output
    path = store.directory / "report.html"
    assert str(path) in result.stdout
    html = path.read_text()
    assert_self_contained(html)
    # The scenario, the sweep, and one row per point with mean ± 95 % half-width.
    assert "report-sweep" in html and "2.048Mbps" in html
    assert "hosts.client.tcp.sndbuf" in html and "8KiB, 32KiB" in html
    text = re.sub(r"data:image/png;base64,[^\"]+", "", html)  # base64 may hold "2/2" too
    assert text.count("2/2") == 4 and "±" in html
    # Goodput against each swept parameter, per-interval bytes, and the sender trace.
    assert "Goodput against socket send buffer" in html
    assert "Goodput against packet loss probability" in html
    # ... goodput over time (in the run report's unit), the sender trace, and each point's
    # goodput against its delay.
    assert "Goodput per interval" in html and "Throughput and delay" in html
    images = pngs(html)
    assert len(images) == 5 and all(png.startswith(b"\x89PNG") for png in images)


def test_sweep_report_renders_in_chromium(store: tcplab.Store, tmp_path: Path) -> None:
    out = tmp_path / "sweep-report.html"
    assert runner.invoke(app, ["report", str(store.directory), "--out", str(out)]).exit_code == 0
    images = assert_renders(out, "sweep-report", tmp_path)
    # The plots were drawn at 100 dpi: 7 x 4 in for goodput, 9 x 3.2 in for the series.
    assert sorted({(image["width"], image["height"]) for image in images}) == [
        (700, 400),
        (900, 320),
    ]


def test_run_report_renders_in_chromium(tmp_path: Path) -> None:
    link = {"rate": "10Mbps", "delay": "20ms", "loss": 0.001}
    result = tcplab.run({"name": "one-run", "duration": "3s", "links": [link]})
    path = write_report(result, tmp_path / "run-report.html")
    assert_self_contained(path.read_text())
    # Goodput, sender, windows, time-sequence and the link's queue.
    assert len(assert_renders(path, "run-report", tmp_path)) == 5
    # Its widest tables (flows, links: a dozen columns each) wrap to the page.
    assert wide_tables(path, tmp_path) == []


def test_report_of_something_else_is_a_one_line_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "not a results directory" in result.stderr
    assert result.stderr.count("\n") == 1
    result = runner.invoke(app, ["report", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no such directory" in result.stderr
