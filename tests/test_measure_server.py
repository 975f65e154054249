"""`tcplab measure server` against hostile clients, over loopback only: each malformed,
slow or idle connection gets an error reply and is dropped within the step timeout, while
well-behaved clients' tests run at the same time (issue #15). No root needed.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcplab.measure import client, server
from tcplab.measure.common import PROTOCOL, PeerError, TcpOptions
from tcplab.measure.dispatch import Busy, Registry
from tcplab.measure.workload import Workload

STEP_S = 3.0
MS = 1_000_000


class Server:
    """An in-process server on a loopback port, serving until the test ends."""

    def __init__(self) -> None:
        self.listener = server.listen("127.0.0.1", 0, TcpOptions())
        self.port = self.listener.getsockname()[1]
        self.reports: list[dict[str, Any]] = []
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            server.serve(self.listener, 65536, 10**6, 120.0, self.reports.append, None, STEP_S)
        except BaseException as error:  # the test asserts the server never stops
            self.failure = error

    def alive(self) -> bool:
        return self.thread.is_alive() and self.failure is None


@pytest.fixture(scope="module")
def running() -> Iterator[Server]:
    s = Server()
    yield s
    s.listener.close()


def bulk_workload(duration_ms: int = 300) -> Workload:
    return Workload(
        kind="bulk",
        duration_ns=duration_ms * MS,
        interval_ns=100 * MS,
        trace_interval_ns=100 * MS,
        message_size=16384,
    )


def bulk(port: int, duration_ms: int = 300) -> dict[str, Any]:
    return client.run("127.0.0.1", port, TcpOptions(), bulk_workload(duration_ms))


def rr(port: int) -> dict[str, Any]:
    workload = Workload(
        kind="rr",
        duration_ns=5000 * MS,
        interval_ns=100 * MS,
        trace_interval_ns=100 * MS,
        request_size=100,
        response_size=100,
        transactions=10,
    )
    return client.run("127.0.0.1", port, TcpOptions(), workload)


def reply(sock: socket.socket, timeout_s: float) -> dict[str, Any] | None:
    """The server's answer line, or None if it closed without one."""
    sock.settimeout(timeout_s)
    data = b""
    while b"\n" not in data:
        try:
            chunk = sock.recv(4096)
        except ConnectionResetError:
            return None
        if not chunk:
            return None
        data += chunk
    return json.loads(data.split(b"\n", 1)[0])


VALID = {
    "protocol": PROTOCOL,
    "kind": "bulk",
    "duration_ns": 200 * MS,
    "bytes": None,
    "interval_ns": 100 * MS,
    "request_size": None,
    "response_size": None,
    "read_delay_ns": 0,
    "boot_id": "",
}

HOSTILE = {
    "random bytes": bytes(range(256)) * 4,
    "truncated JSON": b'{"protocol": "tcplab-measure/2", "kind": "bu',
    "1e999": json.dumps({**VALID, "duration_ns": "X"}).replace('"X"', "1e999").encode() + b"\n",
    "NaN": json.dumps({**VALID, "interval_ns": "X"}).replace('"X"', "NaN").encode() + b"\n",
    "huge integer": json.dumps({**VALID, "interval_ns": "X"}).replace('"X"', "9" * 5000).encode()
    + b"\n",
    "missing field": json.dumps({k: v for k, v in VALID.items() if k != "duration_ns"}).encode()
    + b"\n",
    "wrong type": json.dumps({**VALID, "kind": ["bulk"]}).encode() + b"\n",
    "too many intervals": json.dumps({**VALID, "interval_ns": 1}).encode() + b"\n",
    "HTTP GET": b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    "100,000 nested [": b"[" * 100_000 + b"\n",
    "nested [ in an object": b'{"a": ' + b"[" * 30_000 + b"\n",
    "a line past the limit": b'{"a": "' + b"x" * (server.MAX_REQUEST_BYTES + 10),
    "not an object": b"[1, 2, 3]\n",
    "invalid UTF-8": b'{"a": "\xff\xfe"}\n',
    "media without streams": json.dumps({"protocol": "tcplab-media/2", "duration_ns": 10}).encode()
    + b"\n",
    "media stream of 0 bytes": json.dumps(
        {
            "protocol": "tcplab-media/2",
            "duration_ns": 10**9,
            "streams": [{"name": "a", "transport": "tcp", "interval_ns": 1, "message_size": 0}],
        }
    ).encode()
    + b"\n",
    "ready, then no data connection": json.dumps(VALID).encode()
    + b"\n"
    + json.dumps({"event": "connecting", "t0_ns": 0, "ports": [1]}).encode()
    + b"\n",
}


def test_each_hostile_client_is_answered_and_dropped_while_a_real_test_runs(
    running: Server,
) -> None:
    hostile = {}
    for name, payload in HOSTILE.items():
        sock = socket.create_connection(("127.0.0.1", running.port), timeout=5)
        try:
            sock.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may drop a line past the limit before it is all sent
        hostile[name] = sock
    idle = [socket.create_connection(("127.0.0.1", running.port)) for _ in range(3)]
    started = time.monotonic()
    result = bulk(running.port)
    # The idle connections and the unfinished messages hold nothing up.
    assert time.monotonic() - started < STEP_S
    assert result["end"]["sum_received"]["bytes"] > 0
    for name, sock in hostile.items():
        with sock:
            answer = reply(sock, 2 * STEP_S)
        if name == "ready, then no data connection":
            assert answer is not None and answer["event"] == "ready", name
            continue
        assert answer is not None and answer["event"] == "error", name
        assert answer["error"], name
    for sock in idle:
        with sock:
            answer = reply(sock, 2 * STEP_S)
        assert answer == {"event": "error", "error": f"nothing received in {STEP_S:g} s"}
    assert running.alive()
    assert bulk(running.port)["end"]["sum_received"]["bytes"] > 0


def test_200_simultaneous_clients_are_all_accepted_and_answered(running: Server) -> None:
    socks = [socket.create_connection(("127.0.0.1", running.port), timeout=5) for _ in range(200)]
    for sock in socks:
        sock.sendall(b"{}\n")
    for sock in socks:
        with sock:
            answer = reply(sock, 2 * STEP_S)
        assert answer is not None and answer["event"] == "error"
    assert running.alive()


def test_concurrent_tests_each_get_their_own_data_connection(running: Server) -> None:
    outcomes: list[Any] = []

    def one() -> None:
        try:
            outcomes.append(rr(running.port)["end"]["transactions"]["count"])
        except PeerError as error:
            outcomes.append(str(error))

    threads = [threading.Thread(target=one) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert outcomes == [10] * 12
    assert running.alive()


def test_a_test_past_the_limit_of_tests_at_once_is_told_the_server_is_busy() -> None:
    registry = Registry(1)
    registry.open("127.0.0.1", 1, False)
    with pytest.raises(Busy, match="1 tests at once"):
        registry.open("127.0.0.1", 1, False)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)


@st.composite
def messages(draw: st.DrawFn) -> bytes:
    """Raw bytes, any JSON, or the valid request with one field replaced or removed."""
    kind = draw(st.sampled_from(["bytes", "json", "mutation"]))
    if kind == "bytes":
        return draw(st.binary(max_size=300)) + b"\n"
    if kind == "json":
        return json.dumps(draw(JSON)).encode() + b"\n"
    request: dict[str, Any] = dict(VALID)
    name = draw(st.sampled_from(sorted(request)))
    if draw(st.booleans()):
        del request[name]
    else:
        request[name] = draw(JSON)
    return json.dumps(request).encode() + b"\n"


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(payload=messages())
def test_fuzzed_first_messages_get_an_error_or_a_ready(running: Server, payload: bytes) -> None:
    with socket.create_connection(("127.0.0.1", running.port), timeout=5) as sock:
        sock.sendall(payload)
        answer = reply(sock, 2 * STEP_S)
    assert answer is not None
    assert answer["event"] in ("error", "ready")
    assert running.alive()


def test_the_server_still_serves_after_the_fuzzing(running: Server) -> None:
    assert bulk(running.port)["end"]["sum_received"]["bytes"] > 0


def test_a_marked_control_connection_carries_its_dscp(running: Server) -> None:
    # The emu backend marks the client's control connection (backends/emu.py CONTROL_DSCP)
    # so that the emulator's error models skip it; IP_TOS holds DSCP << 2 (RFC 2474 §3).
    with client._control_connection("127.0.0.1", running.port, 1) as marked:
        assert marked.getsockopt(socket.IPPROTO_IP, socket.IP_TOS) == 4
    with client._control_connection("127.0.0.1", running.port, None) as plain:
        assert plain.getsockopt(socket.IPPROTO_IP, socket.IP_TOS) == 0
    assert running.alive()


def test_the_client_starts_the_schedule_clocks_with_its_time_0_as_it_connects(
    running: Server,
) -> None:
    """The emulator's schedules count from the data connection's opening (docs/emu.md): the
    client writes its test's time 0 to each clock pipe just before it connects, and
    closes them."""
    pipes = [os.pipe(), os.pipe()]
    before = time.monotonic_ns()
    result = client.run(
        "127.0.0.1", running.port, TcpOptions(), bulk_workload(), clock_fds=[w for _, w in pipes]
    )
    for r, _ in pipes:
        origin = int.from_bytes(os.read(r, 16), "little")
        assert os.read(r, 1) == b"", "the client closes the clock pipe"
        os.close(r)
        # Before the test's 300 ms, which count from it.
        assert before <= origin < before + 200 * MS
    assert result["end"]["sum_sent"]["seconds"] == pytest.approx(0.3, abs=0.05)
