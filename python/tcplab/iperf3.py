"""A run as iperf3's JSON (`iperf3 -c -J`), so that scripts and plotters written for iperf3
read a simulated or emulated run: `start`, `intervals` (a row per stream and their `sum`,
every interval) and `end` (each stream's sender and receiver, `sum_sent`, `sum_received`).

Each TCP flow is a stream. Its intervals are cut from the result's per-interval series and
sender trace (docs/cli.md, "--format iperf3", says what each key holds): `bytes` are the
bytes the receiver acknowledged in the interval and `retransmits` the segments
retransmitted in it (differences of the trace's running totals at the last sample at or
before each interval's end); `snd_cwnd`, `snd_wnd` and `rtt` (µs) the sender's state at
that sample. Where the trace keeps no running total of bytes (the emu backend's iperf3
tool does not sample it), the one stream's bytes are the series' bytes delivered per
interval.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tcplab.errors import TcplabError
from tcplab.shared import TCP_IP_HEADER_BYTES
from tcplab.version import __version__

if TYPE_CHECKING:
    from tcplab.result import RunResult
    from tcplab.spec import Spec, Tcp

# Float stamps of a sample and an interval's end that are the same instant may differ in
# their last bits: a sample this close after the end still counts as at the end.
_SLACK_S = 1e-9


def to_iperf3(result: RunResult) -> dict[str, Any]:
    """`result` (one run) as iperf3 3.x's JSON output of the sending side."""
    from tcplab.spec import validate_spec

    if result.runs:
        raise TcplabError(
            f"iperf3's JSON describes one run; this result holds {len(result.runs)}"
            " repetitions (run with repetitions = 1, or --seed for another one)"
        )
    spec = validate_spec(result.meta["spec"])
    streams = _streams(result, spec)
    ends = [float(t) for t in result.series["t_s"]]
    by_stream: list[list[dict[str, Any]]] = [[] for _ in streams]
    intervals = []
    for k, end in enumerate(ends):
        start = ends[k - 1] if k else 0.0
        rows = [stream.interval(k, start, end) for stream in streams]
        for own, row in zip(by_stream, rows, strict=True):
            own.append(row)
        intervals.append({"streams": rows, "sum": _sum(rows, start, end, omitted=False)})
    elapsed = float(result.summary["elapsed_s"])
    senders = [s.sender_end(elapsed, rows) for s, rows in zip(streams, by_stream, strict=True)]
    receivers = [stream.receiver_end(elapsed) for stream in streams]
    first = streams[0] if streams else None
    return {
        "start": _start(result, spec, streams),
        "intervals": intervals,
        "end": {
            "streams": [
                {"sender": sender, "receiver": receiver}
                for sender, receiver in zip(senders, receivers, strict=True)
            ],
            "sum_sent": _sum(senders, 0.0, elapsed),
            "sum_received": {
                **_span(0.0, elapsed, sum(int(r["bytes"]) for r in receivers)),
                "sender": False,
            },
            "cpu_utilization_percent": _cpu(result, first),
            "sender_tcp_congestion": first.sender.cc if first else None,
            "receiver_tcp_congestion": first.receiver.cc if first else None,
        },
    }


def flow_intervals(result: RunResult) -> list[dict[str, Any]]:
    """Each flow's row of each interval (`flow`, `t_s` at the interval's end, `bytes`
    acknowledged in it, `retransmits`), cut as the iperf3 intervals are: one run only."""
    if result.runs:
        raise TcplabError("per-flow intervals are cut from one run; this result has several")
    from tcplab.spec import validate_spec

    spec = validate_spec(result.meta["spec"])
    ends = [float(t) for t in result.series["t_s"]]
    rows = []
    for flow, stream in zip(result.flows, _streams(result, spec), strict=True):
        for k, end in enumerate(ends):
            row = stream.interval(k, ends[k - 1] if k else 0.0, end)
            rows.append(
                {"flow": flow["flow"], "t_s": end, "bytes": row["bytes"],
                 "retransmits": row["retransmits"]}
            )  # fmt: skip
    return rows


def _streams(result: RunResult, spec: Spec) -> list[_Stream]:
    """Every flow's stream. The trace's columns are read once and its rows parted by flow
    in one pass (per flow, a pass over the whole trace made a 1,000-flow report take
    minutes)."""
    tcp = {host.name: host.tcp for host in spec.hosts}
    for flow in result.flows:
        for side in ("src", "dst"):
            if flow[side] not in tcp:
                raise TcplabError(
                    f"the result names a host {flow[side]!r} its scenario does not have"
                )
    trace = result.trace.to_dict()
    names = list(trace)
    flows = trace.get("flow", [])
    # A stream is the source's connection: segment 0 of a flow a PEP splits.
    segments = trace.get("segment") or [0] * len(flows)
    rows: dict[Any, list[int]] = {}
    for i, (f, s) in enumerate(zip(flows, segments, strict=True)):
        if s == 0:
            rows.setdefault(f, []).append(i)
    series = [int(b) for b in result.series["interval_bytes"]]
    streams = []
    for index, flow in enumerate(result.flows):
        own = rows.get(flow["flow"], [])
        stream = _Stream(
            socket=index + 1,
            flow=flow,
            sender=tcp[flow["src"]],
            receiver=tcp[flow["dst"]],
            times=[float(trace["t_s"][i]) for i in own],
            samples=[{name: trace[name][i] for name in names} for i in own],
            series=series,
        )
        if not stream.counted and len(result.flows) > 1:
            raise TcplabError(
                f"flow {flow['flow']}: the trace keeps no bytes acknowledged to cut"
                " this flow's intervals from"
            )
        streams.append(stream)
    return streams


@dataclass(kw_only=True)
class _Stream:
    """One flow: its row of the result, its hosts' TCP settings, its trace samples (and
    their times) and the run's bytes delivered per interval."""

    socket: int
    flow: Mapping[str, Any]
    sender: Tcp
    receiver: Tcp
    times: list[float]
    samples: list[dict[str, Any]]
    series: list[int]
    # Whether the samples count bytes acknowledged: read for every interval, so kept.
    counted: bool = field(init=False)

    def __post_init__(self) -> None:
        self.counted = bool(self.samples) and all(
            sample.get("acked_bytes") is not None for sample in self.samples
        )

    def _at(self, t_s: float) -> Mapping[str, Any]:
        """The last sample at or before `t_s`; before the first, the connection's start."""
        k = bisect.bisect_right(self.times, t_s + _SLACK_S) - 1
        return self.samples[k] if k >= 0 else {"acked_bytes": 0, "retransmits": 0}

    def _delta(self, name: str, start: float, end: float) -> int | None:
        now, before = self._at(end).get(name), self._at(start).get(name)
        return None if now is None or before is None else int(now) - int(before)

    def interval(self, k: int, start: float, end: float) -> dict[str, Any]:
        sample = self._at(end)
        count = self._delta("acked_bytes", start, end) if self.counted else self.series[k]
        return {
            "socket": self.socket,
            **_span(start, end, count or 0),
            "retransmits": self._delta("retransmits", start, end),
            "snd_cwnd": sample.get("cwnd_bytes"),
            "snd_wnd": sample.get("rwnd_bytes"),
            "rtt": _microseconds(sample.get("srtt_s")),
            "pmtu": self.sender.mss + TCP_IP_HEADER_BYTES,
            "omitted": False,
            "sender": True,
        }

    def sender_end(self, elapsed: float, intervals: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The stream's `end` sender row: its intervals' bytes, the flow's retransmits
        (the simulator's count, not the trace's, which stops at the last sample)."""
        rtts = [float(s["srtt_s"]) for s in self.samples if s.get("srtt_s")]
        min_rtt = self.flow.get("min_rtt_s") or min(rtts, default=None)
        return {
            "socket": self.socket,
            **_span(0.0, elapsed, sum(int(row["bytes"]) for row in intervals)),
            "retransmits": self.flow.get("retransmits"),
            "max_snd_cwnd": max((s["cwnd_bytes"] or 0 for s in self.samples), default=None),
            "max_snd_wnd": max((s["rwnd_bytes"] or 0 for s in self.samples), default=None),
            "max_rtt": _microseconds(max(rtts, default=None)),
            "min_rtt": _microseconds(min_rtt),
            "mean_rtt": _microseconds(sum(rtts) / len(rtts) if rtts else None),
            "sender": True,
        }

    def receiver_end(self, elapsed: float) -> dict[str, Any]:
        delivered = int(self.flow.get("bytes_delivered") or 0)
        return {"socket": self.socket, **_span(0.0, elapsed, delivered), "sender": False}


def _span(start: float, end: float, count: int) -> dict[str, Any]:
    seconds = end - start
    return {
        "start": start,
        "end": end,
        "seconds": seconds,
        "bytes": count,
        "bits_per_second": 8 * count / seconds if seconds > 0 else 0.0,
    }


def _sum(
    rows: Sequence[Mapping[str, Any]], start: float, end: float, **extra: Any
) -> dict[str, Any]:
    retransmits = [row.get("retransmits") for row in rows]
    known = [int(r) for r in retransmits if r is not None]
    return {
        **_span(start, end, sum(int(row["bytes"]) for row in rows)),
        "retransmits": sum(known) if len(known) == len(retransmits) else None,
        **extra,
        "sender": True,
    }


def _microseconds(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1e6)


def _cpu(result: RunResult, first: _Stream | None) -> dict[str, float | None]:
    """The first stream's sending and receiving hosts' CPU use in per cent (iperf3's
    host_total and remote_total). The CPU model has no user/system split: those are null."""
    use = {row["host"]: row.get("cpu_utilisation") for row in result.hosts}
    percent: dict[str, float | None] = {}
    for prefix, side in (("host", "src"), ("remote", "dst")):
        value = use.get(first.flow[side]) if first else None
        percent[f"{prefix}_total"] = None if value is None else 100 * float(value)
        percent[f"{prefix}_user"] = percent[f"{prefix}_system"] = None
    return percent


def _start(result: RunResult, spec: Spec, streams: Sequence[_Stream]) -> dict[str, Any]:
    first = streams[0] if streams else None
    return {
        "connected": [
            {
                "socket": stream.socket,
                "local_host": stream.flow["src"],
                "local_port": 0,
                "remote_host": stream.flow["dst"],
                "remote_port": 0,
            }
            for stream in streams
        ],
        "version": f"tcplab {__version__} ({result.meta['backend']} backend)",
        # A result records no wall-clock time (its JSON is the same wherever it ran).
        "timestamp": {"time": "", "timesecs": 0},
        "system_info": f"tcplab scenario {result.meta['name']}, seed {result.meta['seed']}",
        "tcp_mss_default": first.sender.mss if first else None,
        "sock_bufsize": 0,
        "sndbuf_actual": first.sender.sndbuf if first else None,
        "rcvbuf_actual": first.receiver.rcvbuf if first else None,
        "test_start": {
            "protocol": "TCP",
            "num_streams": len(streams),
            "blksize": spec.app.message_size,
            "omit": 0,
            "duration": result.summary["elapsed_s"],
            "bytes": spec.app.bytes or 0,
            "blocks": 0,
            "reverse": 0,
            "tos": 0,
        },
    }
