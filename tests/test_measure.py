"""`tcplab measure server` and `client` between the emulator's two namespaces: a bulk
stream and a file transfer, each checked against the link it crossed. Needs root (CI has
it), TUN devices and network namespaces.
"""

from __future__ import annotations

import json
import sys

import pytest

from tcplab.emu import RECEIVER_ADDRESS, EmuNetwork, HostSetup

RATE_BPS = 20_000_000
# The commands exactly as `tcplab measure ...` runs them, without the rest of the CLI.
MEASURE = [sys.executable, "-c", "from tcplab.cli_emu import measure_app; measure_app()"]


def network() -> EmuNetwork:
    direction = {
        "rate_bps": RATE_BPS,
        "delay_ns": 10_000_000,
        "queue": {"packets": 100},
        "error": {"kind": "none"},
        "framing": {"overhead_bytes": 2, "min_payload_bytes": 0},
    }
    config = {
        "seed": 1,
        "links": [{"forward": direction, "reverse": direction}],
        "max_duration_ns": 60 * 10**9,
        "realtime": True,
        "packet_log": None,
    }
    return EmuNetwork(config, (HostSetup(), HostSetup()), 1500)


def measure(net: EmuNetwork, *client_args: str) -> dict:
    server = net.popen(1, [*MEASURE, "server", "--bind", RECEIVER_ADDRESS, "--timeout", "30s"])
    assert server.stdout is not None
    assert json.loads(server.stdout.readline())["event"] == "listening"
    out = net.exec(0, [*MEASURE, "client", RECEIVER_ADDRESS, "--json", *client_args], 60)
    server.communicate(timeout=30)
    return json.loads(out)


def test_a_bulk_stream_fills_the_link_and_reports_like_iperf3() -> None:
    with network() as net:
        result = measure(
            net, "--duration", "3s", "--cc", "cubic", "--sndbuf", "1MiB", "--rcvbuf", "1MiB"
        )
    assert set(result) >= {"start", "intervals", "end"}
    end = result["end"]
    received = end["sum_received"]
    assert sum(i["sum"]["bytes"] for i in result["intervals"]) == received["bytes"]
    assert [i["sum"]["end"] for i in result["intervals"]] == [1.0, 2.0, 3.0]
    # Full segments of 1460 bytes (timestamps are on by default: 1448) cost 1502 bytes on
    # a PPP link; after the first round trips the link is full.
    last = result["intervals"][-1]["sum"]["bits_per_second"]
    assert last == pytest.approx(RATE_BPS * 1448 / 1502, rel=0.03)
    assert end["sender_tcp_congestion"] == "cubic"
    assert sum(end["limited_by"].values()) == pytest.approx(1.0)
    assert result["start"]["origin"] == "client_connect"
    assert end["cpu_seconds"]["receiver"]["user_s"] >= 0
    assert len(result["trace"]) >= 20  # a TCP_INFO sample every 100 ms


def test_a_file_transfer_ends_when_the_last_byte_is_read() -> None:
    with network() as net:
        result = measure(net, "--bytes", "1MB", "--duration", "20s")
    received = result["end"]["sum_received"]
    assert received["completed"] is True
    assert received["bytes"] == 1_000_000
    # 1 MB at 20 Mb/s is 0.4 s of line time after a 20 ms handshake and slow start.
    assert 0.4 < received["seconds"] < 3.0
    assert received["seconds"] == pytest.approx(received["last_byte_s"])


def test_an_unknown_congestion_control_is_refused() -> None:
    with network() as net:
        server = net.popen(1, [*MEASURE, "server", "--bind", RECEIVER_ADDRESS, "--cc", "foo"])
        _, err = server.communicate(timeout=30)
    assert server.returncode == 2
    assert "congestion control 'foo' is not available" in err
