"""mahimahi packet-delivery traces written from a rate: one line per delivery opportunity
of a 1500-byte packet, its time in whole milliseconds (mahimahi's `LinkQueue` format,
docs/models/schedules.md).

`python -m tcplab.presets.traces FILE` writes the trace the examples and tests use
(`examples/traces/varying-10mbps.trace`): a rate of 10 + 6·sin(2π·t / 4 s) Mb/s over one
4 s period, a link whose capacity swings between 4 and 16 Mb/s.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

PACKET_BITS = 1500 * 8
MBPS = 1e6


def opportunities(rate_bps: Callable[[float], float], period_ms: int) -> list[int]:
    """The opportunity times (ms, 1 to `period_ms`) of a line of `rate_bps(t)` (t in s):
    at the end of each millisecond, one for each whole packet the rate has carried since
    the start and not yet delivered. The last line is at `period_ms`, the trace's period."""
    carried = 0.0
    times: list[int] = []
    for ms in range(1, period_ms + 1):
        # The rate at the millisecond's middle, over the millisecond (midpoint rule).
        carried += rate_bps((ms - 0.5) / 1000) / 1000 / PACKET_BITS
        times.extend([ms] * (math.floor(carried) - len(times)))
    if not times or times[-1] != period_ms:
        times.append(period_ms)  # mahimahi's period is the last line's time
    return times


def varying_10mbps(t: float) -> float:
    """10 + 6·sin(2π·t / 4 s) Mb/s."""
    return (10 + 6 * math.sin(2 * math.pi * t / 4)) * MBPS


def capacity_bps(times: list[int]) -> float:
    """The mean rate of a trace's opportunities over its period."""
    return len(times) * PACKET_BITS / (times[-1] / 1000)


def write(path: Path, times: list[int]) -> None:
    path.write_text("".join(f"{ms}\n" for ms in times), encoding="ascii")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tcplab.presets.traces FILE", file=sys.stderr)
        return 2
    write(Path(argv[0]), opportunities(varying_10mbps, 4000))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
