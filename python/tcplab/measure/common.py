"""What the measurement server and client share: socket options and the control protocol.

A test uses two TCP connections to the server's port, as iperf3 does: a control connection
first (one JSON object per line: the client's parameters, the server's settings, "stop",
the server's report), then the data connection, which carries only the test's bytes, so
that every byte the receiving application reads is a byte of goodput.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_PORT = 5210
# /2: the client announces its data connection's port (tcplab.measure.dispatch).
PROTOCOL = "tcplab-measure/2"
# Longest a control message may be; a report of a long run with fine intervals fits.
MAX_CONTROL_BYTES = 64 * 1024 * 1024
# Linux's setsockopt(2) options that bypass net.core.rmem_max / wmem_max for a process
# with CAP_NET_ADMIN (socket(7)), so buffers beyond those limits need no global sysctl.
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
TCP_WINDOW_CLAMP = getattr(socket, "TCP_WINDOW_CLAMP", 10)


class ProtocolError(ConnectionError):
    """The peer broke the control protocol; the message says how."""


class PeerError(ConnectionError):
    """The peer answered with an error (`{"event": "error", "error": ...}`)."""


def now_ns() -> int:
    return time.monotonic_ns()


def add_to_interval(bins: list[int], since_ns: int, interval_ns: int, n: int) -> None:
    """Add `n` to the interval that `since_ns` (from the test's origin) falls in; an
    interval includes its end, so an event exactly at 1 s belongs to the first second."""
    index = max(since_ns - 1, 0) // interval_ns
    if index >= len(bins):
        bins.extend([0] * (index + 1 - len(bins)))
    bins[index] += n


def boot_id() -> str:
    """Identifies this kernel's boot: two sides with the same one share CLOCK_MONOTONIC."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


@dataclass(frozen=True)
class TcpOptions:
    """A side's socket configuration; None leaves the kernel's default."""

    cc: str | None = None
    sndbuf: int | None = None
    rcvbuf: int | None = None
    mss: int | None = None
    nodelay: bool = False
    # Largest window this side offers, bytes (TCP_WINDOW_CLAMP, tcp(7)).
    window_clamp: int | None = None

    def apply(self, sock: socket.socket) -> None:
        """Set the options; call before connect() or listen(), since the window scale is
        chosen from the receive buffer when the SYN is sent (RFC 7323 §2.2)."""
        if self.cc is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, self.cc.encode())
            except OSError as error:
                raise OSError(
                    error.errno,
                    f"congestion control {self.cc!r} is not available in this kernel "
                    f"(/proc/sys/net/ipv4/tcp_available_congestion_control)",
                ) from None
        # The kernel doubles the value for its bookkeeping (socket(7)); the FORCE variants
        # are tried first so that net.core.*mem_max does not silently clamp it.
        for value, force, plain in (
            (self.sndbuf, SO_SNDBUFFORCE, socket.SO_SNDBUF),
            (self.rcvbuf, SO_RCVBUFFORCE, socket.SO_RCVBUF),
        ):
            if value is not None:
                try:
                    sock.setsockopt(socket.SOL_SOCKET, force, value)
                except PermissionError:
                    sock.setsockopt(socket.SOL_SOCKET, plain, value)
        if self.mss is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, self.mss)
        if self.window_clamp is not None:
            sock.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, self.window_clamp)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, int(self.nodelay))

    def to_dict(self) -> dict[str, Any]:
        return {
            "cc": self.cc,
            "sndbuf": self.sndbuf,
            "rcvbuf": self.rcvbuf,
            "mss": self.mss,
            "nodelay": self.nodelay,
            "window_clamp": self.window_clamp,
        }


def actual_options(sock: socket.socket) -> dict[str, Any]:
    """What the kernel made of the options (buffers as getsockopt returns them, doubled)."""
    return {
        "tcp_congestion": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
        .split(b"\0", 1)[0]
        .decode(),
        "sndbuf_actual": sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF),
        "rcvbuf_actual": sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),
        "mss": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG),
        "window_clamp": sock.getsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP),
    }


class Control:
    """JSON lines over the control connection, each read bounded by a deadline."""

    def __init__(self, sock: socket.socket, max_bytes: int = MAX_CONTROL_BYTES) -> None:
        self.sock = sock
        self.max_bytes = max_bytes
        self._buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def receive(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no control message in time")
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the peer closed the control connection")
            self._buffer += chunk
            if b"\n" not in self._buffer and len(self._buffer) > self.max_bytes:
                raise ProtocolError(f"a control message longer than {self.max_bytes} bytes")
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = json.loads(line, parse_constant=_no_constant)
        except (ValueError, RecursionError) as error:
            # RecursionError: arrays nested deeper than the parser's recursion limit.
            raise ProtocolError(f"a control message that is not JSON ({error!s:.80})") from None
        if not isinstance(message, dict):
            raise ProtocolError("a control message that is not a JSON object")
        if message.get("event") == "error":
            raise PeerError(str(message.get("error"))[:1000])
        return message

    def refuse(self, reason: str) -> None:
        """Tell the peer why it is dropped, if it still listens."""
        try:
            self.sock.settimeout(1.0)
            self.send({"event": "error", "error": reason})
        except OSError:
            pass

    def fileno(self) -> int:
        return self.sock.fileno()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def cpu_times(who: int = resource.RUSAGE_SELF) -> tuple[float, float]:
    """(user, system) CPU seconds so far (getrusage(2)) of this process, or with
    RUSAGE_THREAD of the calling thread (a server running several tests at once)."""
    usage = resource.getrusage(who)
    return usage.ru_utime, usage.ru_stime


def cpu_report(
    start: tuple[float, float], wall_s: float, who: int = resource.RUSAGE_SELF
) -> dict[str, float]:
    user, system = cpu_times(who)
    user -= start[0]
    system -= start[1]
    share = (user + system) / wall_s if wall_s > 0 else 0.0
    return {
        "user_s": user,
        "system_s": system,
        "total_percent": 100.0 * share,
        "user_percent": 100.0 * user / wall_s if wall_s > 0 else 0.0,
        "system_percent": 100.0 * system / wall_s if wall_s > 0 else 0.0,
    }


def start_clocks(fds: Sequence[int], origin_ns: int) -> None:
    """Start the emulator's link schedules: their time 0 is `origin_ns` on CLOCK_MONOTONIC
    (the clock of every namespace), written to each emulator's clock pipe as 8 bytes,
    little-endian (crates/emu's `Shuttle::clock_fd`)."""
    for fd in fds:
        os.write(fd, origin_ns.to_bytes(8, "little"))
