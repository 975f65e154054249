#!/usr/bin/env python3
"""Peer comparison of tcplab's simulator with ns-3 3.44 on the same plans.

    bash bench/setup-ns3.sh && .venv/bin/python bench/compare_ns3.py [--quick] [--json]
        [--scenarios a,b,c,d,e] [--verbose]

Each scenario is written once as a tcplab spec and resolved into plans (tcplab.plan.resolve);
tcplab runs each plan in-process (tcplab._sim.run) and ns-3 runs the very same plan JSON in
`ns3_peer.py --serve` processes under bench/.venv-ns3, each paying the cppyy import once.
Targets (printed PASS/FAIL; a missed target does not change the exit status, only a crash
does):

  (a) GEO 2.048 Mb/s, 275 ms each way, BER 1e-6 and 3e-6, 200 s bulk, 5 seeds:
      mean goodput within 10 % of ns-3's.
  (b) 100 Mb/s, 300 ms each way, one-BDP queue, 10 s: delivered bytes within 10 % of ns-3's,
      per-second series side by side.
  (c) wall-clock ratio ns-3 / tcplab for (b), ns-3's Simulator::Run timed apart from its
      import: at least 20x.
  (d) (b)'s path with SACK and 8 MiB buffers, {newreno, cubic} x initial window {10, 256,
      2560}: per-second series side by side, delivered bytes within 10 % per combination.
  (e) (a)'s path at BER 1e-6 with 64 KiB buffers: NewReno, NewReno + SACK and Hybla, mean
      goodput within 10 % each, and whether SACK / Hybla beat NewReno on both simulators.
  (f) a dumbbell of 10, 50 and 1,000 NewReno + SACK flows (1 Gb/s 1 ms access links, a
      150 Mb/s 20 ms bottleneck with a 1,000-packet queue, 1 MiB buffers), 10 s: delivered
      bytes within 10 %, and the CPU of ns-3's Simulator::Run / tcplab's _sim.run at
      least 20x each.
  (g) (b)'s path losing 0.01 % of the forward packets at random, NewReno + SACK, 8 MiB
      buffers, 60 s, seeds 1-3: mean delivered bytes within 10 %, and the CPU ratio (as
      (f)) at least 20x.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tcplab import _sim
from tcplab.plan import resolve, topology_form
from tcplab.spec import Spec, canonical_dict, validate_spec

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


# What tcplab's `abc` must be for its slow start to grow as ns-3's algorithm does: ns-3's
# TcpNewReno adds one MSS per ACK, its TcpCubic adds segmentsAcked*MSS per ACK (tcplab's
# byte counting, L = 2 SMSS, for every ACK that covers at most two segments, as a delayed
# ACK does), and both simulators' Hybla add 2^rho - 1 segments per ACK whatever it covers.
ABC_LIKE_NS3 = {"newreno": False, "cubic": True, "hybla": False}


def tcp(
    sndbuf: str,
    rcvbuf: str,
    window_scaling: bool,
    min_rto: str,
    *,
    cc: str = "newreno",
    sack: bool = False,
    initial_window: int = 10,
) -> dict[str, Any]:
    """One host's TCP block. Every field is written out, none left to the profile, so that
    the plan (and so ns-3) receives each setting explicitly."""
    return {
        "cc": cc,
        "sndbuf": sndbuf,
        # ns-3's TcpTxBuffer holds SndBufSize bytes of data, not Linux's skb memory.
        "sndbuf_accounting": "payload",
        "rcvbuf": rcvbuf,
        "mss": 1460,
        "initial_window": initial_window,
        "window_scaling": window_scaling,
        "sack": sack,
        # Timestamps would cost 12 B per segment on both sides; neither needs them here.
        "timestamps": False,
        "abc": ABC_LIKE_NS3[cc],
        # The linux profile turns HyStart++ on; ns-3's TcpCubic::HyStart (the 2008 HyStart,
        # not RFC 9406) is set off to match, and ns-3's NewReno and Hybla have none.
        "hystart": False,
        "delayed_ack": True,
        "delack_timeout": "200ms",
        "nagle": True,
        # ns-3's TcpSocketBase holds a small segment while any data is unacknowledged.
        "nagle_variant": "rfc896",
        "fast_retransmit": True,
        "min_rto": min_rto,
        # ns-3's TcpCubic grows only while m_isCwndLimited; its NewReno and Hybla always
        # grow, but there the receive window never stays below cwnd for long in (a)-(e).
        "cwnd_validation": cc == "cubic",
        # ns-3's TcpSocketBase connects with a SYN.
        "handshake": True,
        # ns-3 recovers by duplicate ACKs (RFC 6675 with SACK), not RACK-TLP
        "loss_recovery": "classic",
        # ns-3's receiver sends no D-SACK, and its sender undoes nothing.
        "dsack": False,
        "undo": False,
        "frto": False,
        # ns-3 keeps cwnd across idle spells.
        "slow_start_after_idle": False,
        # The comparison keeps the CUBIC it was validated with (RFC 9438 as written), and
        # ns-3's receiver has neither Linux's quick ACKs nor its window growth.
        "cubic_variant": "rfc9438",
        "reno_variant": "rfc5681",
        "quickack": False,
        "initial_rwnd": None,
        # ns-3 floors the whole RTO with MinRto (RFC 6298).
        "rto_form": "rfc6298",
    }


def geo_spec(
    ber: float,
    duration: str,
    min_rto: str = DEFAULT_MIN_RTO,
    *,
    cc: str = "newreno",
    sack: bool = False,
    buffers: str = "32KiB",
) -> Spec:
    """Targets (a) and (e): the geo-netperf example with a forward bit error rate."""
    host_tcp = tcp(buffers, buffers, window_scaling=False, min_rto=min_rto, cc=cc, sack=sack)
    suffix = "" if (cc, sack) == ("newreno", False) else f"-{cc}{'-sack' if sack else ''}"
    return validate_spec(
        {
            "name": f"geo-ber-{ber:g}{suffix}",
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


def lfn_spec(
    duration: str,
    min_rto: str = DEFAULT_MIN_RTO,
    *,
    cc: str = "newreno",
    initial_window: int = 10,
    sack: bool = False,
    buffers: str = "64MiB",
) -> Spec:
    """Targets (b) and (d): the long-fat-pipe example; the queue is one BDP, 100 Mb/s x 0.6 s
    / 8 = 7.5 MB."""
    host_tcp = tcp(
        buffers,
        buffers,
        window_scaling=True,
        min_rto=min_rto,
        cc=cc,
        sack=sack,
        initial_window=initial_window,
    )
    default = (cc, initial_window, sack, buffers) == ("newreno", 10, False, "64MiB")
    name = (
        "long-fat-pipe"
        if default
        else f"lfn-{cc}-iw{initial_window}{'-sack' if sack else ''}-{buffers}"
    )
    return validate_spec(
        {
            "name": name,
            "duration": duration,
            "hosts": [{"name": "client", "tcp": host_tcp}, {"name": "server", "tcp": host_tcp}],
            "links": [
                {"kind": "p2p", "rate": "100Mbps", "delay": "300ms", "queue": {"limit": "7500000B"}}
            ],
            "app": {"kind": "bulk", "message_size": "2048KiB"},
        }
    )


def dumbbell_spec(flows: int, duration: str, min_rto: str = DEFAULT_MIN_RTO) -> Spec:
    """Target (f): `flows` senders, each on its own access link to r1, share r1-r2 with as
    many receivers behind r2."""
    host_tcp = tcp(
        DUMBBELL_BUFFERS, DUMBBELL_BUFFERS, window_scaling=True, min_rto=min_rto, sack=True
    )
    access = {"rate": "1Gbps", "delay": "1ms", "queue": {"limit": "1000p"}}
    links = [{"between": [f"s{i}", "r1"], **access} for i in range(flows)]
    links.append(
        {"between": ["r1", "r2"], "rate": "150Mbps", "delay": "20ms", "queue": {"limit": "1000p"}}
    )
    links += [{"between": ["r2", f"d{i}"], **access} for i in range(flows)]
    return validate_spec(
        {
            "name": f"dumbbell-{flows}",
            "duration": duration,
            "hosts": [{"name": f"s{i}", "tcp": host_tcp} for i in range(flows)]
            + [{"name": f"d{i}", "tcp": host_tcp} for i in range(flows)],
            "routers": [{"name": "r1"}, {"name": "r2"}],
            "links": links,
            "flows": [{"src": f"s{i}", "dst": f"d{i}"} for i in range(flows)],
            "app": {"kind": "bulk", "message_size": "2048KiB"},
        }
    )


def lossy_lfn_spec(duration: str, min_rto: str = DEFAULT_MIN_RTO) -> Spec:
    """Target (g): (d)'s long fat pipe (8 MiB buffers: no slow-start overshoot) losing
    LOSSY_LFN_LOSS of the forward packets at random."""
    data = canonical_dict(lfn_spec(duration, min_rto, sack=True, buffers=LFN_MATRIX_BUFFERS))
    data["name"] = "lfn-lossy"
    data["links"][0]["loss"] = LOSSY_LFN_LOSS
    return validate_spec(data)


@dataclass
class Pair:
    """One plan run in both simulators."""

    scenario: str
    seed: int
    plan: dict[str, Any]
    # Rough seconds of ns-3 Simulator::Run on an idle 2-core machine, so that the pool starts
    # the long runs first and the short ones fill in beside them.
    ns3_cost_s: float = 1.0
    # ns3_peer.py switches sent beside the plan (ns3_options), e.g. the Hybla rho diagnostic.
    ns3_options: dict[str, Any] = field(default_factory=dict)
    tcplab: dict[str, Any] = field(default_factory=dict)
    tcplab_wall_s: float = 0.0
    tcplab_cpu_s: float = 0.0
    ns3: dict[str, Any] = field(default_factory=dict)


def run_tcplab(plan: dict[str, Any], repeats: int = 1) -> tuple[dict[str, Any], float, float]:
    """Result and median wall and CPU time of `repeats` runs of `plan` (JSON in, JSON out
    included: that is what a Python user of tcplab pays)."""
    text = json.dumps(topology_form(plan))
    walls, cpus, out = [], [], ""
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = _sim.run(text)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return json.loads(out), statistics.median(walls), statistics.median(cpus)


class Ns3Worker:
    """One `ns3_peer.py --serve` process: it pays the cppyy import (7-12 s idle, far more on
    a busy machine) once and then runs plans one at a time, a JSON line each way."""

    def __init__(self) -> None:
        # stderr to a file, not a pipe: nobody reads it while the process runs, and a full
        # pipe would block it. It holds cppyy's noise and, on a crash, the traceback.
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [str(NS3_PYTHON), str(NS3_PEER), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )

    def run(self, plan: dict[str, Any], options: dict[str, Any] | None = None) -> dict[str, Any]:
        """The plan's ns-3 result; raises when the process dies or refuses the plan."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        t0 = time.perf_counter()
        line_in = {**plan, "ns3_options": options} if options else plan
        self.proc.stdin.write(json.dumps(line_in) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            self.stderr.seek(0)
            raise RuntimeError(f"ns3_peer.py --serve exited {rc}:\n{self.stderr.read()[-4000:]}")
        result = json.loads(line)
        if "error" in result:
            raise RuntimeError(f"ns3_peer.py refused the plan: {result['error']}")
        result["wall_s_call"] = time.perf_counter() - t0
        return result

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()
        self.stderr.close()


def run_ns3_pool(pairs: list[Pair], workers: list[Ns3Worker], console: Console) -> None:
    """Every pair's plan on the workers, longest expected runs first, each worker taking the
    next plan as soon as it is free."""
    todo: queue.Queue[Pair] = queue.Queue()
    for p in sorted(pairs, key=lambda q: -q.ns3_cost_s):
        todo.put(p)
    t0 = time.perf_counter()

    def drain(worker: Ns3Worker) -> None:
        while True:
            try:
                p = todo.get_nowait()
            except queue.Empty:
                return
            p.ns3 = worker.run(p.plan, p.ns3_options)
            if p.ns3["wall_s_run"] > 20:
                console.print(
                    f"  ns-3 {p.scenario} seed {p.seed}: Simulator::Run "
                    f"{p.ns3['wall_s_run']:.0f} s (at {time.perf_counter() - t0:.0f} s)"
                )

    with ThreadPoolExecutor(max_workers=len(workers)) as pool:
        # list() re-raises the first worker's exception here.
        list(pool.map(drain, workers))


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


def geo_report(console: Console, label: str, name: str, pairs: list[Pair]) -> dict[str, Any]:
    table = Table(title=f"{label} {name}: mean goodput over seeds, tcplab vs ns-3")
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
        "tcplab_retx_fr_rto": [losses(p.tcplab["summary"]) for p in pairs],
        "ns3_retx_fr_rto": [losses(p.ns3) for p in pairs],
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


def lfn_label(pair: Pair) -> str:
    tcp_block = pair.plan["hosts"][0]["tcp"]
    return f"{tcp_block['cc']} IW{tcp_block['initial_window']}"


def lfn_matrix_report(console: Console, pairs: list[Pair]) -> list[dict[str, Any]]:
    """(d): one column pair per (cc, IW), then the totals with the ±10 % verdict."""
    series = Table(
        title=f"(d) long fat pipe, {pairs[0].plan['hosts'][0]['tcp']['sndbuf']:,} B buffers, "
        "SACK on: MB (10^6 B) delivered per second, tcplab | ns-3"
    )
    series.add_column("t (s)", justify="right")
    for p in pairs:
        series.add_column(f"{lfn_label(p)}\ntcplab", justify="right")
        series.add_column("\nns-3", justify="right")
    t_s = pairs[0].tcplab["series"]["t_s"]
    for i, t in enumerate(t_s):
        cells = [f"{t:g}"]
        for p in pairs:
            cells.append(f"{p.tcplab['series']['interval_bytes'][i] / 1e6:.2f}")
            cells.append(f"{p.ns3['series']['interval_bytes'][i] / 1e6:.2f}")
        series.add_row(*cells)
    console.print(series)

    totals = Table(title=f"(d) delivered in 10 s (target within ±{DELIVERED_TOLERANCE:.0%})")
    for col in (
        "cc, IW",
        "tcplab MB",
        "ns-3 MB",
        "difference",
        "tcplab retx/FR/RTO",
        "ns-3 retx/FR/RTO",
        "queue drops tcplab/ns-3",
        "wall s tcplab/ns-3",
    ):
        totals.add_column(col, justify="right", no_wrap=True)
    out = []
    for p in pairs:
        ours, theirs = p.tcplab["summary"]["bytes_delivered"], p.ns3["bytes_delivered"]
        diff = pct_diff(ours, theirs)
        ok = abs(diff) <= 100 * DELIVERED_TOLERANCE
        totals.add_row(
            lfn_label(p),
            f"{ours / 1e6:.2f}",
            f"{theirs / 1e6:.2f}",
            f"{diff:+.1f} % {verdict(ok)}",
            losses(p.tcplab["summary"]),
            losses(p.ns3),
            f"{queue_drops(p.tcplab)}/{queue_drops(p.ns3)}",
            f"{p.tcplab_wall_s:.2f}/{p.ns3['wall_s_run']:.0f}",
        )
        out.append(
            {
                "scenario": p.scenario,
                "cc": p.plan["hosts"][0]["tcp"]["cc"],
                "initial_window": p.plan["hosts"][0]["tcp"]["initial_window"],
                "tcplab_bytes": ours,
                "ns3_bytes": theirs,
                "diff_pct": diff,
                "pass": ok,
                "tcplab_retx_fr_rto": losses(p.tcplab["summary"]),
                "ns3_retx_fr_rto": losses(p.ns3),
                "tcplab_wall_s": p.tcplab_wall_s,
                "ns3_wall_s_run": p.ns3["wall_s_run"],
                "series": {
                    "t_s": p.tcplab["series"]["t_s"],
                    "tcplab": p.tcplab["series"]["interval_bytes"],
                    "ns3": p.ns3["series"]["interval_bytes"],
                },
            }
        )
    console.print(totals)
    console.print(
        "    wall: tcplab _sim.run and ns-3 Simulator::Run, seconds (ns-3's loss recovery "
        "walks its send list per ACK, see bench/README.md)\n"
    )
    return out


def geo_variant_label(pair: Pair) -> str:
    tcp_block = pair.plan["hosts"][0]["tcp"]
    label = f"{tcp_block['cc']}{' + SACK' if tcp_block['sack'] else ''}"
    return label + (" (ns-3 rho set)" if pair.ns3_options.get("hybla_rho_fix") else "")


def gain_over(values: list[float], base: list[float]) -> tuple[float, float, str]:
    """Gain of mean(values) over mean(base) in percent, two standard errors of that gain
    (the two means' errors combined, seeds taken as independent), and "higher", "lower" or
    "same" (within two standard errors)."""
    mean_v, mean_b = statistics.fmean(values), statistics.fmean(base)

    def se(xs: list[float]) -> float:
        return statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0.0

    gain = pct_diff(mean_v, mean_b)
    two_se = 200.0 * (se(values) ** 2 + se(base) ** 2) ** 0.5 / mean_b if mean_b else 0.0
    kind = "higher" if gain > two_se else "lower" if gain < -two_se else "same"
    return gain, two_se, kind


def geo_matrix_report(console: Console, variants: dict[str, list[Pair]]) -> dict[str, Any]:
    """(e): each variant against ns-3 (±10 %), and against NewReno on each simulator."""
    rows = [geo_report(console, "(e)", name, pairs) for name, pairs in variants.items()]
    base = rows[0]  # plain NewReno comes first
    summary = Table(
        title="(e) GEO, BER 1e-6: mean goodput, and the gain over NewReno on each simulator "
        "(± two standard errors over the seeds)"
    )
    for col in (
        "variant",
        "tcplab kbit/s",
        "ns-3 kbit/s",
        "tcplab vs ns-3",
        "tcplab vs NewReno",
        "ns-3 vs NewReno",
        "same ordering",
    ):
        summary.add_column(col, justify="right", no_wrap=True)
    for row, pairs in zip(rows, variants.values(), strict=True):
        row["label"] = geo_variant_label(pairs[0])
        cells = ["—", "—", "—"]
        if row is not base:
            ours = gain_over(row["tcplab_goodput_bps"], base["tcplab_goodput_bps"])
            theirs = gain_over(row["ns3_goodput_bps"], base["ns3_goodput_bps"])
            keys = ("pct", "two_se_pct", "kind")
            row["tcplab_gain_over_newreno"] = dict(zip(keys, ours, strict=True))
            row["ns3_gain_over_newreno"] = dict(zip(keys, theirs, strict=True))
            row["same_ordering"] = ours[2] == theirs[2]
            cells = [
                f"{ours[0]:+.1f} ± {ours[1]:.1f} % ({ours[2]})",
                f"{theirs[0]:+.1f} ± {theirs[1]:.1f} % ({theirs[2]})",
                "yes" if row["same_ordering"] else "[red]no[/]",
            ]
        summary.add_row(
            row["label"],
            kbps(row["tcplab_mean_bps"]),
            kbps(row["ns3_mean_bps"]),
            f"{row['diff_pct']:+.1f} % {verdict(row['pass'])}",
            *cells,
        )
    console.print(summary)
    return {"variants": rows}


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
    table.add_row(
        "ns-3 Simulator::Run", f"{ns3_run:.4f}", "one run, alone on the machine, import excluded"
    )
    table.add_row(
        "ns-3 import (cppyy)",
        f"{pair.ns3['wall_s_import']:.2f}",
        "not counted; paid once by the process, before its first plan",
    )
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
        "ratio": ratio,
        "pass": ok,
    }


def speed_matrix_report(console: Console, pairs: list[Pair]) -> list[dict[str, Any]]:
    """(f) and (g): per scenario, delivered bytes side by side (the mean over seeds) and the
    wall-clock ratio of the summed ns-3 Simulator::Run to the summed tcplab _sim.run."""
    table = Table(
        title="(f) dumbbells (10 s) and (g) lossy long fat pipe (60 s): delivered and wall clock, "
        f"same invocation (targets: within ±{DELIVERED_TOLERANCE:.0%}, ns-3/tcplab >= "
        f"{SPEED_TARGET:g}x)"
    )
    for col in (
        "scenario",
        "seeds",
        "tcplab MB",
        "ns-3 MB",
        "difference",
        "tcplab retx/FR/RTO",
        "ns-3 retx/FR/RTO",
        "tcplab CPU s",
        "ns-3 Run CPU s",
        "ns-3 / tcplab",
        "wall s tcplab/ns-3",
    ):
        table.add_column(col, justify="right", no_wrap=True)
    groups: dict[str, list[Pair]] = {}
    for p in pairs:
        groups.setdefault(p.scenario, []).append(p)
    out = []
    for name, group in groups.items():
        ours = statistics.fmean(p.tcplab["summary"]["bytes_delivered"] for p in group)
        theirs = statistics.fmean(p.ns3["bytes_delivered"] for p in group)
        diff = pct_diff(ours, theirs)
        ours_s = sum(p.tcplab_cpu_s for p in group)
        theirs_s = sum(p.ns3["cpu_s_run"] for p in group)
        ratio = theirs_s / ours_s if ours_s > 0 else float("inf")
        walls = (sum(p.tcplab_wall_s for p in group), sum(p.ns3["wall_s_run"] for p in group))
        close, fast = abs(diff) <= 100 * DELIVERED_TOLERANCE, ratio >= SPEED_TARGET
        table.add_row(
            name,
            ",".join(str(p.seed) for p in group),
            f"{ours / 1e6:.2f}",
            f"{theirs / 1e6:.2f}",
            f"{diff:+.1f} % {verdict(close)}",
            "; ".join(losses(p.tcplab["summary"]) for p in group),
            "; ".join(losses(p.ns3) for p in group),
            f"{ours_s:.3f}",
            f"{theirs_s:.2f}",
            f"{ratio:,.0f}x {verdict(fast)}",
            f"{walls[0]:.3f}/{walls[1]:.2f}",
        )
        out.append(
            {
                "scenario": name,
                "seeds": [p.seed for p in group],
                "tcplab_bytes": ours,
                "ns3_bytes": theirs,
                "diff_pct": diff,
                "pass": close,
                "tcplab_retx_fr_rto": [losses(p.tcplab["summary"]) for p in group],
                "ns3_retx_fr_rto": [losses(p.ns3) for p in group],
                "tcplab_cpu_s": ours_s,
                "ns3_cpu_s_run": theirs_s,
                "tcplab_wall_s": walls[0],
                "ns3_wall_s_run": walls[1],
                "ratio": ratio,
                "speed_pass": fast,
            }
        )
    console.print(table)
    console.print(
        f"    CPU time, which a shared machine disturbs far less than wall time: tcplab's "
        f"median of {TCPLAB_TIMING_REPEATS} _sim.run calls per plan (plan and result JSON "
        "included); ns-3's process during Simulator::Run (import and topology excluded)\n"
    )
    return out


def plan_settings_report(console: Console, pairs: list[Pair]) -> None:
    """The sender's plan TCP block per scenario (both hosts have the same): what tcplab
    runs, and what the ns-3 tables below mirror. Fields equal in every scenario are listed
    once, under the table."""

    def shown(field_name: str, value: Any) -> str:
        if field_name.endswith("_ns"):
            return f"{value / 1e6:g}ms"
        return str(value).lower()

    blocks = [p.plan["hosts"][0]["tcp"] for p in pairs]
    fields = list(blocks[0])
    varying = [f for f in fields if len({shown(f, b[f]) for b in blocks}) > 1]
    table = Table(title="tcplab plan: sender TCP fields that differ between scenarios")
    table.add_column("scenario", no_wrap=True)
    for f in varying:
        table.add_column(f, justify="right")
    for p, b in zip(pairs, blocks, strict=True):
        table.add_row(p.scenario, *(shown(f, b[f]) for f in varying))
    console.print(table)
    same = ", ".join(f"{f} = {shown(f, blocks[0][f])}" for f in fields if f not in varying)
    console.print(f"    in every scenario: {same}\n")


def settings_report(console: Console, pairs: list[Pair]) -> None:
    """ns-3's attributes: the whole table for the first scenario, then for each other one
    the rows whose value differs from it (or that it does not have)."""
    first = pairs[0]
    first_rows = {(r[0], r[1]): r[2] for r in first.ns3.get("settings", [])}
    for p in pairs:
        rows = p.ns3.get("settings", [])
        if p is not first:
            rows = [r for r in rows if first_rows.get((r[0], r[1])) != r[2]]
        title = (
            f"ns-3 settings for {p.scenario} (seed {p.seed})"
            if p is first
            else f"ns-3 settings for {p.scenario}: where they differ from {first.scenario}"
        )
        table = Table(title=title)
        for col in ("scope", "ns-3 attribute", "value", "why"):
            table.add_column(col)
        for row in rows:
            table.add_row(*row)
        console.print(table)
        for w in p.ns3.get("warnings", []):
            console.print(f"[yellow]warning:[/] {w}")


SCENARIOS = "abcdefg"
# (f)'s flow counts and buffers: 1 MiB is more than a flow's share of the bottleneck's BDP
# plus queue (2.3 MB) with 10 flows, so the flows compete and lose packets, but no flow
# overshoots by thousands of segments (where ns-3's recovery takes minutes, see README).
DUMBBELL_FLOWS = (10, 50, 1000)
DUMBBELL_BUFFERS = "1MiB"
# (g)'s forward packet loss, run length and seeds: a loss every 10,000 packets gives a
# handful of SACK recoveries a minute on the 0.6 s path, each halving a window of
# thousands of segments that then takes tens of seconds to regrow.
LOSSY_LFN_LOSS = 0.0001
LOSSY_LFN_DURATION = "60s"
LOSSY_LFN_SEEDS = (1, 2, 3)
# (d)'s combinations; --quick keeps the smallest and the largest initial window.
LFN_CCS = ("newreno", "cubic")
LFN_WINDOWS = (10, 256, 2560)
LFN_WINDOWS_QUICK = (10, 2560)
# (e)'s variants: (cc, sack, ns-3 Hybla rho diagnostic); the first is the baseline the
# others are compared with. The last two run ns-3's Hybla with rho set after the handshake
# (ns3_peer.py --hybla-rho-fix): ns-3 3.44 leaves it at 1 on this path (see README), and
# these show how the two Hyblas compare once that is out of the way, with NewReno's and with
# SACK's recovery (they end recovery differently, see README).
GEO_VARIANTS = (
    ("newreno", False, False),
    ("newreno", True, False),
    ("hybla", False, False),
    ("hybla", False, True),
    ("hybla", True, True),
)
# (e)'s socket buffers: 64 KiB without window scaling is the largest window an RFC 1323-less
# stack offers (seed 000's Windows NT): 44 segments, 0.94 Mb/s over the 0.55 s RTT, so the
# congestion window, not the buffer, is what the algorithms differ in. (a) keeps 32 KiB.
GEO_VARIANT_BUFFERS = "64KiB"
# (d)'s socket buffers. 8 MiB is above the BDP (7.5 MB), so once the window is open the
# link, not the window, limits the rate, and below BDP + queue (15 MB), so slow start ends
# at the buffer without a loss: what (d) compares is how fast each initial window and
# slow start fill the pipe, the paper's question. Larger buffers (--lfn-buffers 64MiB) let
# slow start overshoot the path by thousands of segments; ns-3 3.44 then spends minutes of
# CPU per run in its send buffer's list walks (see README), so that is not the default.
LFN_MATRIX_BUFFERS = "8MiB"
# Rough ns-3 Simulator::Run seconds on an idle 2-core machine, only to start the long runs
# first: loss-free runs take a few seconds, runs with a window overshoot minutes.
NS3_COST_S = {"geo": 1.0, "lfn": 2.0, "lfn-overshoot": 600.0, "dumbbell": 0.5}


def parse_scenarios(text: str) -> set[str]:
    chosen = {c for c in text.lower() if c not in ", "}
    unknown = chosen - set(SCENARIOS)
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"--scenarios takes letters from {SCENARIOS!r} (e.g. 'a,d'), got {text!r}"
        )
    return chosen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="2 seeds and 60 s for (a) and (e), IW 10 and 2560 only for (d): a smoke run "
        "whose verdicts are indicative only",
    )
    ap.add_argument(
        "--scenarios",
        type=parse_scenarios,
        default=set(SCENARIOS),
        help="which of a,b,c,d,e,f,g to run (default all; c times b's plan, so runs it)",
    )
    ap.add_argument(
        "--lfn-buffers",
        default=LFN_MATRIX_BUFFERS,
        help="socket buffers for (d) (default %(default)s: loss-free; above 15MB slow start "
        "overshoots the path and ns-3 needs minutes per run)",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON document instead")
    ap.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also print each scenario's plan TCP fields and the ns-3 attributes set",
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
        help="ns-3 processes at once (each takes ~0.7 GB)",
    )
    args = ap.parse_args(argv)
    chosen: set[str] = args.scenarios
    console = Console(stderr=args.json)
    if not console.is_terminal:
        # Rich falls back to 80 columns when piped, which would cut the tables' columns.
        console.width = 160

    if not NS3_PYTHON.exists():
        console.print(f"[red]{NS3_PYTHON} missing: run `bash bench/setup-ns3.sh` first[/]")
        return 1

    seeds = [1, 2] if args.quick else [1, 2, 3, 4, 5]
    geo_duration = "60s" if args.quick else "200s"
    geo_pairs: dict[str, list[Pair]] = {}
    if "a" in chosen:
        for ber in (1e-6, 3e-6):
            spec = geo_spec(ber, geo_duration, args.min_rto)
            geo_pairs[spec.name] = [Pair(spec.name, s, resolve(spec, seed=s)) for s in seeds]
    variant_pairs: dict[str, list[Pair]] = {}
    if "e" in chosen:
        for cc, sack, rho_fix in GEO_VARIANTS:
            spec = geo_spec(
                1e-6, geo_duration, args.min_rto, cc=cc, sack=sack, buffers=GEO_VARIANT_BUFFERS
            )
            name = spec.name + ("-ns3-rho-set" if rho_fix else "")
            options = {"hybla_rho_fix": True} if rho_fix else {}
            variant_pairs[name] = [
                Pair(name, s, resolve(spec, seed=s), ns3_options=options) for s in seeds
            ]
    lfn_pair: Pair | None = None
    if chosen & {"b", "c"}:
        lfn = lfn_spec("10s", args.min_rto)
        lfn_pair = Pair(lfn.name, 1, resolve(lfn, seed=1), NS3_COST_S["lfn"])
    matrix: list[Pair] = []
    if "d" in chosen:
        for cc in LFN_CCS:
            for iw in LFN_WINDOWS_QUICK if args.quick else LFN_WINDOWS:
                spec = lfn_spec(
                    "10s",
                    args.min_rto,
                    cc=cc,
                    initial_window=iw,
                    sack=True,
                    buffers=args.lfn_buffers,
                )
                overshoot = args.lfn_buffers != LFN_MATRIX_BUFFERS and (cc, iw) != ("newreno", 10)
                cost = NS3_COST_S["lfn-overshoot" if overshoot else "lfn"]
                matrix.append(Pair(spec.name, 1, resolve(spec, seed=1), cost))

    # (f) and (g): each timed on both sides (tcplab alone, before any ns-3 process starts).
    speed_pairs: list[Pair] = []
    if "f" in chosen:
        for flows in DUMBBELL_FLOWS:
            spec = dumbbell_spec(flows, "10s", args.min_rto)
            cost = NS3_COST_S["dumbbell"] * flows
            speed_pairs.append(Pair(spec.name, 1, resolve(spec, seed=1), cost))
    if "g" in chosen:
        spec = lossy_lfn_spec(LOSSY_LFN_DURATION, args.min_rto)
        for seed in LOSSY_LFN_SEEDS:
            speed_pairs.append(Pair(spec.name, seed, resolve(spec, seed=seed), 30.0))

    geo_all = [p for group in (geo_pairs, variant_pairs) for ps in group.values() for p in ps]
    pooled = geo_all + matrix + speed_pairs
    timed = lfn_pair if "c" in chosen else None
    if lfn_pair is not None and timed is None:
        pooled.append(lfn_pair)

    # tcplab first, with no ns-3 process competing for the cores.
    for p in pooled:
        repeats = TCPLAB_TIMING_REPEATS if p in speed_pairs else 1
        p.tcplab, p.tcplab_wall_s, p.tcplab_cpu_s = run_tcplab(p.plan, repeats)
    if timed is not None:
        timed.tcplab, timed.tcplab_wall_s, timed.tcplab_cpu_s = run_tcplab(
            timed.plan, TCPLAB_TIMING_REPEATS
        )

    n_workers = max(1, min(args.jobs, len(pooled))) if pooled else 1
    console.print(
        f"running {len(pooled) + (timed is not None)} ns-3 simulations in {n_workers} "
        f"process(es) (each pays the ~10 s cppyy import once)..."
    )
    workers = [Ns3Worker() for _ in range(n_workers)]
    try:
        run_ns3_pool(pooled, workers, console)
        if timed is not None:
            # Alone, so that no other simulation competes while Simulator::Run is timed.
            timed.ns3 = workers[0].run(timed.plan)
    finally:
        for w in workers:
            w.close()

    if args.verbose:
        shown = [ps[0] for ps in geo_pairs.values()]
        shown += [p for p in (lfn_pair,) if p is not None]
        shown += matrix + [ps[0] for ps in variant_pairs.values()]
        plan_settings_report(console, shown)
        settings_report(console, shown)

    report: dict[str, Any] = {
        "quick": args.quick,
        "scenarios": "".join(sorted(chosen)),
        "min_rto": args.min_rto,
        "ns3_version": next(p.ns3.get("ns3_version") for p in pooled + [timed] if p),
    }
    if geo_pairs:
        report["geo"] = [
            geo_report(console, "(a)", name, pairs) for name, pairs in geo_pairs.items()
        ]
    if lfn_pair is not None and "b" in chosen:
        report["lfn"] = lfn_report(console, lfn_pair)
    if timed is not None:
        report["speed"] = speed_report(console, timed)
    if matrix:
        report["lfn_matrix"] = lfn_matrix_report(console, matrix)
    if variant_pairs:
        report["geo_variants"] = geo_matrix_report(console, variant_pairs)
    if speed_pairs:
        report["speed_matrix"] = speed_matrix_report(console, speed_pairs)
    if args.quick:
        console.print(
            "[yellow]--quick: fewer seeds, shorter GEO runs and fewer (d) combinations; "
            "verdicts are indicative only[/]"
        )
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
