"""The workload a profile-guided build of the simulator is trained on (scripts/build).

Runs on the instrumented build what the simulator's users and benchmarks run: every
example scenario (ATM cells, WLAN, PEPs, media, schedules, the old stacks' profiles),
shortened; the fidelity regression grid (calibration/regression.toml: the linux profile's
reno, cubic and bbr, with and without loss and SACK); the cost curves' points
(bench/cost_curve.py: rates, holes, flows) and seed 001's Table 2 (bench/atm_table2.py).
Code a profile never saw is laid out as cold, so a path missing here runs slower than it
would without the profile: what a scenario can exercise belongs in this list.

    .venv/bin/python scripts/pgo-train.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tcplab import _sim
from tcplab.api import prepare
from tcplab.plan import resolve, topology_form

REPO = Path(__file__).resolve().parent.parent
# Long enough to leave slow start on every example's path, short enough that training
# takes seconds.
LONGEST_NS = 4_000_000_000


def examples() -> int:
    paths = sorted((REPO / "examples").glob("*.toml"))
    for path in paths:
        plan = topology_form(resolve(prepare(path, backend="sim")))
        plan["duration_ns"] = min(plan["duration_ns"], LONGEST_NS)
        _sim.run_columnar(json.dumps(plan))
    return len(paths)


def main() -> None:
    started = time.monotonic()
    count = examples()
    python = sys.executable
    with tempfile.TemporaryDirectory() as scratch:
        commands = [
            # The scratch directory goes in whole: its path may hold spaces.
            "-m tcplab calibrate calibration/regression.toml --sim-only --jobs 1 --json".split()
            + ["--out", scratch],
            "bench/cost_curve.py --curves rate,holes --quick --packets 20000 --json".split(),
            "bench/cost_curve.py --curves flows --rounds 1 --json".split(),
            "bench/atm_table2.py --durations 100ms --json".split(),
        ]
        for command in commands:
            subprocess.run([python, *command], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    print(
        f"pgo-train: {count} examples, the regression grid, the cost curves and Table 2"
        f" in {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
