"""The Python entry points: run a scenario given as a file, a Spec or a dict."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tcplab.backends import capabilities, get_backend
from tcplab.errors import BackendError, FieldRefused, TcplabError
from tcplab.plan import derive_seed, resolve
from tcplab.result import RunResult
from tcplab.spec import Spec, canonical_dict, canonical_hash, load_spec, validate_spec
from tcplab.version import __version__

Scenario = str | os.PathLike[str] | Spec | Mapping[str, Any]


def prepare(scenario: Scenario, backend: str | None = None, seed: int | None = None) -> Spec:
    """The spec that will run: `scenario` loaded and validated, with the overrides applied.

    Overrides go through validation like the file's own values, so `seed=-1` or an unknown
    backend is reported on the field it replaces.
    """
    given = {"backend": backend, "seed": seed}
    overrides = {key: value for key, value in given.items() if value is not None}
    if isinstance(scenario, Mapping):
        # Validated once, overrides and all: a second validation of the dumped spec doubled
        # the cost of preparing a spec of thousands of flows.
        return validate_spec({**scenario, **overrides})
    spec = scenario if isinstance(scenario, Spec) else load_spec(Path(scenario))
    if not overrides:
        return spec
    return validate_spec({**canonical_dict(spec), **overrides})


def run(scenario: Scenario, backend: str | None = None, seed: int | None = None) -> RunResult:
    """Run a scenario on its backend (or `backend`), once per repetition.

    With `repetitions > 1`, repetition i runs with `derive_seed(seed, i)` and the result
    combines them (mean, standard deviation and 95 % confidence half-width of each numeric
    summary field; each repetition in `.runs`).
    """
    spec = prepare(scenario, backend, seed)
    if spec.sweep is not None:
        raise TcplabError(
            "this scenario has a [sweep] table: run it with tcplab.sweep(), which runs every"
            " point and stores the results"
        )
    runner = get_backend(spec.backend)
    # What the backend honours, checked once for all repetitions (only the seed differs).
    checked = resolve(spec)
    capabilities.check(checked, spec.backend)
    canonical = canonical_dict(spec)
    meta = {
        "name": spec.name,
        "backend": spec.backend,
        "seed": spec.seed,
        "spec_hash": canonical_hash(canonical),
        "spec": canonical,
        "tcplab_version": __version__,
    }
    runs = []
    for repetition in range(spec.repetitions):
        run_seed = derive_seed(spec.seed, repetition)
        try:
            # The first repetition runs with the spec's own seed: the plan just checked.
            plan = checked if run_seed == spec.seed else resolve(spec, seed=run_seed)
            raw = runner.run(plan)
        except FieldRefused as error:
            # A backend refuses a field it cannot honour (e.g. the model backend and a path
            # it has no formula for). Any other exception is a fault of tcplab, not of the
            # scenario, and goes up as it is.
            raise BackendError(
                f"the {spec.backend} backend cannot run this scenario: {error}", error.field
            ) from None
        runs.append(
            RunResult.from_backend(
                raw, {**meta, "seed": run_seed, "repetition": repetition}, spec.app
            )
        )
    if len(runs) == 1:
        return runs[0]
    return RunResult.combine(runs, {**meta, "repetitions": len(runs)})
