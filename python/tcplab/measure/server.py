"""`tcplab measure server`: receives tests, counting bytes where the application reads them.

Each test: a control connection brings the client's parameters; the server answers with
its settings; the client announces the moment it calls connect() (its CLOCK_MONOTONIC) and
the port it connects from, then opens the data connection. The server reads the data with
`read_size` calls, adds each read to the interval it completes in, and, when the client
says stop (bulk, rr) or the data ends (file), sends back its report on the control
connection. In an rr test it answers each request read in full with a response
(tcplab.measure.transactions). Intervals start at the client's connect() call when both
sides share a clock (same boot_id: the emulator's two namespaces), and at the data
connection's accept() otherwise.

Each connection is handled on its own thread, every wait bounded by a deadline and every
message by a length, so a slow, idle or hostile client is answered with an error and
dropped while the others' tests go on (tcplab.measure.dispatch places data connections).
"""

from __future__ import annotations

import json
import resource
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcplab.measure import media, tcpinfo
from tcplab.measure.common import (
    PROTOCOL,
    TCP_WINDOW_CLAMP,
    Control,
    ProtocolError,
    TcpOptions,
    actual_options,
    add_to_interval,
    boot_id,
    cpu_report,
    cpu_times,
    now_ns,
)
from tcplab.measure.dispatch import Registry, announce, first_bytes
from tcplab.measure.transactions import Responder
from tcplab.measure.workload import KINDS

NS_PER_S = 1_000_000_000
# How long the server waits for a client's next step (control message, data connection),
# and for an accepted connection's first bytes.
STEP_TIMEOUT_S = 30.0
# What a client may ask for: a bound on every test, whatever its parameters say.
MAX_TEST_S = 24 * 3600.0
# Time past the test's own end before the server gives up on the client's stop message.
GRACE_S = 60.0
# Connections queued by the kernel before accept() (capped by net.core.somaxconn).
BACKLOG = socket.SOMAXCONN
# Connections handled at once (each on a thread) and tests run at once; past them a
# client is told the server is busy.
MAX_CONNECTIONS = 256
MAX_TESTS = 32
# Longest message a client may send on the control connection (its parameters).
MAX_REQUEST_BYTES = 64 * 1024
# Most intervals a test may ask for (duration / interval): the report holds one count each.
MAX_INTERVALS = 1_000_000
# Largest request, response or file a client may name (1 TiB).
MAX_BYTES = 1 << 40


def listen(bind: str, port: int, options: TcpOptions) -> socket.socket:
    """A listening socket with `options` set before listen(), so accepted sockets inherit
    them and the window scale of the SYN-ACK follows the receive buffer."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    options.apply(sock)
    sock.bind((bind, port))
    sock.listen(BACKLOG)
    return sock


def serve(
    listener: socket.socket,
    read_size: int,
    count: int,
    accept_timeout_s: float,
    on_report: Callable[[dict[str, Any]], None],
    window_clamp: int | None = None,
    step_timeout_s: float = STEP_TIMEOUT_S,
) -> None:
    """Serve until `count` tests have reported, several at once if clients come together;
    TimeoutError if no connection is open for `accept_timeout_s` before that."""
    _Server(listener, read_size, on_report, window_clamp, step_timeout_s).run(
        count, accept_timeout_s
    )


def log(message: str) -> None:
    print(f"tcplab measure server: {message}", file=sys.stderr, flush=True)


class _Server:
    def __init__(
        self,
        listener: socket.socket,
        read_size: int,
        on_report: Callable[[dict[str, Any]], None],
        window_clamp: int | None,
        step_timeout_s: float,
    ) -> None:
        self.listener = listener
        self.read_size = read_size
        self.on_report = on_report
        self.window_clamp = window_clamp
        self.step_timeout_s = step_timeout_s
        self.registry = Registry(MAX_TESTS)
        self.lock = threading.Lock()
        self.reports = 0
        self.handling = 0
        self.wake_read, self.wake_write = socket.socketpair()

    def run(self, count: int, idle_s: float) -> None:
        self.listener.setblocking(False)
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ, "listener")
        selector.register(self.wake_read, selectors.EVENT_READ, "wake")
        idle_since = time.monotonic()
        try:
            while True:
                with self.lock:
                    if self.reports >= count:
                        return
                    busy = self.handling > 0
                if busy:
                    idle_since = time.monotonic()
                remaining = idle_s - (time.monotonic() - idle_since)
                if remaining <= 0:
                    raise TimeoutError(f"no client for {idle_s:g} s")
                for key, _ in selector.select(None if busy else remaining):
                    if key.data == "wake":
                        self.wake_read.recv(4096)
                    else:
                        self._accept_all()
                        idle_since = time.monotonic()
        finally:
            selector.close()
            self.wake_read.close()
            self.wake_write.close()

    def _accept_all(self) -> None:
        while True:
            try:
                sock, peer = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:  # e.g. EMFILE: the connection stays queued
                log(f"accept: {error}")
                return
            accepted_ns = now_ns()
            if self.registry.arrived(sock, peer, accepted_ns):
                continue
            with self.lock:
                full = self.handling >= MAX_CONNECTIONS
                if not full:
                    self.handling += 1
            if full:
                if self.registry.give_up(peer):
                    Control(sock).refuse("the server is busy; try again later")
                    sock.close()
                continue
            threading.Thread(
                target=self._handle, args=(sock, peer), name=f"connection {peer}", daemon=True
            ).start()

    def _handle(self, sock: socket.socket, peer: tuple[str, int]) -> None:
        try:
            self._route(sock, peer)
        finally:
            with self.lock:
                self.handling -= 1
            self._wake()

    def _wake(self) -> None:
        try:
            self.wake_write.send(b"x")
        except OSError:
            pass  # the server has stopped

    def _route(self, sock: socket.socket, peer: tuple[str, int]) -> None:
        """A control connection runs its test here; a data connection waits to be placed."""
        deadline = time.monotonic() + self.step_timeout_s
        while True:
            first = first_bytes(sock, min(deadline, time.monotonic() + 0.05))
            verdict = self.registry.spoke(peer, first) if first else "silent"
            if verdict == "placed":
                return
            if verdict == "control":
                self._control(sock, peer)
                return
            if verdict == "stray" or time.monotonic() >= deadline or (not first and _closed(sock)):
                break
        if self.registry.give_up(peer):
            reason = (
                f"nothing received in {self.step_timeout_s:g} s"
                if not first
                else "not a tcplab control message (one JSON object per line) nor an announced"
                " data connection"
            )
            log(f"{peer[0]}:{peer[1]}: {reason}; dropped")
            Control(sock).refuse(reason)
            sock.close()

    def _control(self, sock: socket.socket, peer: tuple[str, int]) -> None:
        control = Control(sock, MAX_REQUEST_BYTES)
        with sock:
            try:
                params = control.receive(self.step_timeout_s)
                if params.get("protocol") == media.PROTOCOL:
                    report = media.serve_test(
                        self.registry, self.listener, control, params, peer, self.step_timeout_s
                    )
                else:
                    report = self._test(control, params, peer)
            except (ConnectionError, TimeoutError, OSError) as error:
                log(f"{peer[0]}:{peer[1]}: {error}; dropped")
                control.refuse(str(error))
                return
            except Exception as error:  # a bug here must not stop the other tests
                log(f"{peer[0]}:{peer[1]}: internal error (please report): {error!r}")
                control.refuse(f"internal error: {error!r}")
                return
        with self.lock:
            self.reports += 1
            self.on_report(report)

    def _test(
        self, control: Control, params: dict[str, Any], peer: tuple[str, int]
    ) -> dict[str, Any]:
        request = Request.parse(params)
        responder = (
            Responder(int(request.request_size or 0), int(request.response_size or 0))
            if request.kind == "rr"
            else None
        )
        test = self.registry.open(peer[0], 1, request.proxied)
        try:
            control.send({"event": "ready", "server": actual_options(self.listener)})
            connecting = control.receive(self.step_timeout_s)
            announce(self.registry, test, connecting)
            data, accept_ns = test.take(self.step_timeout_s)
            same_clock = request.boot_id == boot_id() and request.boot_id != ""
            origin_ns = accept_ns
            if same_clock:
                origin_ns = _integer(connecting, "t0_ns", 0, accept_ns)
                if accept_ns - origin_ns > self.step_timeout_s * NS_PER_S:
                    raise ProtocolError("t0_ns is further back than the step timeout")
            with data:
                data.setblocking(True)
                clamp = WindowClamp(data, self.window_clamp)
                return _receive(
                    data,
                    control,
                    self.read_size,
                    request,
                    responder,
                    origin_ns,
                    accept_ns,
                    same_clock,
                    clamp,
                )
        finally:
            self.registry.close(test)


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


def _integer(params: dict[str, Any], name: str, low: int, high: int) -> int:
    value = params.get(name)
    if type(value) is not int or not low <= value <= high:
        raise ProtocolError(f"{name} must be an integer in [{low}, {high}], not {value!r:.40}")
    return value


@dataclass(frozen=True)
class Request:
    """A client's bulk, file or rr test, checked: every field typed and bounded."""

    kind: str
    duration_ns: int
    interval_ns: int
    bytes: int | None
    request_size: int | None
    response_size: int | None
    read_delay_ns: int
    boot_id: str
    proxied: bool

    @classmethod
    def parse(cls, params: dict[str, Any]) -> Request:
        if params.get("protocol") != PROTOCOL:
            raise ProtocolError(
                f"the client speaks {params.get('protocol')!r:.40}, not {PROTOCOL} "
                "(or tcplab-media/2)"
            )
        kind = params.get("kind")
        if kind not in KINDS:
            raise ProtocolError(f"kind {kind!r:.40}: accepted: {', '.join(KINDS)}")
        duration_ns = _integer(params, "duration_ns", 1, int(MAX_TEST_S * NS_PER_S))
        interval_ns = _integer(params, "interval_ns", 1, duration_ns * 2)
        if duration_ns // interval_ns > MAX_INTERVALS:
            raise ProtocolError(
                f"duration_ns / interval_ns is {duration_ns // interval_ns}; at most "
                f"{MAX_INTERVALS} intervals"
            )
        sizes = {
            name: _integer(params, name, 1, MAX_BYTES) if params.get(name) is not None else None
            for name in ("bytes", "request_size", "response_size")
        }
        if kind == "rr" and None in (sizes["request_size"], sizes["response_size"]):
            raise ProtocolError("an rr test needs request_size and response_size")
        read_delay_ns = (
            _integer(params, "read_delay_ns", 0, duration_ns) if params.get("read_delay_ns") else 0
        )
        boot = params.get("boot_id", "")
        return cls(
            kind=kind,
            duration_ns=duration_ns,
            interval_ns=interval_ns,
            read_delay_ns=read_delay_ns,
            boot_id=boot if isinstance(boot, str) else "",
            proxied=params.get("proxied") is True,
            **sizes,
        )


class WindowClamp:
    """Keeps the receive window at most `window` bytes (TCP_WINDOW_CLAMP, tcp(7)).

    Since Linux 6.5 the kernel recomputes the clamp from the receive buffer whenever it
    re-estimates the payload-to-memory ratio of arriving packets (`scaling_ratio`, in
    tcp_measure_rcv_mss), which overrides the application's clamp on the first full
    segments; so it is set again after accept and checked every few reads.
    """

    CHECK_EVERY = 64

    def __init__(self, sock: socket.socket, window: int | None) -> None:
        self.sock = sock
        self.window = window
        self.reads = 0
        self.enforce()

    def enforce(self) -> None:
        if self.window is None:
            return
        current = self.sock.getsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP)
        if current != self.window:
            self.sock.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, self.window)

    def after_read(self) -> None:
        self.reads += 1
        if self.reads <= 2 or self.reads % self.CHECK_EVERY == 0:
            self.enforce()


def _receive(
    data: socket.socket,
    control: Control,
    read_size: int,
    request: Request,
    responder: Responder | None,
    origin_ns: int,
    accept_ns: int,
    same_clock: bool,
    clamp: WindowClamp,
) -> dict[str, Any]:
    interval_ns = request.interval_ns
    duration_ns = request.duration_ns
    expected = request.bytes
    read_delay_s = request.read_delay_ns / NS_PER_S
    cpu_start, wall_start = cpu_times(resource.RUSAGE_THREAD), now_ns()
    bins: list[int] = []
    total = late = 0
    first_ns = last_ns = None
    buffer = bytearray(read_size)
    # Non-blocking, so that a response larger than the send buffer never holds the loop
    # past its deadline.
    data.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(data, selectors.EVENT_READ, "data")
    selector.register(control.sock, selectors.EVENT_READ, "control")
    hard_deadline_ns = origin_ns + duration_ns + int(GRACE_S * NS_PER_S)
    ended_by = "timeout"
    running = True
    while running:
        remaining_s = (hard_deadline_ns - now_ns()) / NS_PER_S
        if remaining_s <= 0:
            break
        if responder is not None:
            wanted = selectors.EVENT_READ | (selectors.EVENT_WRITE if responder.pending else 0)
            selector.modify(data, wanted, "data")
        for key, events in selector.select(timeout=remaining_s):
            if key.data == "control":
                message = control.receive(STEP_TIMEOUT_S)
                if message.get("event") == "stop":
                    ended_by, running = "stop", False
                    break
                continue
            if events & selectors.EVENT_WRITE and responder is not None:
                responder.send(data)
            if not events & selectors.EVENT_READ:
                continue
            try:
                n = data.recv_into(buffer, read_size)
            except BlockingIOError:
                continue
            if n == 0:
                ended_by, running = "eof", False
                break
            t = now_ns()
            clamp.after_read()
            if responder is not None:
                responder.received(n)
                # Answer now rather than after another turn of select(): the latency
                # is the client's measure, and the socket almost always takes it all.
                if responder.pending:
                    responder.send(data)
            since = t - origin_ns
            if first_ns is None:
                first_ns = t
            last_ns = t
            if request.kind != "file" and since > duration_ns:
                late += n  # after the test's end; the client stops writing at its end
                continue
            add_to_interval(bins, since, interval_ns, n)
            total += n
            if expected is not None and total >= expected:
                ended_by, running = "complete", False
                break
            if read_delay_s:
                # The receiving application sleeps after each read (seed 003's Sleep() at
                # the receiver); what arrives meanwhile waits in the socket buffer.
                time.sleep(min(read_delay_s, max(0.0, (hard_deadline_ns - now_ns()) / NS_PER_S)))
    selector.close()
    info = tcpinfo.read(data)
    wall_s = (now_ns() - wall_start) / NS_PER_S
    report = {
        "event": "report",
        "origin": "client_connect" if same_clock else "server_accept",
        "accept_s": (accept_ns - origin_ns) / NS_PER_S,
        "interval_ns": interval_ns,
        "interval_bytes": bins,
        "bytes": total,
        "late_bytes": late,
        "bytes_written": 0 if responder is None else responder.written,
        "requests_served": None if responder is None else responder.served,
        "first_byte_s": None if first_ns is None else (first_ns - origin_ns) / NS_PER_S,
        "last_byte_s": None if last_ns is None else (last_ns - origin_ns) / NS_PER_S,
        "ended_by": ended_by,
        "completed": expected is not None and total >= expected,
        "cpu": cpu_report(cpu_start, wall_s, resource.RUSAGE_THREAD),
        "tcp_info": info.raw,
        "receiver": actual_options(data),
    }
    control.send(report)
    return report


def main(
    bind: str,
    port: int,
    options: TcpOptions,
    read_size: int,
    count: int,
    accept_timeout_s: float,
) -> None:
    """Listen, announce it on stdout as one JSON line, and serve `count` tests, printing
    each report as one JSON line."""
    with listen(bind, port, options) as listener:
        print(json.dumps({"event": "listening", "port": listener.getsockname()[1]}), flush=True)

        def emit(report: dict[str, Any]) -> None:
            print(json.dumps(report), flush=True)

        serve(listener, read_size, count, accept_timeout_s, emit, options.window_clamp)
    sys.stdout.flush()
