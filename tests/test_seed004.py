"""Seed 004's conclusion on the simulator (Lee, Lee & Joe, "Initial Window-Based TCP Cubic
Algorithm for Satellite Environment"): on a 100 Mb/s path with 600 ms RTT, CUBIC with an
initial window of 2560 segments delivers more in 10 s than Reno with the default window."""

from __future__ import annotations

import copy
from pathlib import Path

import tcplab

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "long-fat-pipe.toml"


def delivered(cc: str, initial_window: int) -> int:
    scenario = copy.deepcopy(tcplab.load_spec(EXAMPLE).model_dump(mode="json", exclude_unset=True))
    for host in scenario["hosts"]:
        host["tcp"].update(cc=cc, initial_window=initial_window)
    return tcplab.run(scenario).summary["bytes_delivered"]


def test_cubic_with_a_large_initial_window_beats_reno_with_the_default() -> None:
    assert delivered("cubic", 2560) > 1.2 * delivered("reno", 10)


def test_without_loss_the_algorithms_share_slow_start() -> None:
    # Loss-free, CUBIC's slow start is standard slow start (RFC 9438 §4.10), so with the
    # same initial window CUBIC, Reno and NewReno deliver exactly the same bytes.
    assert delivered("cubic", 10) == delivered("reno", 10) == delivered("newreno", 10)


def test_sack_recovers_a_window_of_losses_that_stalls_newreno() -> None:
    # An initial window of 2560 segments, doubling per round trip, overflows the one-BDP
    # queue with thousands of drops in one window. NewReno resends one hole per round trip
    # and delivers almost nothing for the rest of the run; SACK recovery (RFC 6675) resends
    # every hole in the next round trip (the linux-4.18 profile's RACK-TLP and PRR).
    def run(sack: bool) -> int:
        scenario = tcplab.load_spec(EXAMPLE).model_dump(mode="json", exclude_unset=True)
        for host in scenario["hosts"]:
            # Buffers beyond the pipe, so that the initial window overflows the queue.
            # The receiver opens a window that takes the initial window (initrwnd), and no
            # HyStart ends slow start before the queue overflows.
            host["tcp"].update(
                cc="cubic",
                hystart=False,
                initial_window=2560,
                initial_rwnd=2560,
                sack=sack,
                sndbuf="64MiB",
                rcvbuf="64MiB",
            )
        return tcplab.run(scenario).summary["bytes_delivered"]

    assert run(sack=True) > 1.5 * run(sack=False)
