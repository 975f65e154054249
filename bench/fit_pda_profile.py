"""The fit of the `pda-400mhz` CPU profile to seed 003's measured times
(docs/models/hosts.md, "Fitting pda-400mhz").

The paper's text gives three measured numbers that depend on the PDA's costs: the first 11
packets upstream took 0.043 s at the PC (Fig. 7), downstream 0.071 s (Fig. 8), and 32,768 B
reads made the downstream receive time 32 % shorter than 512 B reads (Fig. 9). Its
receive-time curves (Figs. 4, 5, 9-11) are figures whose values the text does not give.
Two costs are fitted, each to the number it moves most, alternating until neither moves:
`per_packet` to Fig. 7 (the upstream's first packets are the PDA's sends and ACK
receptions, nothing else of it), and `per_call` to Fig. 9 (a 512 B read is 64 times the
calls of a 32 KiB one). Fig. 8 is left as a check, with its residual printed:
the real PDA's first reply was a window update that held the PC to 6 data packets in 11,
which the model does not produce (docs/reproduce.md), so it does not pin the flash cost.

    .venv/bin/python bench/fit_pda_profile.py [--repetitions 3]
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Callable
from typing import Any

import tcplab
from tcplab.papers import seed003
from tcplab.spec.cpu_profiles import PROFILES

US = 1_000  # ns
FIG7_S, FIG8_S, FIG9_GAIN = 0.043, 0.071, 0.32


def with_pda(per_packet_ns: int, per_call_ns: int) -> dict[str, Any]:
    spec = copy.deepcopy(seed003.scenario(quick=True))
    spec["hosts"][0]["cpu"] = {
        "profile": "pda-400mhz",
        "per_packet": f"{per_packet_ns}ns",
        "per_call": f"{per_call_ns}ns",
    }
    return spec


def fig7(per_packet_ns: int, per_call_ns: int) -> float:
    return seed003.first_packets("upstream", with_pda(per_packet_ns, per_call_ns))[1]


def fig9(per_packet_ns: int, per_call_ns: int, repetitions: int) -> float:
    """Downstream receive time saved by 32,768 B reads against 512 B, mean of the seeds."""

    def elapsed(read: str) -> float:
        spec = with_pda(per_packet_ns, per_call_ns)
        spec["app"]["read_size"] = read
        runs = [tcplab.run({**spec, "repetitions": 1, "seed": seed}) for seed in
                range(1, repetitions + 1)]  # fmt: skip
        return sum(r.summary["elapsed_s"] for r in runs) / repetitions

    return 1 - elapsed("32768B") / elapsed("512B")


def solve(f: Callable[[int], float], target: float, low: int, high: int) -> int:
    """The x in [low, high] (ns, to 1 µs) where the increasing f reaches target."""
    while high - low > US:
        mid = (low + high) // 2
        low, high = (mid, high) if f(mid) < target else (low, mid)
    return (low + high) // 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=3)
    args = parser.parse_args()
    per_packet = PROFILES["pda-400mhz"].per_packet_ns
    per_call = PROFILES["pda-400mhz"].per_call_ns
    for _ in range(10):
        before = (per_packet, per_call)
        per_packet = solve(lambda p, c=per_call: fig7(p, c), FIG7_S, 100 * US, 20_000 * US)
        per_call = solve(
            lambda c, p=per_packet: fig9(p, c, args.repetitions), FIG9_GAIN, 0, 5_000 * US
        )
        print(f"per_packet {per_packet / US:.0f} µs, per_call {per_call / US:.0f} µs")
        if max(abs(a - b) for a, b in zip(before, (per_packet, per_call), strict=True)) <= US:
            break
    spec = with_pda(per_packet, per_call)
    up, down = (seed003.first_packets(d, spec) for d in ("upstream", "downstream"))
    gain = fig9(per_packet, per_call, args.repetitions)
    print(f"Fig. 7: {up[1] * 1000:.1f} ms ({up[0]} data packets) vs 43 ms (7)")
    print(f"Fig. 8: {down[1] * 1000:.1f} ms ({down[0]} data packets) vs 71 ms (6)")
    print(f"Fig. 9: {gain:.1%} vs 32 %")


if __name__ == "__main__":
    main()
