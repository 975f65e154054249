"""Media mode of the measurement tool: timestamped, sequence-numbered messages on a schedule.

The client (sender) produces each stream's messages on a fixed grid (message k at
t0 + start + k · interval), stamps each with its sequence number, its CLOCK_MONOTONIC send
time and its length, and sends it over the stream's own TCP connection or as one UDP
datagram (the kernel fragments one larger than the MTU). The server (receiver) records
when each message is complete: over TCP when its last byte is read, over UDP when its
datagram is. The test runs on the usual control connection (protocol tcplab-media/2):

1. client → server: the streams and the duration; server → client: the UDP ports.
2. the client announces the local ports of its TCP streams (`connecting`), opens one TCP
   connection per TCP stream (first 4 bytes: the stream's index), then sends `start` with
   its t0 and runs the schedule for the duration;
3. at t0 + duration it sends `stop`; the server answers with every arrival before it.

One-way delays need one clock: the emulator's namespaces share CLOCK_MONOTONIC (the same
boot_id on both sides). Between two machines the clocks differ, and the report carries
only arrival times and inter-arrival statistics unless the user says the clocks are synced
(docs/emu.md#media-streams).
"""

from __future__ import annotations

import random
import selectors
import socket
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tcplab.measure import tcpinfo
from tcplab.measure.common import Control, ProtocolError, TcpOptions, boot_id, now_ns
from tcplab.measure.dispatch import Registry, announce

# /2: the client announces its TCP streams' ports (tcplab.measure.dispatch).
PROTOCOL = "tcplab-media/2"
NS_PER_S = 1_000_000_000
# Sequence number, send time (ns, the sender's CLOCK_MONOTONIC) and message length.
HEADER = struct.Struct("!QQI")
INDEX = struct.Struct("!I")
STEP_TIMEOUT_S = 30.0
GRACE_S = 60.0
READ_SIZE = 128 * 1024
# What a client may ask the server for: streams, messages in all (each arrival is kept for
# the report), one message's size, and the test's length.
MAX_STREAMS = 64
MAX_MESSAGES = 1_000_000
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_TEST_NS = 24 * 3600 * NS_PER_S
# One UDP datagram's largest payload (IPv4).
MAX_DATAGRAM = 65_507
# Linux's IP_MTU_DISCOVER values (ip(7)): let the kernel fragment datagrams above the MTU.
IP_MTU_DISCOVER = getattr(socket, "IP_MTU_DISCOVER", 10)
IP_PMTUDISC_DONT = getattr(socket, "IP_PMTUDISC_DONT", 0)


@dataclass
class Stream:
    """One stream's schedule, as the plan gives it (times in ns)."""

    name: str
    transport: str
    interval_ns: int
    message_size: int
    max_message_size: int | None = None
    start_ns: int = 0
    skip_when_blocked: bool = False

    @classmethod
    def from_plan(cls, plan: Mapping[str, Any]) -> Stream:
        return cls(
            name=plan["name"],
            transport=plan["transport"],
            interval_ns=int(plan["interval_ns"]),
            message_size=int(plan["message_size"]),
            max_message_size=plan.get("max_message_size"),
            start_ns=int(plan.get("start_ns", 0)),
            skip_when_blocked=bool(plan.get("skip_when_blocked", False)),
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def check_sizes(stream: Stream) -> None:
    """A message holds its header; a UDP message is one datagram."""
    if stream.message_size < HEADER.size:
        raise ValueError(
            f"{stream.name}: messages of {stream.message_size} B cannot hold the"
            f" {HEADER.size}-byte header (sequence number, timestamp, length)"
        )


@dataclass
class _Sender:
    """A stream's sending side: its socket, the bytes not yet taken by a TCP socket, and its
    record of what it sent."""

    stream: Stream
    sock: socket.socket
    address: tuple[str, int] | None
    sizes: random.Random
    backlog: bytearray = field(default_factory=bytearray)
    sent_ns: list[int] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)
    # Messages that fell due, sent or skipped, and those skipped.
    fallen_due: int = 0
    skipped: int = 0

    def due(self, t0: int) -> int:
        """When the next message falls due: on the stream's grid, whatever lateness."""
        return t0 + self.stream.start_ns + self.fallen_due * self.stream.interval_ns

    def next_size(self) -> int:
        s = self.stream
        if s.max_message_size is None or s.max_message_size <= s.message_size:
            return s.message_size
        return self.sizes.randint(s.message_size, s.max_message_size)

    def produce(self, t0: int) -> None:
        """The next message, stamped now; a skipping TCP sender drops it instead while the
        last one is not all in the socket (sequence numbers count messages sent)."""
        self.fallen_due += 1
        if self.backlog and self.stream.skip_when_blocked:
            self.skipped += 1
            return
        size = self.next_size()
        stamp = now_ns()
        seq = len(self.sent_ns)
        message = HEADER.pack(seq, stamp, size) + bytes(size - HEADER.size)
        self.sent_ns.append(stamp - t0)
        self.bytes.append(size)
        if self.address is not None:
            self.sock.sendto(message, self.address)
        else:
            self.backlog += message
            self.flush()

    def flush(self) -> None:
        """Hand the TCP socket what it takes without blocking."""
        while self.backlog:
            try:
                sent = self.sock.send(self.backlog)
            except BlockingIOError:
                return
            del self.backlog[:sent]


def run_client(
    host: str,
    port: int,
    options: TcpOptions,
    streams: Sequence[Stream],
    duration_ns: int,
    seed: int,
    clock_synced: bool = False,
) -> dict[str, Any]:
    """Send the streams to the server at host:port for `duration_ns`; returns, per stream,
    its messages' sizes, send times and arrival times (ns since t0; None: not arrived)."""
    for stream in streams:
        check_sizes(stream)
    with socket.create_connection((host, port), timeout=STEP_TIMEOUT_S) as control_sock:
        control = Control(control_sock)
        control.send(
            {
                "protocol": PROTOCOL,
                "streams": [s.to_dict() for s in streams],
                "duration_ns": duration_ns,
                "boot_id": boot_id(),
            }
        )
        ready = control.receive(STEP_TIMEOUT_S)
        senders = [_socket(s, options, ready, host, seed) for s in streams]
        try:
            tcp = [(i, s.sock) for i, s in enumerate(senders) if s.address is None]
            if tcp:
                ports = [sock.getsockname()[1] for _, sock in tcp]
                control.send({"event": "connecting", "ports": ports})
            for index, sock in tcp:
                _connect(sock, index, host, port)
            t0 = now_ns()
            control.send({"event": "start", "t0_ns": t0})
            _schedule(senders, t0, duration_ns)
            control.send({"event": "stop"})
            report = control.receive(STEP_TIMEOUT_S + duration_ns / NS_PER_S)
            infos = [tcpinfo.read(s.sock).raw if s.address is None else None for s in senders]
        finally:
            for sender in senders:
                sender.sock.close()
    same = report.get("boot_id") == boot_id() and boot_id() != ""
    clock = "shared" if same else ("synced" if clock_synced else "unsynced")
    return {
        "protocol": PROTOCOL,
        "clock": clock,
        "duration_ns": duration_ns,
        "streams": [
            {
                "stream": s.stream.name,
                "transport": s.stream.transport,
                "interval_ns": s.stream.interval_ns,
                "skipped": s.skipped,
                "bytes": s.bytes,
                "sent_ns": s.sent_ns,
                "received_ns": _arrivals(report["arrivals"][s.stream.name], len(s.sent_ns)),
                "tcp_info": info,
            }
            for s, info in zip(senders, infos, strict=True)
        ],
        "receiver_cpu": report.get("cpu"),
    }


def _arrivals(rows: Sequence[Sequence[int]], count: int) -> list[int | None]:
    received: list[int | None] = [None] * count
    for seq, at in rows:
        if 0 <= seq < count and received[seq] is None:
            received[seq] = at
    return received


def _socket(
    stream: Stream, options: TcpOptions, ready: Mapping[str, Any], host: str, seed: int
) -> _Sender:
    """A stream's socket: UDP with the server's port, or TCP bound to a local port (which
    the client announces before connecting)."""
    sizes = random.Random(f"{seed}:media.{stream.name}.sizes")
    if stream.transport == "udp":
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)
        return _Sender(stream, sock, (host, int(ready["udp_ports"][stream.name])), sizes)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    options.apply(sock)
    sock.bind(("", 0))
    return _Sender(stream, sock, None, sizes)


def _connect(sock: socket.socket, index: int, host: str, port: int) -> None:
    sock.settimeout(STEP_TIMEOUT_S)
    sock.connect((host, port))
    sock.sendall(INDEX.pack(index))
    sock.setblocking(False)


def _schedule(senders: Sequence[_Sender], t0: int, duration_ns: int) -> None:
    """Produce every stream's messages on its grid until t0 + duration, feeding TCP
    backlogs whenever their sockets take more."""
    end = t0 + duration_ns
    selector = selectors.DefaultSelector()
    try:
        while (now := now_ns()) < end:
            first = min(senders, key=lambda s: s.due(t0))
            if now >= first.due(t0):
                first.produce(t0)
                continue
            waiting = [s for s in senders if s.backlog]
            for s in waiting:
                selector.register(s.sock, selectors.EVENT_WRITE, s)
            wait_ns = min(first.due(t0), end) - now
            for key, _ in selector.select(timeout=wait_ns / NS_PER_S):
                key.data.flush()
            for s in waiting:
                selector.unregister(s.sock)
    finally:
        selector.close()


def serve_test(
    registry: Registry,
    listener: socket.socket,
    control: Control,
    params: Mapping[str, Any],
    peer: tuple[str, int],
    step_timeout_s: float = STEP_TIMEOUT_S,
) -> dict[str, Any]:
    """The server's side of one media test (after the control connection's first message)."""
    streams, duration_ns = parse_request(params)
    address = listener.getsockname()[0]
    udp: dict[str, socket.socket] = {}
    tcp: dict[int, socket.socket] = {}
    wanted = sum(s.transport == "tcp" for s in streams)
    test = registry.open(peer[0], wanted, params.get("proxied") is True)
    try:
        for stream in streams:
            if stream.transport == "udp":
                sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                sock.bind((address, 0))
                sock.setblocking(False)
                udp[stream.name] = sock
        ports = {name: sock.getsockname()[1] for name, sock in udp.items()}
        control.send({"event": "ready", "udp_ports": ports})
        if wanted:
            announce(registry, test, control.receive(step_timeout_s))
        for _ in range(wanted):
            data, _ = test.take(step_timeout_s)
            data.settimeout(step_timeout_s)
            (index,) = INDEX.unpack(_read_exactly(data, INDEX.size))
            if not 0 <= index < len(streams) or streams[index].transport != "tcp" or index in tcp:
                data.close()
                raise ProtocolError(f"a media connection names stream {index}, not a TCP stream")
            data.setblocking(False)
            tcp[index] = data
        start = control.receive(step_timeout_s)
        t0 = start.get("t0_ns")
        if type(t0) is not int:
            raise ProtocolError('expected {"event": "start", "t0_ns": <integer>}')
        arrivals = _receive(streams, udp, tcp, control, t0, duration_ns)
    finally:
        registry.close(test)
        for sock in (*udp.values(), *tcp.values()):
            sock.close()
    report = {"event": "report", "boot_id": boot_id(), "arrivals": arrivals}
    control.send(report)
    return report


def parse_request(params: Mapping[str, Any]) -> tuple[list[Stream], int]:
    """A client's media test, checked: the streams and the duration, typed and bounded."""
    duration_ns = params.get("duration_ns")
    if type(duration_ns) is not int or not 0 < duration_ns <= MAX_TEST_NS:
        raise ProtocolError(f"duration_ns must be an integer in [1, {MAX_TEST_NS}]")
    raw = params.get("streams")
    if not isinstance(raw, list) or not 0 < len(raw) <= MAX_STREAMS:
        raise ProtocolError(f"streams must be a list of 1 to {MAX_STREAMS} streams")
    streams = [_stream(s) for s in raw]
    if len({s.name for s in streams}) != len(streams):
        raise ProtocolError("two streams share a name")
    total = sum(messages(s, duration_ns) for s in streams)
    if total > MAX_MESSAGES:
        raise ProtocolError(f"{total} messages in all; at most {MAX_MESSAGES}")
    return streams, duration_ns


def messages(stream: Stream, duration_ns: int) -> int:
    """How many messages a stream's schedule holds in the test."""
    return max(duration_ns - stream.start_ns, 0) // stream.interval_ns + 1


def _stream(raw: Any) -> Stream:
    if not isinstance(raw, dict):
        raise ProtocolError("a stream must be a JSON object")
    try:
        stream = Stream(**raw)
    except TypeError as error:
        raise ProtocolError(f"a stream: {error}") from None
    largest = MAX_DATAGRAM if stream.transport == "udp" else MAX_MESSAGE_BYTES
    top = stream.max_message_size if stream.max_message_size is not None else 0
    if not (
        isinstance(stream.name, str)
        and stream.transport in ("tcp", "udp")
        and all(
            type(v) is int for v in (stream.interval_ns, stream.message_size, stream.start_ns, top)
        )
        and stream.interval_ns > 0
        and HEADER.size <= stream.message_size <= largest
        and 0 <= top <= largest
        and 0 <= stream.start_ns <= MAX_TEST_NS
        and isinstance(stream.skip_when_blocked, bool)
    ):
        raise ProtocolError(
            f"stream {str(stream.name)[:40]!r}: transport tcp or udp, a positive integer"
            f" interval_ns, message sizes from {HEADER.size} to {largest} bytes, start_ns"
            " from 0"
        )
    return stream


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("a media connection closed before naming its stream")
        data += chunk
    return data


def _receive(
    streams: Sequence[Stream],
    udp: Mapping[str, socket.socket],
    tcp: Mapping[int, socket.socket],
    control: Control,
    t0: int,
    duration_ns: int,
) -> dict[str, list[list[int]]]:
    """Record (seq, arrival ns since t0) of each complete message until the client stops."""
    arrivals: dict[str, list[list[int]]] = {s.name: [] for s in streams}
    limits = {s.name: messages(s, duration_ns) for s in streams}
    buffers = {index: bytearray() for index in tcp}
    largest = {
        index: max(streams[index].message_size, streams[index].max_message_size or 0)
        for index in tcp
    }
    selector = selectors.DefaultSelector()
    for name, sock in udp.items():
        selector.register(sock, selectors.EVENT_READ, ("udp", name))
    for index, sock in tcp.items():
        selector.register(sock, selectors.EVENT_READ, ("tcp", index))
    selector.register(control.sock, selectors.EVENT_READ, ("control", None))
    deadline = t0 + duration_ns + int(GRACE_S * NS_PER_S)
    try:
        while now_ns() < deadline:
            for key, _ in selector.select(timeout=(deadline - now_ns()) / NS_PER_S):
                kind, which = key.data
                if kind == "control":
                    if control.receive(STEP_TIMEOUT_S).get("event") == "stop":
                        return arrivals
                    continue
                if kind == "udp":
                    datagram = key.fileobj.recv(65_536)  # type: ignore[union-attr]
                    # No more arrivals kept than the stream has messages, whatever comes.
                    if len(datagram) >= HEADER.size and len(arrivals[which]) < limits[which]:
                        seq = HEADER.unpack_from(datagram)[0]
                        arrivals[which].append([seq, now_ns() - t0])
                    continue
                chunk = key.fileobj.recv(READ_SIZE)  # type: ignore[union-attr]
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                at = now_ns() - t0
                buffer = buffers[which]
                buffer += chunk
                name = streams[which].name
                while len(buffer) >= HEADER.size:
                    seq, _, length = HEADER.unpack_from(buffer)
                    if not HEADER.size <= length <= largest[which]:
                        raise ProtocolError(f"{name}: a message of {length} bytes")
                    if len(buffer) < length:
                        break
                    arrivals[name].append([seq, at])
                    del buffer[:length]
    finally:
        selector.close()
    return arrivals
