"""HyStart++ (RFC 9406) on seed 004's long fat pipe: slow start ends on the RTT rise of a
building queue, before the one-BDP queue overflows; without it slow start runs until it
drops thousands of segments."""

from __future__ import annotations

import copy
from pathlib import Path

import tcplab

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "long-fat-pipe.toml"


def run(hystart: bool) -> tcplab.RunResult:
    scenario = copy.deepcopy(tcplab.load_spec(EXAMPLE).model_dump(mode="json", exclude_unset=True))
    for host in scenario["hosts"]:
        host["tcp"].update(cc="cubic", sndbuf="64MiB", rcvbuf="64MiB", hystart=hystart)
    return tcplab.run(scenario)


def test_hystart_leaves_slow_start_before_the_queue_overflows() -> None:
    with_hystart, without = run(True), run(False)
    queue = 100_000_000 * 600 // 1000 // 8  # the example's one-BDP queue, bytes
    assert without.summary["retransmits"] > 1000
    assert without.links[0]["max_queue_bytes"] > 0.99 * queue
    assert with_hystart.summary["retransmits"] == 0
    assert with_hystart.links[0]["max_queue_bytes"] < queue / 2
