"""HyStart on seed 004's long fat pipe: HyStart++ (RFC 9406) ends slow start on the RTT rise
of a building queue, Linux's CUBIC HyStart on the ACK train of half the pipe, both before
the one-BDP queue overflows; without either, slow start runs until it drops thousands of
segments."""

from __future__ import annotations

import copy
from pathlib import Path

import tcplab

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "long-fat-pipe.toml"


def run(hystart: bool, variant: str = "rfc9406") -> tcplab.RunResult:
    """HyStart++ with the delayed-ACK receiver of RFC 9406's experiments; Linux's HyStart
    with the linux-4.18 profile's own receiver (quick ACKs while the window grows)."""
    scenario = copy.deepcopy(tcplab.load_spec(EXAMPLE).model_dump(mode="json", exclude_unset=True))
    linux_receiver = variant == "linux"
    for host in scenario["hosts"]:
        host["tcp"].update(
            cc="cubic",
            sndbuf="64MiB",
            rcvbuf="64MiB",
            hystart=hystart,
            hystart_variant=variant,
            quickack=linux_receiver,
            initial_rwnd=10 if linux_receiver else None,
        )
    return tcplab.run(scenario)


def test_hystart_leaves_slow_start_before_the_queue_overflows() -> None:
    with_hystart, without = run(True), run(False)
    queue = 100_000_000 * 600 // 1000 // 8  # the example's one-BDP queue, bytes
    assert without.summary["retransmits"] > 1000
    assert without.links[0]["max_queue_bytes"] > 0.99 * queue
    assert with_hystart.summary["retransmits"] == 0
    assert with_hystart.links[0]["max_queue_bytes"] < queue / 2


def test_linux_hystart_leaves_slow_start_on_the_ack_train_of_half_the_pipe() -> None:
    """tcp_cubic.c: ACKs closer than 2 ms apart for more than half the minimum RTT end slow
    start. A round's ACKs come back to back once its flight exceeds what the link carries
    in half a round trip, so slow start ends as the flight reaches the 7.5 MB pipe: the
    one-BDP queue peaks near half full and nothing is lost (without HyStart: thousands)."""
    result = run(True, "linux")
    queue = 100_000_000 * 600 // 1000 // 8
    assert result.summary["retransmits"] == 0
    assert result.links[0]["max_queue_bytes"] < 0.51 * queue
    ssthresh = [s for s in result.trace_frame()["ssthresh_bytes"] if s < 2**32 - 1]
    assert queue / 2 < ssthresh[0] < queue
