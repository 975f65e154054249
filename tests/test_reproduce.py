"""`tcplab reproduce`: the packs, a quick reproduction of each seed paper with the paper's
numbers beside tcplab's and a verdict on every conclusion, and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from browser import assert_renders
from snapshots import reproduction_tables
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tcplab import papers
from tcplab.cli import app
from tcplab.papers import seed000
from tcplab.papers.pack import (
    FITTED,
    HELD,
    NEEDS_FULL,
    NOT_CHECKABLE,
    NOT_HELD,
    TIE,
    Check,
    Exhibit,
    Experiment,
    Pack,
    Results,
    Verdict,
    above,
    every,
    rises,
)

runner = CliRunner()


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each seed pack reproduced with --quick, through the command line."""
    out = {}
    for name in ("seed000", "seed003", "seed004"):
        directory = tmp_path_factory.mktemp(name) / "out"
        result = runner.invoke(app, ["reproduce", name, "--quick", "--out", str(directory)])
        assert result.exit_code == 0, result.output
        out[name] = directory
        (directory / "stdout.txt").write_text(result.stdout)
    return out


def recorded(directory: Path) -> dict:
    return json.loads((directory / "reproduction.json").read_text())


def test_list_names_every_pack() -> None:
    result = runner.invoke(app, ["reproduce", "--list"])
    assert result.exit_code == 0
    for name, pack in papers.PACKS.items():
        assert name in result.stdout and pack.title[:30] in result.stdout


def test_seed000_sets_the_paper_beside_tcplab_and_judges_its_conclusions(
    quick: dict[str, Path],
) -> None:
    stdout = (quick["seed000"] / "stdout.txt").read_text()
    assert "published numbers" in stdout and "conclusions" in stdout
    assert "953.3 kbit/s" in stdout and "710 kbit/s" in stdout
    data = recorded(quick["seed000"])
    assert data["pack"] == "seed000" and data["quick"] is True
    bound, fig11, *videoconference, clr6, clr8, ftp_rate, ftp_time = data["comparisons"]
    assert bound["paper"] == pytest.approx(65536 * 8 / 0.55)
    # The model's W/RTT counts headers and serialization: a little under 64 KB / 550 ms.
    assert 0.9 < bound["ratio"] < 1.0
    assert fig11["paper"] == 710e3
    # tcplab's window is its 32 KiB socket buffer, so it cannot reach the paper's 710 kb/s,
    # which exceeds 32 KiB / 550 ms; the pack says so rather than scaling the number.
    assert fig11["tcplab"] < 32 * 1024 * 8 / 0.55
    assert "effective window" in fig11["note"]
    # Table 4 (video and audio at four Eb/No) and the transfer time at 6.5 dB.
    assert len(videoconference) == 9
    table4 = {c["what"]: c for c in videoconference}
    assert table4["mean video message inter-arrival at 6.5 dB"]["paper"] == pytest.approx(0.1094)
    assert table4["mean audio message inter-arrival at 8.0 dB"]["paper"] == pytest.approx(0.04658)
    assert all(c["tcplab"] > 0 for c in videoconference)
    # Issue 16: LANE over ATM cells. Independent bit errors lose a cell only to two header
    # errors, ~780 BER²: 1.1e-7 at 6.0 dB (BER 1.2e-5) against the paper's measured 2.7e-4.
    assert clr6["paper"] == 2.7e-4 and clr6["tcplab"] == pytest.approx(780 * 1.2e-5**2, rel=0.05)
    assert clr8["paper"] == 2.7e-6 and clr8["tcplab"] < 1e-12
    # FTP over the satellite with a 4,096-byte receive buffer (Figs. 14-15): the window
    # allows 59.6 kb/s; the paper's 23 kb/s and 917 s for 2 MB at 7.5 dB need its
    # interworking bottleneck.
    assert (ftp_rate["paper"], ftp_time["paper"]) == (23e3, 917.0)
    assert 23e3 < ftp_rate["tcplab"] < 4096 * 8 / 0.55
    statuses = {check["claim"]: check["status"] for check in data["checks"]}
    assert len(statuses) == 8
    assert set(statuses.values()) <= {HELD, NOT_HELD, TIE}
    # Issue 16: the bound that 32 KiB buffers kept by construction is replaced by what the
    # paper says keeps 710 kb/s below it: the errors, against the same path without them.
    errors = next(claim for claim in statuses if "errors, not only the window" in claim)
    assert "without bit errors" in next(
        c["evidence"] for c in data["checks"] if c["claim"] == errors
    )
    # Issue 7, item 3: the video's inter-arrival rises as Eb/No falls and the ITU verdict
    # fails at the low end.
    frozen = next(claim for claim in statuses if "the video nearly stops" in claim)
    assert statuses[frozen] == HELD
    itu = next(claim for claim in statuses if "320 ms objective" in claim)
    assert statuses[itu] == HELD
    assert all(check["evidence"] for check in data["checks"])


def test_seed000_report_shows_the_comparison_the_differences_and_loads_its_plots(
    quick: dict[str, Path], tmp_path: Path
) -> None:
    report = quick["seed000"] / "report.html"
    html = report.read_text()
    for text in ("Published numbers", "Known differences", "AFD", "Table 3", "koreasat-2000",
                 "64 KB window bound and its Fig. 11", "not held", "ratio",
                 "Table 4: mean message inter-arrival over TCP", "Video (paper)",
                 "Audio (tcplab)", "109.40 ms", "delay ≤ 320 ms"):  # fmt: skip
        assert text in html
    # Goodput against socket buffer (two message sizes) and against Eb/No; FTP's rate.
    assert len(assert_renders(report, "reproduce-seed000", tmp_path)) == 4


def test_seed004_lays_out_table1_and_checks_cubic_against_reno(
    quick: dict[str, Path], tmp_path: Path
) -> None:
    data = recorded(quick["seed004"])
    totals = {c["what"]: c for c in data["comparisons"]}
    assert totals["10 s transfer, reno, IW 10"]["paper"] == pytest.approx(22.30 * 2**20)
    assert totals["10 s transfer, cubic, IW 2560"]["paper"] == pytest.approx(28.32 * 2**20)
    assert all(c["tcplab"] > 0 for c in data["comparisons"])
    assert len(data["checks"]) == 5
    assert all(check["status"] in (HELD, NOT_HELD, TIE) for check in data["checks"])
    # The paper's headline +26 %: simulator and kernel both find +69 % on the set-up it
    # describes (the investigation: a delay emulator that caps the packets it holds).
    assert data["checks"][2]["status"] == NOT_HELD, data["checks"][2]
    assert "kernel +69%" in data["checks"][2]["evidence"]
    # Issue 16: IW 2560 and IW 5120 move the same bytes (both reach the 3 MiB window in the
    # first round trip): a tie, not a held "largest".
    assert data["checks"][1]["status"] == TIE, data["checks"][1]
    # Issue 7, item 4: the PEP with CUBIC IW 2560 on the satellite side beats the unsplit
    # connection end to end, and the report shows both.
    assert data["checks"][4]["status"] == HELD, data["checks"][4]
    html = (quick["seed004"] / "report.html").read_text()
    assert "Table 1: MiB per second" in html
    assert "cubic, IW 2560 (paper)" in html and "cubic, IW 2560 (tcplab)" in html
    # Issue 11, item 3: the kernel's rows (calibration/seed004/kernel/) beside them, within
    # 10 % of tcplab's on every row.
    assert "cubic, IW 2560 (kernel)" in html and "Kernel: delivered per second" in html
    for row in ("reno, IW 10", "cubic, IW 256", "cubic, IW 2560"):
        kernel = totals[f"10 s transfer, {row}, this machine's kernel"]
        assert kernel["paper"] == totals[f"10 s transfer, {row}"]["paper"]
        assert kernel["tcplab"] == pytest.approx(totals[f"10 s transfer, {row}"]["tcplab"], rel=0.1)
    assert "9.00-10.00" in html
    # Issue 16: the investigation of the paper's lower totals is a section of the report.
    assert "<h2>Investigations</h2>" in html and "netem" in html
    assert "End to end through a PEP" in html
    assert "unsplit (reno, IW 10)" in html and "PEP, satellite side cubic, IW 2560" in html
    # Figs. 2-6 each with the paper's values as markers, and the five other plots.
    assert "Fig. 5: cubic, IW 2560, per second" in html
    plots = assert_renders(quick["seed004"] / "report.html", "reproduce-seed004", tmp_path)
    assert len(plots) == 10


def test_seed003_sets_its_numbers_beside_the_paper_and_judges_every_figure(
    quick: dict[str, Path], tmp_path: Path
) -> None:
    data = recorded(quick["seed003"])
    assert [c["paper"] for c in data["comparisons"]] == [0.20, 0.043, 0.071, 0.32, 0.07]
    assert all(c["tcplab"] is not None for c in data["comparisons"])
    statuses = {check["claim"]: check["status"] for check in data["checks"]}
    assert len(statuses) == 13
    assert list(statuses.values()).count(NOT_CHECKABLE) == 0
    assert statuses["Upstream, no pause is best"] == HELD
    # Issue 16: the read buffer's 32 % is what the PDA's per-call cost was fitted to; the
    # Fig. 5 crossover turns on 3,072 B, which --quick leaves out.
    read_buffer = next(claim for claim in statuses if "larger read buffer" in claim)
    assert statuses[read_buffer] == FITTED
    crossover = next(claim for claim in statuses if "1,024 B or less" in claim)
    assert statuses[crossover] == NEEDS_FULL
    assert [c["fitted"] != "" for c in data["comparisons"]] == [False, True, False, True, False]
    # The fitted PDA takes in ~1.3 Mb/s: a 20 ms pause (1.6 Mb/s) is the one that helps.
    assert statuses["Pauses above 10 ms lengthen the receive time in both directions"] == NOT_HELD
    html = (quick["seed003"] / "report.html").read_text()
    for text in ("Fig. 4: receive time against message size", "Low Window", "802.11 retries"):
        assert text in html
    # Figs. 4, 5, 6, 9 and 10-11 drawn.
    assert len(assert_renders(quick["seed003"] / "report.html", "reproduce-seed003", tmp_path)) == 5


def test_report_command_renders_a_reproduction_again(
    quick: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "again.html"
    result = runner.invoke(app, ["report", str(quick["seed004"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Table 1: MiB per second" in out.read_text()


def test_a_conclusion_that_does_not_hold_is_printed_and_exits_0(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def scenario(quick: bool) -> dict:
        return {"name": "tiny", "duration": "2s",
                "links": [{"rate": "1Mbps", "delay": "10ms"}],
                "sweep": {"links.0.delay": ["10ms", "20ms"]}}  # fmt: skip

    pack = Pack(
        name="tiny",
        title="a pack whose claim fails",
        citation="nobody",
        summary="two short runs",
        experiments=(Experiment("delays", "two delays", scenario),),
        published=(),
        checks=(
            Check("goodput is zero", "§0", lambda results: Verdict(NOT_HELD, "it was not")),
            Check("needs something", "§1", needs="a flux capacitor"),
            Check("within the noise", "§2", lambda results: Verdict(TIE, "1.0 ± 0.2 vs 1.1")),
        ),
        differences=("none",),
        exhibits=lambda results: [
            Exhibit("points", "the means", results.means("delays")[["point_id", "runs"]])
        ],
    )
    monkeypatch.setitem(papers.PACKS, "tiny", pack)
    result = runner.invoke(app, ["reproduce", "tiny", "--out", str(tmp_path / "tiny")])
    assert result.exit_code == 0, result.output
    assert "NOT HELD" in result.stdout and "it was not" in result.stdout
    assert "NOT CHECKABLE YET" in result.stdout and "needs a flux capacitor" in result.stdout
    assert "0 held, 1 not held, 1 tie, 1 not checkable yet" in result.stdout
    html = (tmp_path / "tiny" / "report.html").read_text()
    assert '<td class="failed">not held</td>' in html


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["reproduce", "seed999"],
            "no paper pack 'seed999'; known packs: seed000, seed001, seed002, seed003, seed004",
        ),
        (["reproduce"], "name a paper pack"),
        (["reproduce", "seed000", "--jobs", "0"], "--jobs"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(arguments: list[str], message: str) -> None:
    result = runner.invoke(app, arguments)
    assert result.exit_code == 2
    assert message in result.output


def test_above_is_a_tie_within_the_runs_spread_and_every_reports_the_weakest() -> None:
    assert above(10.0, 1.0, 7.0, 1.0) == HELD
    assert above(10.0, 1.0, 9.0, 1.0) == TIE
    assert above(10.0, float("nan"), 10.0, 0.0) == TIE  # equal, and no spread: a tie
    assert above(6.0, 1.0, 9.0, 1.0) == NOT_HELD
    assert every([("a", True, "x"), ("b", HELD, "y")]).status == HELD
    tie = every([("a", True, "x"), ("b", TIE, "y")])
    assert tie.status == TIE and tie.evidence == "a: x; b: y (tie)"
    assert every([("a", False, "x"), ("b", TIE, "y")]).status == NOT_HELD


def test_a_fitted_check_is_not_evidence_and_quick_defers_a_full_run_check() -> None:
    def holds(results: Results) -> Verdict:
        return Verdict(HELD, "3 > 2")

    fitted = Check("it is 3", "§1", holds, fitted="the knob was set so that it is 3")
    deferred = Check("it is 3", "§1", holds, full_run="--quick skips the point")
    quick, full = Results({}, quick=True), Results({}, quick=False)
    verdict = fitted.evaluate(full)
    assert verdict.status == FITTED and "the test alone: held; 3 > 2" in verdict.evidence
    assert deferred.evaluate(quick) == Verdict(NEEDS_FULL, "--quick skips the point")
    assert deferred.evaluate(full) == Verdict(HELD, "3 > 2")


def test_rises_tolerates_noise_but_not_a_real_fall() -> None:
    frame = pd.DataFrame({"x": [1, 2, 3], "y": [10.0, 9.0, 20.0], "y_ci95": [2.0, 2.0, 2.0]})
    assert rises(frame, "x", "y") == (True, [])
    frame["y"] = [10.0, 4.0, 20.0]
    assert rises(frame, "x", "y") == (False, [(1, 2)])
    frame["y"] = [10.0, 10.0, 9.0]
    assert rises(frame, "x", "y") == (False, [])


def test_table3_shows_the_curve_tcplab_applies() -> None:
    table = seed000.table3()
    assert len(table) == 10
    row = table[table["Eb/No (dB)"] == "6.0"].iloc[0]
    assert row["paper BER"] == row["tcplab BER (koreasat-2000)"] == "1.2e-05"
    assert row["paper CLR"] == "2.7e-04"


@pytest.mark.parametrize("name", ["seed000", "seed003", "seed004"])
def test_quick_tables_are_pinned(
    name: str, quick: dict[str, Path], json_snapshot: SnapshotAssertion
) -> None:
    assert reproduction_tables(quick[name]) == json_snapshot
