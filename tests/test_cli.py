"""The tcplab command: output shapes, saved files, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

import tcplab
from tcplab.cli import app

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GOOD = """\
name = "cli-test"
duration = "3s"

[[hosts]]
name = "client"
[hosts.tcp]
sndbuf = "32KiB"
rcvbuf = "32KiB"

[[hosts]]
name = "server"

[[links]]
rate = "2.048Mbps"
delay = "275ms"
"""

runner = CliRunner()


def scenario(tmp_path: Path, text: str, name: str = "scenario.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_json_output_is_exactly_one_object_of_the_contract(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(scenario(tmp_path, GOOD)), "--json", "--no-save"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {
        *("summary", "flows", "hosts", "links", "media", "series", "trace", "messages"),
        *("queue", "meta"),
    }
    assert {"goodput_bps", "elapsed_s", "bytes_delivered", "retransmits", "timeouts",
            "limited_by"} <= set(data["summary"])  # fmt: skip
    assert data["meta"]["name"] == "cli-test"
    assert data["meta"]["backend"] == "sim"
    assert len(data["series"]["t_s"]) == 3
    assert data["flows"][0]["src"] == "client"
    assert not list(tmp_path.glob("results"))


def test_table_output_shows_the_model_bound_and_saves_result_and_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(scenario(tmp_path, GOOD)), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    for text in ("goodput", "timeouts", "limited by rwnd", "window bound", "model",
                 "goodput per interval"):  # fmt: skip
        assert text in result.stdout
    saved = json.loads((out / "result.json").read_text())
    assert saved["meta"]["name"] == "cli-test"
    assert "series" not in saved and (out / "series.parquet").is_file()
    report = out / "report.html"
    assert report.read_text().startswith("<!DOCTYPE html>")
    # tcplab report draws the same report again from the saved files.
    written = report.read_text()
    report.unlink()
    again = runner.invoke(app, ["report", str(out)])
    assert again.exit_code == 0, again.stderr
    assert report.read_text() == written


def test_default_output_directory_is_results_slash_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = scenario(tmp_path, GOOD)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["run", str(path), "--backend", "model", "--seed", "3"])
    assert result.exit_code == 0, result.stderr
    saved = tmp_path / "results" / "cli-test" / "result.json"
    assert json.loads(saved.read_text())["meta"]["seed"] == 3
    assert (saved.parent / "report.html").exists()


def test_a_rerun_never_replaces_the_earlier_run_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = scenario(tmp_path, GOOD)
    monkeypatch.chdir(tmp_path)
    seeds = {}
    for seed in (1, 2, 3):
        result = runner.invoke(app, ["run", str(path), "--backend", "model", "--seed", str(seed)])
        assert result.exit_code == 0, result.stderr
        seeds[seed] = result.stdout
    folders = ["cli-test", "cli-test-2", "cli-test-3"]
    for seed, folder in zip((1, 2, 3), folders, strict=True):
        saved = json.loads((tmp_path / "results" / folder / "result.json").read_text())
        assert saved["meta"]["seed"] == seed
        assert f"saved results/{folder}/result.json" in seeds[seed]
    # --overwrite replaces the first folder's run instead.
    args = ["run", str(path), "--backend", "model", "--seed", "9", "--overwrite"]
    assert runner.invoke(app, args).exit_code == 0
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == folders
    saved = json.loads((tmp_path / "results" / "cli-test" / "result.json").read_text())
    assert saved["meta"]["seed"] == 9


def test_an_out_directory_holding_a_run_is_refused_without_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["run", str(scenario(tmp_path, GOOD)), "--backend", "model", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    before = (out / "result.json").read_text()
    refused = runner.invoke(app, [*args, "--seed", "5"])
    assert refused.exit_code == 2
    assert refused.stderr == (
        f"error: {out} holds an earlier run (result.json); give --overwrite to replace it,"
        " or another --out\n"
    )
    assert (out / "result.json").read_text() == before
    assert runner.invoke(app, [*args, "--seed", "5", "--overwrite"]).exit_code == 0
    assert json.loads((out / "result.json").read_text())["meta"]["seed"] == 5


def test_version_prints_the_installed_version() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "tcplab", "--version"], capture_output=True, text=True, check=True
    )
    assert completed.stdout == f"tcplab {tcplab.__version__}\n"


def test_backend_and_seed_options_override_the_file(tmp_path: Path) -> None:
    args = ["run", str(scenario(tmp_path, GOOD)), "--json", "--no-save"]
    result = runner.invoke(app, [*args, "--backend", "model", "--seed", "7"])
    assert result.exit_code == 0, result.stderr
    meta = json.loads(result.stdout)["meta"]
    assert (meta["backend"], meta["seed"]) == ("model", 7)


BAD = {
    "unknown field": (GOOD + "foo = 1\n", "links.0.foo: unknown field"),
    "rate with /s": (GOOD.replace('"2.048Mbps"', '"2 Mbps/s"'), "links.0.rate: "),
    "negative delay": (GOOD.replace('"275ms"', '"-275ms"'), "links.0.delay: "),
    "no links": (GOOD.split("[[links]]")[0], "links: at least one link is required"),
    "unknown cc": (GOOD.replace('sndbuf = "32KiB"', 'cc = "foo"'), "hosts.0.tcp.cc: "),
    "host named twice": (GOOD.replace('name = "server"', 'name = "client"'), "hosts: "),
    "sack not a boolean": (GOOD.replace('sndbuf = "32KiB"', 'sack = "yes"'), "hosts.0.tcp.sack: "),
    "ebno out of range": (GOOD + 'ebno_db = 12.0\nber_curve = "koreasat-2000"\n',
                          "links.0.ebno_db: "),
    "toml syntax": (GOOD + "rate = 2.048Mbps\n", "invalid TOML"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_scenarios_exit_2_with_one_line_naming_the_field(tmp_path: Path, case: str) -> None:
    text, expected = BAD[case]
    result = runner.invoke(app, ["run", str(scenario(tmp_path, text)), "--no-save"])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert expected in lines[0]


def test_toml_errors_give_the_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(scenario(tmp_path, 'name = "x"\nrate = 2Mbps\n'))])
    assert result.exit_code == 2
    assert "line 2" in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "does-not-exist.toml"], "does-not-exist.toml: no such file"),
        (["run", "{good}", "--backend", "ns3"], "backend: "),
        (["run", "{good}", "--seed", "-1"], "seed: "),
        (["run", "{dir}"], "error: "),
    ],
)
def test_user_errors_exit_2(tmp_path: Path, args: list[str], expected: str) -> None:
    good = scenario(tmp_path, GOOD)
    args = [a.format(good=good, dir=tmp_path) for a in args]
    result = runner.invoke(app, [*args, "--no-save"])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and expected in result.stderr


def test_unwritable_output_is_a_user_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = runner.invoke(app, ["run", str(scenario(tmp_path, GOOD)), "--out", str(blocker)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: cannot save into")


@pytest.mark.parametrize(
    "args", [["run", "x.toml", "--bogus"], ["run"], [], ["frobnicate"]], ids=str
)
def test_usage_errors_from_the_console_script_are_one_line(args: list[str]) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "tcplab", *args], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), completed.stderr


def test_schema_prints_a_valid_json_schema() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "links" in schema["properties"]


def test_same_file_and_seed_print_identical_json_on_a_lossy_path(tmp_path: Path) -> None:
    lossy = scenario(tmp_path, GOOD.replace('delay = "275ms"', 'delay = "275ms"\nber = 3e-6'))
    runs = [
        runner.invoke(app, ["run", str(lossy), "--json", "--no-save", *extra]).stdout
        for extra in ([], [], ["--seed", "2"])
    ]
    assert runs[0] == runs[1]
    assert json.loads(runs[0])["summary"]["retransmits"] > 0
    assert runs[0] != runs[2]


def _main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """`tcplab ARGS` through the console-script entry point; its exit code."""
    from tcplab.cli import main

    monkeypatch.setattr(sys, "argv", ["tcplab", *args])
    with pytest.raises(SystemExit) as info:
        main()
    return int(info.value.code)


def test_with_json_errors_are_json_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = scenario(tmp_path, 'duration = "soon"\n[[links]]\nrate = "1Mbps"\ndelay = "1ms"\n')
    assert _main(monkeypatch, "run", str(bad), "--json", "--no-save") == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "spec"
    assert error["exit_code"] == 2
    assert error["problems"][0].startswith("duration: ")
    assert _main(monkeypatch, "run", str(bad), "--json", "--bogus") == 2
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "usage"
    refused = scenario(
        tmp_path,
        'backend = "model"\n[[hosts]]\nname = "a"\ncpu = "pentium-133"\n[[hosts]]\nname = "b"\n'
        '[[links]]\nrate = "1Mbps"\ndelay = "1ms"\n',
        "refused.toml",
    )
    assert _main(monkeypatch, "run", str(refused), "--json", "--no-save") == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert (error["kind"], error["field"]) == ("backend", "hosts.0.cpu")


def test_a_fault_of_tcplab_exits_1_asking_for_a_report_with_the_scenario_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue #15: a backend bug raising ValueError was reported as the scenario's fault.
    import tempfile

    from tcplab.backends import model

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the report folders go here

    def broken(plan: dict) -> dict:
        raise ValueError("math domain error")

    monkeypatch.setattr(model, "run", broken)
    example = str(EXAMPLES / "geo-netperf.toml")
    assert _main(monkeypatch, "run", example, "--backend", "model", "--no-save") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: internal error in tcplab, not in what you asked (please")
    assert err.rstrip().endswith("ValueError: math domain error")
    assert _main(monkeypatch, "run", example, "--backend", "model", "--json", "--no-save") == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["kind"] == "internal" and error["exit_code"] == 1
    saved = Path(error["report"])
    assert "math domain error" in (saved / "traceback.txt").read_text()
    assert (saved / "geo-netperf.toml").read_text() == Path(example).read_text()
    assert "--backend model" in (saved / "command.txt").read_text()


def test_a_long_series_prints_its_first_intervals_with_a_note(tmp_path: Path) -> None:
    # Issue #15: interval = "1us" gave 2,000,000 rows the terminal was still printing a
    # minute later.
    text = 'duration = "2s"\ninterval = "1ms"\n[[links]]\nrate = "1Mbps"\ndelay = "10ms"\n'
    result = runner.invoke(app, ["run", str(scenario(tmp_path, text)), "--no-save"])
    assert result.exit_code == 0, result.stderr
    assert "the first 125 of 2,000 intervals; all of them in series.parquet or --json" in (
        result.stdout
    )
    assert "0.126" not in result.stdout
