"""Which test an accepted connection belongs to, when several tests share the server's port.

Every connection reaches the same listening port. A control connection speaks first, with
a JSON object (its first byte is `{`); a data connection belongs to the test whose client
announced its local port in a control message before connecting (`{"event": "connecting",
"ports": [...]}`). Through a proxy (the emulator's PEP) the server sees the proxy's ports,
so a test that says it is proxied takes the data connections that come from its control
connection's address and speak first with anything but `{`.

A connection that is none of these within the step timeout gets an error reply and is
closed; it never holds up another client.
"""

from __future__ import annotations

import queue
import select
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tcplab.measure.common import ProtocolError

Address = tuple[str, int]


class Busy(ConnectionError):
    """The server runs as many tests as it takes at once."""


@dataclass(eq=False)
class Waiting:
    """A test waiting for its data connections: from its control connection's `host`, on
    the announced `ports` (or any port when `proxied`)."""

    host: str
    wanted: int
    proxied: bool = False
    ports: set[int] = field(default_factory=set)
    arrived: queue.Queue[tuple[socket.socket, int]] = field(default_factory=queue.Queue)

    def take(self, timeout_s: float) -> tuple[socket.socket, int]:
        """The next data connection and when it was accepted (ns, CLOCK_MONOTONIC)."""
        try:
            return self.arrived.get(timeout=timeout_s)
        except queue.Empty:
            raise TimeoutError("the data connection did not arrive in time") from None


@dataclass
class _Pending:
    sock: socket.socket
    accepted_ns: int
    first: bytes = b""


class Registry:
    """Tests waiting for data connections and accepted connections not yet placed."""

    def __init__(self, max_tests: int) -> None:
        self.max_tests = max_tests
        self._lock = threading.Lock()
        self._tests: list[Waiting] = []
        self._pending: dict[Address, _Pending] = {}

    def open(self, host: str, wanted: int, proxied: bool) -> Waiting:
        with self._lock:
            if len(self._tests) >= self.max_tests:
                raise Busy(f"the server runs {self.max_tests} tests at once; try again later")
            test = Waiting(host, wanted, proxied)
            self._tests.append(test)
            return test

    def close(self, test: Waiting) -> None:
        with self._lock:
            if test in self._tests:
                self._tests.remove(test)
        while not test.arrived.empty():
            test.arrived.get_nowait()[0].close()

    def announce(self, test: Waiting, ports: list[int]) -> None:
        """The client's data connections will come from these ports."""
        with self._lock:
            test.ports.update(ports)
            for port in ports:
                pending = self._pending.pop((test.host, port), None)
                if pending is not None:
                    self._deliver(test, pending)

    def arrived(self, sock: socket.socket, peer: Address, accepted_ns: int) -> bool:
        """Place a just-accepted connection if a test announced it; False: not yet placed
        (the caller watches its first bytes and calls `spoke`)."""
        with self._lock:
            test = self._announced(peer)
            if test is not None:
                self._deliver(test, _Pending(sock, accepted_ns))
                return True
            self._pending[peer] = _Pending(sock, accepted_ns)
            return False

    def spoke(self, peer: Address, first: bytes) -> str:
        """A pending connection's first bytes arrived: "control" (it is one), "placed"
        (a proxied test took it, or an announcement already did), "unplaced" (a test from
        its host may still announce it) or "stray" (no test from its host waits for one)."""
        with self._lock:
            pending = self._pending.get(peer)
            if pending is None:
                return "placed"
            if first.startswith(b"{"):
                del self._pending[peer]
                return "control"
            waiting = [t for t in self._tests if t.host == peer[0] and t.wanted > 0]
            for test in waiting:
                if test.proxied:
                    del self._pending[peer]
                    self._deliver(test, pending)
                    return "placed"
            return "unplaced" if waiting else "stray"

    def give_up(self, peer: Address) -> bool:
        """Forget a pending connection; False if a test took it meanwhile."""
        with self._lock:
            return self._pending.pop(peer, None) is not None

    def _announced(self, peer: Address) -> Waiting | None:
        for test in self._tests:
            if test.host == peer[0] and peer[1] in test.ports and test.wanted > 0:
                return test
        return None

    @staticmethod
    def _deliver(test: Waiting, pending: _Pending) -> None:
        test.wanted -= 1
        test.arrived.put((pending.sock, pending.accepted_ns))


def announce(registry: Registry, test: Waiting, message: Mapping[str, Any]) -> None:
    """The client's `connecting` message: the ports its data connections come from."""
    ports = message.get("ports")
    if (
        message.get("event") != "connecting"
        or not isinstance(ports, list)
        or len(ports) != test.wanted
        or not all(type(p) is int and 0 < p < 65536 for p in ports)
    ):
        raise ProtocolError(
            f'expected {{"event": "connecting", "ports": [{test.wanted} port numbers]}}'
        )
    registry.announce(test, ports)


def first_bytes(sock: socket.socket, deadline: float) -> bytes:
    """Peek at what the peer sent first, without consuming it; b"" if it closed or said
    nothing before `deadline` (time.monotonic()). The socket's own mode is left alone: a
    test may own it by now."""
    remaining = deadline - time.monotonic()
    try:
        readable, _, _ = select.select([sock], [], [], max(remaining, 0.0))
        if not readable:
            return b""
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, OSError, ValueError):
        return b""
