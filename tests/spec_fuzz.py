"""Scenario fuzzing: specs generated from the JSON Schema and mutations of the examples, each
run through the API (`tcplab.run`) and the CLI (`tcplab run FILE --no-save`) in a forked
child with a time limit and a memory limit (resident memory, with a larger cap on
address space as a safety net). Every outcome must be a result or a clean error
(a TcplabError; exit code 0 or 2 with one `error:` line): a traceback, a Rust panic, a run
past TIME_LIMIT_S or past MEMORY_LIMIT_BYTES is a failure.

tests/test_spec_fuzz.py runs a few dozen in CI; the full run of issue #15 is

    .venv/bin/python tests/spec_fuzz.py --count 10000 --out /tmp/fuzz.json

which prints the outcome counts and every failure (its spec, the error) as JSON.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import re
import resource
import signal
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import tomli_w

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]
from hypothesis import strategies as st
from hypothesis.errors import NonInteractiveExampleWarning

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
TIME_LIMIT_S = 20.0
MEMORY_LIMIT_BYTES = 1 << 30
ADDRESS_SPACE_MARGIN = 4 << 30
# Durations of the examples are cut to this before mutating, so that a run that succeeds
# takes about a second; a mutation may still set any duration.
EXAMPLE_DURATION = "2s"

# Values a mutation puts in place of a field: wrong types, extremes, units at their limits.
NASTY: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2**63,
    2**64,
    -(2**63),
    10**30,
    0.5,
    -0.5,
    1e300,
    -1e300,
    math.inf,
    "",
    "0",
    "1ns",
    "0ns",
    "61s",
    "1000000000s",
    "1e999",
    "nan",
    "1us",
    "0bps",
    "1bps",
    "100Gbps",
    "1B",
    "0B",
    "1TB",
    "9999999999GiB",
    "-1s",
    "10 ms",
    "ms",
    "x" * 300,
    "é",
    [1, 2],
    [],
    {},
    {"a": 1},
    [[]],
    ["a"],
    [{"x": 1}],
]


# Valid spellings at the edges, by the kind of value they replace (a field's own kind).
EDGES: dict[str, list[Any]] = {
    "duration": ["0s", "1ns", "1us", "1ms", "61s", "3600s", "1000000s", "1000000000s"],
    "size": ["0B", "1B", "40B", "1KiB", "4GiB", "1TB"],
    "rate": ["1bps", "1kbps", "9600bps", "10Gbps", "100Gbps"],
    "int": [0, 1, 2, 3, 100, 65535, 2**31, 2**63 - 1],
    "float": [0.0, 1e-300, 1e-9, 0.5, 0.999999, 1.0, 1e9],
}
_KINDS = (
    ("duration", r"^[0-9.]+\s*(ns|us|ms|s|min)$"),
    ("rate", r"^[0-9.]+\s*([kMG]?bps|[kMG]?bit/s)$"),
    ("size", r"^[0-9.]+\s*([kKMGT]i?B|B)$"),
)


def _edge(value: Any, rng: random.Random) -> Any:
    """A valid-looking extreme of the same kind as `value`, or a nasty value."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice(EDGES["int"])
    if isinstance(value, float):
        return rng.choice(EDGES["float"])
    if isinstance(value, str):
        for kind, pattern in _KINDS:
            if re.match(pattern, value):
                return rng.choice(EDGES[kind])
    return copy.deepcopy(rng.choice(NASTY))


@dataclass
class Outcome:
    """How one spec ended on one path (api or cli)."""

    path: str
    # ok, error (clean); failures: traceback, panic, internal (the CLI's exit code 1),
    # crash, timeout, memory
    kind: str
    detail: str
    seconds: float
    max_rss_bytes: int

    @property
    def failed(self) -> bool:
        return self.kind not in ("ok", "error")


# ---- generation ---------------------------------------------------------------------------


def schema_strategy(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of a JSON Schema (the subset pydantic writes: $ref, anyOf, enum, const, typed
    objects, arrays, strings with patterns, bounded numbers)."""
    defs = schema.get("$defs", {})
    cache: dict[str, st.SearchStrategy[Any]] = {}

    def of(node: dict[str, Any]) -> st.SearchStrategy[Any]:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name not in cache:
                cache[name] = st.deferred(lambda: of(defs[name]))
            return cache[name]
        if "const" in node:
            return st.just(node["const"])
        if "enum" in node:
            return st.sampled_from(node["enum"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return st.one_of([of(option) for option in node[key]])
        kind = node.get("type")
        if kind == "object" or "properties" in node:
            properties = node.get("properties", {})
            required = set(node.get("required", []))
            fixed = {k: of(v) for k, v in properties.items() if k in required}
            optional = {k: of(v) for k, v in properties.items() if k not in required}
            if not properties and isinstance(node.get("additionalProperties"), dict):
                return st.dictionaries(
                    st.text(max_size=30), of(node["additionalProperties"]), max_size=3
                )
            return st.fixed_dictionaries(fixed, optional=optional)
        if kind == "array":
            items = of(node.get("items", {}))
            return st.lists(
                items, min_size=node.get("minItems", 0), max_size=min(node.get("maxItems", 4), 4)
            )
        if kind == "string":
            strings: list[st.SearchStrategy[Any]] = [st.text(max_size=20)]
            if "pattern" in node:
                strings.append(st.from_regex(node["pattern"], fullmatch=True))
            if node.get("examples"):
                strings.append(st.sampled_from(node["examples"]))
            return st.one_of(strings)
        if kind == "integer":
            return st.integers(node.get("minimum"), node.get("maximum"))
        if kind == "number":
            return st.floats(node.get("minimum"), node.get("maximum"), allow_nan=False)
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        return st.sampled_from(NASTY)

    return of(schema)


def _examples() -> list[dict[str, Any]]:
    specs = []
    for path in EXAMPLES:
        spec = tomllib.loads(path.read_text())
        spec.setdefault("name", path.stem)
        if "duration" in spec:
            spec["duration"] = EXAMPLE_DURATION
        spec.pop("sweep", None)  # a sweep writes a results store; tcplab.run refuses it
        specs.append(spec)
    return specs


EXAMPLE_SPECS = _examples()


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def mutated_example(rng: random.Random) -> dict[str, Any]:
    """An example with one to three fields replaced, removed or copied from elsewhere."""
    spec = copy.deepcopy(rng.choice(EXAMPLE_SPECS))
    # Half of them change one value to an edge of its kind, so that many still run and
    # the engine, not only validation, meets the extremes.
    mild = rng.random() < 0.5
    for _ in range(1 if mild else rng.randint(1, 3)):
        paths = _paths(spec)
        if not paths:
            break
        path = rng.choice(paths)
        parent = spec
        for part in path[:-1]:
            parent = parent[part]
        action = "edge" if mild else rng.choice(["edge", "nasty", "remove", "copy", "add"])
        if action == "edge" and not isinstance(parent[path[-1]], (dict, list)):
            parent[path[-1]] = _edge(parent[path[-1]], rng)
        elif action == "remove":
            del parent[path[-1]]
        elif action == "copy":
            value: Any = spec
            for part in rng.choice(paths):
                value = value[part] if isinstance(value, (dict, list)) else value
            parent[path[-1]] = copy.deepcopy(value)
        elif action == "add" and isinstance(parent, dict):
            key = rng.choice(["profile", "app", "repetitions", "interval"])
            parent[key] = copy.deepcopy(rng.choice(NASTY))
        else:
            # A copy: a later mutation may reach inside the value.
            parent[path[-1]] = copy.deepcopy(rng.choice(NASTY))
    return spec


def generated_specs(count: int, seed: int) -> Iterator[dict[str, Any]]:
    """`count` specs, alternately drawn from the JSON Schema and mutated from the examples."""
    from tcplab.spec import json_schema

    rng = random.Random(seed)
    schema = schema_strategy(json_schema()).filter(lambda s: isinstance(s, dict))
    for k in range(count):
        if k % 2:
            yield mutated_example(rng)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonInteractiveExampleWarning)
                yield schema.example()


# ---- running ------------------------------------------------------------------------------


def _in_child(work: Callable[[], tuple[str, str]], path: str) -> Outcome:
    """Run `work` in a forked child under the limits; its (kind, detail) or how it died."""
    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        code = 0
        try:
            # Address space is a safety net only (Arrow's allocator reserves arenas it never
            # touches); the limit that counts is resident memory, from wait4 below.
            vm = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            resource.setrlimit(resource.RLIMIT_AS, (vm + ADDRESS_SPACE_MARGIN,) * 2)
            kind, detail = work()
        except MemoryError:
            kind, detail = "memory", "MemoryError"
        except BaseException as error:  # noqa: BLE001 - the outcome is the point
            kind = "panic" if type(error).__name__ == "PanicException" else "traceback"
            detail = f"{type(error).__name__}: {error}"[:2000]
        try:
            os.write(write_end, json.dumps([kind, detail]).encode())
        except BaseException:  # noqa: BLE001
            code = 3
        os._exit(code)
    os.close(write_end)
    deadline = started + TIME_LIMIT_S
    data = b""
    status = rusage = None
    while True:
        waited, status, rusage = os.wait4(pid, os.WNOHANG)
        if waited:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status, rusage = os.wait4(pid, 0)
            os.close(read_end)
            return Outcome(path, "timeout", f"past {TIME_LIMIT_S:g} s", TIME_LIMIT_S, 0)
        time.sleep(0.005)
    while chunk := os.read(read_end, 65536):
        data += chunk
    os.close(read_end)
    seconds = time.monotonic() - started
    rss = rusage.ru_maxrss * 1024
    if os.WIFSIGNALED(status):
        kind, detail = "crash", f"killed by signal {os.WTERMSIG(status)}"
    elif not data:
        kind, detail = "crash", f"exit code {os.WEXITSTATUS(status)} without an outcome"
    else:
        kind, detail = json.loads(data)
    if rss > MEMORY_LIMIT_BYTES:
        kind, detail = "memory", f"max RSS {rss / 2**20:.0f} MiB; {detail}"
    return Outcome(path, kind, detail, seconds, rss)


def _api(spec: dict[str, Any]) -> tuple[str, str]:
    import tcplab
    from tcplab.errors import TcplabError

    try:
        tcplab.run(spec)
    except TcplabError as error:
        return "error", str(error)
    return "ok", ""


def _cli(toml_path: str) -> tuple[str, str]:
    """`tcplab run FILE --no-save` through the console script's entry point."""
    import contextlib
    import io

    from tcplab.cli import main

    out, err = io.StringIO(), io.StringIO()
    sys.argv = ["tcplab", "run", toml_path, "--no-save"]
    # An internal error's report folder goes beside the spec, with the rest of the scratch.
    tempfile.tempdir = str(Path(toml_path).parent)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
            code = 0
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    lines = err.getvalue().strip().splitlines()
    if code == 0:
        return "ok", ""
    if code == 2 and len(lines) == 1 and lines[0].startswith("error: "):
        return "error", lines[0]
    kind = "internal" if code == 1 else "traceback"
    return kind, f"exit code {code}: {err.getvalue()[-2000:]}"


def check(spec: dict[str, Any], workdir: Path) -> list[Outcome]:
    """The spec through the API and, when TOML can hold it, the CLI. The emu backend runs
    on the simulator instead: it needs root and the machine to itself, and its inputs pass
    the same validation."""
    if spec.get("backend") == "emu":
        spec = {**spec, "backend": "sim"}
    outcomes = [_in_child(lambda: _api(spec), "api")]
    try:
        text = tomli_w.dumps(_without_nulls(spec))
    except (TypeError, ValueError):
        return outcomes  # TOML has no null, no non-string keys, no integer past 64 bits
    toml_path = workdir / "spec.toml"
    toml_path.write_text(text)
    outcomes.append(_in_child(lambda: _cli(str(toml_path)), "cli"))
    return outcomes


def _without_nulls(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_nulls(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [_without_nulls(v) for v in node if v is not None]
    return node


def fuzz(count: int, seed: int = 15, log: Path | None = None) -> dict[str, Any]:
    """Generate and check `count` specs; the tally and every failure (each also appended
    to `log` as one JSON line as it happens, with the tally every 250 specs)."""
    # Import what the children use once, here: each fork then starts at once.
    import tcplab.backends.model
    import tcplab.backends.sim
    import tcplab.cli  # noqa: F401

    tally: Counter[str] = Counter()
    failures: list[dict[str, Any]] = []
    slowest = 0.0
    largest = 0
    with tempfile.TemporaryDirectory() as scratch:
        for spec in generated_specs(count, seed):
            tally["specs"] += 1
            if tally["specs"] % 250 == 0:
                print(f"{tally['specs']} specs, {len(failures)} failures", file=sys.stderr)
                _append(log, {"tally": dict(tally)})
            for outcome in check(spec, Path(scratch)):
                tally[f"{outcome.path}.{outcome.kind}"] += 1
                slowest = max(slowest, outcome.seconds)
                largest = max(largest, outcome.max_rss_bytes)
                if outcome.failed:
                    failures.append({"spec": spec, **asdict(outcome)})
                    _append(log, failures[-1])
    return {
        "tally": dict(sorted(tally.items())),
        "slowest_s": round(slowest, 2),
        "max_rss_mib": round(largest / 2**20),
        "failures": failures,
    }


def _append(log: Path | None, record: dict[str, Any]) -> None:
    if log is not None:
        with log.open("a") as handle:
            handle.write(json.dumps(record, default=str) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--out", type=Path, help="write the report (JSON) here too")
    parser.add_argument("--log", type=Path, help="append each failure here as it happens")
    args = parser.parse_args()
    report = fuzz(args.count, args.seed, args.log)
    text = json.dumps(report, indent=1, default=str)
    if args.out:
        args.out.write_text(text)
    print(json.dumps({k: v for k, v in report.items() if k != "failures"}, indent=1))
    print(f"{len(report['failures'])} failures")
    for failure in report["failures"][:30]:
        print(json.dumps(failure, default=str)[:600])
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
