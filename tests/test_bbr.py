"""BBR v1 in the simulator: on a path with a deep drop-tail queue it runs near the link
rate with the queue nearly empty, where loss-based CUBIC fills the queue (Cardwell et al.,
"BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016)."""

from __future__ import annotations

import tcplab


def deep_buffer(cc: str) -> tcplab.RunResult:
    tcp = {"cc": cc, "sndbuf": "64MiB", "rcvbuf": "64MiB"}
    return tcplab.run(
        {
            "name": "deep-buffer",
            "duration": "30s",
            "hosts": [{"name": "a", "tcp": tcp}, {"name": "b", "tcp": tcp}],
            "links": [{"rate": "10Mbps", "delay": "25ms", "queue": {"limit": "2000p"}}],
        }
    )


def test_bbr_keeps_the_queue_short_where_cubic_fills_it() -> None:
    bbr, cubic = deep_buffer("bbr"), deep_buffer("cubic")
    # The model has no BBR; the path's goodput bound is the same under CUBIC.
    model = tcplab.run({**cubic.meta["spec"], "backend": "model"})
    link_goodput = model.summary["model"]["link_bound_bps"]
    # Near the link's goodput, without a loss.
    assert bbr.summary["goodput_bps"] > 0.95 * link_goodput
    assert bbr.summary["retransmits"] == 0
    # Over the second half the smoothed RTT is within 30 % of the 50 ms base RTT (its
    # median; a single sample may fall in a 5/4 probing phase): the queue that Startup
    # built has drained, and ProbeBW keeps about one BDP in flight.
    late = sorted(bbr.trace["srtt_s"][len(bbr.trace["srtt_s"]) // 2 :])
    assert late[len(late) // 2] < 0.065
    # CUBIC keeps the 2000-packet queue full: its RTT is tens of times the base.
    assert cubic.trace["srtt_s"][-1] > 1.0
