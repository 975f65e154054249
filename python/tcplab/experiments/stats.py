"""Mean, spread and 95 % confidence interval of repeated runs.

Built in rather than taken from scipy so that a result file does not depend on whether
scipy happens to be installed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

# Two-sided 95 % quantiles t(0.975, df) of Student's t distribution for df = 1..30, to four
# decimals (checked against a numerical integration of the t density).
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip
_Z975 = 1.959963984540054


def t975(df: int) -> float:
    """t(0.975, df): the 95 % two-sided quantile of Student's t with `df` degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    # Cornish-Fisher expansion of the t quantile in 1/df (Abramowitz & Stegun 26.7.5); its
    # first four terms agree with the exact quantile to five decimals from df = 31 on.
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def mean_std_ci95(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean, sample standard deviation and the half-width of the 95 % confidence interval."""
    if len(values) < 2:
        raise ValueError("a spread needs at least two values")
    std = statistics.stdev(values)
    return statistics.fmean(values), std, t975(len(values) - 1) * std / math.sqrt(len(values))
