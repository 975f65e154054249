"""Nagle's two variants on a request/response path (docs/models/tcp.md, docs/emu.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tcplab

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# docs/emu.md: the Linux kernel through the emulator, 4000-byte responses, nagle = true.
KERNEL_MEAN_S = 0.0753


def rr_mean_s(**tcp: Any) -> float:
    """examples/rr-emu.toml in the simulator with 4000-byte responses."""
    spec = tcplab.load_spec(EXAMPLES / "rr-emu.toml").model_dump(mode="json", exclude_unset=True)
    spec["backend"] = "sim"
    spec["app"]["response_size"] = "4000B"
    spec["hosts"] = [{**host, "tcp": tcp} for host in spec["hosts"]]
    return float(tcplab.run(spec).summary["rr"]["latency_mean_s"])


def test_minshall_sends_a_response_tail_at_once_as_the_kernel_does() -> None:
    # The bound: 40 ms of round trip, the request (154 B on the wire, 1.232 ms at 1 Mb/s)
    # and the response in segments of 1448, 1448 and 1104 bytes (1502 + 1502 + 1158 B on
    # the wire with IPv4, TCP, timestamps and PPP: 33.296 ms) = 74.528 ms. Minshall's
    # variant (the linux profile) holds nothing back, as without Nagle.
    bound = 0.040 + 154 * 8 / 1e6 + (1502 + 1502 + 1158) * 8 / 1e6
    minshall = rr_mean_s()
    assert minshall == pytest.approx(bound, abs=1e-5)
    assert minshall == pytest.approx(rr_mean_s(nagle=False), abs=1e-6)
    assert minshall == pytest.approx(KERNEL_MEAN_S, rel=0.10)


def test_rfc896_holds_the_tail_for_the_ack_of_the_full_segments() -> None:
    # RFC 1122 §4.2.3.4: the 1104-byte tail waits until the two full segments are
    # acknowledged: their ACK comes a round trip after the first left, so the transaction
    # takes the bound plus at least the round trip less the full segments' serialization.
    assert rr_mean_s(nagle_variant="rfc896") > rr_mean_s() + 0.040 - 2 * 1502 * 8 / 1e6
