"""The examples in README.md and docs/ run as documented.

Besides the rule below: every ```toml block holds valid scenario fields (a fragment may leave
out what FRAGMENT_PROBLEMS names), every examples/*.toml is named in the docs and, unless its
backend is emu, runs with `tcplab run`, cli.md names every command and `--option`, and
every test a doc cites as `file::test` exists.

Rule for what runs: every `tcplab ...` command in a ```console/```sh/```bash block (the
lines after a prompt, `$ ` or `host$ `, or, in a block without prompts, the lines starting
with `tcplab`, `.venv/bin/tcplab` or `sudo tcplab`) runs, except the ones listed in NOT_RUN
with the reason. Every ```python block runs too, each as a script of its own, after the
file's commands. Each documentation file runs in its own copy of examples/, in document
order (a `tcplab report` follows the sweep it reads). Paths under /tmp/ are moved into that
copy. A command ending in `&` (a measure server) starts in the background on a free port,
which replaces its documented `--port` in the commands after it, and must exit 0 once the
file's commands are done. A `| jq ...` is dropped and stdout must be JSON instead; a
`> FILE` writes stdout to FILE. A command exits 0, or the code its block shows after it
(`$ echo $?`).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tcplab.cli import app
from tcplab.errors import SpecError
from tcplab.spec import load_spec, validate_spec

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELL_LANGUAGES = {"console", "sh", "bash", "shell"}
_BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
# `$ ` or a machine's name before it (`laptop$ `, in sweeps.md's Dask cluster).
_PROMPT = re.compile(r"^[\w-]*\$\s+")

_EMU = "emu: needs root and network namespaces; covered by tests/test_emu_*.py"
_KERNEL = (
    "calibrate's kernel side: root and one 10 s emu run per point (minutes); covered by"
    " tests/test_calibration.py::test_kernel_remeasured_agrees_with_the_committed_results"
)
_TWO_MACHINES = "measure between two machines (192.0.2.7 is a documentation address)"
# The command exactly as documented (comment and prompt stripped) -> why this test skips it.
NOT_RUN: dict[str, str] = {
    "tcplab reproduce seed000": "the full grid: 40 points x 3 runs of 100 s (minutes)",
    "tcplab reproduce seed001": "the full grid of ATM runs (minutes); its --quick form is "
    "covered by tests/test_reproduce_seed001.py",
    "tcplab sweep examples/geo-sweep.toml --executor dask --scheduler tcp://10.0.0.5:8786": (
        "needs a Dask scheduler at 10.0.0.5; the executor is covered by tests/test_sweeps.py"
    ),
    "tcplab sweep bad.toml": "bad.toml is an illustration whose content the doc does not give; "
    "scenario errors are covered by tests/test_cli.py",
    "tcplab run bad.toml": "bad.toml is an illustration whose content the doc does not give; "
    "scenario errors are covered by tests/test_cli.py",
    "tcplab run bad.toml --json --no-save": "bad.toml is an illustration; JSON errors are "
    "covered by tests/test_cli.py::test_with_json_errors_are_json_too",
    "sudo tcplab compare examples/long-fat-pipe.toml --backends sim,emu": _EMU,
    "sudo tcplab compare examples/satellite-pep.toml": _EMU,
    "sudo tcplab compare examples/geo-netperf.toml --backends sim,emu --json > both.json": _EMU,
    "sudo tcplab emu cleanup": _EMU,
    "sudo tcplab calibrate calibration/standard.toml --kernel-only": _KERNEL,
    "tcplab calibrate calibration/standard.toml --sim-only --html calibration-standard.html": (
        "the whole standard grid on the simulator: about 3 minutes on 2 cores; the"
        " regression grid's --sim-only runs here"
    ),
    "sudo tcplab calibrate calibration/regression.toml --kernel-only --force": _KERNEL,
    "sudo tcplab calibrate calibration/regression.toml --points 100Mbps-* --force": _KERNEL,
    "sudo tcplab calibrate calibration/standard.toml --kernel-only --points *-300ms-*"
    " --repetitions 3 --force": _KERNEL,
    "sudo tcplab calibrate calibration/standard.toml --kernel-only --points *-nosack"
    " --repetitions 3": _KERNEL,
    "sudo tcplab calibrate calibration/standard.toml --kernel-only --points *-loss*"
    " --repetitions 3 --force": _KERNEL,
    "tcplab run examples/geo-emu.toml": _EMU,
    "tcplab compare examples/geo-emu.toml --backends sim,emu": _EMU,
    "tcplab compare examples/long-fat-pipe.toml --backends sim,emu": _EMU,
    "tcplab compare examples/rr-emu.toml --backends sim,emu": _EMU,
    "tcplab compare examples/delay-spike.toml --backends sim,emu": _EMU,
    "tcplab measure server --bind 0.0.0.0 --rcvbuf 64KiB --window 64KiB --count 3": _TWO_MACHINES,
    "tcplab measure client 192.0.2.7 --duration 30s --cc cubic --sndbuf 64KiB": _TWO_MACHINES,
    "tcplab measure client 192.0.2.7 --bytes 10MB --message-size 2048KiB --json > file.json": (
        _TWO_MACHINES
    ),
    "tcplab measure client 192.0.2.7 --rr --request-size 100 --response-size 1000 "
    "--duration 5s --nodelay": _TWO_MACHINES,
    "tcplab measure client 192.0.2.7 --duration 60s --stream audio,udp,20ms,160 "
    "--stream video,tcp,66ms,2134 --nodelay": _TWO_MACHINES,
}


def _command_lines(block: str) -> list[tuple[list[str], int]]:
    """The commands of a shell block (continuations joined) with the exit code it shows."""
    lines = block.splitlines()
    prompted = any(_PROMPT.match(line) for line in lines)
    commands: list[tuple[list[str], int]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        prompt = _PROMPT.match(line)
        if prompted and not prompt:
            continue
        text = line[prompt.end() :].strip() if prompt else line.strip()
        if text == "echo $?" and commands:
            commands[-1] = (commands[-1][0], int(lines[i].strip()))
            continue
        # A command goes on after a trailing backslash or inside an open quote.
        while i < len(lines) and (text.endswith("\\") or not _complete(text)):
            text = text.removesuffix("\\").rstrip() + " " + lines[i].strip()
            i += 1
        words = shlex.split(text, comments=True)
        if words and words[0] == ".venv/bin/tcplab":
            words[0] = "tcplab"
        if words[:1] == ["tcplab"] or words[:2] == ["sudo", "tcplab"]:
            commands.append((words, 0))
    return commands


def _complete(text: str) -> bool:
    try:
        shlex.split(text, comments=True)
    except ValueError:
        return False
    return True


def _documented(doc: Path) -> tuple[list[tuple[list[str], int]], list[str]]:
    commands: list[tuple[list[str], int]] = []
    python: list[str] = []
    for match in _BLOCK.finditer(doc.read_text()):
        language, body = match.group(1), match.group(2)
        if language in SHELL_LANGUAGES:
            commands += _command_lines(body)
        elif language == "python":
            python.append(body)
    return commands, python


DOCUMENTED = {doc: _documented(doc) for doc in DOC_FILES}


def _run_command(
    documented: list[str], expected: int, work: Path, ports: dict[str, str]
) -> subprocess.Popen[str] | None:
    """Run one command; one ending in `&` starts in the background and is returned."""
    command = " ".join(documented)
    words = [w.replace("/tmp/", f"{work}/tmp/") for w in documented]
    if "--port" in words:
        at = words.index("--port") + 1
        words[at] = "0" if words[-1] == "&" else ports.get(words[at], words[at])
    if words[-1] == "&":
        return _start_server(words[1:-1], documented[documented.index("--port") + 1], ports)
    to_file = to_jq = None
    if "|" in words:
        words, to_jq = words[: words.index("|")], True
    if ">" in words:
        at = words.index(">")
        words, to_file = words[:at], work / words[at + 1]
    assert words[0] == "tcplab", f"{command}: only NOT_RUN may hold a sudo (emu) command"
    result = CliRunner().invoke(app, words[1:], catch_exceptions=False)
    output = result.stdout
    assert result.exit_code == expected, f"{command}: exit {result.exit_code}\n{result.output}"
    if to_jq:
        json.loads(output)
    if to_file is not None:
        to_file.write_text(output)
    return None


def _start_server(args: list[str], port: str, ports: dict[str, str]) -> subprocess.Popen[str]:
    """`tcplab measure server ... &` on a free port (another test may hold the documented
    one), which the commands after it then use in its place."""
    server = subprocess.Popen(
        [sys.executable, "-c", "from tcplab.cli import main; main()", *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    ports[port] = str(json.loads(server.stdout.readline())["port"])
    return server


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "calibration", tmp_path / "calibration")
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "doc",
    [d for d in DOC_FILES if DOCUMENTED[d][0] or DOCUMENTED[d][1]],
    ids=lambda d: str(d.relative_to(ROOT)),
)
def test_documented_examples_run(doc: Path, work: Path) -> None:
    commands, python = DOCUMENTED[doc]
    ports: dict[str, str] = {}
    background: list[subprocess.Popen[str]] = []
    try:
        for command, expected in commands:
            if " ".join(command) not in NOT_RUN:
                server = _run_command(command, expected, work, ports)
                background += [server] if server else []
        for server in background:
            server.communicate(timeout=30)
            assert server.returncode == 0, f"{doc.name}: {server.args} exited {server.returncode}"
    finally:
        for server in background:
            if server.poll() is None:
                server.kill()
                server.communicate()
    for k, block in enumerate(python):
        # A file, not `python -c`: the local executor's worker processes import it again.
        script = work / f"doc_example_{k}.py"
        script.write_text(block)
        done = subprocess.run(
            [sys.executable, str(script)], cwd=work, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{doc.name}'s python block {k}:\n{done.stderr[-3000:]}"


# What a ```toml block may lack because it shows part of a scenario: links, the second host,
# or the [[flows]] its routers would need. Anything else (an unknown or a renamed field, a
# bad value) fails.
FRAGMENT_PROBLEMS = (
    "links: at least one link is required",
    "hosts: exactly 2 hosts without [[flows]]",
    "routers: only with [[flows]]",
)


def test_toml_blocks_are_valid_scenario_fields() -> None:
    wrong = []
    for doc in DOC_FILES:
        for match in _BLOCK.finditer(doc.read_text()):
            if match.group(1) != "toml":
                continue
            try:
                validate_spec(tomllib.loads(match.group(2)))
            except SpecError as error:
                wrong += [
                    f"{doc.name}: {problem}"
                    for problem in error.problems
                    if not problem.startswith(FRAGMENT_PROBLEMS)
                ]
    assert wrong == []


def test_not_run_list_names_documented_commands_only() -> None:
    documented = {" ".join(c) for commands, _ in DOCUMENTED.values() for c, _ in commands}
    assert set(NOT_RUN) - documented == set()


def test_every_example_file_is_documented() -> None:
    docs = "".join(doc.read_text() for doc in DOC_FILES)
    missing = [p.name for p in sorted((ROOT / "examples").glob("*.toml")) if p.name not in docs]
    assert missing == []


@pytest.mark.parametrize(
    "example",
    [p for p in sorted((ROOT / "examples").glob("*.toml")) if load_spec(p).backend != "emu"],
    ids=lambda p: p.name,
)
def test_every_sim_or_model_example_runs(example: Path, work: Path) -> None:
    """`tcplab run FILE` on each example whose backend this machine runs (emu: test_emu_*)."""
    result = CliRunner().invoke(app, ["run", f"examples/{example.name}"])
    assert result.exit_code == 0, result.output


def test_every_test_a_doc_cites_exists() -> None:
    """A doc's `file.py::test_name` or `file.rs::test_name` names a test that is there."""
    cited = {
        (Path(path).name, name)
        for doc in DOC_FILES
        for path, name in re.findall(r"([\w/.-]+\.(?:py|rs))::(\w+)", doc.read_text())
    }
    sources = [
        p for d in ("tests", "crates", "python", "bench") for p in (ROOT / d).rglob("*.[pr][ys]")
    ]
    defined = {
        (p.name, name)
        for p in sources
        for name in re.findall(r"\b(?:def|fn) (\w+)", p.read_text(errors="replace"))
    }
    assert sorted(cited - defined) == []


def _command_paths(group: Any, prefix: str) -> list[str]:
    paths = []
    for name, command in group.commands.items():
        paths.append(f"{prefix} {name}")
        if hasattr(command, "commands"):
            paths += _command_paths(command, f"{prefix} {name}")
    return paths


def test_every_cli_command_and_option_is_in_cli_md() -> None:
    """cli.md has a section for each command and names each of its options."""
    import typer.main

    cli_md = (ROOT / "docs" / "cli.md").read_text()
    root: Any = typer.main.get_command(app)
    missing = []
    for path in _command_paths(root, "tcplab"):
        if f"`{path}" not in cli_md:
            missing.append(path)
        command = root
        for name in path.split()[1:]:
            command = command.commands[name]
        for param in command.params:
            missing += [f"{path} {o}" for o in param.opts if o.startswith("--") and o not in cli_md]
    assert missing == []
