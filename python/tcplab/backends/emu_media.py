"""The emu backend's media streams: the measurement tool's media mode between the
namespaces (tcplab.measure.media), and its report in the result schema, with each
stream's message records under `streams` as the simulator gives them (docs/emu.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from tcplab.backends import emu as base
from tcplab.backends.rows import Counts, empty_trace, interval_ends, series
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
        arrived = [(r, b) for b, r in zip(record["bytes"], received, strict=True) if r is not None]
        arrivals += arrived
        delivered = sum(b for _, b in arrived)
        sender = base.sender_state(record.get("tcp_info") or {})
        flows.append(sender.row(index, src, dst, 8 * delivered / elapsed, delivered))
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
    measurement = base.Measurement(
        elapsed_s=elapsed,
        bytes_written=sum(sum(r["bytes"]) for r in measured["streams"]),
        completed=True,
        counts=Counts(retransmits=sum(flow.sender.retransmits or 0 for flow in flows)),
        emu={
            "clock": measured["clock"],
            "timing_error_us": emulator["timing_error"],
            "emulator_cpu_s": emulator["cpu_s"],
        },
    )
    return measurement.result(
        plan,
        emulator,
        series=_series(arrivals, plan["interval_ns"], elapsed),
        trace=empty_trace(),
        flows=flows,
        streams=streams,
    )


def _series(arrivals: list[tuple[int, int]], interval_ns: int, elapsed_s: float) -> dict[str, Any]:
    """Delivered message bytes per interval, by arrival time (right-closed intervals, as
    the simulator counts them)."""
    ends = interval_ends(interval_ns, elapsed_s)
    values = [0] * len(ends)
    for at, size in arrivals:
        values[min(len(ends) - 1, max(at - 1, 0) // interval_ns)] += size
    return series(ends, values)
