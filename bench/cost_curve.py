#!/usr/bin/env python3
"""CPU per packet of tcplab's simulator against the bottleneck rate, the holes in flight and
the number of flows, each point printed as a ratio to the cheapest point of its curve, all
measured in one run (a benchmark script, not a test).

    .venv/bin/python bench/cost_curve.py [--quick] [--curves rate,holes,flows] [--rounds N]
                                         [--json]

A packet is a TCP data segment sent (the summary's `segments_sent`), with everything it
causes: its hops, its ACK, the timers, the trace samples taken meanwhile. CPU is this
process's CPU time around `tcplab._sim.run_columnar`, which returns the series and trace
as columns (no JSON of them), so the figure is the simulator's own cost.

Every point runs once per round, the rounds one after the other, and a point's cost is the
least of its rounds (as `timeit` takes the least of its repeats): on a virtual machine the
1,000-flow point, whose state does not fit the core's own cache, takes up to 1.8 times
as long while other machines use the shared L3 (1.0 to 1.8 µs a segment within one
minute, 25 November 2026), invisibly to the load average, and the least is what the
simulator costs without them. The median of the rounds is printed beside it.

- rate: one CUBIC flow (the `linux` profile: SACK, timestamps), 10 ms each way, a queue
  of one BDP, 1 Mb/s to 10 Gb/s; each point runs long enough for `--packets` segments
  and at least 2 s (0.5 s with --quick).
- holes: one CUBIC flow without HyStart on 1 Gb/s, 10 ms each way, a queue of one BDP
  (BDP + queue = 3,333 segments), whose receive window is BDP + queue + H segments, for H
  = 0 to 10,000: each time cwnd reaches the window, about H segments more than the path
  holds are sent and dropped, so every loss episode has about H holes in flight; once with
  RACK-TLP (the `linux` profile) and once with RFC 6675 SACK recovery
  (`loss_recovery = "classic"`); as long as the rate curve's points. The table shows the
  retransmissions per fast recovery, i.e. the holes an episode really had.
- flows: a dumbbell of 1 to 1,000 CUBIC flows, each on its own 10 Gb/s, 1 ms access links,
  sharing a 1 Gb/s, 10 ms bottleneck whose queue is one BDP; 10 s (2 s with --quick), the
  default 10 ms trace.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from tcplab import _sim
from tcplab.api import prepare
from tcplab.plan import resolve, topology_form

RATES_BPS = [1e6, 10e6, 100e6, 1e9, 10e9]
FLOWS = [1, 10, 100, 1000]
HOLES = [0, 10, 100, 1000, 10_000]
HOLES_PATH_BPS = 1e9
SEGMENT_BITS = 1500 * 8
ONE_WAY_S = 0.010


def rate_text(bps: float) -> str:
    return f"{bps / 1e9:g}Gbps" if bps >= 1e9 else f"{bps / 1e6:g}Mbps"


def bdp_bytes(bps: float, rtt_s: float) -> int:
    return max(15_000, int(bps * rtt_s / 8))


def single_flow(bps: float, duration_s: float) -> dict[str, Any]:
    return {
        "name": f"cost-{rate_text(bps)}",
        "duration": f"{duration_s:g}s",
        "hosts": [{"name": h, "tcp": {"sndbuf": "256MiB", "rcvbuf": "256MiB"}} for h in ("a", "b")],
        "links": [
            {
                "kind": "p2p",
                "rate": rate_text(bps),
                "delay": f"{ONE_WAY_S * 1e3:g}ms",
                "queue": {"limit": f"{bdp_bytes(bps, 2 * ONE_WAY_S)}B"},
            }
        ],
        "app": {"kind": "bulk"},
    }


def holes_flow(holes: int, loss_recovery: str, duration_s: float) -> dict[str, Any]:
    """One flow on HOLES_PATH_BPS whose receive window exceeds what the path holds (BDP +
    a one-BDP queue) by `holes` segments."""
    bdp = bdp_bytes(HOLES_PATH_BPS, 2 * ONE_WAY_S)
    window = 2 * bdp + holes * SEGMENT_BITS // 8
    scenario = single_flow(HOLES_PATH_BPS, duration_s)
    for host in scenario["hosts"]:
        host["tcp"] = {
            "sndbuf": "256MiB",
            "rcvbuf": f"{window}B",
            "hystart": False,
            "loss_recovery": loss_recovery,
        }
    scenario["name"] = f"cost-holes-{holes}-{loss_recovery}"
    return scenario


def dumbbell(flows: int, duration_s: float, bottleneck: float = 1e9) -> dict[str, Any]:
    """`flows` CUBIC flows, each on its own 10 Gb/s 1 ms access links, sharing a
    `bottleneck` b/s, 10 ms link whose queue is one BDP."""
    access = {"rate": "10Gbps", "delay": "1ms"}
    rtt_s = 2 * (ONE_WAY_S + 2e-3)
    links = [{"between": [f"s{i}", "r1"], **access} for i in range(flows)]
    links.append(
        {
            "between": ["r1", "r2"],
            "rate": rate_text(bottleneck),
            "delay": f"{ONE_WAY_S * 1e3:g}ms",
            "queue": {"limit": f"{bdp_bytes(bottleneck, rtt_s)}B"},
        }
    )
    links += [{"between": ["r2", f"d{i}"], **access} for i in range(flows)]
    tcp = {"sndbuf": "64MiB", "rcvbuf": "64MiB"}
    return {
        "name": f"cost-dumbbell-{flows}",
        "duration": f"{duration_s:g}s",
        "hosts": [{"name": f"s{i}", "tcp": tcp} for i in range(flows)]
        + [{"name": f"d{i}", "tcp": tcp} for i in range(flows)],
        "routers": [{"name": "r1"}, {"name": "r2"}],
        "links": links,
        "flows": [{"src": f"s{i}", "dst": f"d{i}"} for i in range(flows)],
        "app": {"kind": "bulk"},
    }


def plan_of(scenario: dict[str, Any]) -> str:
    return json.dumps(topology_form(resolve(prepare(scenario))))


def measure(label: str, plan_json: str) -> dict[str, Any]:
    started = time.process_time()
    rows, _, _ = _sim.run_columnar(plan_json)
    cpu_s = time.process_time() - started
    summary = json.loads(rows)["summary"]
    packets = summary["segments_sent"]
    return {
        "point": label,
        "simulated_s": summary["elapsed_s"],
        "packets": packets,
        "retransmits": summary["retransmits"],
        "fast_retransmits": summary["fast_retransmits"],
        "cpu_s": cpu_s,
        "us_per_packet": cpu_s / max(packets, 1) * 1e6,
    }


def best_of(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """A point's rounds as one: the round of least CPU, with the rounds' median cost per
    packet beside it. The runs are deterministic, so every round sent the same segments."""
    if len({(r["packets"], r["retransmits"]) for r in rounds}) != 1:
        raise SystemExit(f"{rounds[0]['point']}: the rounds differ in what they sent")
    best = min(rounds, key=lambda r: r["cpu_s"])
    return {
        **best,
        "rounds": len(rounds),
        "us_per_packet_median": statistics.median(r["us_per_packet"] for r in rounds),
    }


def rate_curve(packets: int, min_duration_s: float) -> list[tuple[str, str]]:
    points = []
    for bps in RATES_BPS:
        duration = max(min_duration_s, packets * SEGMENT_BITS / bps)
        points.append((rate_text(bps), plan_of(single_flow(bps, duration))))
    return points


def holes_curve(
    loss_recovery: str, packets: int, min_duration_s: float
) -> list[tuple[str, str]]:
    duration = max(min_duration_s, packets * SEGMENT_BITS / HOLES_PATH_BPS)
    return [(f"{h:,} holes", plan_of(holes_flow(h, loss_recovery, duration))) for h in HOLES]


def flows_curve(duration_s: float) -> list[tuple[str, str]]:
    return [(f"{n} flows", plan_of(dumbbell(n, duration_s))) for n in FLOWS]


def run_rounds(
    curves: dict[str, list[tuple[str, str]]], rounds: int
) -> dict[str, list[dict[str, Any]]]:
    """Every point once per round, interleaved, so that a busy spell of the machine
    falls on different points in different rounds."""
    runs: dict[str, list[list[dict[str, Any]]]] = {
        curve: [[] for _ in points] for curve, points in curves.items()
    }
    for _ in range(rounds):
        for curve, points in curves.items():
            for k, (label, plan_json) in enumerate(points):
                runs[curve][k].append(measure(label, plan_json))
    return {curve: [best_of(r) for r in point_runs] for curve, point_runs in runs.items()}


def with_ratios(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cheapest = min(p["us_per_packet"] for p in points)
    return [{**p, "ratio": p["us_per_packet"] / cheapest} for p in points]


def show(console: Console, title: str, points: list[dict[str, Any]]) -> None:
    table = Table(title=title)
    columns = ("point", "simulated", "packets", "retransmits", "per recovery", "CPU")
    for column in (*columns, "µs/packet", "median", "ratio"):
        table.add_column(column, justify="left" if column == "point" else "right")
    for p in points:
        per_recovery = p["retransmits"] / p["fast_retransmits"] if p["fast_retransmits"] else 0
        table.add_row(
            p["point"],
            f"{p['simulated_s']:.2f} s",
            f"{p['packets']:,}",
            f"{p['retransmits']:,}",
            f"{per_recovery:,.0f}",
            f"{p['cpu_s']:.2f} s",
            f"{p['us_per_packet']:.3f}",
            f"{p['us_per_packet_median']:.3f}",
            f"{p['ratio']:.2f}x",
        )
    spread = max(p["ratio"] for p in points)
    verdict = "PASS" if spread <= 2.0 else "FAIL"
    medians = [p["us_per_packet_median"] for p in points]
    table.caption = (
        f"highest / lowest cost per packet, least of {points[0]['rounds']} rounds:"
        f" {spread:.2f}x (target ≤ 2x: {verdict}); of the medians: "
        f"{max(medians) / min(medians):.2f}x"
    )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer packets, shorter runs")
    parser.add_argument(
        "--curves", default="rate,holes,flows", help="which curves: rate, holes, flows"
    )
    parser.add_argument(
        "--packets", type=int, help="segments per point of the rate and holes curves"
    )
    parser.add_argument(
        "--rounds", type=int, help="runs of every point, interleaved (default 3, --quick 1)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args()
    curves = set(args.curves.split(","))
    unknown = curves - {"rate", "holes", "flows"}
    if unknown:
        parser.error(f"--curves takes rate, holes and flows, got {', '.join(sorted(unknown))}")
    packets = args.packets or (50_000 if args.quick else 200_000)
    min_duration = 0.5 if args.quick else 2.0
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    if rounds < 1:
        parser.error(f"--rounds takes a whole number of at least 1, got {rounds}")
    curves_plans: dict[str, list[tuple[str, str]]] = {}
    if "rate" in curves:
        curves_plans["rate"] = rate_curve(packets, min_duration)
    if "holes" in curves:
        for recovery, curve in (("rack", "holes-rack"), ("classic", "holes-sack")):
            curves_plans[curve] = holes_curve(recovery, packets, min_duration)
    if "flows" in curves:
        curves_plans["flows"] = flows_curve(2.0 if args.quick else 10.0)
    out = {
        curve: with_ratios(points) for curve, points in run_rounds(curves_plans, rounds).items()
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    console = Console()
    titles = {
        "rate": "CPU per packet against rate: 1 CUBIC flow, 10 ms each way, queue 1 BDP",
        "holes-rack": "CPU per packet against holes in flight: 1 Gb/s, 10 ms, RACK-TLP",
        "holes-sack": "CPU per packet against holes in flight: 1 Gb/s, 10 ms, RFC 6675 SACK",
        "flows": "CPU per packet against flows: dumbbell, 1 Gb/s 10 ms bottleneck, queue 1 BDP",
    }
    for curve, points in out.items():
        show(console, titles[curve], points)


if __name__ == "__main__":
    main()
