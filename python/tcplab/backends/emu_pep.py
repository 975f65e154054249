"""The emu backend's split-connection PEPs (docs/models/pep.md, docs/emu.md).

Each PEP gets a namespace of its own between two emulated segments of the path
(tcplab.emu.EmuNetwork), and in it a real relay (tcplab.measure.relay): an explicit proxy
that the measurement client connects to, which connects onwards to the next PEP or to the
server. Its sockets take the PEP's per-side TCP settings as the hosts' sockets take
theirs: congestion control, buffers, MSS and Nagle per socket, and the initial window,
initial receive window and RTO floor on the namespace's route towards each side.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from tcplab.backends import emu
from tcplab.backends.rows import FlowRow, Result, SegmentRow
from tcplab.emu import EmuError, EmuNetwork, HostSetup, PepSetup

# Connections each relay carries: the measurement's control and data connections (iperf3
# opens the same two for its one stream).
RELAY_CONNECTIONS = 2


def peps(plan: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The plan's PEPs in path order (the emu backend runs the path form only)."""
    return sorted(plan.get("peps", []), key=lambda pep: pep["node"])


def setups(plan: Mapping[str, Any]) -> list[PepSetup]:
    """Each PEP's namespace: its route towards each side set from that side's TCP (with the
    MSS of the endpoint on that side), and sysctls that hold either side's buffers."""
    ordered = peps(plan)
    # The TCP at each connection end along the path: the sender, each PEP's two sides, the
    # receiver.
    ends = [plan["hosts"][0]["tcp"]]
    ends += [pep[side] for pep in ordered for side in ("client_side", "server_side")]
    ends.append(plan["hosts"][-1]["tcp"])
    out = []
    for k, pep in enumerate(ordered):
        client, server = pep["client_side"], pep["server_side"]
        larger = {name: max(client[name], server[name]) for name in ("sndbuf", "rcvbuf")}
        sysctls = emu.host_setup({**server, **larger}, ends[2 * k + 3]).sysctls
        towards = [
            emu.host_setup(client, ends[2 * k]),
            emu.host_setup(server, ends[2 * k + 3]),
        ]
        out.append(
            PepSetup(
                after_link=pep["node"] - 2,
                client_side=HostSetup(
                    sysctls, towards[0].route_options, towards[0].link_options
                ),
                server_side=HostSetup(
                    sysctls, towards[1].route_options, towards[1].link_options
                ),
            )
        )
    return out


def start_relays(
    net: EmuNetwork, plan: Mapping[str, Any], port: int, deadline_s: float
) -> list[subprocess.Popen[str]]:
    """Start each PEP's relay, the last first, so that every relay's onward hop listens
    before a connection reaches it. PEP k listens on the receiver-side address of segment
    k and connects from the sender-side address of segment k + 1 to whatever listens at
    the other end of it (the next PEP, or the server)."""
    relays = []
    for k, pep in reversed(list(enumerate(peps(plan)))):
        config = {
            "listen": [net.addresses[k][1], port],
            "source": net.addresses[k + 1][0],
            "server": [net.addresses[k + 1][1], port],
            "accept_options": emu._options(pep["client_side"], receiver=True),
            "connect_options": emu._options(pep["server_side"], receiver=False),
            "buffer": pep["buffer"],
            "count": RELAY_CONNECTIONS,
            "deadline_s": deadline_s,
        }
        relay = net.popen(k + 1, [sys.executable, "-m", "tcplab.measure.relay", json.dumps(config)])
        emu._wait_listening(relay, emu.SLACK_S)
        relays.append(relay)
    return relays[::-1]


def finish_relays(
    relays: Sequence[subprocess.Popen[str]], timeout_s: float
) -> list[dict[str, Any]]:
    """Each relay's report, in path order, once the connections through it have ended."""
    reports = []
    for relay in relays:
        try:
            out, err = relay.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise EmuError("a PEP's relay did not finish in time") from None
        if relay.returncode != 0:
            raise EmuError(f"a PEP's relay failed: {err.strip()[-2000:]}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def _data_pair(report: Mapping[str, Any]) -> Mapping[str, Any]:
    # The test's bytes travel on the data connection; the control connection carries a few
    # JSON lines.
    return max(report["pairs"], key=lambda pair: pair["to_server_bytes"])


def segments(
    plan: Mapping[str, Any],
    flow: FlowRow,
    reports: Sequence[Mapping[str, Any]],
    elapsed_s: float,
) -> list[SegmentRow]:
    """A row per connection of the measured flow, as the simulator's `segments` rows: what
    each connection's receiving application read (a relay, or the server), and its
    sender's state (the client's, or the relay's onward socket's TCP_INFO)."""
    ordered = peps(plan)
    names = [plan["hosts"][0]["name"], *(pep["name"] for pep in ordered), plan["hosts"][-1]["name"]]
    pairs = [_data_pair(report) for report in reports]
    # The client's connection alone: the namespace's timeout and probe counters are the
    # relays' too.
    client = replace(flow.sender, timeouts=None, persist_probes=None)
    senders = [client, *(emu.sender_state(pair["opened_tcp_info"]) for pair in pairs)]
    delivered = [pair["to_server_bytes"] for pair in pairs] + [flow.bytes_delivered]
    return [
        SegmentRow(
            segment=k,
            relay_peak_bytes=pairs[k]["peak_bytes"] if k < len(pairs) else None,
            connection=senders[k].row(
                0,
                names[k],
                names[k + 1],
                8 * delivered[k] / elapsed_s if elapsed_s > 0 else 0.0,
                delivered[k],
            ),
        )
        for k in range(len(names) - 1)
    ]


def add_segments(
    result: Result,
    plan: Mapping[str, Any],
    reports: Sequence[Mapping[str, Any]] | None,
    elapsed_s: float,
) -> Result:
    """A result through PEPs gets its `segments` rows, `summary["emu"]["peps"]`, and the
    flow's retransmissions on every connection, as the simulator counts them; a result
    without PEPs is returned as it is."""
    if not reports:
        return result
    flow = result.flows[0]
    rows = segments(plan, flow, reports, elapsed_s)
    resent = [row.connection.sender.retransmits for row in rows]
    retransmits = None if None in resent else sum(r or 0 for r in resent)
    assert result.summary.backend is not None
    name, own = result.summary.backend
    return replace(
        result,
        flows=[replace(flow, sender=replace(flow.sender, retransmits=retransmits))],
        summary=replace(result.summary, backend=(name, {**own, "peps": sockets(plan, reports)})),
        segments=rows,
    )


def sockets(plan: Mapping[str, Any], reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What the kernel made of each PEP's sockets on the data connection: congestion
    control, buffers as getsockopt returns them, MSS (summary["emu"]["peps"])."""
    return [
        {
            "name": pep["name"],
            "client_side": _data_pair(report)["accepted_options"],
            "server_side": _data_pair(report)["opened_options"],
        }
        for pep, report in zip(peps(plan), reports, strict=True)
    ]
