"""`tcplab measure server`: receives tests, counting bytes where the application reads them.

Each test: a control connection brings the client's parameters; the server answers with
its settings; the client announces the moment it calls connect() (its CLOCK_MONOTONIC),
then opens the data connection. The server reads the data with `read_size` calls, adds
each read to the interval it completes in, and, when the client says stop (bulk, rr) or
the data ends (file), sends back its report on the control connection. In an rr test it
answers each request read in full with a response (tcplab.measure.transactions).
Intervals start at the client's connect() call when both sides share a clock (same
boot_id: the emulator's two namespaces), and at the data connection's accept() otherwise.
"""

from __future__ import annotations

import json
import selectors
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from tcplab.measure import media, tcpinfo
from tcplab.measure.common import (
    PROTOCOL,
    TCP_WINDOW_CLAMP,
    Control,
    TcpOptions,
    actual_options,
    add_to_interval,
    boot_id,
    cpu_report,
    cpu_times,
    now_ns,
)
from tcplab.measure.transactions import Responder
from tcplab.measure.workload import KINDS

NS_PER_S = 1_000_000_000
# How long the server waits for a client's next step (control message, data connection).
STEP_TIMEOUT_S = 30.0
# What a client may ask for: a bound on every test, whatever its parameters say.
MAX_TEST_S = 24 * 3600.0
# Time past the test's own end before the server gives up on the client's stop message.
GRACE_S = 60.0


def listen(bind: str, port: int, options: TcpOptions) -> socket.socket:
    """A listening socket with `options` set before listen(), so accepted sockets inherit
    them and the window scale of the SYN-ACK follows the receive buffer."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    options.apply(sock)
    sock.bind((bind, port))
    sock.listen(4)
    return sock


def serve(
    listener: socket.socket,
    read_size: int,
    count: int,
    accept_timeout_s: float,
    on_report: Callable[[dict[str, Any]], None],
    window_clamp: int | None = None,
) -> None:
    """Serve `count` tests one after another, each bounded in time."""
    for _ in range(count):
        listener.settimeout(accept_timeout_s)
        control_sock, _ = listener.accept()
        with control_sock:
            report = _one_test(listener, Control(control_sock), read_size, window_clamp)
        on_report(report)


def _one_test(
    listener: socket.socket, control: Control, read_size: int, window_clamp: int | None
) -> dict[str, Any]:
    params = control.receive(STEP_TIMEOUT_S)
    if params.get("protocol") == media.PROTOCOL:
        return media.serve_test(listener, control, params)
    if params.get("protocol") != PROTOCOL:
        raise ConnectionError(f"client speaks {params.get('protocol')!r}, not {PROTOCOL}")
    interval_ns = int(params["interval_ns"])
    duration_ns = int(params["duration_ns"])
    kind = params["kind"]
    if interval_ns <= 0 or not 0 < duration_ns <= MAX_TEST_S * NS_PER_S:
        raise ConnectionError("interval and duration must be positive and bounded")
    if kind not in KINDS:
        raise ConnectionError(f"the client asked for a {kind!r} test; accepted: {', '.join(KINDS)}")
    responder = _responder(params)
    control.send({"event": "ready", "server": actual_options(listener)})
    connecting = control.receive(STEP_TIMEOUT_S)
    same_clock = params.get("boot_id") == boot_id() and params.get("boot_id") != ""
    listener.settimeout(STEP_TIMEOUT_S)
    data, _ = listener.accept()
    accept_ns = now_ns()
    origin_ns = int(connecting["t0_ns"]) if same_clock else accept_ns
    with data:
        clamp = WindowClamp(data, window_clamp)
        return _receive(
            data, control, read_size, params, responder, origin_ns, accept_ns, same_clock, clamp
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


def _responder(params: dict[str, Any]) -> Responder | None:
    """The request/response side of an rr test; None for the other kinds."""
    if params["kind"] != "rr":
        return None
    request, response = params.get("request_size"), params.get("response_size")
    if not all(isinstance(n, int) and n > 0 for n in (request, response)):
        raise ConnectionError(
            f"an rr test needs positive request and response sizes, not {request!r} and "
            f"{response!r}"
        )
    return Responder(int(request), int(response))


def _receive(
    data: socket.socket,
    control: Control,
    read_size: int,
    params: dict[str, Any],
    responder: Responder | None,
    origin_ns: int,
    accept_ns: int,
    same_clock: bool,
    clamp: WindowClamp,
) -> dict[str, Any]:
    interval_ns = int(params["interval_ns"])
    duration_ns = int(params["duration_ns"])
    expected = params.get("bytes")
    read_delay_s = int(params.get("read_delay_ns") or 0) / NS_PER_S
    cpu_start, wall_start = cpu_times(), now_ns()
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
            if params["kind"] != "file" and since > duration_ns:
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
        "cpu": cpu_report(cpu_start, wall_s),
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
