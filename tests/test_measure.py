"""`tcplab measure server` and `client` between the emulator's two namespaces: a bulk
stream, a file transfer and request/response transactions, each checked against the link
it crossed. Needs root (CI has
it), TUN devices and network namespaces.
"""

from __future__ import annotations

import json
import sys

import pytest

from tcplab.emu import RECEIVER_ADDRESS, EmuNetwork, HostSetup
from tcplab.measure import transactions

RATE_BPS = 20_000_000
# The commands exactly as `tcplab measure ...` runs them, without the rest of the CLI.
MEASURE = [sys.executable, "-c", "from tcplab.cli.measure import measure_app; measure_app()"]


def network() -> EmuNetwork:
    direction = {
        "rate_bps": RATE_BPS,
        "delay_ns": 10_000_000,
        "queue": {"packets": 100},
        "error": {"kind": "none"},
        "framing": {"overhead_bytes": 2, "min_payload_bytes": 0},
        "atm": None,
        "aqm": None,
        "schedule": None,
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


# The path's round trip and the serialization of a 100-byte request and a 1000-byte
# response at 20 Mb/s with at least 40 header and 2 PPP bytes: no transaction can be faster.
RTT_S = 2 * 0.010
MIN_TRANSACTION_S = RTT_S + (100 + 42 + 1000 + 42) * 8 / RATE_BPS
RR = ["--rr", "--request-size", "100", "--response-size", "1000", "--nodelay"]


def test_request_response_counts_agree_and_no_transaction_beats_the_round_trip() -> None:
    with network() as net:
        timed = measure(net, *RR, "--duration", "3s")
        counted = measure(net, *RR, "--duration", "10s", "--transactions", "20")
    rr = timed["end"]["transactions"]
    n = rr["count"]
    assert n > 50 and rr["ended_by"] == "duration"
    assert len(rr["latency_samples_us"]) == n
    assert sum(i["sum"]["transactions"] for i in timed["intervals"]) == n
    assert [i["sum"]["end"] for i in timed["intervals"]] == [1.0, 2.0, 3.0]
    assert rr["transactions_per_second"] == pytest.approx(n / 3.0)
    # A request may be under way at the test's end: served, its response not counted.
    assert rr["requests_served"] in (n, n + 1)
    assert rr["request_bytes_read"] in (100 * n, 100 * (n + 1))
    assert rr["response_bytes_read"] == 1000 * n
    received = timed["end"]["sum_received"]
    assert received["bytes"] == rr["request_bytes_read"] + rr["response_bytes_read"]
    assert sum(i["sum"]["bytes"] for i in timed["intervals"]) == received["bytes"]
    latency = rr["latency_us"]
    assert latency["min"] >= MIN_TRANSACTION_S * 1e6
    assert min(rr["latency_samples_us"]) == latency["min"]
    assert latency["min"] <= latency["p50"] <= latency["p90"] <= latency["p99"]
    assert latency["p99"] <= latency["max"] == max(rr["latency_samples_us"])
    assert timed["start"]["requested"]["nodelay"] is True
    assert len(timed["trace"]) >= 20  # TCP_INFO every 100 ms, as in a bulk test
    assert timed["end"]["cpu_seconds"]["receiver"]["user_s"] >= 0

    rr = counted["end"]["transactions"]
    assert rr["count"] == 20 and rr["ended_by"] == "transactions"
    # The test ends with its 20th transaction, long before the 10 s limit.
    assert 20 * MIN_TRANSACTION_S <= rr["seconds"] < 2.0
    assert rr["transactions_per_second"] == pytest.approx(20 / rr["seconds"])
    assert counted["end"]["sum_received"]["seconds"] == rr["seconds"]


def test_latency_percentiles_are_nearest_rank_as_in_the_simulator() -> None:
    # The simulator's own example (crates/sim/src/metrics/latency.rs): 1 to 10 ms.
    summary = transactions.latency_summary([k * 1_000_000 for k in range(10, 0, -1)])
    assert summary == {
        "mean": 5500.0,
        "min": 1000.0,
        "p50": 5000.0,
        "p90": 9000.0,
        "p99": 10000.0,
        "max": 10000.0,
    }
    assert transactions.latency_summary([]) is None


def test_the_server_answers_each_request_once_it_has_all_of_it() -> None:
    responder = transactions.Responder(request_size=100, response_size=3000)
    responder.received(60)
    assert responder.pending == 0
    responder.received(60)  # the first request and a fifth of the second
    assert (responder.served, responder.pending) == (1, 3000)
    responder.received(180)  # the rest of the second, and the whole third
    assert (responder.served, responder.pending) == (3, 9000)
