"""Packet captures of link directions ([trace])."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
)

from tcplab.spec.fields import StrictModel

# A link direction to capture: "links.N" (both directions) or "links.N.forward|reverse".
_LINK_PATH = re.compile(r"links\.(0|[1-9][0-9]*)(\.(forward|reverse))?")
# tcpdump's largest snapshot length (MAXIMUM_SNAPLEN); Wireshark reads no larger records.
MAX_SNAPLEN = 262_144


def _link_path(path: str) -> str:
    if not _LINK_PATH.fullmatch(path):
        raise ValueError(
            f"{path!r} is not a link path; write links.N for both directions of link N, or"
            " links.N.forward or links.N.reverse for one"
        )
    return path


LinkPath = Annotated[str, AfterValidator(_link_path)]


class Trace(StrictModel):
    """Packet captures of link directions, as pcap files (docs/pcap.md)."""

    pcap: list[LinkPath] = Field(
        default_factory=list,
        description='link directions to capture: "links.N", "links.N.forward", "links.N.reverse"',
    )
    snaplen: int = Field(
        128, ge=1, le=MAX_SNAPLEN, description="bytes kept of each packet (tcpdump -s)"
    )
