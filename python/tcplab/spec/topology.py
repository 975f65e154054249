"""Nodes and connections of a topology: routers, PEPs and flows."""

from __future__ import annotations

from pydantic import (
    Field,
)

from tcplab.spec.apps import App
from tcplab.spec.atm import Switch
from tcplab.spec.fields import Duration, Name, Size, StrictModel
from tcplab.spec.hosts import Tcp


class Router(StrictModel):
    """A store-and-forward node between links (with [[flows]])."""

    name: Name
    switch: Switch | None = Field(
        None, description="an ATM switch: cells cross it one by one; all its links are atm"
    )


class Pep(StrictModel):
    """A split-connection Performance Enhancing Proxy (RFC 3135 §2.4; docs/models/pep.md):
    it terminates each TCP connection that crosses it and relays the bytes onto a second
    connection of its own."""

    name: Name
    after_link: int | None = Field(
        None,
        ge=0,
        description="path form: the PEP sits between links after_link and after_link + 1",
    )
    buffer: Size = Field(
        "4MiB", validate_default=True, description="the relay's buffer between the connections"
    )
    tcp_client_side: Tcp = Field(
        default_factory=Tcp, description="TCP of the connection the PEP accepts from a flow's src"
    )
    tcp_server_side: Tcp = Field(
        default_factory=Tcp, description="TCP of the connection the PEP opens to the flow's dst"
    )


class Flow(StrictModel):
    """One TCP connection: `src` opens it to `dst`, and the app runs over it."""

    src: Name
    dst: Name
    app: App | None = Field(None, description="default: the scenario's [app]")
    start: Duration | None = Field(None, description="when src opens the connection")
    start_jitter: Duration | None = Field(
        None,
        description="open at a time drawn uniformly from [start, start + start_jitter), "
        "from the random stream flows.<k>.start_jitter: desynchronises sources that would "
        "start together, and makes repetitions with different seeds differ",
    )
    after: int | None = Field(
        None, ge=0, description="open once this earlier file or message flow is received"
    )
