"""Seed 001's LAN/WAN point on a shared drop-tail bottleneck (Kim, Park & Park, "A Study on
the Performance Improvement of TCP using ABR/UBR Services", Table 3 and Figs. 5-8).

Its topology without the cells: N sources on their own 150 Mb/s access links into switch 1,
a 150 Mb/s trunk to switch 2 whose output buffer holds 4096 cells' payload, N destinations.
The TCP hosts are YATS's: 300 µs per packet (`yats-300us`), 64000-byte buffers, MSS 3000
(Fig. 4), minimum RTO 100 ms. The switches are plain drop-tail routers here; UBR cells, EPD
and ABR come with the ATM models.
"""

from __future__ import annotations

from typing import Any

import pytest

import tcplab

SWITCH_BUFFER = f"{4096 * 48}B"  # 4096 cells of 48 payload bytes
KM_NS = 5_000  # propagation in fibre, 5 µs per km


def ubr(
    flows: int = 10,
    km: float = 1,
    fast_retransmit: bool = True,
    nagle: bool = True,
    write: str = "64KiB",
) -> dict[str, Any]:
    tcp = {
        "profile": "windows-95",  # Reno, no window scaling, SACK or timestamps
        "mss": 3000,
        "sndbuf": 64000,
        "rcvbuf": 64000,
        "min_rto": "100ms",
        "fast_retransmit": fast_retransmit,
        "nagle": nagle,
    }
    # Each source sits n · 0.56 km from its switch (Section 3.1).
    access = {"rate": "150Mbps", "delay": f"{int(flows * 0.56 * KM_NS)}ns"}
    links = [{"between": [f"src{i}", "sw1"], **access} for i in range(flows)]
    links.append(
        {
            "between": ["sw1", "sw2"],
            "rate": "150Mbps",
            "delay": f"{int(km * KM_NS)}ns",
            "queue": {"limit": SWITCH_BUFFER},
        }
    )
    links += [{"between": ["sw2", f"dst{i}"], **access} for i in range(flows)]
    hosts = [{"name": f"{end}{i}", "cpu": "yats-300us", "tcp": tcp}
             for end in ("src", "dst") for i in range(flows)]  # fmt: skip
    return {
        "name": "ubr",
        "duration": "3s",
        "hosts": hosts,
        "routers": [{"name": "sw1"}, {"name": "sw2"}],
        "links": links,
        "flows": [{"src": f"src{i}", "dst": f"dst{i}"} for i in range(flows)],
        "app": {"kind": "bulk", "message_size": write},
    }


def goodput(**kwargs: Any) -> float:
    return float(tcplab.run(ubr(**kwargs)).summary["goodput_bps"])


def test_fast_retransmit_beats_timeouts_in_the_lan_and_the_wan() -> None:
    # Without fast retransmit every drop waits for the RTO (at least 100 ms); with it, a
    # drop in a full window is resent after three duplicate ACKs.
    for km in (1, 1000):
        assert goodput(km=km) > 1.03 * goodput(km=km, fast_retransmit=False)


def test_nagle_matters_when_the_application_writes_small_pieces() -> None:
    # 512-byte writes: with Nagle each segment waits to be full while data is in flight,
    # without it every write is a segment, and each costs the host 300 µs of processing.
    with_nagle, without = goodput(write="512B"), goodput(write="512B", nagle=False)
    assert with_nagle > 1.05 * without
    # With large writes segments are full anyway, and Nagle changes next to nothing.
    assert goodput() == pytest.approx(goodput(nagle=False), rel=0.01)


def test_the_flows_share_the_trunk_fairly() -> None:
    summary = tcplab.run(ubr()).summary
    assert summary["fairness"] > 0.9
    assert summary["goodput_bps"] > 0.9 * 150e6 * 3000 / 3040
