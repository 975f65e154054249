"""Sweeps: a scenario's `[sweep]` table expanded into points and runs, and run into a store.

A point is the scenario with one combination of the swept values applied; a run is one
repetition of a point, with its own seed. Both are named by content (spec hashes), not by
position, so a results store still recognises a run after the sweep around it has grown,
and a sweep runs only what its store does not hold yet.

(The module is `sweeps`, not `sweep`, because `tcplab.sweep` is the function that runs one.)
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tcplab.api import Scenario, prepare
from tcplab.errors import SpecError, TcplabError
from tcplab.experiments.executors import ExecutorName, Outcome, Task, run_tasks
from tcplab.experiments.store import Store
from tcplab.plan import derive_seed
from tcplab.spec import Spec, canonical_dict, format_problem, located_problems, spec_hash
from tcplab.version import __version__

Location = tuple[str | int, ...]

# Top-level fields that describe the sweep itself rather than one experiment in it.
_NOT_SWEEPABLE = {
    "sweep": "the sweep table cannot sweep itself",
    "repetitions": "repetitions applies to every point; set it at the top level",
    "seed": "each repetition already gets its own seed; use repetitions = N for more seeds",
}


@dataclass(frozen=True)
class Point:
    """One combination of swept values: the scenario that runs, and how to label it."""

    point_id: str
    # path → value: a scalar as the validated spec holds it (base units: bytes, bit/s, ns),
    # anything else as its canonical text; these are the store's parameter columns.
    params: dict[str, Any]
    # path → the value as the canonical scenario spells it ("4KiB", "275ms"), for people.
    labels: dict[str, str]
    spec: Spec


@dataclass(frozen=True)
class Run:
    """One repetition of a point."""

    run_id: str
    point: Point
    repetition: int
    seed: int
    # The point with this run's seed and repetitions = 1: exactly what runs, so that
    # `tcplab run` on it reproduces the run, and adding repetitions leaves it unchanged.
    spec: Spec
    spec_hash: str

    def meta(self) -> dict[str, Any]:
        """The run's metadata, as the store writes it to meta.json."""
        return {
            "run_id": self.run_id,
            "point_id": self.point.point_id,
            "params": self.point.params,
            "repetition": self.repetition,
            "seed": self.seed,
            "spec_hash": self.spec_hash,
            "backend": self.spec.backend,
            "tcplab_version": __version__,
            "spec": canonical_dict(self.spec),
        }


@dataclass(frozen=True)
class SweepPlan:
    """A sweep ready to run: its points and runs, its store, and the runs still to do."""

    spec: Spec
    points: list[Point]
    runs: list[Run]
    store: Store
    pending: list[Run]


def sweep(
    scenario: Scenario,
    out: str | PathLike[str] | None = None,
    jobs: int | None = None,
    executor: ExecutorName = "local",
    scheduler: str | None = None,
    force: bool = False,
    backend: str | None = None,
    seed: int | None = None,
) -> Store:
    """Run every point of a scenario's sweep, `repetitions` times each, into a results store.

    `out` is the results directory (default results/<name>). Runs already stored there are
    not run again unless `force`. `executor` is "local" (a pool of `jobs` processes, default
    one per CPU) or "dask" (the cluster whose scheduler is at `scheduler`). A run that raises
    is recorded under failures/ and the sweep goes on. Returns the store.
    """
    plan = plan_sweep(scenario, out=out, force=force, backend=backend, seed=seed)
    return run_sweep(plan, executor=executor, jobs=jobs, scheduler=scheduler)


def plan_sweep(
    scenario: Scenario,
    out: str | PathLike[str] | None = None,
    force: bool = False,
    backend: str | None = None,
    seed: int | None = None,
) -> SweepPlan:
    """Validate and expand the sweep, and find the runs its store does not hold yet."""
    spec = prepare(scenario, backend=backend, seed=seed)
    source = scenario if isinstance(scenario, (str, PathLike)) else None
    if spec.trace is not None and spec.trace.pcap:
        raise SpecError(
            [
                "trace.pcap: a sweep's results store keeps no packet captures; capture single"
                " runs with tcplab run"
            ],
            source,
        )
    points = expand(spec, source)
    every_run = runs(points)
    store = Store(Path("results") / spec.name if out is None else out)
    stored = set() if force else store.run_ids()
    pending = [run for run in every_run if run.run_id not in stored]
    return SweepPlan(spec, points, every_run, store, pending)


def run_sweep(
    plan: SweepPlan,
    executor: ExecutorName = "local",
    jobs: int | None = None,
    scheduler: str | None = None,
    on_run: Callable[[Run, str | None], None] | None = None,
) -> Store:
    """Execute the plan's pending runs, storing each as it finishes.

    `on_run(run, error)` is called after each run is stored (error None) or recorded as
    failed. An interrupt stops the sweep at once; the runs stored so far stay, and planning
    the same sweep again finds only the others.
    """
    store = plan.store
    tasks = [Task(run.run_id, canonical_dict(run.spec)) for run in plan.pending]
    # closing: however this loop ends (an interrupt, a full disk), the executor stops the
    # runs still in flight rather than finishing the sweep behind the caller's back.
    with (
        store.locked(),
        contextlib.closing(run_tasks(tasks, executor, jobs, scheduler)) as outcomes,
    ):
        _store_outcomes(plan, outcomes, on_run)
    return store


def _store_outcomes(
    plan: SweepPlan,
    outcomes: Iterator[Outcome],
    on_run: Callable[[Run, str | None], None] | None,
) -> None:
    store = plan.store
    by_id = {run.run_id: run for run in plan.pending}
    try:
        store.write_manifest(manifest(plan.spec, plan.points))
        store.remove_leftovers()
        for outcome in outcomes:
            run = by_id[outcome.run_id]
            if outcome.result is not None:
                store.write_run(run.meta(), outcome.result)
            else:
                store.write_failure(run.meta(), str(outcome.error))
            if on_run is not None:
                on_run(run, outcome.error)
    except OSError as error:
        raise TcplabError(
            f"cannot write into {store.directory}: {error.strerror or error}"
        ) from None


def expand(spec: Spec, source: str | PathLike[str] | None = None) -> list[Point]:
    """The points of `spec`'s sweep (one point, the scenario itself, if it has none).

    Every point is validated as a scenario of its own; problems are raised together as one
    SpecError, each naming the sweep path it comes from: `sweep."hosts.0.tcp.sndbuf": ...`.
    """
    if spec.sweep is None:
        return [_point(spec, {})]
    base = canonical_dict(spec)
    del base["sweep"]
    parameters = spec.sweep.parameters
    problems: dict[str, None] = {}  # a dict keeps them in order and each once
    targets: dict[str, Location] = {}
    for path in parameters:
        try:
            targets[path] = _target(base, path)
        except ValueError as error:
            problems[_problem(path, str(error))] = None
    if problems:
        raise SpecError(list(problems), source)

    points: dict[str, Point] = {}
    values_of: dict[str, Mapping[str, Any]] = {}
    for values in _combinations(spec.sweep.mode, parameters):
        data = copy.deepcopy(base)
        for path, value in values.items():
            _assign(data, targets[path], value)
        try:
            point = _point(Spec.model_validate(data), targets)
        except ValidationError as error:
            for location, message in located_problems(error):
                problems[_blame(targets, values, location, message)] = None
            continue
        if point.point_id in points:
            problems[
                f"sweep: {_show(values_of[point.point_id])} and {_show(values)} are the same"
                " experiment"
            ] = None
        points[point.point_id] = point
        values_of[point.point_id] = values
    if problems:
        raise SpecError(list(problems), source)
    return list(points.values())


def runs(points: Sequence[Point]) -> list[Run]:
    """Every repetition of every point; repetition i of a point runs with derive_seed(seed, i)."""
    result = []
    for point in points:
        for repetition in range(point.spec.repetitions):
            seed = derive_seed(point.spec.seed, repetition)
            spec = point.spec.model_copy(update={"seed": seed, "repetitions": 1})
            digest = spec_hash(spec)
            result.append(Run(f"{digest[:16]}-{seed}", point, repetition, seed, spec, digest))
    return result


def manifest(spec: Spec, points: Sequence[Point]) -> dict[str, Any]:
    """What the store's manifest.json records about the sweep (the store adds the machine)."""
    sweep = spec.sweep
    return {
        "name": spec.name,
        "backend": spec.backend,
        "seed": spec.seed,
        "repetitions": spec.repetitions,
        "spec_hash": spec_hash(spec),
        "scenario": canonical_dict(spec),
        "sweep": None if sweep is None else {"mode": sweep.mode, "paths": list(sweep.parameters)},
        "points": [
            {
                "point_id": point.point_id,
                "params": point.params,
                "labels": point.labels,
                "run_ids": [run.run_id for run in runs([point])],
            }
            for point in points
        ],
    }


def _combinations(mode: str, parameters: Mapping[str, list[Any]]) -> Iterator[dict[str, Any]]:
    # grid: the first path varies slowest, as nested loops written in the file's order would.
    combine = zip if mode == "zip" else itertools.product
    for values in combine(*parameters.values()):
        yield dict(zip(parameters, values, strict=True))


def _target(data: Mapping[str, Any], path: str) -> Location:
    """The location `path` names in the scenario `data`: list entries by number or name."""
    first = path.split(".", 1)[0]
    if first in _NOT_SWEEPABLE:
        raise ValueError(_NOT_SWEEPABLE[first])
    location: list[str | int] = []
    node: Any = data
    for part in path.split("."):
        where = ".".join(str(step) for step in location)
        if not part:
            raise ValueError("a path is field names and list numbers joined by single dots")
        if isinstance(node, list):
            index = _index(node, part, where)
            location.append(index)
            node = node[index]
        elif isinstance(node, Mapping):
            location.append(part)
            # A field left unset (say gilbert_elliott) is created when the value is assigned;
            # one that does not exist at all is then refused by validation, on its own path.
            node = node.get(part, {})
        else:
            raise ValueError(f"{where} is a single value, not a table")
    return tuple(location)


def _index(entries: list[Any], part: str, where: str) -> int:
    if part.isdigit():
        if int(part) < len(entries):
            return int(part)
        raise ValueError(
            f"{where} has {len(entries)} entries, numbered from 0 to {len(entries) - 1}"
        )
    names = [entry.get("name") for entry in entries if isinstance(entry, Mapping)]
    if part in names:
        return names.index(part)
    if any(name is not None for name in names):
        given = ", ".join(str(name) for name in names if name is not None)
        raise ValueError(f"no entry of {where} is named {part!r}; names: {given}")
    raise ValueError(f"{where} entries have no names; number them from 0 to {len(entries) - 1}")


def _assign(data: dict[str, Any], location: Location, value: Any) -> None:
    node: Any = data
    for step in location[:-1]:
        # A list's steps are indices, an object's names (_target makes them so).
        node = node[step] if isinstance(step, int) else node.setdefault(step, {})
    node[location[-1]] = copy.deepcopy(value)


def _problem(path: str, message: str) -> str:
    return format_problem(("sweep", path), message)


def _blame(
    targets: Mapping[str, Location], values: Mapping[str, Any], location: Location, message: str
) -> str:
    """A point's validation problem, put on the swept path that caused it."""
    for path, target in targets.items():
        if location == target:
            return _problem(path, message)
        # The problem lies inside the swept value (a table), or on the object holding it
        # (e.g. `ber and loss are both given` on links.0 when links.0.ber is swept).
        shorter, longer = sorted((location, target), key=len)
        if shorter and longer[: len(shorter)] == shorter:
            return _problem(path, format_problem(location, message))
    # Only the combination is wrong, e.g. app.kind = "file" swept without app.bytes.
    return f"sweep: with {_show(values)}: {format_problem(location, message)}"


def _show(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{path} = {json.dumps(value)}" for path, value in values.items())


def _point(spec: Spec, targets: Mapping[str, Location]) -> Point:
    canonical = canonical_dict(spec)
    params: dict[str, Any] = {}
    labels: dict[str, str] = {}
    for path, location in targets.items():
        written = _at(canonical, location)
        labels[path] = written if isinstance(written, str) else json.dumps(written, sort_keys=True)
        held = _at(spec, location)
        # An unset value stays null, so that a column of the store keeps one type across
        # runs that set it and runs that do not.
        scalar = held is None or isinstance(held, (bool, int, float, str))
        params[path] = held if scalar else labels[path]
    # The id leaves repetitions out, so that asking for more repetitions adds runs to the
    # same point; it is the spec hash of the point's first run.
    point_id = spec_hash(spec.model_copy(update={"repetitions": 1}))[:16]
    return Point(point_id, params, labels, spec)


def _at(node: Any, location: Location) -> Any:
    for step in location:
        if isinstance(step, int):
            node = node[step]
        elif isinstance(node, Mapping):
            node = node.get(step)
        else:
            node = getattr(node, step)
    return node
