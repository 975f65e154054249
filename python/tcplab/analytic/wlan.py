"""802.11b DCF airtime of a data frame and its ACK, and the goodput it allows
(docs/models/wlan.md; IEEE 802.11-1999 §9.2, 802.11b §18)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tcplab import shared
from tcplab.analytic.framing import direction_wire_bytes
from tcplab.shared import TCP_IP_HEADER_BYTES

WLAN_SLOT_S = shared.WLAN_SLOT_NS / 1e9
WLAN_SIFS_S = shared.WLAN_SIFS_NS / 1e9
WLAN_DIFS_S = shared.WLAN_DIFS_NS / 1e9
WLAN_CW_MIN = shared.WLAN_CW_MIN
WLAN_ACK_BYTES = shared.WLAN_ACK_BYTES
WLAN_PLCP_S = {preamble: ns / 1e9 for preamble, ns in shared.WLAN_PLCP_NS.items()}


def wlan_frame_s(mpdu_bytes: int, rate_bps: float, preamble: str) -> float:
    """Airtime of one 802.11b frame: the PLCP preamble and header, then the MPDU's bits."""
    return WLAN_PLCP_S[preamble] + 8.0 * mpdu_bytes / rate_bps


def wlan_exchange_s(
    mpdu_bytes: int,
    rate_bps: float,
    wlan: Mapping[str, Any],
    backoff_slots: float = WLAN_CW_MIN / 2,
) -> float:
    """Medium time of one frame sent by a lone station, with no collision or error:
    DIFS + mean backoff (CWmin/2 slots) + the frame + SIFS + the link-layer ACK, which goes
    at the ACK rate but never faster than the frame it answers."""
    ack_rate = min(wlan["ack_rate_bps"], rate_bps)
    return (
        WLAN_DIFS_S
        + backoff_slots * WLAN_SLOT_S
        + wlan_frame_s(mpdu_bytes, rate_bps, wlan["preamble"])
        + WLAN_SIFS_S
        + wlan_frame_s(WLAN_ACK_BYTES, ack_rate, wlan["preamble"])
    )


def wlan_goodput_bps(
    link: Mapping[str, Any],
    mss: int,
    b: int,
    header: int = TCP_IP_HEADER_BYTES,
    ack_backoff_slots: float = WLAN_CW_MIN / 2,
) -> float:
    """One TCP flow's goodput over a wlan link whose data and ACKs share the medium.

    Every b segments of MSS cost b data exchanges forward and one TCP ACK exchange back,
    one after another: b·MSS·8 / (b·T(data) + T(ACK)). With the ACK's backoff at its mean
    this is the saturation bound of a lone sender; with ``ack_backoff_slots = 0`` the ACK's
    backoff is taken as spent inside the data sender's, which bounds it from above.
    """
    fwd, rev = link["forward"], link["reverse"]
    wlan = link["wlan"]
    data = wlan_exchange_s(direction_wire_bytes(fwd, mss + header), fwd["rate_bps"], wlan)
    ack = wlan_exchange_s(
        direction_wire_bytes(rev, header), rev["rate_bps"], wlan, ack_backoff_slots
    )
    return b * mss * 8.0 / (b * data + ack)
