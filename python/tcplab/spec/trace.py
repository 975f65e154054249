"""Packet captures of link directions and hosts ([trace])."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
)

from tcplab.spec.fields import StrictModel

# A link direction to capture: "links.N" (both directions) or "links.N.forward|reverse".
LINK_PATH = re.compile(r"links\.(0|[1-9][0-9]*)(\.(forward|reverse))?")
# Otherwise a host's name (spec.fields.Name): everything the host sends and receives.
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# tcpdump's largest snapshot length (MAXIMUM_SNAPLEN); Wireshark reads no larger records.
MAX_SNAPLEN = 262_144


def _capture_point(path: str) -> str:
    if path.startswith("links.") and not LINK_PATH.fullmatch(path):
        raise ValueError(
            f"{path!r} is not a link path; write links.N for both directions of link N, or"
            " links.N.forward or links.N.reverse for one"
        )
    if not _HOST_NAME.fullmatch(path):
        raise ValueError(
            f"{path!r} is neither a link path (links.N, links.N.forward, links.N.reverse)"
            " nor a host's name"
        )
    return path


CapturePoint = Annotated[str, AfterValidator(_capture_point)]


class Trace(StrictModel):
    """Packet captures of link directions and hosts, as pcap files (docs/pcap.md)."""

    pcap: list[CapturePoint] = Field(
        default_factory=list,
        description='what to capture: "links.N" (both directions of link N), "links.N.forward",'
        ' "links.N.reverse", or a host\'s name (what it sends and receives, at its interface)',
    )
    snaplen: int = Field(
        128, ge=1, le=MAX_SNAPLEN, description="bytes kept of each packet (tcpdump -s)"
    )
