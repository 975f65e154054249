"""Seed 000's GEO path on the simulator against the exact window/RTT bound.

2.048 Mb/s, 275 ms each way, no window scaling, NewReno, no errors, 100 s of bulk data:
after slow start the sender is window-limited, so steady goodput must equal
min(W / RTT_eff, link goodput), where RTT_eff includes the serialization of a segment and
of its ACK (the model backend computes the bound; tests/test_model.py checks its arithmetic).
"""

from __future__ import annotations

import pytest

import tcplab

WARMUP_S = 10
KIB = 1024


def geo(buffer: int, *, delayed_ack: bool, nagle: bool = True, delack: str = "200ms") -> dict:
    # Seed 000's Windows NT 4.0 stack (no RFC 1323/2018), with NewReno as the issue asks.
    tcp = {
        "profile": "windows-nt4",
        "cc": "newreno",
        "sndbuf": buffer,
        "rcvbuf": buffer,
        "window_scaling": False,
        "delayed_ack": delayed_ack,
        "delack_timeout": delack,
        "nagle": nagle,
    }
    return {
        "name": "geo",
        "duration": "100s",
        "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
        "links": [{"rate": "2.048Mbps", "delay": "275ms"}],
        "app": {"kind": "bulk", "message_size": "2048KiB"},
    }


def steady_goodput_bps(result: tcplab.RunResult) -> float:
    series = result.to_pandas()
    after = series[series.t_s > WARMUP_S]
    return float(after.interval_bytes.sum() * 8 / (series.t_s.iloc[-1] - WARMUP_S))


def bound(scenario: dict) -> dict:
    return tcplab.run(scenario, backend="model").summary["model"]


# Nagle off with 64 KiB buffers is left out on purpose: the send buffer is then one byte
# larger than the 65535-byte window, and each ACK first sends that lone byte (all queued
# data, Nagle off: RFC 1122 §4.2.3.4 allows it), a sender-side silly window. So is Nagle
# off with 4 KiB: the window's 1176-byte tail segment would move the right edge by less
# than an MSS, so the receiver holds the edge (RFC 1122 §4.2.3.3, receiver silly-window
# avoidance) and the window the sender sees alternates between 4096 and 2920 bytes.
@pytest.mark.parametrize(
    ("buffer_kib", "nagle"),
    [(k, True) for k in (4, 8, 16, 32, 64)] + [(k, False) for k in (8, 16, 32)],
)
def test_steady_goodput_equals_the_window_bound(buffer_kib: int, nagle: bool) -> None:
    scenario = geo(buffer_kib * KIB, delayed_ack=False, nagle=nagle)
    expected = min(bound(scenario)["window_bound_bps"], bound(scenario)["link_bound_bps"])
    measured = steady_goodput_bps(tcplab.run(scenario))
    assert measured == pytest.approx(expected, rel=0.01)


def test_the_64kib_window_is_seed_000s_953_kbps_bound_with_serialization() -> None:
    # 65535 B / 0.55 s = 953 kb/s is the paper's figure; serialization of a segment and an
    # ACK adds 6 ms to the round trip, and Nagle keeps the sub-MSS tail of 65535 B home.
    m = bound(geo(64 * KIB, delayed_ack=False))
    assert m["window_bound_bps"] == pytest.approx(44 * 1460 * 8 / m["rtt_eff_s"])
    assert 0.55 < m["rtt_eff_s"] < 0.557


def test_delayed_ack_timer_costs_a_lone_segment_one_timeout_per_round() -> None:
    # A 4 KiB buffer holds two full segments and a 1176-byte tail. On each ACK the stack
    # first sends the tail Nagle was holding (the pipe is empty), then the woken application
    # refills the buffer and two more segments go: three segments per round, so the third
    # waits alone for the receiver's delayed-ACK timer (RFC 1122 §4.2.3.2) every round.
    # Steady goodput is then exactly the window over (RTT_eff + timer).
    for timer_s, delack in [(0.2, "200ms"), (0.1, "100ms")]:
        scenario = geo(4 * KIB, delayed_ack=True, delack=delack)
        m = bound(scenario)
        window = m["window_in_flight_bytes"]
        expected = window * 8 / (m["rtt_eff_s"] + timer_s)
        assert steady_goodput_bps(tcplab.run(scenario)) == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("buffer_kib", [8, 16, 32, 64])
def test_delayed_acks_cost_at_most_one_timer_per_round(buffer_kib: int) -> None:
    # With more segments per window, ACKs for pairs keep the window moving and only the odd
    # segment of a round can wait for the timer: goodput lies between W/(RTT + timer) and
    # the delay-free bound, and below the run without delayed ACKs.
    with_delack = geo(buffer_kib * KIB, delayed_ack=True)
    m = bound(with_delack)
    upper = m["window_bound_bps"]
    lower = m["window_in_flight_bytes"] * 8 / (m["rtt_eff_s"] + 0.2)
    measured = steady_goodput_bps(tcplab.run(with_delack))
    assert lower * 0.99 <= measured <= upper * 1.01
    without = steady_goodput_bps(tcplab.run(geo(buffer_kib * KIB, delayed_ack=False)))
    assert measured < without
