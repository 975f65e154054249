"""What each link kind adds to an IP packet on the wire.

The simulator only knows bytes: a link's serialisation time is
(max(ip_bytes, min_payload_bytes) + overhead_bytes) · 8 / rate, and a bit error model sees the
same number of bits. This table is the one place where a kind name becomes those numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LinkKind = Literal["p2p", "ethernet", "wlan"]


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
}
