"""Without an extra (tcplab.extras), each feature that needs it says which one to install.

The extras' packages are hidden from a fresh interpreter (a None in sys.modules makes their
import fail as if they were not installed), which then runs the commands in-process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tcplab.extras import EXTRA_OF_MODULE, MissingExtra, missing_extra

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "examples" / "geo-netperf.toml")

# Runs each command of argv[2:] (JSON lists) with the modules of argv[1] hidden; prints
# each one's exit code and stderr, then what the Python API raises for a frame and a store.
_DRIVER = """
import contextlib, io, json, sys
for module in json.loads(sys.argv[1]):
    sys.modules[module] = None
from tcplab.cli import main
out = []
for command in sys.argv[2:]:
    sys.argv = ["tcplab", *json.loads(command)]
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        try:
            main()
        except SystemExit as exit:
            code = exit.code
    out.append({"code": code, "stderr": stderr.getvalue()})
import tcplab
api = {}
result = tcplab.run(sys.argv and %r)
for name, call in [("frame", result.trace_frame), ("store", lambda: tcplab.open_results("."))]:
    try:
        call()
        api[name] = None
    except tcplab.TcplabError as error:
        api[name] = str(error)
print(json.dumps({"commands": out, "api": api}))
"""


def _run(hidden: list[str], commands: list[list[str]], cwd: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER % EXAMPLE, json.dumps(hidden)]
        + [json.dumps(c) for c in commands],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def _names(message: str, extra: str) -> bool:
    return f"'{extra}' extra" in message and f"pip install 'tcplab[{extra}]'" in message


def test_the_core_install_runs_and_names_the_extra_of_everything_else(tmp_path: Path) -> None:
    out = _run(
        list(EXTRA_OF_MODULE),
        [
            ["--help"],
            ["run", EXAMPLE, "--no-save"],
            ["compare", EXAMPLE, "--backends", "sim,model"],
            ["run", EXAMPLE],
            ["sweep", str(ROOT / "examples" / "geo-sweep.toml")],
            ["results", "list", str(tmp_path)],
            ["report", str(tmp_path)],
            ["reproduce", "--list"],
        ],
        tmp_path,
    )
    help_, run, compare, save, sweep, results, report, reproduce = out["commands"]
    assert [help_["code"], run["code"], compare["code"]] == [0, 0, 0], out
    for failed, extra in [
        (save, "store"),
        (sweep, "store"),
        (results, "store"),
        (report, "report"),
        (reproduce, "report"),
    ]:
        assert failed["code"] == 2 and _names(failed["stderr"], extra), failed
    # Refused before the run: nothing was saved.
    assert not (tmp_path / "results").exists()
    assert _names(out["api"]["frame"], "store") and _names(out["api"]["store"], "store")


def test_without_the_report_extra_a_run_is_saved_and_the_report_named(tmp_path: Path) -> None:
    out = _run(["matplotlib"], [["run", EXAMPLE, "--out", "one"], ["report", "one"]], tmp_path)
    run, report = out["commands"]
    assert run["code"] == 0 and _names(run["stderr"], "report"), run
    assert (tmp_path / "one" / "result.json").is_file()
    assert (tmp_path / "one" / "series.parquet").is_file()
    assert not (tmp_path / "one" / "report.html").exists()
    assert report["code"] == 2 and _names(report["stderr"], "report"), report
    assert out["api"]["frame"] is None


def test_a_module_of_no_extra_is_no_missing_extra() -> None:
    assert missing_extra(ModuleNotFoundError("x", name="yaml")) is None
    missing = missing_extra(ModuleNotFoundError("x", name="pyarrow.parquet"), "saving")
    assert isinstance(missing, MissingExtra) and missing.extra == "store"
    assert str(missing).startswith("saving needs pyarrow")
