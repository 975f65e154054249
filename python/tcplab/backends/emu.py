"""The ``emu`` backend: this machine's Linux TCP over the userspace link emulator.

``run(plan)`` builds two network namespaces joined by the emulated path (tcplab.emu),
configures each host's TCP from the plan (sysctls, route options, socket options), runs
the measurement tool (tcplab.measure) or iperf3 between them, and returns a result dict
in the simulator's schema (docs/internals/plan-and-result.md), with what only a real
kernel or a real emulator can tell under ``summary["emu"]``.

How each plan field becomes a Linux setting, and what is refused, is in docs/emu.md.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import platform
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tcplab._sim import flow_openings
from tcplab.backends import capabilities, emu_media, emu_pep
from tcplab.backends.capabilities import LINUX_CC
from tcplab.backends.rows import (
    SSTHRESH_INFINITE_BYTES,
    UNKNOWN_LIMITS,
    Counts,
    FlowRow,
    HostRow,
    LinkRow,
    Result,
    SenderState,
    Summary,
    empty_trace,
    interval_ends,
    series,
)
from tcplab.emu import EmuError, EmuNetwork, HostSetup, require_root
from tcplab.errors import FieldRefused
from tcplab.measure.workload import Workload
from tcplab.plan import topology_form
from tcplab.shared import TCP_IP_HEADER_BYTES, TCP_RMEM, TCP_WMEM
from tcplab.spec.fields import AUTO_BUFFER

NS_PER_S = 1_000_000_000
PORT = 5210
# CUBIC's HyStart switch: a module parameter of the whole machine, not of a namespace.
CUBIC_HYSTART = Path("/sys/module/tcp_cubic/parameters/hystart")
MIN_MTU = 1500
READ_SIZE = 128 * 1024
# Beyond the test's own duration: setup, handshake, the report's way back.
SLACK_S = 60.0
# How long after their launch parallel clients open their data connections together (and a
# scheduled path starts its schedules): room for each client process to start (a Python
# interpreter, slower on a loaded machine) and open its control connection.
PARALLEL_START_NS = 2 * NS_PER_S
IPERF3_MISSING = "iperf3 is not installed (apt-get install iperf3; scripts/setup does it as root)"
LISTEN_POLL_S = 0.05
PACKET_LOG_VARIABLE = "TCPLAB_EMU_PACKET_LOG"
# Records kept in memory for the log (about 48 bytes each); later packets are counted as
# truncated, so a long fast run cannot exhaust memory.
PACKET_LOG_RECORDS = 2_000_000
# The latency statistics of the simulator's summary.rr (crates/sim/src/metrics/latency.rs).
RR_LATENCIES = ("mean", "p50", "p90", "p99", "max")
AVAILABLE_CC = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
# The DSCP of the measurement client's control connection (RFC 8622's Lower Effort; no hop
# of the emulator schedules by DSCP): its packets cross the emulated path but take no draw
# from a link's error model, so the test's n-th frame meets the n-th draw, as in the
# simulator, which has no control connection (docs/emu.md).
CONTROL_DSCP = 1


def _check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise FieldRefused(field, message)


def check_machine(plan: Mapping[str, Any]) -> None:
    """Refuse, naming the plan field, what this machine cannot give a plan that the emu
    backend honours (tcplab.backends.capabilities): a congestion control its kernel does
    not offer, a HyStart setting other than its machine-wide one, iperf3 not installed."""
    available = AVAILABLE_CC.read_text().split() if AVAILABLE_CC.exists() else []
    hystart = CUBIC_HYSTART.exists() and CUBIC_HYSTART.read_text().strip() != "0"
    for at in capabilities.places(plan, "tcp.cc"):
        name = LINUX_CC[at.value]
        _check(
            name in available,
            at.path,
            f"this kernel does not offer {name!r} (it offers {', '.join(available) or 'nothing'})",
        )
        _check(
            name != "cubic" or bool(at.holder["hystart"]) == hystart,
            at.path.removesuffix(".cc") + ".hystart",
            f"Linux's HyStart is a machine-wide module parameter ({CUBIC_HYSTART} is "
            f"{'on' if hystart else 'off'} here), not a per-namespace setting; the emu "
            "backend does not change it",
        )
    if plan["app"].get("tool") == "iperf3":
        _check(shutil.which("iperf3") is not None, "app.tool", IPERF3_MISSING)


# net.ipv4.tcp_ecn (ip-sysctl.rst): 0 off, 1 request and accept, 2 accept only.
TCP_ECN = {"off": "0", "on": "1", "passive": "2"}


def host_setup(tcp: Mapping[str, Any], peer: Mapping[str, Any]) -> HostSetup:
    """Sysctls of one host's namespace and options of its route to the other host."""
    # Buffers are set per socket (which also turns autotuning off); tcp_rmem/tcp_wmem are
    # set to the same doubled sizes so that nothing in the namespace exceeds them. A buffer
    # left to autotuning ("auto") gets the kernel's triple that the simulator models, so
    # that the run does not depend on what this machine's namespaces inherit.
    sysctls = {
        "net.ipv4.tcp_window_scaling": str(int(tcp["window_scaling"])),
        "net.ipv4.tcp_sack": str(int(tcp["sack"])),
        # Off by default in the spec, as in the simulator and the model: then a 1460-byte
        # MSS carries 1460 bytes per segment, not 1448.
        "net.ipv4.tcp_timestamps": str(int(tcp.get("timestamps", False))),
        # RFC 3168 ECN as the plan's mode names Linux's values.
        "net.ipv4.tcp_ecn": TCP_ECN[str(tcp.get("ecn", "off"))],
        "net.ipv4.tcp_dsack": str(int(tcp["dsack"])),
        # 2, the default: SACK-enhanced F-RTO (RFC 5682 section 3.1) when SACK is in use.
        "net.ipv4.tcp_frto": "2" if tcp["frto"] else "0",
        "net.ipv4.tcp_slow_start_after_idle": str(int(tcp["slow_start_after_idle"])),
        # No ssthresh or RTT carried over from an earlier connection (tcp(7)).
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_rmem": _mem_sysctl(tcp["rcvbuf"], TCP_RMEM),
        "net.ipv4.tcp_wmem": _mem_sysctl(tcp["sndbuf"], TCP_WMEM),
    }
    if tcp["rcvbuf"] == AUTO_BUFFER:
        # Receive-buffer autotuning (tcp_rcv_space_adjust) is on by default; say so.
        sysctls["net.ipv4.tcp_moderate_rcvbuf"] = "1"
    mss = min(int(tcp["mss"]), int(peer["mss"]))
    route = ["initcwnd", str(tcp["initial_window"])]
    # The receive window the connection starts from, in segments (ip-route(8)); without
    # initial_rwnd the whole buffer, as the simulator's receiver then offers, or for an
    # autotuned buffer the kernel's own choice (tcp_select_initial_window).
    if tcp.get("initial_rwnd"):
        route += ["initrwnd", str(tcp["initial_rwnd"])]
    elif tcp["rcvbuf"] != AUTO_BUFFER:
        route += ["initrwnd", str(max(1, math.ceil(int(tcp["rcvbuf"]) / mss)))]
    route += [
        # Linux bounds the RTO's variance term with this (RTO >= SRTT + rto_min), so the
        # whole RTO is at least min_rto, as the spec asks, and can be higher.
        "rto_min",
        f"{max(1, int(tcp['min_rto_ns']) // 1_000_000)}ms",
    ]
    if not tcp["delayed_ack"]:
        route += ["quickack", "1"]
    # One segment per GSO buffer: tcp_tso_segs is capped by the device's gso_max_segs, so
    # the kernel neither builds multi-segment buffers nor defers to fill them.
    link = [] if tcp["gso"] else ["gso_max_segs", "1"]
    return HostSetup(sysctls=sysctls, route_options=route, link_options=link)


def _options(tcp: Mapping[str, Any], receiver: bool) -> dict[str, Any]:
    # A buffer left to autotuning ("auto") is not set at all: SO_SNDBUF, SO_RCVBUF and
    # TCP_WINDOW_CLAMP each lock theirs (SOCK_SNDBUF_LOCK, SOCK_RCVBUF_LOCK, socket(7)).
    fixed_rcvbuf = tcp["rcvbuf"] != AUTO_BUFFER
    return {
        "cc": LINUX_CC[tcp["cc"]],
        # The kernel doubles SO_SNDBUF for its bookkeeping (socket(7)) and frees a buffer's
        # memory only as whole pages of it are acknowledged, so it holds between `sndbuf`
        # and twice that of data, not the simulator's exact `sndbuf`: see docs/emu.md.
        "sndbuf": None if tcp["sndbuf"] == AUTO_BUFFER else int(tcp["sndbuf"]),
        # The receive window is set exactly by the clamp below; the buffer (doubled by
        # the kernel to 4 x rcvbuf) is sized so that memory never limits before it.
        "rcvbuf": 2 * int(tcp["rcvbuf"]) if fixed_rcvbuf else None,
        "mss": int(tcp["mss"]),
        "nodelay": not tcp["nagle"],
        # The receive buffer is the largest window offered (the spec's meaning); Linux
        # would offer a share of its buffer that depends on per-packet overheads.
        "window_clamp": int(tcp["rcvbuf"]) if receiver and fixed_rcvbuf else None,
    }


def _mem_sysctl(buffer: int | str, autotuned: tuple[int, ...]) -> str:
    """net.ipv4.tcp_rmem or tcp_wmem for a host's buffer: twice a fixed size (what the
    socket option makes of it), or the kernel's autotuning triple."""
    if buffer == AUTO_BUFFER:
        return " ".join(map(str, autotuned))
    doubled = 2 * int(buffer)
    return f"4096 {doubled} {max(doubled, 4096)}"


def _wait_listening(server: subprocess.Popen[str], timeout_s: float) -> None:
    assert server.stdout is not None
    readable, _, _ = select.select([server.stdout], [], [], timeout_s)
    line = server.stdout.readline() if readable else ""
    if not line or json.loads(line).get("event") != "listening":
        err = server.stderr.read() if server.poll() is not None and server.stderr else ""
        raise EmuError(f"the measurement server did not start: {err.strip() or 'timeout'}")


def workload(plan: Mapping[str, Any]) -> Workload:
    """The measurement client's test for the plan's app."""
    app = plan["app"]
    timing = {
        "duration_ns": plan["duration_ns"],
        "interval_ns": plan["interval_ns"],
        "trace_interval_ns": plan["trace_interval_ns"],
    }
    if app["kind"] == "rr":
        # As the simulator runs it: each request in one write, the responses read with
        # the app's read size (both sides' readers take it).
        return Workload(
            kind="rr",
            request_size=app["request_size"],
            response_size=app["response_size"],
            read_size=app.get("read_size"),
            **timing,
        )
    return Workload(
        kind=app["kind"],
        file_bytes=app["bytes"],
        message_size=app["message_size"],
        write_delay_ns=app.get("write_delay_ns", 0),
        read_delay_ns=app.get("read_delay_ns", 0),
        **timing,
    )


def _measure(net: EmuNetwork, plan: Mapping[str, Any]) -> dict[str, Any]:
    """The measurement of the plan's connections: one client process each (`parallel` of
    them open together), served by one server; `connections` holds each client's result."""
    sender, receiver = plan["hosts"][0]["tcp"], plan["hosts"][-1]["tcp"]
    app = plan["app"]
    count = int(app.get("parallel", 1))
    test = asdict(workload(plan))
    duration_s = plan["duration_ns"] / NS_PER_S
    child = [sys.executable, "-m", "tcplab.measure.child"]
    server_config = {
        "role": "server",
        "bind": net.receiver_address,
        "port": PORT,
        "options": _options(receiver, receiver=True),
        "read_size": app.get("read_size") or READ_SIZE,
        "accept_timeout_s": SLACK_S,
        "count": count,
    }
    # A schedule's time 0 is the moment the data connection opens, as in the simulator. One
    # client starts the schedules itself just before it opens the connection (a process
    # woken late under load opened it up to 13 ms into a schedule begun at an agreed
    # instant, and a delay spike then fell on other data); parallel clients are told
    # when to open theirs, and the emulator to start the schedules then.
    scheduled = any(
        link[d]["schedule"] is not None for link in plan["links"] for d in ("forward", "reverse")
    )
    clock_fds = net.clock_fds if scheduled and count == 1 else []
    server = net.popen(-1, [*child, json.dumps(server_config)])
    _wait_listening(server, SLACK_S)
    relays = emu_pep.start_relays(net, plan, PORT, duration_s + 2 * SLACK_S)
    start_at_ns = time.monotonic_ns() + PARALLEL_START_NS if count > 1 else None
    if scheduled and start_at_ns is not None:
        net.start_clock(start_at_ns)
    client_config = {
        "role": "client",
        # The server, or the first PEP on the way (an explicit proxy).
        "host": net.addresses[0][1],
        "port": PORT,
        "options": _options(sender, receiver=False),
        "test": test,
        "proxied": bool(relays),
        "control_dscp": CONTROL_DSCP,
        "clock_fds": clock_fds,
    }
    configs = client_configs(plan, client_config, start_at_ns)
    clients = [net.popen(0, [*child, json.dumps(config)], clock_fds) for config in configs]
    jitter_s = app.get("start_jitter_ns", 0) / NS_PER_S
    deadline = time.monotonic() + duration_s + 2 * SLACK_S + PARALLEL_START_NS / NS_PER_S
    deadline += jitter_s
    connections = []
    for client in clients:
        try:
            out, err = client.communicate(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            raise EmuError("the measurement client did not finish in time") from None
        if client.returncode != 0:
            raise EmuError(f"the measurement client failed: {err.strip()[-2000:]}")
        connections.append(json.loads(out))
    measured: dict[str, Any] = {"connections": connections}
    if relays:
        measured["relays"] = emu_pep.finish_relays(relays, SLACK_S)
    return measured


def client_configs(
    plan: Mapping[str, Any], common: Mapping[str, Any], origin_ns: int | None
) -> list[dict[str, Any]]:
    """Each client's config: `common` and the CLOCK_MONOTONIC instant at which it opens its
    data connection. That is `origin_ns`, the run's time 0, plus the moment the simulator
    opens the same flow of the plan (its seeded draw from app.start_jitter_ns, the one
    implementation of it, in the Rust core), so that parallel connections open as far
    apart as in the simulator; a client started late opens at once. Every client counts
    its test (intervals, trace, duration) from `origin_ns`, as the simulator counts its
    flows' from time 0. Without an origin (one connection on an unscheduled path) the
    client opens at once and counts from then."""
    count = int(plan["app"].get("parallel", 1))
    if origin_ns is None:
        return [{**common, "start_at_ns": None, "origin_ns": None} for _ in range(count)]
    openings = flow_openings(json.dumps(topology_form(dict(plan))))
    assert len(openings) == count, (openings, count)
    return [
        {**common, "start_at_ns": origin_ns + opening, "origin_ns": origin_ns}
        for opening in openings
    ]


def _packet_log_from_environment() -> dict[str, Any] | None:
    """The per-packet log asked for with TCPLAB_EMU_PACKET_LOG=PREFIX: PREFIX.csv and the
    mahimahi logs PREFIX.link<i>.<direction>.log (docs/emu.md)."""
    prefix = os.environ.get(PACKET_LOG_VARIABLE)
    if not prefix:
        return None
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    return {"csv": f"{prefix}.csv", "mahimahi_prefix": prefix, "max_records": PACKET_LOG_RECORDS}


@contextlib.contextmanager
def _sigterm_exits() -> Iterator[None]:
    """Turn SIGTERM into SystemExit while namespaces exist, so that `kill` cleans up as
    Ctrl-C does. Only the main thread may set signal handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Run `plan` on the real kernel over the emulated path; result in the sim's schema.
    The plan has passed the capability registry's check for this backend."""
    check_machine(plan)
    require_root()
    sender, receiver = plan["hosts"][0]["tcp"], plan["hosts"][-1]["tcp"]
    mtu = max(MIN_MTU, max(int(sender["mss"]), int(receiver["mss"])) + TCP_IP_HEADER_BYTES)
    duration_s = plan["duration_ns"] / NS_PER_S
    config = {
        "seed": plan["seed"],
        # A link's two directions: the emulator has no 802.11 medium (`wlan` is null here,
        # capabilities refuse any other value).
        "links": [
            {"forward": link["forward"], "reverse": link["reverse"]} for link in plan["links"]
        ],
        "max_duration_ns": int((duration_s + 4 * SLACK_S) * NS_PER_S),
        "realtime": True,
        "packet_log": plan.get("emu", {}).get("packet_log") or _packet_log_from_environment(),
        "control_dscp": CONTROL_DSCP,
    }
    # Each host's route options follow the MSS of the endpoint it talks to: the other host,
    # or the PEP next to it.
    ends = [
        sender,
        *(p[side] for p in emu_pep.peps(plan) for side in ("client_side", "server_side")),
        receiver,
    ]
    mtu = max(mtu, *(int(tcp["mss"]) + TCP_IP_HEADER_BYTES for tcp in ends))
    hosts = (host_setup(sender, ends[1]), host_setup(receiver, ends[-2]))
    iperf3 = plan["app"].get("tool", "tcplab") == "iperf3"
    media = plan["app"]["kind"] == "media"
    peps = emu_pep.setups(plan)
    with _sigterm_exits(), EmuNetwork(config, hosts, mtu, peps) as net:
        if media:
            measured = emu_media.measure(net, plan)
        else:
            measured = _iperf3(net, plan) if iperf3 else _measure(net, plan)
    assert net.report is not None
    if media:
        return emu_media.to_result(plan, measured, net.report)
    if iperf3:
        return iperf3_result(plan, measured, net.report)
    return to_result(plan, measured, net.report)


def _wait_for_port(net: EmuNetwork, port: int, timeout_s: float) -> None:
    """Wait until something listens on `port` in the receiver's namespace."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if f":{port} " in net.exec(-1, ["ss", "-ltnH"], timeout_s):
            return
        time.sleep(LISTEN_POLL_S)
    raise EmuError(f"nothing listens on port {port} after {timeout_s} s")


def _iperf3(net: EmuNetwork, plan: Mapping[str, Any]) -> dict[str, Any]:
    """Run the real iperf3 between the namespaces; its client JSON with the server's."""
    sender = plan["hosts"][0]["tcp"]
    app = plan["app"]
    interval = str(plan["interval_ns"] / NS_PER_S)
    port = str(PORT)
    server = net.popen(
        -1, ["iperf3", "-s", "-1", "-J", "-i", interval, "-B", net.receiver_address, "-p", port]
    )
    _wait_for_port(net, PORT, SLACK_S)
    duration_s = plan["duration_ns"] / NS_PER_S
    relays = emu_pep.start_relays(net, plan, PORT, duration_s + 2 * SLACK_S)
    # The server, or the first PEP on the way (an explicit proxy).
    client = ["iperf3", "-c", net.addresses[0][1], "-p", port, "-J", "--get-server-output"]
    client += ["-i", interval, "-l", str(app["message_size"]), "-C", LINUX_CC[sender["cc"]]]
    # -w: SO_SNDBUF and SO_RCVBUF on both ends (the buffers are all equal: the capability
    # registry refuses others with iperf3); none where they are left to autotuning.
    if sender["sndbuf"] != AUTO_BUFFER:
        client += ["-w", str(sender["sndbuf"])]
    client += ["-M", str(sender["mss"])]
    if not sender["nagle"]:
        client.append("-N")
    if app["kind"] == "file":
        client += ["-n", str(app["bytes"])]
    else:
        client += ["-t", str(plan["duration_ns"] // NS_PER_S)]
    out = net.exec(0, client, duration_s + 2 * SLACK_S)
    server.communicate(timeout=SLACK_S)
    result = dict(json.loads(out))
    if "error" in result:
        raise EmuError(f"iperf3 failed: {result['error']}")
    if relays:
        result["relays"] = emu_pep.finish_relays(relays, SLACK_S)
    return result


def to_result(
    plan: Mapping[str, Any], measured: Mapping[str, Any], emulator: Mapping[str, Any]
) -> dict[str, Any]:
    """The measurement and the emulator's report in the result schema: a flow row per
    connection, the summary their sum."""
    connections = measured["connections"]
    ends = [c["end"] for c in connections]
    elapsed = max(float(e["sum_received"]["seconds"]) for e in ends)
    netstat = _namespace_counters([e.get("netstat", {}) for e in ends])
    traces = [c.get("trace", []) for c in connections]
    windows = [row["snd_wnd_bytes"] for rows in traces for row in rows if row.get("snd_wnd_bytes")]
    # The window most often offered: the first ACKs may show a larger one (docs/emu.md).
    usual_window = max(set(windows), key=windows.count) if windows else None
    start, end = connections[0]["start"], ends[0]
    cpu = [e["cpu_utilization_percent"] for e in ends]
    emu = {
        "kernel": platform.release(),
        "sender_cc": end["sender_tcp_congestion"],
        "receiver_cc": end["receiver_tcp_congestion"],
        # Set by the scenario, or "auto": left to the kernel's autotuning.
        "sender_sndbuf": plan["hosts"][0]["tcp"]["sndbuf"],
        "receiver_rcvbuf": plan["hosts"][-1]["tcp"]["rcvbuf"],
        "sender_sndbuf_actual": start["sender"]["sndbuf_actual"],
        "receiver_rcvbuf_actual": start["receiver"]["rcvbuf_actual"],
        "receiver_window_clamp": start["receiver"]["window_clamp"],
        "peer_window_bytes": usual_window,
        "max_peer_window_bytes": max(windows, default=None),
        # Each client is a process of its own; the one server serves them all.
        "cpu_percent_sender": _sum_known(c["host_total"] for c in cpu),
        "cpu_percent_receiver": max(
            (c["remote_total"] for c in cpu if c["remote_total"] is not None), default=None
        ),
        **_emulator_columns(emulator),
        "interval_origin": start["origin"],
        "netstat": netstat,
    }
    measurement = Measurement(
        elapsed_s=elapsed,
        bytes_written=sum(int(e["sum_sent"]["bytes"]) for e in ends),
        completed=all(bool(e["sum_received"]["completed"]) for e in ends),
        emu=emu,
        limited_by={
            cause: _mean_known(e["limited_by"][cause] for e in ends) for cause in end["limited_by"]
        },
        counts=Counts(
            segments_sent=_sum_known(e["sum_sent"].get("segments") for e in ends),
            retransmits=_sum_known(e["sum_sent"].get("retransmits") for e in ends),
            fast_retransmits=_recoveries(netstat),
            timeouts=netstat.get("TCPTimeouts"),
            persist_probes=netstat.get("TCPWinProbe"),
        ),
        rr=_transactions(end.get("transactions")),
    )
    if len(connections) == 1:
        # The namespace's counters are this connection's own.
        senders = [
            sender_state(
                end["sender_tcp_info"],
                retransmits=end["sum_sent"].get("retransmits"),
                timeouts=netstat.get("TCPTimeouts"),
                persist_probes=netstat.get("TCPWinProbe"),
            )
        ]
    else:
        senders = [sender_state(e["sender_tcp_info"]) for e in ends]
    flows = [
        measurement.flow(plan, k, sender, int(e["sum_received"]["bytes"]))
        for k, (sender, e) in enumerate(zip(senders, ends, strict=True))
    ]
    return measurement.result(
        plan,
        emulator,
        flows=flows,
        series=_series(_summed_intervals(connections), plan["interval_ns"], elapsed),
        trace=_trace(
            [
                (k, {**row, "bytes_acked": _data_acked(row.get("bytes_acked"), e["sum_sent"])})
                for k, (rows, e) in enumerate(zip(traces, ends, strict=True))
                for row in rows
            ]
        ),
        relays=measured.get("relays"),
    )


def _data_acked(bytes_acked: int | None, sent: Mapping[str, Any]) -> int | None:
    """Data bytes acknowledged, from TCP_INFO's tcpi_bytes_acked: Linux counts every
    sequence number acknowledged, and the SYN and the FIN take one each (RFC 9293 §3.4),
    so the SYN is taken off and the count held to the bytes written (the FIN's)."""
    if bytes_acked is None:
        return None
    return max(0, min(bytes_acked - 1, int(sent["bytes"])))


def _recoveries(netstat: Mapping[str, int]) -> int | None:
    """Fast recoveries entered (tcp_enter_recovery counts TCPSackRecovery with SACK,
    TCPRenoRecovery without): the simulator's `fast_retransmits`, one per episode, as
    tshark counts fast retransmissions. (TCPFastRetrans counts every segment resent
    outside a timeout's recovery, so a recovery with many holes counts many.)"""
    counts = [netstat[name] for name in ("TCPSackRecovery", "TCPRenoRecovery") if name in netstat]
    return sum(counts) if counts else None


def _namespace_counters(deltas: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """The sender namespace's counters over the run. Each client reads them across its own
    test, and parallel clients' tests span the same time, so each delta counts every
    connection's events: the largest is the run's (an upper bound where they differ)."""
    names = {name for delta in deltas for name in delta}
    return {name: max(delta.get(name, 0) for delta in deltas) for name in sorted(names)}


def _summed_intervals(connections: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The connections' per-interval delivered bytes added up interval by interval (each
    counted from its client's origin: the common one of parallel clients)."""
    counts: list[int] = []
    for connection in connections:
        for k, interval in enumerate(connection["intervals"]):
            if k == len(counts):
                counts.append(0)
            counts[k] += int(interval["sum"]["bytes"])
    return [{"sum": {"bytes": count}} for count in counts]


def _sum_known(values: Iterable[float | None]) -> Any:
    """The sum of values a tool reported; None if any is unknown."""
    known = list(values)
    return None if any(v is None for v in known) else sum(known)


def _mean_known(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


@dataclass(frozen=True)
class Measurement:
    """What a measurement found besides its connections' rows: the summary's counts (None
    where the tool cannot count) and what only a real run has (`emu`)."""

    elapsed_s: float
    bytes_written: int
    completed: bool
    emu: Mapping[str, Any]
    counts: Counts
    limited_by: Mapping[str, float | None] = field(default_factory=lambda: UNKNOWN_LIMITS)
    rr: Mapping[str, float] | None = None

    def flow(
        self, plan: Mapping[str, Any], flow: int, sender: SenderState, delivered: int
    ) -> FlowRow:
        """The row of a connection from the plan's first host to its last that delivered
        `delivered` bytes over the test."""
        src, dst = plan["hosts"][0]["name"], plan["hosts"][-1]["name"]
        return sender.row(flow, src, dst, self._per_second(delivered), delivered)

    def _per_second(self, delivered: int) -> float:
        return 8 * delivered / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def result(
        self,
        plan: Mapping[str, Any],
        emulator: Mapping[str, Any],
        flows: Sequence[FlowRow],
        series: Mapping[str, list[Any]],
        trace: Mapping[str, list[Any]],
        streams: Sequence[Mapping[str, Any]] = (),
        relays: Sequence[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The result of the connections `flows`: the summary (fairness is Jain's index of
        their goodputs, as the simulator's; CPU the tool's whole-machine CPU time, both
        namespaces sharing this machine; events the emulator's packets both ways, its
        counterpart of the simulator's events), and through PEPs a row per connection of
        the flow."""
        delivered = sum(f.bytes_delivered for f in flows)
        goodputs = [f.goodput_bps for f in flows]
        squares = sum(g * g for g in goodputs)
        percents = [self.emu.get(f"cpu_percent_{side}") for side in ("sender", "receiver")]
        busiest = max((p for p in percents if p), default=None)
        summary = Summary(
            goodput_bps=self._per_second(delivered),
            elapsed_s=self.elapsed_s,
            bytes_delivered=delivered,
            bytes_written=self.bytes_written,
            completed=self.completed,
            events=sum(d["packets_in"] for d in emulator["directions"]),
            limited_by=self.limited_by,
            cpu_utilisation=None if busiest is None else busiest / 100,
            fairness=sum(goodputs) ** 2 / (len(goodputs) * squares) if squares > 0 else 1.0,
            goodput_per_cpu_bps=_per_cpu(sum(goodputs), busiest),
            counts=self.counts,
            rr=self.rr,
            backend=("emu", self.emu),
        )
        # The two hosts' CPU use as the measurement tool reports it.
        hosts = [
            HostRow(
                host["name"],
                cpu_utilisation=None if percent is None else percent / 100,
                goodput_per_cpu_bps=_per_cpu(summary.goodput_bps, percent),
            )
            for host, percent in zip((plan["hosts"][0], plan["hosts"][-1]), percents, strict=True)
        ]
        result = Result(
            summary=summary,
            flows=flows,
            hosts=hosts,
            links=_links(emulator, self.elapsed_s),
            series=series,
            trace=trace,
            streams=streams,
        )
        return emu_pep.add_segments(result, plan, relays, self.elapsed_s).to_dict()


def _emulator_columns(emulator: Mapping[str, Any]) -> dict[str, Any]:
    """The summary's `emu` columns that describe the link emulator itself."""
    return {
        "timing_error_us": emulator["timing_error"],
        "emulator_cpu_s": emulator["cpu_s"],
        "emulator_wall_s": (emulator["end_monotonic_ns"] - emulator["start_monotonic_ns"])
        / NS_PER_S,
        "tun_write_errors": sum(d["write_errors"] for d in emulator["directions"]),
        "tun_reads": sum(d["reads"] for d in emulator["directions"]),
        "tun_refused_packets": sum(d["refused"] for d in emulator["directions"]),
        "realtime_thread": emulator["realtime"],
        "realtime_off_s": emulator["realtime_off_s"],
        "emulator_cpu": emulator["cpu"],
    }


def sender_state(info: Mapping[str, Any], **counts: int | None) -> SenderState:
    """A flow's sender from a TCP_INFO sample (µs and segments, as the kernel reports
    them). `counts` replace its retransmissions, timeouts and persist probes where the
    namespace's counters are this connection's alone; otherwise timeouts and probes are
    unknown (media streams, a PEP's onward sockets)."""
    state = SenderState(
        retransmits=info.get("total_retrans"),
        srtt_s=(info.get("rtt") or 0) / 1e6,
        min_rtt_s=(info.get("min_rtt") or 0) / 1e6,
        final_cwnd_bytes=(info.get("snd_cwnd") or 0) * (info.get("snd_mss") or 0),
    )
    return replace(state, **counts)


def _transactions(measured: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """An rr test's transactions as the simulator's `summary.rr` has them; None without a
    completed transaction, as the simulator leaves the key out then."""
    if not measured or not measured["latency_us"]:
        return None
    latency = measured["latency_us"]
    return {
        "transactions": measured["count"],
        "transactions_per_s": measured["transactions_per_second"],
        **{f"latency_{name}_s": latency[name] / 1e6 for name in RR_LATENCIES},
    }


def _per_cpu(goodput: float, percent: float | None) -> float | None:
    return goodput / (percent / 100) if percent else None


def _links(emulator: Mapping[str, Any], elapsed_s: float) -> list[LinkRow]:
    """One row per link direction, from the emulator's counters."""
    return [
        LinkRow(
            link=row["link"],
            direction=row["direction"],
            # The emulator counts the handshake and the last packets after the test's end
            # too; over the test's length this is an upper bound, capped at 1.
            utilisation=min(row["busy_ns"] / (elapsed_s * NS_PER_S), 1.0) if elapsed_s else 0.0,
            packets=row["packets"],
            bytes=row["wire_bytes"],
            drops_queue=row["drops_queue"],
            drops_error=row["drops_error"],
            max_queue_bytes=row["max_queue_bytes"],
        )
        for row in emulator["links"]
    ]


def iperf3_result(
    plan: Mapping[str, Any], measured: Mapping[str, Any], emulator: Mapping[str, Any]
) -> dict[str, Any]:
    """iperf3's JSON in the result schema. Intervals are the server's (bytes its reads
    returned), counted from the server's test start; iperf3 reports no limited-by times
    and no ssthresh, so those are None."""
    end = measured["end"]
    server = measured.get("server_output_json") or {}
    duration_s = plan["duration_ns"] / NS_PER_S
    file = plan["app"]["kind"] == "file"
    received = server.get("end", {}).get("sum_received") or end["sum_received"]
    intervals = [i for i in server.get("intervals", []) if file or i["sum"]["start"] < duration_s]
    completed = not file or int(received["bytes"]) >= int(plan["app"]["bytes"])
    elapsed = float(received["seconds"]) if file and completed else duration_s
    streams = [i["streams"][0] for i in measured.get("intervals", []) if i.get("streams")]
    sent = end["sum_sent"]
    cpu = end["cpu_utilization_percent"]
    last = streams[-1] if streams else {}
    sender = SenderState(
        retransmits=sent.get("retransmits"),
        srtt_s=(last.get("rtt") or 0) / 1e6,
        min_rtt_s=(end["streams"][0]["sender"].get("min_rtt") or 0) / 1e6
        if end.get("streams")
        else None,
        final_cwnd_bytes=last.get("snd_cwnd"),
    )
    measurement = Measurement(
        elapsed_s=elapsed,
        bytes_written=int(sent["bytes"]),
        completed=completed,
        counts=Counts(retransmits=sent.get("retransmits")),
        emu={
            "tool": "iperf3",
            "iperf3_version": measured["start"].get("version"),
            "kernel": platform.release(),
            "sender_cc": end.get("sender_tcp_congestion"),
            "receiver_cc": end.get("receiver_tcp_congestion"),
            "sock_bufsize": measured["start"].get("sock_bufsize"),
            "sender_sndbuf": plan["hosts"][0]["tcp"]["sndbuf"],
            "receiver_rcvbuf": plan["hosts"][-1]["tcp"]["rcvbuf"],
            "sender_sndbuf_actual": measured["start"].get("sndbuf_actual"),
            "receiver_rcvbuf_actual": measured["start"].get("rcvbuf_actual"),
            "max_peer_window_bytes": max((s.get("snd_wnd") or 0 for s in streams), default=None),
            "cpu_percent_sender": cpu.get("host_total"),
            "cpu_percent_receiver": cpu.get("remote_total"),
            **_emulator_columns(emulator),
            "interval_origin": "iperf3_server_test_start",
        },
    )
    # iperf3 reports each interval's retransmits; the trace keeps the running total.
    retransmitted = list(itertools.accumulate(s.get("retransmits") or 0 for s in streams))
    trace_rows = [
        {
            "t_s": s["end"],
            "cwnd_bytes": s.get("snd_cwnd"),
            "ssthresh_bytes": None,
            "srtt_us": s.get("rtt"),
            "flight_bytes": None,
            "snd_wnd_bytes": s.get("snd_wnd"),
            "total_retrans": total,
        }
        for s, total in zip(streams, retransmitted, strict=True)
    ]
    delivered = sum(int(i["sum"]["bytes"]) for i in intervals)
    return measurement.result(
        plan,
        emulator,
        flows=[measurement.flow(plan, 0, sender, delivered)],
        series=_series(intervals, plan["interval_ns"], elapsed),
        trace=_trace([(0, row) for row in trace_rows]),
        relays=measured.get("relays"),
    )


def _series(
    intervals: Sequence[Mapping[str, Any]], interval_ns: int, elapsed_s: float
) -> dict[str, list[Any]]:
    """Per-interval delivered bytes stamped with each interval's end, up to `elapsed_s`,
    with the intervals in which nothing arrived filled in as zeros."""
    ends = interval_ends(interval_ns, elapsed_s)
    values = [int(i["sum"]["bytes"]) for i in intervals][: len(ends)]
    return series(ends, values + [0] * (len(ends) - len(values)))


def _trace(rows: Sequence[tuple[int, Mapping[str, Any]]]) -> dict[str, list[Any]]:
    """The trace table of (flow, sample) pairs."""
    out = empty_trace()
    for flow, row in rows:
        out["flow"].append(flow)
        # Each flow's own connection; a PEP relay's onward connection is not sampled.
        out["segment"].append(0)
        out["t_s"].append(row["t_s"])
        out["cwnd_bytes"].append(row["cwnd_bytes"])
        ssthresh = row["ssthresh_bytes"]
        out["ssthresh_bytes"].append(SSTHRESH_INFINITE_BYTES if ssthresh is None else ssthresh)
        out["srtt_s"].append((row["srtt_us"] or 0) / 1e6)
        out["flight_bytes"].append(row["flight_bytes"])
        out["rwnd_bytes"].append(row["snd_wnd_bytes"] or 0)
        # TCP_INFO's tcpi_bytes_acked and tcpi_total_retrans (tcplab's tool); iperf3 samples
        # no bytes acknowledged, and its retransmits are summed into a running total.
        out["acked_bytes"].append(row.get("bytes_acked"))
        out["retransmits"].append(row.get("total_retrans"))
    return out
