"""`tcplab measure client`: sends a bulk stream or a file to a `tcplab measure server`, or
runs request/response transactions with it.

The client writes `message_size` bytes per call (netperf -m), optionally sleeping
`write_delay` between calls, for `duration` (bulk) or until `bytes` are written (file);
an rr test runs transactions for `duration` or up to a count, timing each one
(tcplab.measure.transactions). A thread samples the socket's TCP_INFO every
`trace_interval`. The result is shaped like iperf3's JSON (`start`, `intervals`, `end`),
but its intervals count bytes where the receiving application read them, not where the
sender wrote them (iperf3 issues #692, #1032), and `end` adds the limited-by attribution
and both sides' CPU time (and an rr test's `transactions`).
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tcplab.measure import tcpinfo, transactions
from tcplab.measure.common import (
    PROTOCOL,
    Control,
    TcpOptions,
    actual_options,
    boot_id,
    cpu_report,
    cpu_times,
    now_ns,
    start_clocks,
)
from tcplab.measure.workload import Workload

NS_PER_S = 1_000_000_000
STEP_TIMEOUT_S = 30.0
# After the test, how long the client waits for the server's report.
REPORT_TIMEOUT_S = 60.0
# Counters of the sender's network namespace (/proc/net/netstat, TcpExt) that tcplab
# reports; in the emulator the namespace holds this test's connections only.
NETSTAT_COUNTERS = (
    "TCPTimeouts",
    "TCPWinProbe",
    "TCPFastRetrans",
    "TCPSlowStartRetrans",
    "TCPLossProbes",
    "TCPSpuriousRTOs",
    "TCPSackRecovery",
    "TCPRenoRecovery",
)


def netstat() -> dict[str, int]:
    """TcpExt counters of this process's network namespace."""
    try:
        lines = Path("/proc/self/net/netstat").read_text().splitlines()
    except OSError:
        return {}
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], values.split()[1:], strict=False))
            return {name: int(table[name]) for name in NETSTAT_COUNTERS if name in table}
    return {}


class _Sampler(threading.Thread):
    """Reads TCP_INFO every `period_ns` from the origin `begin` gives on, until stopped.
    Started before the origin is known: starting a thread waits for it to run, which on a
    busy CPU can take milliseconds that must not fall between the origin and connect()."""

    def __init__(self, sock: socket.socket, period_ns: int) -> None:
        super().__init__(name="tcp-info-sampler", daemon=True)
        self.sock = sock
        self.origin_ns = 0
        self.period_ns = period_ns
        self.rows: list[dict[str, Any]] = []
        self.begun = threading.Event()
        self.done = threading.Event()

    def begin(self, origin_ns: int) -> None:
        self.origin_ns = origin_ns
        self.begun.set()

    def run(self) -> None:
        self.begun.wait()
        k = 1
        while True:
            due = self.origin_ns + k * self.period_ns
            if self.done.wait(max(due - now_ns(), 0) / NS_PER_S):
                return
            try:
                info = tcpinfo.read(self.sock)
            except OSError:
                return
            self.rows.append(tcpinfo.sample_row((due - self.origin_ns) / NS_PER_S, info))
            k += 1


def _connect_writer_waiting(sock: socket.socket, address: tuple[str, int]) -> None:
    """Connect with this thread already waiting in send(), as the simulator's application
    is waiting with its data when the connection opens.

    Linux then lets the first data carry the ACK of the SYN-ACK instead of sending the
    handshake's third segment on its own (tcp_rcv_synsent_state_process: with
    sk_write_pending set it schedules the ACK, "Save one ACK"), so the kernel's first
    flight leaves at once, as the simulator's does, and the path's random losses draw
    for the same frames on both. A connect() that returns before the write sends that
    segment, and the first data some 0.5 ms later (this process's wake-up).
    """
    sock.setblocking(False)
    error = sock.connect_ex(address)
    if error not in (0, errno.EINPROGRESS):
        raise OSError(error, f"connect to {address[0]}:{address[1]}: {os.strerror(error)}")
    sock.setblocking(True)
    # Bounds the wait, as a timeout on connect() would.
    timeout = struct.pack("ll", int(STEP_TIMEOUT_S), 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeout)
    try:
        # A blocking send of nothing waits in sk_stream_wait_connect, counted in
        # sk_write_pending, until the connection opens, and returns 0.
        sock.send(b"")
    except BlockingIOError:
        raise TimeoutError(
            f"connect to {address[0]}:{address[1]}: no answer in {STEP_TIMEOUT_S:g} s"
        ) from None
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 0, 0))


def _write(
    sock: socket.socket,
    message: memoryview,
    deadline_ns: int,
    limit: int | None,
    write_delay_ns: int,
) -> int:
    """Write messages until the deadline (or `limit` bytes); returns the bytes written.

    Non-blocking sends under poll(), so the deadline holds even in the middle of a
    message larger than the send buffer.
    """
    poller = select.poll()
    poller.register(sock, select.POLLOUT)
    written = 0
    while limit is None or written < limit:
        size = len(message) if limit is None else min(len(message), limit - written)
        offset = 0
        while offset < size:
            remaining_ms = (deadline_ns - now_ns()) / 1e6
            if remaining_ms <= 0:
                return written
            if not poller.poll(max(remaining_ms, 1)):
                continue
            try:
                sent = sock.send(message[offset:size])
            except BlockingIOError:
                continue
            offset += sent
            written += sent
        if write_delay_ns:
            pause = min(write_delay_ns, deadline_ns - now_ns())
            if pause <= 0:
                return written
            time.sleep(pause / NS_PER_S)
    return written


def _control_connection(host: str, port: int, dscp: int | None) -> socket.socket:
    if dscp is None:
        return socket.create_connection((host, port), timeout=STEP_TIMEOUT_S)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # RFC 2474: the DSCP is the upper six bits of the former TOS byte; set before
        # connect() so that the SYN carries it too.
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, dscp << 2)
        sock.settimeout(STEP_TIMEOUT_S)
        sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def run(
    host: str,
    port: int,
    options: TcpOptions,
    workload: Workload,
    proxied: bool = False,
    start_at_ns: int | None = None,
    origin_ns: int | None = None,
    control_dscp: int | None = None,
    clock_fds: Sequence[int] = (),
) -> dict[str, Any]:
    """Run one test against the server at host:port; returns the iperf3-shaped result.
    `proxied`: host:port is a proxy's (the emulator's PEP), which connects to the server
    from ports of its own. `start_at_ns`: open the data connection no earlier than this
    CLOCK_MONOTONIC time (the same clock in every network namespace), so that clients in
    processes of their own start together or at times of their own. `origin_ns`: the
    test's time 0 on that clock, from which its intervals, trace and duration count, shared
    by clients that open apart (default: when the data connection opens). `control_dscp`:
    mark the control connection's packets with this DSCP (the emulator keeps them out of
    its error models). `clock_fds`: the emulator's schedule clocks, started here with the
    test's time 0, just before the data connection opens, so that a schedule counts from
    the connection's opening as the simulator's does however late this process runs."""
    control_sock = _control_connection(host, port, control_dscp)
    rr: transactions.ClientSide | None = None
    with control_sock:
        control = Control(control_sock)
        control.send(
            {
                "protocol": PROTOCOL,
                "kind": workload.kind,
                "duration_ns": workload.duration_ns,
                "bytes": workload.file_bytes,
                "interval_ns": workload.interval_ns,
                "request_size": workload.request_size,
                "response_size": workload.response_size,
                "read_delay_ns": workload.read_delay_ns,
                "boot_id": boot_id(),
                "proxied": proxied,
            }
        )
        ready = control.receive(STEP_TIMEOUT_S)
        data = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with data:
            options.apply(data)
            # The server tells this test's data connection by the port it comes from.
            data.bind(("", 0))
            # Done before the wait, so that from time 0 to connect() only a few system
            # calls pass: the emulator's schedules count from it.
            counters_before = netstat()
            cpu_start = cpu_times()
            sampler = _Sampler(data, workload.trace_interval_ns)
            sampler.start()
            try:
                if start_at_ns is not None:
                    time.sleep(max(start_at_ns - now_ns(), 0) / NS_PER_S)
                t0 = now_ns() if origin_ns is None else origin_ns
                start_clocks(clock_fds, t0)
                for fd in clock_fds:
                    os.close(fd)
                control.send({"event": "connecting", "t0_ns": t0, "ports": [data.getsockname()[1]]})
                sampler.begin(t0)
                _connect_writer_waiting(data, (host, port))
            except BaseException:
                sampler.done.set()
                sampler.begun.set()
                raise
            established_ns = now_ns()
            data.setblocking(False)
            deadline_ns = t0 + workload.duration_ns
            if workload.kind == "rr":
                rr = transactions.ClientSide(t0, workload.interval_ns)
                transactions.run_client(data, rr, workload, deadline_ns)
                written = rr.written
                last_ns = rr.last_end_ns
                ended = rr.ended_by == "transactions" and last_ns is not None
                end_ns = last_ns if ended and last_ns is not None else deadline_ns
            else:
                message = memoryview(bytes(workload.message_size or 0))
                limit = workload.file_bytes
                written = _write(data, message, deadline_ns, limit, workload.write_delay_ns)
                end_ns = min(now_ns(), deadline_ns) if workload.kind == "bulk" else now_ns()
            final = tcpinfo.read(data)
            if workload.kind != "file" or written < (workload.file_bytes or 0):
                control.send({"event": "stop"})
            else:
                data.shutdown(socket.SHUT_WR)
            report = control.receive(REPORT_TIMEOUT_S + workload.duration_ns / NS_PER_S)
            sampler.done.set()
            sampler.join()
            cpu = cpu_report(cpu_start, (now_ns() - t0) / NS_PER_S)
            sender = actual_options(data)
            connected = {
                "local_host": data.getsockname()[0],
                "local_port": data.getsockname()[1],
                "remote_host": host,
                "remote_port": port,
            }
            # Close abortively (RST): whatever is still queued is past the test's end and
            # would otherwise drain over the emulated link after it.
            data.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        counters = {k: v - counters_before.get(k, 0) for k, v in netstat().items()}
    established_us = (end_ns - established_ns) / 1e3
    result = _result(
        workload=workload,
        options=options,
        connected=connected,
        sender=sender,
        server=ready.get("server", {}),
        report=report,
        written=written,
        end_s=(end_ns - t0) / NS_PER_S,
        final=final,
        established_us=established_us,
        trace=sampler.rows,
        cpu=cpu,
        counters=counters,
    )
    if rr is not None:
        _add_transactions(result, workload, rr, report, final)
    return result


def _elapsed_s(workload: Workload, report: dict[str, Any], end_s: float) -> float:
    """The test's length: a complete file's last byte, an rr test's last transaction when
    it stopped at its count, the duration otherwise."""
    if workload.kind == "file" and report.get("completed"):
        return float(report["last_byte_s"])
    if workload.kind == "rr":
        return end_s
    return workload.duration_ns / NS_PER_S


def _intervals(counts: list[int], interval_ns: int, elapsed_s: float) -> list[dict[str, Any]]:
    intervals = []
    start = 0.0
    for index, count in enumerate(counts):
        end = min((index + 1) * interval_ns / NS_PER_S, elapsed_s)
        seconds = end - start
        intervals.append(
            {
                "sum": {
                    "start": start,
                    "end": end,
                    "seconds": seconds,
                    "bytes": count,
                    "bits_per_second": 8 * count / seconds if seconds > 0 else 0.0,
                }
            }
        )
        start = end
    return intervals


def _result(
    *,
    workload: Workload,
    options: TcpOptions,
    connected: dict[str, Any],
    sender: dict[str, Any],
    server: dict[str, Any],
    report: dict[str, Any],
    written: int,
    end_s: float,
    final: tcpinfo.TcpInfo,
    established_us: float,
    trace: list[dict[str, Any]],
    cpu: dict[str, float],
    counters: dict[str, int],
) -> dict[str, Any]:
    kind = workload.kind
    completed = bool(report.get("completed")) if kind == "file" else True
    elapsed_s = _elapsed_s(workload, report, end_s)
    received = int(report["bytes"])
    remote_cpu = report.get("cpu", {})
    return {
        "start": {
            "version": PROTOCOL,
            "timestamp": {"timesecs": int(time.time())},
            "connected": [connected],
            "test_start": {
                "protocol": "TCP",
                "kind": kind,
                "duration": workload.duration_ns / NS_PER_S,
                "bytes": workload.file_bytes,
                "blksize": workload.message_size,
                "write_delay": workload.write_delay_ns / NS_PER_S,
                "read_delay": workload.read_delay_ns / NS_PER_S,
                "interval": workload.interval_ns / NS_PER_S,
                "trace_interval": workload.trace_interval_ns / NS_PER_S,
                "request_size": workload.request_size,
                "response_size": workload.response_size,
                "transactions": workload.transactions,
            },
            "requested": options.to_dict(),
            "sender": sender,
            "receiver": report.get("receiver", server),
            "origin": report.get("origin"),
        },
        "intervals": _intervals(report["interval_bytes"], workload.interval_ns, elapsed_s),
        "trace": trace,
        "end": {
            "sum_sent": {
                "bytes": written,
                "seconds": end_s,
                "retransmits": final["total_retrans"],
                "segments": final["data_segs_out"],
            },
            "sum_received": {
                "bytes": received,
                "seconds": elapsed_s,
                "bits_per_second": 8 * received / elapsed_s if elapsed_s > 0 else 0.0,
                "completed": completed,
                "last_byte_s": report.get("last_byte_s"),
                "late_bytes": report.get("late_bytes", 0),
            },
            "cpu_utilization_percent": {
                "host_total": cpu["total_percent"],
                "host_user": cpu["user_percent"],
                "host_system": cpu["system_percent"],
                "remote_total": remote_cpu.get("total_percent"),
                "remote_user": remote_cpu.get("user_percent"),
                "remote_system": remote_cpu.get("system_percent"),
            },
            "cpu_seconds": {"sender": cpu, "receiver": remote_cpu},
            "sender_tcp_congestion": sender["tcp_congestion"],
            "receiver_tcp_congestion": report.get("receiver", {}).get("tcp_congestion"),
            "limited_by": tcpinfo.limited_by(final, established_us),
            "established_s": established_us / 1e6,
            "sender_tcp_info": final.raw,
            "receiver_tcp_info": report.get("tcp_info"),
            "netstat": counters,
        },
    }


def _add_transactions(
    result: dict[str, Any],
    workload: Workload,
    rr: transactions.ClientSide,
    report: dict[str, Any],
    final: tcpinfo.TcpInfo,
) -> None:
    """An rr test's result: both directions' bytes in the intervals and the sums (each
    side's reads, as the simulator counts an rr flow's delivered bytes), the transactions
    per interval, and `end.transactions`.

    Both hosts send in an rr test, so the sums' retransmissions and segments are both
    sides' too; TCP_INFO, limited-by and the trace stay the client's sender's.
    """
    end = result["end"]
    elapsed_s = end["sum_received"]["seconds"]
    requests = report["interval_bytes"]
    count = max(len(requests), len(rr.interval_bytes), len(rr.interval_transactions))
    both = [_at(requests, k) + _at(rr.interval_bytes, k) for k in range(count)]
    result["intervals"] = _intervals(both, workload.interval_ns, elapsed_s)
    for k, interval in enumerate(result["intervals"]):
        done = _at(rr.interval_transactions, k)
        seconds = interval["sum"]["seconds"]
        interval["sum"]["transactions"] = done
        interval["sum"]["transactions_per_second"] = done / seconds if seconds > 0 else 0.0
    remote = report.get("tcp_info") or {}
    sent = end["sum_sent"]
    sent["bytes"] += int(report.get("bytes_written") or 0)
    sent["retransmits"] = (final["total_retrans"] or 0) + (remote.get("total_retrans") or 0)
    sent["segments"] = (final["data_segs_out"] or 0) + (remote.get("data_segs_out") or 0)
    received = end["sum_received"]
    received["bytes"] += rr.received
    received["bits_per_second"] = 8 * received["bytes"] / elapsed_s if elapsed_s > 0 else 0.0
    n = len(rr.latencies_ns)
    end["transactions"] = {
        "count": n,
        "seconds": elapsed_s,
        "transactions_per_second": n / elapsed_s if elapsed_s > 0 else 0.0,
        "ended_by": rr.ended_by,
        "requests_served": report.get("requests_served"),
        "request_bytes_read": int(report["bytes"]),
        "response_bytes_read": rr.received,
        "latency_us": transactions.latency_summary(rr.latencies_ns),
        # Each transaction's latency, in order (monotonic clock, ns resolution).
        "latency_samples_us": [t / 1e3 for t in rr.latencies_ns],
    }


def _at(values: list[int], index: int) -> int:
    return values[index] if index < len(values) else 0
