"""The persist timer (RFC 9293 §3.8.6.1) through a scenario: a receiver that reopens its
window in one step, and an ACK path that loses the window update (docs/models/tcp.md)."""

from __future__ import annotations

from typing import Any

import tcplab

MIN_RTO_S = 0.2  # the linux profile's min_rto (TCP_RTO_MIN), the shortest persist interval


def slow_reader(reverse_loss: float) -> dict[str, Any]:
    """100 KiB to a receiver with a 5-segment buffer (7240 B: the window closes to exactly
    0) that sleeps 50 ms after each read and then reads the whole buffer, so each read
    sends a single window update; loss only on the ACK path, seed 1."""
    tcp = {"rcvbuf": "7240B"}
    return {
        "name": "persist",
        "seed": 1,
        "duration": "60s",
        "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
        "links": [{"rate": "10Mbps", "delay": "10ms", "reverse_loss": reverse_loss}],
        "app": {"kind": "file", "bytes": "100KiB", "read_size": "7240B", "read_delay": "50ms"},
    }


def test_a_lost_window_update_is_recovered_by_a_window_probe() -> None:
    lossless = tcplab.run(slow_reader(0.0)).summary
    assert (lossless["completed"], lossless["persist_probes"]) == (True, 0)
    # With seed 1 one of the updates that reopen a closed window is lost: nothing is in
    # flight, so only the persist timer can bring the transfer back (without it the run
    # would stall for its whole 60 s). Its probe is answered with the open window.
    result = tcplab.run(slow_reader(0.1))
    summary = result.summary
    assert summary["completed"]
    assert summary["persist_probes"] == 1
    assert result.flows[0]["persist_probes"] == 1
    # The stall lasts at least one persist interval (the RTO, at least min_rto) and less
    # than the run: the probe, not the end of the run, ended it.
    delay = summary["elapsed_s"] - lossless["elapsed_s"]
    assert MIN_RTO_S <= delay < 4 * MIN_RTO_S
