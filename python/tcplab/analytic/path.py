"""Links and paths in closed form: framing, serialization, the goodput a link or an ACK
path allows, and round-trip times (docs/models/analytic-tcp.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tcplab.analytic.framing import direction_wire_bytes
from tcplab.analytic.wlan import wlan_exchange_s
from tcplab.shared import TCP_IP_HEADER_BYTES

# Largest window a 16-bit window field can offer without window scaling (RFC 7323 §2).
MAX_UNSCALED_WINDOW_BYTES = 65535
NS_PER_S = 1_000_000_000




def serialization_s(wire: int, rate_bps: float) -> float:
    """Time to clock ``wire`` bytes onto a link of ``rate_bps``: 8 * wire / rate."""
    return 8.0 * wire / rate_bps


def link_goodput_bps(
    direction: Mapping[str, Any], mss: int, header: int = TCP_IP_HEADER_BYTES
) -> float:
    """Application goodput of a saturated link carrying full segments.

    rate * MSS / wire(MSS + header): each MSS of data costs the TCP/IP header (40 bytes, 52
    with timestamps) and the link's framing (the "cell tax" generalised; cf. the ATM form
    in Kalyanaraman et al., IEEE Commun. Mag. 36(6), 1998).
    """
    return float(direction["rate_bps"] * mss / direction_wire_bytes(direction, mss + header))


def link_goodput_bound_bps(
    forward: Sequence[Mapping[str, Any]], mss: int, header: int = TCP_IP_HEADER_BYTES
) -> float:
    """Smallest :func:`link_goodput_bps` over the forward directions of the path."""
    return min(link_goodput_bps(d, mss, header) for d in forward)


def ack_path_goodput_bps(
    direction: Mapping[str, Any], mss: int, b: int, header: int = TCP_IP_HEADER_BYTES
) -> float:
    """Goodput a reverse direction's ACK capacity allows: one ACK per b segments.

    The link can carry rate / (8 wire(40)) ACKs per second; each acknowledges b MSS.
    This is the asymmetric-path limit of RFC 3449 §3.1 (normalized bandwidth ratio).
    """
    acks_per_s = direction["rate_bps"] / (8.0 * direction_wire_bytes(direction, header))
    return float(acks_per_s * b * mss * 8.0)


def effective_rtt_s(
    links: Sequence[Mapping[str, Any]], mss: int, header: int = TCP_IP_HEADER_BYTES
) -> float:
    """Store-and-forward round trip of one full segment and its ACK, no queueing.

    Sum over links of (forward delay + time to send an MSS+40 packet forward) plus sum of
    (reverse delay + time to send a 40-byte ACK back): every router receives a whole packet
    before forwarding it. Sending takes the serialization at the direction's rate, or on a
    wlan link a whole DCF exchange (:func:`wlan_exchange_s`).
    """
    total = 0.0
    for link in links:
        total += link["forward"]["delay_ns"] / NS_PER_S + send_s(link, "forward", mss + header)
        total += link["reverse"]["delay_ns"] / NS_PER_S + send_s(link, "reverse", header)
    return total


def header_rtt_s(links: Sequence[Mapping[str, Any]]) -> float:
    """Round trip of header-only segments both ways (SYN -> SYN-ACK), no queueing."""
    total = 0.0
    for link in links:
        for name in ("forward", "reverse"):
            total += link[name]["delay_ns"] / NS_PER_S + send_s(link, name, TCP_IP_HEADER_BYTES)
    return total


def send_s(link: Mapping[str, Any], name: str, ip_bytes: int) -> float:
    """Time one packet of ``ip_bytes`` takes to cross direction ``name`` of ``link``."""
    d = link[name]
    wire = direction_wire_bytes(d, ip_bytes)
    if link["wlan"] is not None:
        return wlan_exchange_s(wire, d["rate_bps"], link["wlan"])
    return serialization_s(wire, d["rate_bps"])
