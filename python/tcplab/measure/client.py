"""`tcplab measure client`: sends a bulk stream or a file to a `tcplab measure server`.

The client writes `message_size` bytes per call (netperf -m), optionally sleeping
`write_delay` between calls, for `duration` (bulk) or until `bytes` are written (file);
a thread samples the socket's TCP_INFO every `trace_interval`. The result is shaped like
iperf3's JSON (`start`, `intervals`, `end`), but its intervals count bytes where the
receiving application read them, not where the sender wrote them (iperf3 issues #692,
#1032), and `end` adds the limited-by attribution and both sides' CPU time.
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

from tcplab.measure import tcpinfo
from tcplab.measure.common import (
    PROTOCOL,
    Control,
    TcpOptions,
    actual_options,
    boot_id,
    cpu_report,
    cpu_times,
    now_ns,
)

NS_PER_S = 1_000_000_000
STEP_TIMEOUT_S = 30.0
# After the test, how long the client waits for the server's report.
REPORT_TIMEOUT_S = 60.0
# Counters of the sender's network namespace (/proc/net/netstat, TcpExt) that tcplab
# reports; in the emulator the namespace holds this test's connections only.
NETSTAT_COUNTERS = (
    "TCPTimeouts",
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
    """Reads TCP_INFO every `period_ns` from `origin_ns` on, until stopped."""

    def __init__(self, sock: socket.socket, origin_ns: int, period_ns: int) -> None:
        super().__init__(name="tcp-info-sampler", daemon=True)
        self.sock = sock
        self.origin_ns = origin_ns
        self.period_ns = period_ns
        self.rows: list[dict[str, Any]] = []
        self.done = threading.Event()

    def run(self) -> None:
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


def run(
    host: str,
    port: int,
    options: TcpOptions,
    *,
    kind: str,
    duration_ns: int,
    file_bytes: int | None,
    message_size: int,
    write_delay_ns: int,
    interval_ns: int,
    trace_interval_ns: int,
) -> dict[str, Any]:
    """Run one test against the server at host:port; returns the iperf3-shaped result."""
    if kind not in ("bulk", "file"):
        raise ValueError(f"kind must be bulk or file, not {kind!r}")
    if (kind == "file") != (file_bytes is not None):
        raise ValueError("a file test needs a byte count, and only a file test takes one")
    control_sock = socket.create_connection((host, port), timeout=STEP_TIMEOUT_S)
    with control_sock:
        control = Control(control_sock)
        control.send(
            {
                "protocol": PROTOCOL,
                "kind": kind,
                "duration_ns": duration_ns,
                "bytes": file_bytes,
                "interval_ns": interval_ns,
                "boot_id": boot_id(),
            }
        )
        ready = control.receive(STEP_TIMEOUT_S)
        data = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        with data:
            options.apply(data)
            counters_before = netstat()
            cpu_start = cpu_times()
            t0 = now_ns()
            control.send({"event": "connecting", "t0_ns": t0})
            data.settimeout(STEP_TIMEOUT_S)
            data.connect((host, port))
            established_ns = now_ns()
            data.setblocking(False)
            sampler = _Sampler(data, t0, trace_interval_ns)
            sampler.start()
            deadline_ns = t0 + duration_ns
            written = _write(
                data, memoryview(bytes(message_size)), deadline_ns, file_bytes, write_delay_ns
            )
            end_ns = min(now_ns(), deadline_ns) if kind == "bulk" else now_ns()
            final = tcpinfo.read(data)
            if kind == "bulk" or written < (file_bytes or 0):
                control.send({"event": "stop"})
            else:
                data.shutdown(socket.SHUT_WR)
            report = control.receive(REPORT_TIMEOUT_S + duration_ns / NS_PER_S)
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
    return _result(
        kind=kind,
        duration_ns=duration_ns,
        file_bytes=file_bytes,
        message_size=message_size,
        write_delay_ns=write_delay_ns,
        interval_ns=interval_ns,
        trace_interval_ns=trace_interval_ns,
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


def _result(
    *,
    kind: str,
    duration_ns: int,
    file_bytes: int | None,
    message_size: int,
    write_delay_ns: int,
    interval_ns: int,
    trace_interval_ns: int,
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
    completed = bool(report.get("completed")) if kind == "file" else True
    if kind == "file" and completed:
        elapsed_s = float(report["last_byte_s"])
    else:
        elapsed_s = duration_ns / NS_PER_S
    intervals = []
    start = 0.0
    for index, count in enumerate(report["interval_bytes"]):
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
                "duration": duration_ns / NS_PER_S,
                "bytes": file_bytes,
                "blksize": message_size,
                "write_delay": write_delay_ns / NS_PER_S,
                "interval": interval_ns / NS_PER_S,
                "trace_interval": trace_interval_ns / NS_PER_S,
            },
            "requested": options.to_dict(),
            "sender": sender,
            "receiver": report.get("receiver", server),
            "origin": report.get("origin"),
        },
        "intervals": intervals,
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
