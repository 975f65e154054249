"""What each link kind adds to an IP packet on the wire.

The simulator only knows bytes: a link's serialisation time is
(max(ip_bytes, min_payload_bytes) + overhead_bytes) · 8 / rate, and a bit error model sees the
same number of bits. This table is the one place where a kind name becomes those numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

LinkKind = Literal["p2p", "ethernet", "wlan", "atm"]


WLAN_MAC_OVERHEAD = 28
"""802.11 three-address data header (24 bytes) and FCS (4)."""
LLC_SNAP_BYTES = 8
"""RFC 1042 encapsulation of an IP packet in an 802.11 frame."""
WLAN_RATES_BPS = (1_000_000, 2_000_000, 5_500_000, 11_000_000)
"""The 802.11b HR/DSSS data rates."""
WLAN_BASIC_RATES_BPS = (1_000_000, 2_000_000)
"""The basic rate set, in which link-layer ACKs go."""


@dataclass(frozen=True)
class Framing:
    """Bytes a link adds to each IP packet, and the IP payload size short frames are padded to."""

    overhead_bytes: int
    min_payload_bytes: int


FRAMING: dict[LinkKind, Framing] = {
    # The 2-byte PPP protocol field alone, as ns-3's PointToPointNetDevice frames a packet: no
    # HDLC flags, address/control bytes or FCS, so that our numbers line up with ns-3 runs of
    # the same scenario.
    "p2p": Framing(overhead_bytes=2, min_payload_bytes=0),
    # IEEE 802.3 on the wire: 8 preamble + SFD, 14 header, 4 FCS and the 12-byte inter-frame
    # gap, which occupies the medium like bytes do; a frame carries at least 46 payload bytes
    # (64-byte minimum frame), so shorter IP packets (bare ACKs) are padded.
    "ethernet": Framing(overhead_bytes=8 + 14 + 4 + 12, min_payload_bytes=46),
    # IEEE 802.11 data frame: the MAC header and FCS (28 bytes with three addresses; a
    # wlan link's `wlan.mac_overhead` replaces it) and the 8-byte LLC/SNAP header before
    # the IP packet. The PLCP preamble and header are time, not bytes: the medium adds them
    # (docs/models/wlan.md).
    "wlan": Framing(overhead_bytes=WLAN_MAC_OVERHEAD + LLC_SNAP_BYTES, min_payload_bytes=0),
    # An ATM link carries cells, not frames: its overhead is the AAL5 and cell arithmetic of
    # the encapsulation below (the plan's `atm` table), so the frame framing is empty.
    "atm": Framing(overhead_bytes=0, min_payload_bytes=0),
}

Encapsulation = Literal["llc-snap", "vc-mux", "lane", "clip"]


@dataclass(frozen=True)
class AtmEncapsulation:
    """What an ATM encapsulation puts in front of each IP datagram inside the AAL5 SDU, and
    the largest datagram it carries."""

    header_bytes: int
    mtu: int
    source: str


# The default IP MTU over ATM (RFC 2225 §5, from RFC 1626): 9180 bytes.
ATM_DEFAULT_MTU = 9180

ENCAPSULATIONS: dict[Encapsulation, AtmEncapsulation] = {
    # LLC AA-AA-03, OUI 00-00-00, EtherType 08-00 (routed IPv4).
    "llc-snap": AtmEncapsulation(
        LLC_SNAP_BYTES, ATM_DEFAULT_MTU, "RFC 2684 §5.1 (LLC/SNAP, routed)"
    ),
    # The VC itself says the protocol: no header.
    "vc-mux": AtmEncapsulation(0, ATM_DEFAULT_MTU, "RFC 2684 (VC-multiplexed, routed)"),
    # The 2-byte LE header (LECID) and the 14-byte Ethernet header, no FCS; an Ethernet
    # ELAN's 1516-byte frames carry 1500-byte datagrams.
    "lane": AtmEncapsulation(2 + 14, 1500, "ATM Forum af-lane-0021.000 (LANE v1.0, 802.3)"),
    # Classical IP over ATM: LLC/SNAP, with RFC 2225's default MTU.
    "clip": AtmEncapsulation(
        LLC_SNAP_BYTES, ATM_DEFAULT_MTU, "RFC 2225 (Classical IP and ARP over ATM)"
    ),
}


# ITU-T I.361 / I.363.5: a 53-byte cell carries 48 bytes of the AAL5 CPCS-PDU, whose 8-byte
# trailer follows the SDU and its padding.
CELL_BYTES = 53
CELL_BITS = 8 * CELL_BYTES
CELL_PAYLOAD_BYTES = 48
AAL5_TRAILER_BYTES = 8


def atm_cells(ip_bytes: int, encapsulation_bytes: int) -> int:
    """Cells of the AAL5 PDU carrying an IP datagram: ceil((N + H + 8) / 48) (models.md §1.3).

    The simulator's segmentation (crates/sim/src/atm/aal5.rs) cuts frames the same way;
    tests/test_atm.py checks that the two agree."""
    return -(-(ip_bytes + encapsulation_bytes + AAL5_TRAILER_BYTES) // CELL_PAYLOAD_BYTES)


def atm_wire_bytes(ip_bytes: int, atm: Mapping[str, int]) -> int:
    """Octets of cell slots an IP datagram takes on an ATM link direction (the plan's `atm`
    table): 53 per cell, 54 with ATM25's command octet."""
    return atm["slot_octets"] * atm_cells(ip_bytes, atm["encapsulation_bytes"])


def wire_bytes(ip_bytes: int, overhead_bytes: int, min_payload_bytes: int) -> int:
    """Bytes an IP packet occupies on a link: max(ip, min_payload) + overhead.

    The frame pads a short packet to the link's minimum payload (Ethernet: 46 bytes,
    IEEE 802.3 §3.2.7) and adds its header/trailer (PPP/HDLC, Ethernet, ...).
    """
    return max(ip_bytes, min_payload_bytes) + overhead_bytes


def direction_wire_bytes(direction: Mapping[str, Any], ip_bytes: int) -> int:
    """:func:`wire_bytes` with the framing of one plan link direction; on an ATM direction
    the octets of the cell slots its AAL5 frame takes (the cell tax)."""
    if direction["atm"] is not None:
        return atm_wire_bytes(ip_bytes, direction["atm"])
    framing = direction["framing"]
    return wire_bytes(ip_bytes, framing["overhead_bytes"], framing["min_payload_bytes"])
