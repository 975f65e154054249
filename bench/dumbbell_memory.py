#!/usr/bin/env python3
"""Peak memory and CPU of one run of the 1,000-flow dumbbell with the default 10 ms trace,
through `tcplab.run` as a Python user calls it (a benchmark script, not a test).

    .venv/bin/python bench/dumbbell_memory.py [--flows 1000] [--duration 60s] [--json]

The flows share a 150 Mb/s, 10 ms bottleneck (bench/cost_curve.py's dumbbell); 60 s of
1,000 flows sampled every 10 ms is 6,000,000 trace samples. It prints the process's peak
resident memory (getrusage), the CPU time of the run, the trace's samples and the bytes
its columns hold.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

from cost_curve import dumbbell

import tcplab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=1000)
    parser.add_argument("--duration", default="60s", help="simulated time, e.g. 60s")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args()
    scenario = dumbbell(args.flows, 1.0, bottleneck=150e6)
    scenario["duration"] = args.duration
    started = time.process_time()
    result = tcplab.run(scenario)
    cpu_s = time.process_time() - started
    out = {
        "flows": args.flows,
        "duration": args.duration,
        "cpu_s": cpu_s,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "trace_samples": result.trace.rows,
        "trace_mb": result.trace.nbytes / 1e6,
        "goodput_bps": result.summary["goodput_bps"],
    }
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{out['flows']} flows, {out['duration']}: {out['cpu_s']:.1f} s CPU, peak "
        f"{out['peak_rss_mb']:.0f} MB, {out['trace_samples']:,} trace samples in "
        f"{out['trace_mb']:.0f} MB, goodput {out['goodput_bps'] / 1e6:.1f} Mb/s"
    )


if __name__ == "__main__":
    main()
