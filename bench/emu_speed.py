"""How fast the link emulator goes, and what it costs: the real kernel's TCP through
two TUN devices and the emulator, with zero delay and no errors.

For each configured rate the script runs one 5 s bulk transfer (CUBIC, 4 MiB buffers,
a 1000-packet queue) and prints the goodput against the link's goodput bound, the
emulator's timing error, the CPU of the emulator thread and of each endpoint, the share of
the run the emulator spent out of SCHED_FIFO (its real-time budget), the wire-size
packets per TUN read (super-packets cut by the emulator) and, in a virtual machine, the
share of the CPUs' time the hypervisor gave to others (steal: while a vCPU is stolen the
emulator on it stands still, whatever its class). The
highest rate at which goodput reaches 95 % of the bound is the highest sustained rate.
A last run at 100 Mb/s gives the CPU cost at that rate.

    sudo .venv/bin/python bench/emu_speed.py [--rates 100M,500M,1G,2G,5G] [--json]

Needs root, like the emu backend.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import tcplab
from tcplab.analytic.path import link_goodput_bound_bps
from tcplab.api import prepare
from tcplab.backends import emu
from tcplab.plan import resolve
from tcplab.spec import units

SUSTAINED = 0.95
DURATION = "5s"
WARMUP_S = 1.0


def scenario(rate: str) -> dict[str, Any]:
    tcp = {
        "cc": "cubic",
        "sndbuf": "4MiB",
        "rcvbuf": "4MiB",
        "delack_timeout": "40ms",
        "abc": True,
    }
    return {
        "name": "emu-speed",
        "duration": DURATION,
        "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
        "links": [{"rate": rate, "delay": "0ms", "queue": {"limit": "1000p"}}],
        "app": {"kind": "bulk", "message_size": "256KiB"},
    }


def cpu_ticks() -> tuple[int, int]:
    """All CPUs' time so far and the part of it stolen by the hypervisor (/proc/stat, in
    clock ticks); (0, 0) where there is no /proc/stat."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except OSError:
        return 0, 0
    # user nice system idle iowait irq softirq steal; guest time is inside user already.
    return sum(fields[:8]), fields[7]


def measure(rate: str) -> dict[str, Any]:
    plan = resolve(prepare(scenario(rate)))
    total_before, steal_before = cpu_ticks()
    result = tcplab.RunResult.from_backend(emu.run(plan), {"backend": "emu"})
    total_after, steal_after = cpu_ticks()
    series = result.to_pandas()
    after = series[series.t_s > WARMUP_S]
    goodput = float(after.interval_bytes.sum() * 8 / (series.t_s.iloc[-1] - WARMUP_S))
    mss = plan["hosts"][0]["tcp"]["mss"] - (12 if plan["hosts"][0]["tcp"]["timestamps"] else 0)
    bound = link_goodput_bound_bps([link["forward"] for link in plan["links"]], mss)
    info = result.summary["emu"]
    return {
        "rate_bps": units.parse_rate(rate),
        "goodput_bps": goodput,
        "bound_bps": bound,
        "share_of_bound": goodput / bound,
        "timing_error_p99_us": info["timing_error_us"]["p99_us"],
        "timing_error_max_us": info["timing_error_us"]["max_us"],
        "emulator_cpu_percent": 100 * info["emulator_cpu_s"] / info["emulator_wall_s"],
        "sender_cpu_percent": info["cpu_percent_sender"],
        "receiver_cpu_percent": info["cpu_percent_receiver"],
        "drops_queue": result.links[0]["drops_queue"],
        "tun_write_errors": info["tun_write_errors"],
        "tun_refused_packets": info["tun_refused_packets"],
        # Wire-size packets per TUN read: above 1 where the sender's super-packets arrive.
        "packets_per_read": result.summary["events"] / max(1, info["tun_reads"]),
        # Share of the run the emulator thread spent out of SCHED_FIFO to stay within the
        # kernel's real-time budget.
        "realtime_off_percent": 100 * info["realtime_off_s"] / info["emulator_wall_s"],
        "steal_percent": 100 * (steal_after - steal_before) / max(1, total_after - total_before),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", default="100Mbps,500Mbps,1Gbps,2Gbps,5Gbps")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    rows = [measure(rate) for rate in args.rates.split(",")]
    sustained = [r["rate_bps"] for r in rows if r["share_of_bound"] >= SUSTAINED]
    cost = measure("100Mbps")
    report = {
        "rows": rows,
        "highest_sustained_bps": max(sustained, default=0),
        "at_100mbps": cost,
    }
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return 0
    header = (
        "rate        goodput     of bound  p99 late  max late  CPU emu  snd    rcv    "
        "RT off  pkts/read  steal"
    )
    print(header)
    for r in rows:
        print(
            f"{r['rate_bps'] / 1e6:7.0f} Mb/s {r['goodput_bps'] / 1e6:8.1f} Mb/s "
            f"{100 * r['share_of_bound']:7.1f} % {r['timing_error_p99_us']:7.0f} µs "
            f"{r['timing_error_max_us']:7.0f} µs {r['emulator_cpu_percent']:6.1f} % "
            f"{r['sender_cpu_percent']:5.1f} % {r['receiver_cpu_percent']:5.1f} % "
            f"{r['realtime_off_percent']:5.1f} % {r['packets_per_read']:6.1f} "
            f"{r['steal_percent']:7.2f} %"
        )
    print(
        f"highest rate sustained (goodput >= {100 * SUSTAINED:.0f} % of the bound): "
        f"{report['highest_sustained_bps'] / 1e6:.0f} Mb/s"
    )
    print(
        f"CPU at 100 Mb/s: emulator {cost['emulator_cpu_percent']:.1f} %, sender "
        f"{cost['sender_cpu_percent']:.1f} %, receiver {cost['receiver_cpu_percent']:.1f} % "
        "of one core"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
