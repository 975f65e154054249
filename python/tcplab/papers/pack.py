"""What a paper pack is, and how a reproduction runs and is judged.

A pack holds one source paper's experiments (scenarios with sweeps), the numbers the paper
publishes (each with how tcplab's counterpart is read from the results), and the paper's
stated conclusions as checks. `reproduce` runs the experiments into results stores, one
directory per experiment under the output directory, and judges every check; the verdicts
are facts about this run, never softened: a conclusion tcplab does not reproduce is "not
held", one whose difference lies within the runs' spread is a "tie" (neither held nor not),
one tested on a number a model parameter was fitted to is "fitted" (not evidence), one that
the shortened runs of `--quick` cannot decide "needs the full run", and one tcplab cannot
test yet is "not checkable yet" with what it needs.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import pandas as pd
from matplotlib.figure import Figure

from tcplab.errors import TcplabError
from tcplab.experiments.store import FAILURES_DIR, Store, open_results
from tcplab.experiments.sweeps import plan_sweep, run_sweep
from tcplab.result import write_atomically

REPRODUCTION_FILE = "reproduction.json"
# Final, so that each is its Literal and a verdict built from them is a Status.
HELD: Final = "held"
NOT_HELD: Final = "not held"
TIE: Final = "tie"
FITTED: Final = "fitted"
NEEDS_FULL: Final = "needs the full run"
NOT_CHECKABLE: Final = "not checkable yet"
Status = Literal["held", "not held", "tie", "fitted", "needs the full run", "not checkable yet"]
Order = Literal["held", "not held", "tie"]  # what `above` finds
STATUSES: tuple[Status, ...] = (HELD, NOT_HELD, TIE, FITTED, NEEDS_FULL, NOT_CHECKABLE)


class Results:
    """The stores of one reproduction, by experiment name, with their tables read once."""

    def __init__(self, stores: Mapping[str, Store], quick: bool) -> None:
        self.stores = dict(stores)
        self.quick = quick
        self._means: dict[str, pd.DataFrame] = {}
        self._series: dict[str, pd.DataFrame] = {}

    def means(self, experiment: str) -> pd.DataFrame:
        """Per point: the swept parameters, and mean, std and ci95 of each summary field."""
        if experiment not in self._means:
            self._means[experiment] = self.stores[experiment].aggregate()
        return self._means[experiment]

    def series(self, experiment: str) -> pd.DataFrame:
        """Per-interval delivered bytes of every run, with the run's swept parameters."""
        if experiment not in self._series:
            store = self.stores[experiment]
            series = store.series()
            params = self.means(experiment).set_index("point_id")
            swept = (store.manifest().get("sweep") or {}).get("paths", [])
            paths = [path for path in swept if path in params]
            self._series[experiment] = series.join(params[paths], on="point_id")
        return self._series[experiment]


@dataclass(frozen=True)
class Verdict:
    """Whether a conclusion held in this reproduction, and the numbers that say so."""

    status: Status
    evidence: str


@dataclass(frozen=True)
class Check:
    """One of the paper's conclusions and how to test it on the results.

    `test` is None for a conclusion tcplab cannot test yet; `needs` then says what is
    missing (a model, an application), so the report shows the gap instead of hiding it.
    `fitted` names the model parameter fitted to the very numbers the test reads: its
    verdict is then "fitted", whatever the test finds, with the test's numbers shown.
    `full_run` says why `--quick`'s shortened sweep cannot decide the check: its verdict is
    then "needs the full run" under `--quick`.
    """

    claim: str
    source: str
    test: Callable[[Results], Verdict] | None = None
    needs: str = ""
    fitted: str = ""
    full_run: str = ""

    def evaluate(self, results: Results) -> Verdict:
        if self.test is None:
            return Verdict(NOT_CHECKABLE, f"needs {self.needs}")
        if results.quick and self.full_run:
            return Verdict(NEEDS_FULL, self.full_run)
        verdict = self.test(results)
        if self.fitted:
            return Verdict(
                FITTED, f"{self.fitted} (the test alone: {verdict.status}; {verdict.evidence})"
            )
        return verdict


@dataclass(frozen=True)
class Published:
    """A number the paper publishes, where, and how tcplab's counterpart is obtained."""

    what: str
    source: str
    value: float
    show: Callable[[float], str]
    measure: Callable[[Results], float | None]
    note: str = ""
    # The model parameter fitted to this number, if one was: the comparison then shows the
    # fit, not a prediction.
    fitted: str = ""


@dataclass(frozen=True)
class Comparison:
    """A published number beside tcplab's, with their ratio (tcplab / paper)."""

    what: str
    source: str
    paper: float
    tcplab: float | None
    ratio: float | None
    paper_text: str
    tcplab_text: str
    note: str
    fitted: str = ""


@dataclass(frozen=True)
class Experiment:
    """A scenario with its sweep, as a dict like a TOML file's; `quick` shortens it."""

    name: str
    description: str
    scenario: Callable[[bool], dict[str, Any]]


@dataclass(frozen=True)
class Exhibit:
    """A table or figure a pack adds to its report: a paper's table in its own layout, or a
    plot of the results beside the paper's numbers."""

    heading: str
    caption: str
    content: pd.DataFrame | Figure


@dataclass(frozen=True)
class Pack:
    """One source paper, ready to reproduce."""

    name: str
    title: str
    citation: str
    summary: str
    experiments: tuple[Experiment, ...]
    published: tuple[Published, ...]
    checks: tuple[Check, ...]
    differences: tuple[str, ...]
    exhibits: Callable[[Results], list[Exhibit]]
    # For each conclusion that did not hold (or tied): the mechanism the paper's systems
    # likely had, added and re-checked where a source supports it, or the evidence that
    # the claim cannot come from the set-up the paper describes.
    investigations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reproduction:
    """A pack's experiments run (or read back), compared and judged."""

    pack: Pack
    directory: Path
    results: Results
    comparisons: list[Comparison]
    verdicts: list[tuple[Check, Verdict]]

    def verdict_counts(self) -> str:
        """How the conclusions fared, e.g. "3 held, 1 not held, 1 tie, 1 fitted": held and
        not held always, each other kind when some check has it."""
        counts = Counter(verdict.status for _, verdict in self.verdicts)
        shown = [s for s in STATUSES if s in (HELD, NOT_HELD) or counts[s]]
        return ", ".join(f"{counts[status]} {status}" for status in shown)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: what was compared and judged, for machines and for re-reading."""
        return {
            "pack": self.pack.name,
            "quick": self.results.quick,
            "experiments": list(self.results.stores),
            "comparisons": [
                {
                    "what": c.what,
                    "source": c.source,
                    "paper": c.paper,
                    "tcplab": c.tcplab,
                    "ratio": c.ratio,
                    "note": c.note,
                    "fitted": c.fitted,
                }
                for c in self.comparisons
            ],
            "checks": [
                {
                    "claim": check.claim,
                    "source": check.source,
                    "status": verdict.status,
                    "evidence": verdict.evidence,
                }
                for check, verdict in self.verdicts
            ],
        }


def compare(pack: Pack, results: Results) -> list[Comparison]:
    """Each published number beside tcplab's."""
    comparisons = []
    for published in pack.published:
        measured = published.measure(results)
        ratio = None if measured is None or published.value == 0 else measured / published.value
        comparisons.append(
            Comparison(
                what=published.what,
                source=published.source,
                paper=published.value,
                tcplab=measured,
                ratio=ratio,
                paper_text=published.show(published.value),
                tcplab_text="—" if measured is None else published.show(measured),
                note=published.note,
                fitted=published.fitted,
            )
        )
    return comparisons


def judge(pack: Pack, directory: Path, results: Results) -> Reproduction:
    """Compare and check a pack's results."""
    verdicts = [(check, check.evaluate(results)) for check in pack.checks]
    return Reproduction(pack, directory, results, compare(pack, results), verdicts)


class RunsFailed(TcplabError):
    """Some runs of a reproduction raised, so its numbers are incomplete and not judged."""


def reproduce(
    pack: Pack,
    out: str | os.PathLike[str],
    quick: bool = False,
    jobs: int | None = None,
    force: bool = False,
) -> Reproduction:
    """Run the pack's experiments into `out/<experiment>/` and judge them.

    Runs already in those stores are reused unless `force`. Writes `out/reproduction.json`
    with the comparisons and verdicts (the report is written by the caller). Raises
    RunsFailed, judging nothing, when a run failed.
    """
    directory = Path(out)
    stores = {}
    for experiment in pack.experiments:
        plan = plan_sweep(experiment.scenario(quick), out=directory / experiment.name, force=force)
        store = run_sweep(plan, jobs=jobs)
        failures = store.failures()
        if not failures.empty:
            raise RunsFailed(
                f"{len(failures)} runs of {experiment.name} failed, e.g. "
                f"{failures['run_id'].iloc[0]}: {failures['error'].iloc[0]}; the errors are in "
                f"{store.directory / FAILURES_DIR}, and running again retries them"
            )
        stores[experiment.name] = store
    reproduction = judge(pack, directory, Results(stores, quick))
    text = json.dumps(reproduction.to_dict(), indent=2, allow_nan=False)
    try:
        write_atomically(directory / REPRODUCTION_FILE, text + "\n")
    except OSError as error:
        raise TcplabError(f"cannot write into {directory}: {error.strerror or error}") from None
    return reproduction


def load_reproduction(directory: str | os.PathLike[str], packs: Mapping[str, Pack]) -> Reproduction:
    """A reproduction read back from its directory and judged again from its stores."""
    directory = Path(directory)
    try:
        recorded = json.loads((directory / REPRODUCTION_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TcplabError(f"{directory} has no {REPRODUCTION_FILE}") from None
    except (OSError, ValueError) as error:
        raise TcplabError(f"cannot read {directory / REPRODUCTION_FILE}: {error}") from None
    pack = packs.get(recorded.get("pack"))
    if pack is None:
        raise TcplabError(f"{directory / REPRODUCTION_FILE} names an unknown paper pack")
    stores = {name: open_results(directory / name) for name in recorded["experiments"]}
    return judge(pack, directory, Results(stores, bool(recorded.get("quick"))))


# ---- helpers the packs' checks share --------------------------------------------------------


def rises(
    means: pd.DataFrame, x: str, y: str = "goodput_bps"
) -> tuple[bool, list[tuple[Any, Any]]]:
    """Whether `y` rises along `x`: the mean at the last point is above the first, and no
    step down is larger than the 95 % half-widths of its two ends together (a dip within
    the noise is not a fall). Returns the verdict and the steps that fell beyond the noise."""
    ordered = means.sort_values(x)
    values = ordered[y].to_numpy()
    spread = ordered.get(f"{y}_ci95", pd.Series(0.0, index=ordered.index)).fillna(0.0).to_numpy()
    xs = ordered[x].to_list()
    falls = [
        (xs[i], xs[i + 1])
        for i in range(len(values) - 1)
        if values[i + 1] < values[i] - (spread[i] + spread[i + 1])
    ]
    return bool(values[-1] > values[0]) and not falls, falls


def _half_width(ci95: float | None) -> float:
    return 0.0 if ci95 is None or pd.isna(ci95) else float(ci95)


def every(groups: Sequence[tuple[str, bool | Status, str]]) -> Verdict:
    """One verdict over several cases (name, held or a status, evidence): not held if any
    case is not held, else a tie if any is a tie (the claim is not shown everywhere), else
    held."""
    # A case is a status, or anything true or false (numpy's bools too).
    statuses = [ok if isinstance(ok, str) else HELD if ok else NOT_HELD for _, ok, _ in groups]
    status: Status = NOT_HELD if NOT_HELD in statuses else TIE if TIE in statuses else HELD
    evidence = "; ".join(
        f"{name}: {text}" + (" (tie)" if case == TIE else "")
        for (name, _, text), case in zip(groups, statuses, strict=True)
    )
    return Verdict(status, evidence)


def above(a: float, a_ci95: float | None, b: float, b_ci95: float | None) -> Order:
    """Whether mean `a` is above mean `b`: held beyond their 95 % half-widths together, not
    held below them, a tie within (the runs cannot tell them apart). A half-width that is
    missing (None or NaN: one run) counts as 0."""
    spread = _half_width(a_ci95) + _half_width(b_ci95)
    if a > b + spread:
        return HELD
    if a < b - spread:
        return NOT_HELD
    return TIE
