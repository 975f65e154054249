#!/usr/bin/env python3
"""CPU per flow of what a run does besides simulating, against the number of flows: the
spec's validation and plan, the simulator's setup and report, and `tcplab.run` as a whole,
each printed as a ratio to its cheapest point, all measured in one run (a benchmark script,
not a test).

    .venv/bin/python bench/setup_cost.py [--flows 100,1000,10000] [--rounds N] [--json]

The scenario is `cost_curve.py`'s dumbbell (every flow a host pair on its own access links
around a shared bottleneck) run for 1 ms, so that nearly all of a run's CPU is its setup:

- plan: `prepare`, `resolve` and `topology_form` of the spec given as a mapping, and the
  plan's JSON, in Python;
- simulator: `tcplab._sim.run_columnar` of that plan: parsing and checking it, routing
  every flow, building the connections, 1 ms of simulation, the report;
- run: `tcplab.run(spec, backend="sim")`, the whole of it (the plan, the backend's checks,
  the simulator, the result's tables).

A point's cost is the least of its rounds, as `timeit` takes the least of its repeats. A
flat column means a run's setup costs the same per flow however many there are; before
25 November 2026 routing, the report's per-host goodput and one of the spec's checks went
over every host or flow for every flow, and 10,000 flows cost 2.2-3.8 times as much per
flow as 1,000 (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from cost_curve import dumbbell, plan_of
from rich.console import Console
from rich.table import Table

import tcplab
from tcplab import _sim

DURATION_S = 0.001
STAGES = ("plan", "simulator", "run")
T = TypeVar("T")


def timed(work: Callable[[], T]) -> tuple[float, T]:
    """`work`'s CPU seconds and what it returns."""
    started = time.process_time()
    value = work()
    return time.process_time() - started, value


def point(flows: int) -> dict[str, float]:
    """Each stage's CPU in seconds for a dumbbell of `flows` flows."""
    scenario = dumbbell(flows, DURATION_S)
    plan_s, plan = timed(lambda: plan_of(scenario))
    return {
        "plan": plan_s,
        "simulator": timed(lambda: _sim.run_columnar(plan))[0],
        "run": timed(lambda: tcplab.run(scenario, backend="sim"))[0],
    }


def measure(flow_counts: list[int], rounds: int) -> list[dict[str, Any]]:
    # The spec's validators are built on first use: a small run first, so that no point
    # pays for them.
    tcplab.run(dumbbell(1, DURATION_S), backend="sim")
    best: dict[int, dict[str, float]] = {}
    for _ in range(rounds):
        for flows in flow_counts:
            costs = point(flows)
            kept = best.setdefault(flows, costs)
            for stage in STAGES:
                kept[stage] = min(kept[stage], costs[stage])
    rows = [
        {
            "flows": flows,
            **{f"{stage}_us_per_flow": best[flows][stage] / flows * 1e6 for stage in STAGES},
        }
        for flows in flow_counts
    ]
    for stage in STAGES:
        cheapest = min(row[f"{stage}_us_per_flow"] for row in rows)
        for row in rows:
            row[f"{stage}_ratio"] = row[f"{stage}_us_per_flow"] / cheapest
    return rows


def show(rows: list[dict[str, Any]]) -> None:
    table = Table(title="CPU per flow of a run's setup (1 ms dumbbell; least of the rounds)")
    table.add_column("flows", justify="right")
    for stage in STAGES:
        table.add_column(f"{stage} µs/flow", justify="right")
        table.add_column("ratio", justify="right")
    for row in rows:
        cells = [f"{row['flows']:,}"]
        for stage in STAGES:
            cells += [f"{row[f'{stage}_us_per_flow']:,.1f}", f"{row[f'{stage}_ratio']:.2f}x"]
        table.add_row(*cells)
    Console().print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", default="100,1000,10000", help="flow counts, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the least is kept")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    try:
        flow_counts = [int(text) for text in args.flows.split(",")]
    except ValueError:
        parser.error(f"--flows: {args.flows!r} is not a comma-separated list of integers")
    if any(flows < 1 for flows in flow_counts) or args.rounds < 1:
        parser.error("--flows: every count at least 1; --rounds: at least 1")
    rows = measure(flow_counts, args.rounds)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        show(rows)


if __name__ == "__main__":
    main()
