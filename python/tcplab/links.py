"""What each link kind adds to an IP packet on the wire.

The simulator only knows bytes: a link's serialisation time is
(max(ip_bytes, min_payload_bytes) + overhead_bytes) · 8 / rate, and a bit error model sees the
same number of bits. This table is the one place where a kind name becomes those numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LinkKind = Literal["p2p", "ethernet"]


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
}
