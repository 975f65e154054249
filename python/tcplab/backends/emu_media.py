"""The emu backend's media streams: the measurement tool's media mode between the
namespaces (tcplab.measure.media), and its report in the result schema, with each
stream's message records under `streams` as the simulator gives them (docs/emu.md)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from tcplab.backends import empty_trace
from tcplab.backends import emu as base
from tcplab.emu import RECEIVER_ADDRESS, EmuError, EmuNetwork

NS_PER_S = 1_000_000_000


def measure(net: EmuNetwork, plan: Mapping[str, Any]) -> dict[str, Any]:
    """Run the media test: the server in the receiver's namespace, the client in the
    sender's; returns the client's report."""
    sender, receiver = plan["hosts"][0]["tcp"], plan["hosts"][-1]["tcp"]
    child = [sys.executable, "-m", "tcplab.measure.child"]
    server_config = {
        "role": "server",
        "bind": RECEIVER_ADDRESS,
        "port": base.PORT,
        "options": base._options(receiver, receiver=True),
        "read_size": base.READ_SIZE,
        "accept_timeout_s": base.SLACK_S,
    }
    server = net.popen(1, [*child, json.dumps(server_config)])
    base._wait_listening(server, base.SLACK_S)
    client_config = {
        "role": "media-client",
        "host": RECEIVER_ADDRESS,
        "port": base.PORT,
        "options": base._options(sender, receiver=False),
        "streams": plan["app"]["streams"],
        "duration_ns": plan["duration_ns"],
        "seed": plan["seed"],
    }
    client = net.popen(0, [*child, json.dumps(client_config)])
    try:
        out, err = client.communicate(timeout=plan["duration_ns"] / NS_PER_S + 2 * base.SLACK_S)
    except subprocess.TimeoutExpired:
        raise EmuError("the measurement client did not finish in time") from None
    if client.returncode != 0:
        raise EmuError(f"the measurement client failed: {err.strip()[-2000:]}")
    return dict(json.loads(out))


def to_result(
    plan: Mapping[str, Any], measured: Mapping[str, Any], emulator: Mapping[str, Any]
) -> dict[str, Any]:
    """The media test and the emulator's report in the result schema."""
    elapsed = plan["duration_ns"] / NS_PER_S
    src, dst = plan["hosts"][0]["name"], plan["hosts"][-1]["name"]
    streams, flows = [], []
    arrivals: list[tuple[int, int]] = []
    for index, record in enumerate(measured["streams"]):
        received = record["received_ns"]
        delivered = sum(b for b, r in zip(record["bytes"], received, strict=True) if r is not None)
        arrivals += [
            (r, b) for b, r in zip(record["bytes"], received, strict=True) if r is not None
        ]
        info = record.get("tcp_info") or {}
        flows.append(
            {
                "flow": index,
                "src": src,
                "dst": dst,
                "goodput_bps": 8 * delivered / elapsed,
                "bytes_delivered": delivered,
                **base.sender_columns(info),
            }
        )
        streams.append(
            {
                "stream": record["stream"],
                "transport": record["transport"],
                "flow": index,
                "src": src,
                "dst": dst,
                "interval_ns": record["interval_ns"],
                "skipped": record["skipped"],
                "bytes": record["bytes"],
                "sent_ns": record["sent_ns"],
                "received_ns": received,
                "clock": measured["clock"],
            }
        )
    delivered = sum(flow["bytes_delivered"] for flow in flows)
    goodput = 8 * delivered / elapsed
    emu = {
        "clock": measured["clock"],
        "timing_error_us": emulator["timing_error"],
        "emulator_cpu_s": emulator["cpu_s"],
    }
    summary = {
        "goodput_bps": goodput,
        "elapsed_s": elapsed,
        "bytes_delivered": delivered,
        "bytes_written": sum(sum(r["bytes"]) for r in measured["streams"]),
        "segments_sent": None,
        "retransmits": sum(f["retransmits"] or 0 for f in flows),
        "fast_retransmits": None,
        "timeouts": None,
        "persist_probes": None,
        "completed": True,
        "events": sum(d["packets_in"] for d in emulator["directions"]),
        "limited_by": {"rwnd": None, "sndbuf": None, "cwnd": None, "app": None},
        "emu": emu,
        **base._host_summary([goodput], emu),
    }
    return {
        "summary": summary,
        "flows": flows,
        "hosts": base._hosts(plan, goodput, emu),
        "links": base._links(emulator, elapsed),
        "series": _series(arrivals, plan["interval_ns"], elapsed),
        "trace": empty_trace(),
        "streams": streams,
    }


def _series(arrivals: list[tuple[int, int]], interval_ns: int, elapsed_s: float) -> dict[str, Any]:
    """Delivered message bytes per interval, by arrival time (right-closed intervals, as
    the simulator counts them)."""
    count = max(1, math.ceil(elapsed_s * NS_PER_S / interval_ns - 1e-9))
    values = [0] * count
    for at, size in arrivals:
        values[min(count - 1, max(at - 1, 0) // interval_ns)] += size
    ends = [min((k + 1) * interval_ns / NS_PER_S, elapsed_s) for k in range(count)]
    return {"t_s": ends, "interval_bytes": values}
