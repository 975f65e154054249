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


@pytest.mark.parametrize("tool", ["tcplab", "iperf3"])
def test_an_emulated_run_as_iperf3_json(tool: str) -> None:
    """--format iperf3 of a kernel run: its one stream's intervals are the bytes the
    kernel counts acknowledged (TCP_INFO, tcplab's tool) or, where iperf3 samples none, the
    series' bytes delivered; its retransmits the kernel's (TCP_INFO's total, or iperf3's
    own), and the end sums the summary's."""
    tcp = {"cc": "cubic", "sndbuf": "256KiB", "rcvbuf": "256KiB"}
    app = {"kind": "bulk", "message_size": "128KiB"}
    result = tcplab.run(
        {
            "name": f"emu-as-iperf3-{tool}",
            "backend": "emu",
            "duration": "4s",
            "interval": "500ms",
            "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
            "links": [{"rate": "20Mbps", "delay": "10ms", "loss": 0.005}],
            "app": {**app, "tool": "iperf3"} if tool == "iperf3" else app,
        }
    )
    ours = result.to_iperf3()
    rows = [interval["streams"][0] for interval in ours["intervals"]]
    if tool == "iperf3":
        assert [row["bytes"] for row in rows] == list(result.series["interval_bytes"])
    else:
        sent = sum(row["bytes"] for row in rows)
        assert sent == ours["end"]["streams"][0]["sender"]["bytes"]
        assert max(result.trace["acked_bytes"]) <= result.summary["bytes_written"]
        # Acknowledged by the last sample before the end, against read: within a buffer.
        assert abs(sent - result.summary["bytes_delivered"]) <= 256 * 1024
    assert [i["sum"]["end"] for i in ours["intervals"]] == list(result.series["t_s"])
    assert ours["end"]["sum_received"]["bytes"] == result.summary["bytes_delivered"]
    assert ours["end"]["sum_sent"]["retransmits"] == result.summary["retransmits"] > 0
    counted = [row["retransmits"] for row in rows]
    assert all(count is not None and count >= 0 for count in counted)
    assert sum(counted) <= result.summary["retransmits"]
    assert any(row["rtt"] and row["rtt"] >= 20_000 for row in rows)  # 2 x 10 ms at least
    assert ours["end"]["sender_tcp_congestion"] == "cubic"


def test_parallel_kernel_connections_as_iperf3_streams() -> None:
    """app.parallel on the kernel: each connection a stream of its own, its intervals the
    bytes TCP_INFO counts acknowledged on it (tcplab's tool samples tcpi_bytes_acked)."""
    tcp = {"cc": "cubic", "sndbuf": "256KiB", "rcvbuf": "256KiB"}
    result = tcplab.run(
        {
            "name": "emu-parallel-as-iperf3",
            "backend": "emu",
            "duration": "3s",
            "interval": "500ms",
            "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
            "links": [{"rate": "20Mbps", "delay": "10ms"}],
            "app": {"kind": "bulk", "message_size": "128KiB", "parallel": 2},
        }
    )
    ours = result.to_iperf3()
    assert ours["start"]["test_start"]["num_streams"] == 2
    for interval in ours["intervals"]:
        assert [row["socket"] for row in interval["streams"]] == [1, 2]
        assert interval["sum"]["bytes"] == sum(row["bytes"] for row in interval["streams"])
    for k, flow in enumerate(result.flows):
        sent = sum(interval["streams"][k]["bytes"] for interval in ours["intervals"])
        assert sent == ours["end"]["streams"][k]["sender"]["bytes"]
        assert ours["end"]["streams"][k]["receiver"]["bytes"] == flow["bytes_delivered"]
        # The last sample falls up to a trace interval before the end: within a buffer.
        assert abs(sent - flow["bytes_delivered"]) <= 256 * 1024
        # Both shared the 20 Mb/s link for 3 s (7.5 MB): each carried a real part of it.
        assert sent > 1_000_000
