"""The fidelity bounds of a grid: per point, the largest goodput error (|sim / kernel - 1|),
retransmission error and normalised RMSE the simulator may have against the committed
kernel results.

calibration/<grid>/bounds.json holds today's errors rounded up to the next thousandth.
The test suite fails when the simulator moves beyond a bound; when it moves closer,
`tcplab calibrate GRID --sim-only --write-bounds` tightens them (docs/calibration.md).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from tcplab.errors import TcplabError
from tcplab.result import write_atomically

BOUNDS_FILE = "bounds.json"
# The errors a bound is kept for, as columns of metrics.compare.
BOUNDED = ("goodput_error", "retransmits_error", "nrmse")
# Bounds are today's errors rounded up to this step.
STEP = 1e-3


def _round_up(value: float) -> float:
    return math.ceil(value / STEP - 1e-9) * STEP


def write_bounds(points: pd.DataFrame, path: Path) -> dict[str, dict[str, float]]:
    """Write the trusted points' errors, rounded up, as the bounds in `path`; returns them."""
    trusted = points[points["trusted"]]
    bounds = {
        str(row["point"]): {name: round(_round_up(float(row[name])), 3) for name in BOUNDED}
        for row in trusted.to_dict("records")
        if all(math.isfinite(float(row[name])) for name in BOUNDED)
    }
    write_atomically(path, json.dumps(bounds, indent=1) + "\n")
    return bounds


def check_bounds(points: pd.DataFrame, path: Path) -> list[str]:
    """The bounds in `path` that `points` exceed, one line each (none: all hold). A bounded
    point without a value is a violation too, so a bound cannot be dropped unnoticed."""
    if not path.exists():
        raise TcplabError(f"no bounds at {path}; write them with --write-bounds")
    bounds: dict[str, dict[str, float]] = json.loads(path.read_text())
    by_point = points.set_index("point")
    problems = []
    for point, limits in bounds.items():
        for name, bound in limits.items():
            value = by_point[name].get(point, math.nan) if name in by_point else math.nan
            if not (value <= bound + 1e-12):
                problems.append(f"{point}: {name} {value:.4f} > bound {bound:.3f}")
    return problems
