#!/usr/bin/env python3
"""Peer comparison of tcplab's simulator with ns-3 3.44 on the same plans.

    bash bench/setup-ns3.sh && .venv/bin/python bench/compare_ns3.py [--quick] [--json]

Each scenario is written once as a tcplab spec and resolved into plans (tcplab.plan.resolve);
tcplab runs each plan in-process (tcplab._sim.run) and ns-3 runs the very same plan JSON in a
subprocess under bench/.venv-ns3 (bench/ns3_peer.py). Targets (printed PASS/FAIL; a missed
target does not change the exit status, only a crash does):

  (a) GEO 2.048 Mb/s, 275 ms each way, BER 1e-6 and 3e-6, 200 s bulk, 5 seeds:
      mean goodput within 10 % of ns-3's.
  (b) 100 Mb/s, 300 ms each way, one-BDP queue, 10 s: delivered bytes within 10 % of ns-3's,
      per-second series side by side.
  (c) wall-clock ratio ns-3 / tcplab for (b), ns-3's Simulator::Run timed apart from its
      import: at least 20x.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tcplab import _sim
from tcplab.plan import resolve
from tcplab.spec import Spec, validate_spec

BENCH = Path(__file__).resolve().parent
NS3_PYTHON = BENCH / ".venv-ns3" / "bin" / "python"
NS3_PEER = BENCH / "ns3_peer.py"

GOODPUT_TOLERANCE = 0.10
DELIVERED_TOLERANCE = 0.10
SPEED_TARGET = 20.0
# tcplab runs in milliseconds, so one timing is mostly noise; take the median of a few.
TCPLAB_TIMING_REPEATS = 5


# RFC 6298's 1 s floor (also ns-3's default). With 200 ms (Linux, tcplab's default) ns-3
# livelocks on this path: a lone segment's delayed ACK arrives after RTT + 200 ms > RTO,
# and ns-3 recomputes RTO from SRTT on every new ACK (TcpSocketBase::NewAck), discarding
# Karn's back-off, so every segment times out spuriously (see bench/README.md).
DEFAULT_MIN_RTO = "1s"


def tcp(sndbuf: str, rcvbuf: str, window_scaling: bool, min_rto: str) -> dict[str, Any]:
    """One host's TCP block. Every setting that differs between the two simulators' defaults
    is written out, so that the plan (and so ns-3) receives it explicitly."""
    return {
        "cc": "newreno",
        "sndbuf": sndbuf,
        "rcvbuf": rcvbuf,
        "mss": 1460,
        "initial_window": 10,
        "window_scaling": window_scaling,
        "sack": False,
        # ns-3's NewReno has no byte counting; timestamps would cost 12 B per segment.
        "timestamps": False,
        "abc": False,
        "delayed_ack": True,
        "delack_timeout": "200ms",
        "nagle": True,
        "fast_retransmit": True,
        "min_rto": min_rto,
    }


def geo_spec(ber: float, duration: str, min_rto: str = DEFAULT_MIN_RTO) -> Spec:
    """Target (a): the geo-netperf example with a forward bit error rate."""
    host_tcp = tcp("32KiB", "32KiB", window_scaling=False, min_rto=min_rto)
    return validate_spec(
        {
            "name": f"geo-ber-{ber:g}",
            "duration": duration,
            "hosts": [{"name": "client", "tcp": host_tcp}, {"name": "server", "tcp": host_tcp}],
            "links": [
                {
                    "kind": "p2p",
                    "rate": "2.048Mbps",
                    "delay": "275ms",
                    "queue": {"limit": "100p"},
                    "ber": ber,
                }
            ],
            "app": {"kind": "bulk", "message_size": "2048KiB"},
        }
    )


def lfn_spec(duration: str, min_rto: str = DEFAULT_MIN_RTO) -> Spec:
    """Target (b): the long-fat-pipe example; the queue is one BDP, 100 Mb/s x 0.6 s / 8."""
    host_tcp = tcp("64MiB", "64MiB", window_scaling=True, min_rto=min_rto)
    return validate_spec(
        {
            "name": "long-fat-pipe",
            "duration": duration,
            "hosts": [{"name": "client", "tcp": host_tcp}, {"name": "server", "tcp": host_tcp}],
            "links": [
                {"kind": "p2p", "rate": "100Mbps", "delay": "300ms", "queue": {"limit": "7500000B"}}
            ],
            "app": {"kind": "bulk", "message_size": "2048KiB"},
        }
    )


@dataclass
class Pair:
    """One plan run in both simulators."""

    scenario: str
    seed: int
    plan: dict[str, Any]
    tcplab: dict[str, Any] = field(default_factory=dict)
    tcplab_wall_s: float = 0.0
    ns3: dict[str, Any] = field(default_factory=dict)


def run_tcplab(plan: dict[str, Any], repeats: int = 1) -> tuple[dict[str, Any], float]:
    """Result and median wall time of `repeats` runs of `plan` (JSON in, JSON out included:
    that is what a Python user of tcplab pays)."""
    text = json.dumps(plan)
    walls, out = [], ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = _sim.run(text)
        walls.append(time.perf_counter() - t0)
    return json.loads(out), statistics.median(walls)


def run_ns3(plan: dict[str, Any], verbose: bool = False) -> dict[str, Any]:
    """ns3_peer.py on `plan` in the ns-3 venv; raises on a crash, returns its JSON."""
    cmd = [str(NS3_PYTHON), str(NS3_PEER), "-"] + (["--verbose"] if verbose else [])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=json.dumps(plan), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(
            f"ns3_peer.py exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr[-4000:]}"
        )
    result = json.loads(proc.stdout)
    result["wall_s_process"] = wall
    return result


def pct_diff(ours: float, theirs: float) -> float:
    """(tcplab − ns-3) / ns-3, in percent; 0 when both are 0."""
    if theirs == 0:
        return 0.0 if ours == 0 else float("inf")
    return 100.0 * (ours - theirs) / theirs


def verdict(ok: bool) -> str:
    return "[green]PASS[/]" if ok else "[red]FAIL[/]"


def kbps(bps: float) -> str:
    return f"{bps / 1e3:,.1f}"


def losses(summary: dict[str, Any]) -> str:
    return (
        f"{summary.get('retransmits', 0)}/{summary.get('fast_retransmits', 0)}/"
        f"{summary.get('timeouts', 0)}"
    )


def error_drops(result: dict[str, Any]) -> int:
    return sum(int(link.get("drops_error", 0)) for link in result.get("links", []))


def queue_drops(result: dict[str, Any]) -> int:
    return sum(int(link.get("drops_queue", 0)) for link in result.get("links", []))


def geo_report(console: Console, name: str, pairs: list[Pair]) -> dict[str, Any]:
    table = Table(title=f"(a) {name}: mean goodput over seeds, tcplab vs ns-3")
    for col in (
        "seed",
        "tcplab kbit/s",
        "ns-3 kbit/s",
        "ratio",
        "tcplab retx/FR/RTO",
        "ns-3 retx/FR/RTO",
        "error drops tcplab/ns-3",
    ):
        table.add_column(col, justify="right", no_wrap=True)
    for p in pairs:
        ours, theirs = p.tcplab["summary"]["goodput_bps"], p.ns3["goodput_bps"]
        table.add_row(
            str(p.seed),
            kbps(ours),
            kbps(theirs),
            f"{ours / theirs:.3f}" if theirs else "—",
            losses(p.tcplab["summary"]),
            losses(p.ns3),
            f"{error_drops(p.tcplab)}/{error_drops(p.ns3)}",
        )
    ours_mean = statistics.fmean(p.tcplab["summary"]["goodput_bps"] for p in pairs)
    theirs_mean = statistics.fmean(p.ns3["goodput_bps"] for p in pairs)
    diff = pct_diff(ours_mean, theirs_mean)
    ok = abs(diff) <= 100 * GOODPUT_TOLERANCE
    table.add_section()
    table.add_row(
        "mean",
        kbps(ours_mean),
        kbps(theirs_mean),
        f"{ours_mean / theirs_mean:.3f}" if theirs_mean else "—",
        "",
        "",
        "",
    )
    console.print(table)
    console.print(
        f"    mean goodput: tcplab {diff:+.1f} % against ns-3 "
        f"(target within ±{100 * GOODPUT_TOLERANCE:.0f} %): {verdict(ok)}\n"
    )
    return {
        "scenario": name,
        "seeds": [p.seed for p in pairs],
        "tcplab_goodput_bps": [p.tcplab["summary"]["goodput_bps"] for p in pairs],
        "ns3_goodput_bps": [p.ns3["goodput_bps"] for p in pairs],
        "tcplab_mean_bps": ours_mean,
        "ns3_mean_bps": theirs_mean,
        "diff_pct": diff,
        "pass": ok,
    }


def lfn_report(console: Console, pair: Pair) -> dict[str, Any]:
    ours_s, theirs_s = pair.tcplab["series"], pair.ns3["series"]
    table = Table(title="(b) long fat pipe: bytes delivered per interval")
    for col in ("t (s)", "tcplab B", "ns-3 B", "tcplab − ns-3"):
        table.add_column(col, justify="right")
    # Both series come from the same plan (same duration and interval), so same length.
    rows = zip(ours_s["t_s"], ours_s["interval_bytes"], theirs_s["interval_bytes"], strict=True)
    for t, a, b in rows:
        table.add_row(f"{t:g}", f"{a:,}", f"{b:,}", f"{a - b:+,}")
    ours, theirs = pair.tcplab["summary"]["bytes_delivered"], pair.ns3["bytes_delivered"]
    diff = pct_diff(ours, theirs)
    ok = abs(diff) <= 100 * DELIVERED_TOLERANCE
    table.add_section()
    table.add_row("total", f"{ours:,}", f"{theirs:,}", f"{diff:+.1f} % {verdict(ok)}")
    console.print(table)
    console.print(
        f"    losses (retx/FR/RTO): tcplab {losses(pair.tcplab['summary'])}, "
        f"ns-3 {losses(pair.ns3)}; queue drops: tcplab {queue_drops(pair.tcplab)}, "
        f"ns-3 {queue_drops(pair.ns3)}"
    )
    return {
        "scenario": pair.scenario,
        "tcplab_bytes": ours,
        "ns3_bytes": theirs,
        "diff_pct": diff,
        "pass": ok,
        "series": {
            "t_s": ours_s["t_s"],
            "tcplab": ours_s["interval_bytes"],
            "ns3": theirs_s["interval_bytes"],
        },
    }


def speed_report(console: Console, pair: Pair) -> dict[str, Any]:
    ns3_run = pair.ns3["wall_s_run"]
    ratio = ns3_run / pair.tcplab_wall_s if pair.tcplab_wall_s > 0 else float("inf")
    ok = ratio >= SPEED_TARGET
    table = Table(
        title=f"(c) wall clock for (b), same machine, same invocation "
        f"(target ns-3/tcplab >= {SPEED_TARGET:g}x)"
    )
    for col in ("", "seconds", "note"):
        table.add_column(col)
    table.add_row(
        "tcplab _sim.run",
        f"{pair.tcplab_wall_s:.4f}",
        f"median of {TCPLAB_TIMING_REPEATS}, plan/result JSON included",
    )
    table.add_row("ns-3 Simulator::Run", f"{ns3_run:.4f}", "one run, import excluded")
    table.add_row("ns-3 import (cppyy)", f"{pair.ns3['wall_s_import']:.2f}", "not counted")
    table.add_row("ns-3 process", f"{pair.ns3['wall_s_process']:.2f}", "not counted")
    table.add_section()
    table.add_row("ratio ns-3 / tcplab", f"{ratio:,.1f}x", verdict(ok))
    console.print(table)
    console.print(
        f"    events: tcplab {pair.tcplab['summary'].get('events', 0):,}, "
        f"ns-3 {pair.ns3.get('events', 0):,}"
    )
    return {
        "tcplab_wall_s": pair.tcplab_wall_s,
        "ns3_wall_s_run": ns3_run,
        "ns3_wall_s_import": pair.ns3["wall_s_import"],
        "ns3_wall_s_process": pair.ns3["wall_s_process"],
        "ratio": ratio,
        "pass": ok,
    }


def settings_report(console: Console, pair: Pair) -> None:
    table = Table(title=f"ns-3 settings for {pair.scenario} (seed {pair.seed})")
    for col in ("scope", "ns-3 attribute", "value", "why"):
        table.add_column(col)
    for row in pair.ns3.get("settings", []):
        table.add_row(*row)
    console.print(table)
    for w in pair.ns3.get("warnings", []):
        console.print(f"[yellow]warning:[/] {w}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="2 seeds and 60 s for (a): a smoke run, not the target"
    )
    ap.add_argument("--json", action="store_true", help="print one JSON document instead")
    ap.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also print every ns-3 attribute set, per scenario",
    )
    ap.add_argument(
        "--min-rto",
        default=DEFAULT_MIN_RTO,
        help="min RTO on both sides (default %(default)s; 200ms shows ns-3's "
        "spurious-timeout livelock)",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="ns-3 processes at once for (a) (each takes ~0.7 GB)",
    )
    args = ap.parse_args(argv)
    console = Console(stderr=args.json)
    if not console.is_terminal:
        # Rich falls back to 80 columns when piped, which would cut the tables' columns.
        console.width = 120

    if not NS3_PYTHON.exists():
        console.print(f"[red]{NS3_PYTHON} missing: run `bash bench/setup-ns3.sh` first[/]")
        return 1

    seeds = [1, 2] if args.quick else [1, 2, 3, 4, 5]
    geo_duration = "60s" if args.quick else "200s"
    geo_pairs: dict[str, list[Pair]] = {}
    for ber in (1e-6, 3e-6):
        spec = geo_spec(ber, geo_duration, args.min_rto)
        geo_pairs[spec.name] = [Pair(spec.name, s, resolve(spec, seed=s)) for s in seeds]
    lfn = lfn_spec("10s", args.min_rto)
    lfn_pair = Pair(lfn.name, 1, resolve(lfn, seed=1))

    # tcplab first, with no ns-3 process competing for the two cores.
    for pairs in geo_pairs.values():
        for p in pairs:
            p.tcplab, p.tcplab_wall_s = run_tcplab(p.plan)
    lfn_pair.tcplab, lfn_pair.tcplab_wall_s = run_tcplab(lfn_pair.plan, TCPLAB_TIMING_REPEATS)

    # ns-3: (a) in parallel (each process spends ~10 s importing), then (b) alone so that
    # its Simulator::Run timing is not disturbed.
    all_geo = [p for pairs in geo_pairs.values() for p in pairs]
    console.print(
        f"running {len(all_geo) + 1} ns-3 simulations "
        f"(~10 s of cppyy import each, {args.jobs} at a time)..."
    )
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for p, result in zip(
            all_geo, pool.map(lambda q: run_ns3(q.plan, args.verbose), all_geo), strict=True
        ):
            p.ns3 = result
    lfn_pair.ns3 = run_ns3(lfn_pair.plan, args.verbose)

    if args.verbose:
        for pairs in geo_pairs.values():
            settings_report(console, pairs[0])
        settings_report(console, lfn_pair)

    report = {
        "quick": args.quick,
        "min_rto": args.min_rto,
        "ns3_version": lfn_pair.ns3.get("ns3_version"),
        "geo": [geo_report(console, name, pairs) for name, pairs in geo_pairs.items()],
        "lfn": lfn_report(console, lfn_pair),
        "speed": speed_report(console, lfn_pair),
    }
    if args.quick:
        console.print(
            "[yellow]--quick: fewer seeds and a shorter (a); verdicts are indicative only[/]"
        )
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
