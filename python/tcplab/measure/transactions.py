"""Request/response transactions, like netperf TCP_RR: the client writes a request, the
server answers once it has read all of it, and a transaction ends when the client has
read the whole response. One transaction is outstanding at a time, so its latency is the
path's round trip, both messages' serialization and both hosts' processing.

The simulator's rules are the same (crates/sim/src/flow.rs `Transactions`): the first
transaction is timed from the connection's opening, each next one from the end of the
last, and one still under way when the test ends is not counted.
"""

from __future__ import annotations

import math
import select
import socket
from dataclasses import dataclass, field

from tcplab.measure.common import add_to_interval, now_ns
from tcplab.measure.workload import Workload

# Largest slice of a message held in memory; a larger message is sent from it in turns.
MESSAGE_CHUNK = 256 * 1024
POLL_ERRORS = select.POLLERR | select.POLLHUP | select.POLLNVAL


def percentile(ordered: list[int], p: int) -> int:
    """The nearest-rank percentile (Hyndman & Fan's definition 1), as the simulator's
    LatencySummary takes it (crates/sim/src/metrics/latency.rs)."""
    rank = max(math.ceil(p * len(ordered) / 100), 1)
    return ordered[rank - 1]


def latency_summary(samples_ns: list[int]) -> dict[str, float] | None:
    """Mean, nearest-rank percentiles and extremes in µs; None without a transaction."""
    if not samples_ns:
        return None
    ordered = sorted(samples_ns)
    summary = {"mean": sum(ordered) / len(ordered) / 1e3, "min": ordered[0] / 1e3}
    for p in (50, 90, 99):
        summary[f"p{p}"] = percentile(ordered, p) / 1e3
    summary["max"] = ordered[-1] / 1e3
    return summary


@dataclass
class ClientSide:
    """What the client saw: each transaction's latency, when the last one ended, and the
    response bytes read and transactions done per interval from `origin_ns`."""

    origin_ns: int
    interval_ns: int
    latencies_ns: list[int] = field(default_factory=list)
    last_end_ns: int | None = None
    interval_bytes: list[int] = field(default_factory=list)
    interval_transactions: list[int] = field(default_factory=list)
    written: int = 0
    received: int = 0
    ended_by: str = "duration"

    def read(self, t_ns: int, n: int) -> None:
        self.received += n
        add_to_interval(self.interval_bytes, t_ns - self.origin_ns, self.interval_ns, n)

    def completed(self, began_ns: int, t_ns: int) -> None:
        self.latencies_ns.append(t_ns - began_ns)
        self.last_end_ns = t_ns
        add_to_interval(self.interval_transactions, t_ns - self.origin_ns, self.interval_ns, 1)


def run_client(sock: socket.socket, side: ClientSide, workload: Workload, deadline_ns: int) -> None:
    """Transactions on the non-blocking, connected `sock` until the deadline or the
    workload's count of transactions; each wait is bounded by the deadline."""
    # An rr workload has both sizes (Workload's check).
    assert workload.request_size is not None and workload.response_size is not None
    request_size, response_size = workload.request_size, workload.response_size
    read_size, limit = workload.client_read_size, workload.transactions
    request = memoryview(bytes(min(request_size, MESSAGE_CHUNK)))
    buffer = bytearray(read_size)
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    began_ns = t_ns = now_ns()
    while limit is None or len(side.latencies_ns) < limit:
        to_send, to_read = request_size, response_size
        while to_read > 0:
            remaining_ms = (deadline_ns - now_ns()) / 1e6
            if remaining_ms <= 0:
                return
            poller.modify(sock, select.POLLIN | (select.POLLOUT if to_send else 0))
            for _, events in poller.poll(max(remaining_ms, 1)):
                if events & select.POLLOUT and to_send:
                    try:
                        sent = sock.send(request[: min(to_send, len(request))])
                    except BlockingIOError:
                        sent = 0
                    to_send -= sent
                    side.written += sent
                if events & (select.POLLIN | POLL_ERRORS):
                    try:
                        n = sock.recv_into(buffer, min(read_size, to_read))
                    except BlockingIOError:
                        continue
                    if n == 0:
                        raise ConnectionError("the server closed the data connection")
                    t_ns = now_ns()
                    if t_ns > deadline_ns:
                        return  # after the test's end, as the server counts late bytes
                    to_read -= n
                    side.read(t_ns, n)
        side.completed(began_ns, t_ns)
        began_ns = t_ns
    side.ended_by = "transactions"


class Responder:
    """The server's side: counts the request bytes read and owes a response for each
    request read in full."""

    def __init__(self, request_size: int, response_size: int) -> None:
        self.request_size = request_size
        self.response_size = response_size
        self.chunk = memoryview(bytes(min(response_size, MESSAGE_CHUNK)))
        self.read = 0
        self.served = 0
        self.pending = 0
        self.written = 0

    def received(self, n: int) -> None:
        self.read += n
        complete = self.read // self.request_size
        self.pending += (complete - self.served) * self.response_size
        self.served = complete

    def send(self, sock: socket.socket) -> None:
        """Write what the non-blocking `sock` takes of the responses owed."""
        try:
            sent = sock.send(self.chunk[: min(self.pending, len(self.chunk))])
        except BlockingIOError:
            return
        self.pending -= sent
        self.written += sent
