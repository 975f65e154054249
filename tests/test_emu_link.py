"""The link emulator against its own configuration, with no TCP in the way: ping RTT,
the rate of a paced UDP stream, Bernoulli loss over 100 000 packets, and drop-tail
limits in packets and bytes. Needs root (CI has it), TUN devices and network namespaces.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

from tcplab.emu import RECEIVER_ADDRESS, EmuNetwork, HostSetup
from tcplab.emu.network import placement

UDP = str(Path(__file__).with_name("emu_udp.py"))
PORT = 9000
# IPv4 (20) + UDP (8) headers on each datagram.
UDP_IP_OVERHEAD = 28


def direction(
    rate_bps: int, delay_ns: int, queue: dict[str, int] | None = None, error: dict | None = None
) -> dict[str, Any]:
    return {
        "rate_bps": rate_bps,
        "delay_ns": delay_ns,
        "queue": queue or {"packets": 1000},
        "error": error or {"kind": "none"},
        # No framing, so that a datagram's wire size is its IP size.
        "framing": {"overhead_bytes": 0, "min_payload_bytes": 0},
        "atm": None,
        "aqm": None,
        "schedule": None,
    }


def network(forward: dict[str, Any], packet_log: dict | None = None) -> EmuNetwork:
    config = {
        "seed": 1,
        "links": [
            {"forward": forward, "reverse": direction(forward["rate_bps"], forward["delay_ns"])}
        ],
        "max_duration_ns": 120 * 10**9,
        "realtime": True,
        "packet_log": packet_log,
    }
    return EmuNetwork(config, (HostSetup(), HostSetup()), 1500)


def udp_run(
    net: EmuNetwork, count: int, size: int, burst: int, gap_s: float, idle_s: float
) -> dict:
    receiver = net.popen(1, [sys.executable, UDP, "recv", str(PORT), str(count), str(idle_s)])
    assert receiver.stdout is not None and receiver.stdout.readline().strip() == "ready"
    net.exec(
        0,
        [
            sys.executable,
            UDP,
            "send",
            RECEIVER_ADDRESS,
            str(PORT),
            str(count),
            str(size),
            str(burst),
            str(gap_s),
        ],
        timeout_s=120,
    )
    out, _ = receiver.communicate(timeout=120)
    return json.loads(out)


@pytest.mark.parametrize("delay_ms", [10, 100, 275])
def test_ping_rtt_is_twice_the_delay(delay_ms: int) -> None:
    with network(direction(100_000_000, delay_ms * 1_000_000)) as net:
        out = net.exec(0, [sys.executable, UDP, "ping", RECEIVER_ADDRESS, "5", "0.05"], 30)
    rtts = json.loads(out)["rtt_ms"]
    # 84-byte echo packets add 2 x 6.7 µs of serialization at 100 Mb/s. The median, so
    # that one echo delayed by a busy machine's scheduler (in the pinging process, not in
    # the emulator, whose own lateness is checked below) does not decide.
    assert len(rtts) == 5
    assert abs(statistics.median(rtts) - 2 * delay_ms) < 1.0, rtts
    assert net.report is not None
    assert net.report["timing_error"]["p50_us"] < 1000


def test_the_emulator_has_a_cpu_of_its_own_and_the_endpoints_the_others() -> None:
    cpus = os.sched_getaffinity(0)
    affinity = "import os; print(sorted(os.sched_getaffinity(0)))"
    with network(direction(10_000_000, 1_000_000)) as net:
        out = net.exec(0, [sys.executable, "-c", affinity], 30)
    assert net.report is not None
    if len(cpus) < 2:
        assert net.report["cpu"] is None and json.loads(out) == sorted(cpus)
    else:
        assert net.report["cpu"] == min(cpus)
        assert json.loads(out) == sorted(cpus - {min(cpus)})
    # A path split by PEPs (an emulator per segment) or a single CPU: no binding.
    assert placement(2, {0, 1}) == (None, None)
    assert placement(1, {3}) == (None, None)
    assert placement(1, {2, 5, 7}) == (2, frozenset({5, 7}))


def test_a_paced_udp_stream_leaves_at_the_link_rate() -> None:
    # 1200-byte datagrams offered at ~12 Mb/s to a 10 Mb/s link: the queue fills slowly
    # (never to its 1000 packets), so the link is busy from the first packet to the last.
    rate, size, count = 10_000_000, 1200 - UDP_IP_OVERHEAD, 2000
    with network(direction(rate, 10_000_000)) as net:
        got = udp_run(net, count, size, burst=10, gap_s=10 * 1200 * 8 / 12e6, idle_s=3)
    assert got["received"] == count
    measured = (count - 1) * 1200 * 8 / (got["last"] - got["first"])
    assert measured == pytest.approx(rate, rel=0.01)


def test_one_percent_loss_drops_one_percent_of_100000_packets() -> None:
    count = 100_000
    forward = direction(1_000_000_000, 1_000_000, {"packets": count}, {"kind": "loss", "p": 0.01})
    with network(forward) as net:
        got = udp_run(net, count, 100, burst=500, gap_s=0.005, idle_s=2)
    report = net.report
    assert report is not None
    lost = count - got["received"]
    assert lost / count == pytest.approx(0.01, abs=0.002)
    # Every loss is the error model's: none in the TUN rings or the receiving socket.
    assert report["directions"][0]["packets_in"] == count
    assert report["links"][0]["drops_error"] == lost


@pytest.mark.parametrize(
    ("queue", "delivered"),
    [
        # One datagram goes onto the line at once; the queue holds the next ten.
        ({"packets": 10}, 11),
        # 1000-byte datagrams: five fit in 5000 bytes, the sixth would make 6000.
        ({"bytes": 5000}, 6),
    ],
)
def test_a_burst_into_a_drop_tail_queue_loses_exactly_the_overflow(
    queue: dict[str, int], delivered: int, tmp_path: Path
) -> None:
    burst = 50
    log = {
        "csv": str(tmp_path / "packets.csv"),
        "mahimahi_prefix": str(tmp_path / "mm"),
        "max_records": 1000,
    }
    # 1000 bytes take 80 ms at 100 kb/s; the whole burst is written in well under that,
    # even on a busy machine.
    with network(direction(100_000, 5_000_000, queue), packet_log=log) as net:
        got = udp_run(net, burst, 1000 - UDP_IP_OVERHEAD, burst=burst, gap_s=0, idle_s=3)
    assert got["received"] == delivered
    assert net.report is not None and net.report["links"][0]["drops_queue"] == burst - delivered
    rows = (tmp_path / "packets.csv").read_text().splitlines()[1:]
    forward = [row.split(",") for row in rows if row.split(",")[1] == "forward"]
    assert [row[6] for row in forward].count("queue") == burst - delivered
    mahimahi = (tmp_path / "mm.link0.forward.log").read_text().splitlines()
    assert sum(1 for line in mahimahi if " d " in line) == burst - delivered
    assert sum(1 for line in mahimahi if " - " in line) == delivered
