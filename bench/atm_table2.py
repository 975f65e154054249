"""How fast the simulator runs seed 001's Table 2: 13 rows (7 VC counts at 500 km, 6 trunk
lengths at 50 VCs) × 4 switch schemes (UBR, UBR+EPD, EFCI, ERICA) = 52 runs, each for the
paper's 300 ms of simulated time and again for 10 s. The runs go one after another in this
process, so the wall time is the simulator's alone; it prints the wall and CPU time of
each sweep (on a shared machine the CPU time is what the sweep itself cost) and the cells
the simulator moved per wall and per CPU second (cells segmented at the sources and
switches, summary `atm.cells_sent`).

    .venv/bin/python bench/atm_table2.py [--durations 300ms,10s] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import tcplab
from tcplab.api import prepare
from tcplab.experiments.sweeps import expand
from tcplab.papers import seed001


def table2_specs(duration: str) -> list[Any]:
    """The 52 runs of Table 2's experiments, as validated specs."""
    specs = []
    for experiment in seed001.EXPERIMENTS:
        if not experiment.name.startswith("table2-"):
            continue
        scenario = experiment.scenario(False)
        # One run per point: the pack's repetitions would multiply the runs, not their speed.
        scenario["duration"] = duration
        scenario["repetitions"] = 1
        specs += [point.spec for point in expand(prepare(scenario))]
    return specs


def measure(duration: str) -> dict[str, Any]:
    specs = table2_specs(duration)
    cells = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    for spec in specs:
        cells += tcplab.run(spec).summary["atm"]["cells_sent"]
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    return {
        "duration": duration,
        "runs": len(specs),
        "wall_s": wall,
        "cpu_s": cpu,
        "cells": cells,
        "cells_per_wall_s": cells / wall,
        "cells_per_cpu_s": cells / cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", default="300ms,10s", help="simulated time per run")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    rows = [measure(duration) for duration in args.durations.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    header = f"{'simulated':>10} {'runs':>5} {'wall':>10} {'CPU':>10} {'cells':>14}"
    print(f"{header} {'cells/wall s':>14} {'cells/CPU s':>14}")
    for row in rows:
        print(
            f"{row['duration']:>10} {row['runs']:>5} {row['wall_s']:>9.1f}s "
            f"{row['cpu_s']:>9.1f}s {row['cells']:>14,} {row['cells_per_wall_s']:>14,.0f} "
            f"{row['cells_per_cpu_s']:>14,.0f}"
        )


if __name__ == "__main__":
    main()
