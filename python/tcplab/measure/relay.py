"""A split-connection PEP's relay as a real program (RFC 3135 §2.4; docs/models/pep.md).

An explicit TCP proxy: it accepts connections on one address with the PEP's client-side
socket options, opens a connection to the server for each with its server-side options
(from its own address on the server's side), and copies each pair's bytes both ways
through a bounded buffer. The emu backend runs it in a PEP's namespace:

    python -m tcplab.measure.relay '{"listen": ["198.18.0.2", 5210], ...}'

It prints {"event": "listening"} once it accepts, and when every pair is done one JSON
line: per pair in accept order, the bytes copied each way, the most a buffer held, and the
final TCP_INFO of the accepted and the opened socket. It never outlives `deadline_s`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcplab.measure import tcpinfo
from tcplab.measure.common import TcpOptions, actual_options
from tcplab.measure.server import WindowClamp, listen

# Exit status when the deadline ends the relay.
DEADLINE_EXIT = 3


@dataclass
class Copied:
    """What one direction of a pair carried."""

    bytes: int = 0
    peak_bytes: int = 0


def copy(
    source: socket.socket,
    target: socket.socket,
    buffer: int,
    copied: Copied,
    after_read: Callable[[], None] = lambda: None,
) -> None:
    """Copy `source` to `target` until `source` ends. Each read takes at most `buffer`
    bytes and is written in full before the next read, so the relay never holds more than
    `buffer` bytes: while `target` cannot take them, nothing is read, `source`'s receive
    buffer fills and the window it offers closes (back-pressure)."""
    chunk = memoryview(bytearray(buffer))
    try:
        while n := source.recv_into(chunk):
            after_read()
            target.sendall(chunk[:n])
            copied.bytes += n
            copied.peak_bytes = max(copied.peak_bytes, n)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        # A reset on either side ends the pair; the other direction sees it too.
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _info(sock: socket.socket) -> dict[str, Any]:
    try:
        return dict(tcpinfo.read(sock).raw)
    except OSError:
        return {}


class Pair:
    """An accepted connection and the one opened for it, copied both ways on two threads."""

    def __init__(
        self, accepted: socket.socket, opened: socket.socket, buffer: int, clamp: int | None
    ) -> None:
        self.accepted, self.opened = accepted, opened
        self.upstream, self.downstream = Copied(), Copied()
        # The accepted socket receives the client's data: its window is the PEP's
        # client-side receive buffer, kept as the measurement server keeps it.
        window = WindowClamp(accepted, clamp)
        self.threads = [
            threading.Thread(
                target=copy, args=(accepted, opened, buffer, self.upstream, window.after_read)
            ),
            threading.Thread(target=copy, args=(opened, accepted, buffer, self.downstream)),
        ]
        for thread in self.threads:
            thread.start()

    def finish(self) -> dict[str, Any]:
        for thread in self.threads:
            thread.join()
        report = {
            "to_server_bytes": self.upstream.bytes,
            "to_client_bytes": self.downstream.bytes,
            "peak_bytes": max(self.upstream.peak_bytes, self.downstream.peak_bytes),
            "accepted_tcp_info": _info(self.accepted),
            "opened_tcp_info": _info(self.opened),
            "accepted_options": actual_options(self.accepted),
            "opened_options": actual_options(self.opened),
        }
        self.accepted.close()
        self.opened.close()
        return report


def open_onward(source: str, server: tuple[str, int], options: TcpOptions) -> socket.socket:
    """The PEP's connection to the server, with the server-side options set before connect()
    (the window scale is chosen when the SYN is sent)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    options.apply(sock)
    sock.bind((source, 0))
    sock.connect(server)
    return sock


def main(config: dict[str, Any]) -> dict[str, Any]:
    """Relay `count` connections, then report them."""
    deadline = threading.Timer(float(config["deadline_s"]), os._exit, (DEADLINE_EXIT,))
    deadline.daemon = True
    deadline.start()
    accept_options = TcpOptions(**config["accept_options"])
    connect_options = TcpOptions(**config["connect_options"])
    server = (config["server"][0], int(config["server"][1]))
    pairs = []
    with listen(config["listen"][0], int(config["listen"][1]), accept_options) as listener:
        print(json.dumps({"event": "listening"}), flush=True)
        listener.settimeout(float(config["deadline_s"]))
        for _ in range(int(config["count"])):
            accepted, _ = listener.accept()
            accepted.settimeout(None)
            opened = open_onward(config["source"], server, connect_options)
            pairs.append(Pair(accepted, opened, int(config["buffer"]), accept_options.window_clamp))
    return {"event": "relayed", "pairs": [pair.finish() for pair in pairs]}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))), flush=True)
