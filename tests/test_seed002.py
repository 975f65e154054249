"""Seed 002's shape with its Pentium 133 hosts (Jang, Lee, Hwang & Lee 1999, "Performance
Evaluation of TCP/IP on ATM LAN Testbed"): the CPU, not the 25 Mb/s ATM25 link, limits a
large transfer, and a smaller MTU (LANE's 1500 bytes against Classical IP's 9180) costs more
CPU for the same data. The first tests use a plain 25 Mb/s link; the last ones run the
testbed at cell level (examples/atm-lan.toml): ATM25 through a switch, LANE against
Classical IP, and 10BASE-T Ethernet through the switch's LAN module.
"""

from __future__ import annotations

from typing import Any

import tcplab
from tcplab.papers.seed002 import testbed as atm_testbed

IPOA_MSS = 9180 - 40  # RFC 1626's MTU for IP over ATM, less the IP and TCP headers
LANE_MSS = 1500 - 40


# The testbed's 5 MB video file: at that size the paper saw ~90 % CPU.
FILE = {"kind": "file", "bytes": "5MB", "message_size": "8KiB"}
# A long transfer, to see the steady state after slow start.
BULK = {"kind": "bulk", "message_size": "8KiB"}


def transfer(rate: str, mss: int, app: dict[str, Any]) -> tcplab.RunResult:
    tcp = {"profile": "windows-95", "mss": mss, "sndbuf": "64KiB", "rcvbuf": "64KiB"}
    scenario: dict[str, Any] = {
        "name": "atm25",
        "duration": "20s",
        "hosts": [
            {"name": "client", "cpu": "pentium-133", "tcp": tcp},
            {"name": "server", "cpu": "pentium-133", "tcp": tcp},
        ],
        "links": [{"rate": rate, "delay": "50us"}],
        "app": app,
    }
    return tcplab.run(scenario)


def test_the_cpu_saturates_before_the_25mbps_link() -> None:
    result = transfer("25Mbps", IPOA_MSS, BULK)
    model = tcplab.run({**_scenario_of(result), "backend": "model"}, backend="model")
    link_bound = model.summary["model"]["link_bound_bps"]
    assert result.summary["cpu_utilisation"] > 0.97
    # The link could carry ~25 Mb/s of data; the CPUs deliver about 22.
    assert result.summary["goodput_bps"] < 0.92 * link_bound


def _scenario_of(result: tcplab.RunResult) -> dict[str, Any]:
    spec = dict(result.meta["spec"])
    for host in spec["hosts"]:
        host.pop("cpu")
    return spec


def test_a_smaller_mtu_costs_more_cpu_for_the_same_rate() -> None:
    # Below saturation (a 10 Mb/s link) both MTUs carry the link's rate; LANE's needs
    # about six times the packets, and seed 002 saw ~80 % CPU against IPOA's ~75 %.
    lane = transfer("10Mbps", LANE_MSS, FILE).summary
    ipoa = transfer("10Mbps", IPOA_MSS, FILE).summary
    assert lane["cpu_utilisation"] > 1.05 * ipoa["cpu_utilisation"]
    assert lane["goodput_per_cpu_bps"] < ipoa["goodput_per_cpu_bps"]


def test_classical_ip_beats_lane_beats_ethernet_in_transfer_rate() -> None:
    # Seed 002 §4.3 and Table 2: IPOA high, LANE moderate, Ethernet very low.
    rate = {net: tcplab.run(atm_testbed(net)).summary["goodput_bps"] for net in ("clip", "lane")}
    rate["ethernet"] = tcplab.run(atm_testbed("ethernet")).summary["goodput_bps"]
    assert rate["clip"] >= rate["lane"] > 1.5 * rate["ethernet"]
    # The Pentiums, not the cells, hold the ATM transfers back: below the cell-tax bound
    # of ATM25 (22.57 Mb/s for Classical IP, 21.63 for LANE).
    assert rate["clip"] < 22.57e6 and rate["lane"] < 21.63e6


def test_lane_uses_more_cpu_than_classical_ip() -> None:
    # Seed 002 §4.4: ~80 % against ~75 %, because LANE's 1500-byte MTU needs more packets
    # (and more per-packet work) for the same bytes; per unit of CPU it carries less.
    lane, clip = (tcplab.run(atm_testbed(net)) for net in ("lane", "clip"))
    per_cpu = {r.hosts[0]["host"]: r for r in (lane,)}
    assert per_cpu
    for side in (0, 1):
        assert lane.hosts[side]["packets"] > 4 * clip.hosts[side]["packets"]
        assert lane.hosts[side]["goodput_per_cpu_bps"] < clip.hosts[side]["goodput_per_cpu_bps"]


def mean_latency_s(net: str, client_buffer: str, server_buffer: str) -> float:
    # Seed 002 §4.2: the mean transfer time of ten files of 1 to 10 MB.
    times = [
        tcplab.run(atm_testbed(net, f"{mb}MB", client_buffer, server_buffer)).flows[0][
            "completed_s"
        ]
        for mb in range(1, 11)
    ]
    return sum(times) / len(times)


def test_a_server_buffer_larger_than_the_clients_lowers_lane_latency() -> None:
    # Seed 002 §4.2: a server buffer larger than the client's gives lower latency. Over
    # LANE the model agrees: a receive window as large as the server's buffer never closes
    # while the busy server reads. (Over Classical IP and Ethernet it finds the opposite:
    # docs/models/atm.md, validation.)
    larger_server = mean_latency_s("lane", "16KiB", "64KiB")
    larger_client = mean_latency_s("lane", "64KiB", "16KiB")
    assert larger_server < 0.99 * larger_client
