"""`app.tool = "iperf3"`: the real iperf3 between the emulator's namespaces, its JSON read
into the result schema. On seed 000's GEO hop with 64 KiB buffers and no window scaling it
must reach the same window bound as tcplab's own tool. Needs root and iperf3 (scripts/setup
installs it when run as root; CI runs as root).
"""

from __future__ import annotations

import pytest

import tcplab

WARMUP_S = 5.0


def test_iperf3_on_the_geo_hop_reaches_the_window_bound() -> None:
    tcp = {"cc": "reno", "sndbuf": "64KiB", "rcvbuf": "64KiB", "window_scaling": False}
    scenario = {
        "name": "geo-iperf3",
        "backend": "emu",
        "duration": "15s",
        "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
        "links": [{"rate": "2.048Mbps", "delay": "275ms"}],
        "app": {"kind": "bulk", "message_size": "128KiB", "tool": "iperf3"},
    }
    result = tcplab.run(scenario)
    emu = result.summary["emu"]
    assert emu["tool"] == "iperf3" and emu["iperf3_version"].startswith("iperf 3")
    assert emu["sender_cc"] == "reno"
    # iperf3 -w 64K: the kernel doubles both buffers; without window scaling the window
    # offered is the 16-bit field's 65535.
    assert emu["max_peer_window_bytes"] == 65535
    series = result.to_pandas()
    after = series[series.t_s > WARMUP_S]
    steady = float(after.interval_bytes.sum() * 8 / (series.t_s.iloc[-1] - WARMUP_S))
    # The model models the bulk application itself, so it takes the scenario without iperf3.
    own_tool = {**scenario, "app": {"kind": "bulk", "message_size": "128KiB"}}
    bound = tcplab.run(own_tool, backend="model").summary["model"]["window_bound_bps"]
    assert steady == pytest.approx(bound, rel=0.05)
    assert result.summary["limited_by"] == {"rwnd": None, "sndbuf": None, "cwnd": None, "app": None}
