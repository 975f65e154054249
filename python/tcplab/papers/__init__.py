"""Paper packs: each source paper's experiments, published numbers and conclusions, for
`tcplab reproduce`. One module per paper; the framework is tcplab.papers.pack."""

from __future__ import annotations

from tcplab.errors import TcplabError
from tcplab.papers import seed000, seed001, seed002, seed003, seed004
from tcplab.papers.pack import Pack, Reproduction, load_reproduction, reproduce

PACKS: dict[str, Pack] = {
    pack.name: pack
    for pack in (seed000.PACK, seed001.PACK, seed002.PACK, seed003.PACK, seed004.PACK)
}

__all__ = ["PACKS", "Pack", "Reproduction", "get_pack", "load_reproduction", "reproduce"]


def get_pack(name: str) -> Pack:
    """The pack called `name`; an unknown name is a user error listing the known ones."""
    try:
        return PACKS[name]
    except KeyError:
        raise TcplabError(
            f"no paper pack {name!r}; known packs: {', '.join(PACKS)} (tcplab reproduce --list)"
        ) from None
