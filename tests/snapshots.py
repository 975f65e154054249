"""Whole result tables pinned as committed JSON (syrupy), so that a change of behaviour shows
up as a reviewed diff of tests/__snapshots__/ rather than only where a scenario test happens
to look. After a change made on purpose, re-record and review them as
docs/internals/snapshots.md says (one pytest command with --snapshot-update, then git diff).

Floats are kept to 10 significant digits: enough to see any change of behaviour, and
indifferent to the last bits a different libm may give a pow() or cbrt().
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
from syrupy.extensions.json import JSONSnapshotExtension

from tcplab.papers import PACKS, load_reproduction

SIGNIFICANT_DIGITS = 10
# Summary fields that count the engine's own work rather than what TCP did: the engine may
# change them (fewer events for the same run) without any change of behaviour.
ENGINE_FIELDS = frozenset({"events"})


class JsonSnapshot(JSONSnapshotExtension):
    """One .json file per snapshot, named after the test (and its parameter)."""


def plain(value: Any) -> Any:
    """`value` as JSON values with floats rounded, NaN and infinities as strings."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, pd.DataFrame):
        frame = value.reset_index() if not isinstance(value.index, pd.RangeIndex) else value
        return {
            "columns": [str(c) for c in frame.columns],
            "rows": [plain(row) for row in frame.astype(object).values.tolist()],
        }
    if hasattr(value, "item"):  # a numpy scalar
        return plain(value.item())
    raise TypeError(f"cannot snapshot {type(value).__name__}")


def summary(summary: dict[str, Any]) -> Any:
    """A run's summary without the engine's own counters."""
    return plain({k: v for k, v in summary.items() if k not in ENGINE_FIELDS})


def reproduction_tables(directory: Path) -> Any:
    """A reproduction's numbers: each published number beside tcplab's, each conclusion's
    verdict and evidence, and every table exhibit (figures are left to the report tests)."""
    reproduction = load_reproduction(directory, PACKS)
    recorded = reproduction.to_dict()
    exhibits = [
        {"heading": e.heading, "table": e.content}
        for e in reproduction.pack.exhibits(reproduction.results)
        if isinstance(e.content, pd.DataFrame)
    ]
    return plain(
        {
            "comparisons": recorded["comparisons"],
            "checks": recorded["checks"],
            "tables": exhibits,
        }
    )
