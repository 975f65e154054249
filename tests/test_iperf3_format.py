"""`tcplab run --format iperf3` and RunResult.to_iperf3(): iperf3's JSON layout, read by a
real iperf3 consumer (the `iperf3` package's TestResult), with every key a real
`iperf3 -c -J` writes (tests/data/iperf3-3.12-client-P2.json, iperf 3.12 on loopback with
two streams, and when iperf3 is installed, a fresh run of it), and numbers that add up to
the simulator's own counters."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import iperf3
import pytest

import tcplab
from tcplab.errors import TcplabError

DATA = Path(__file__).resolve().parent / "data"
# What iperf3 writes that a run cannot have: the per-sample RTT variance (not traced), and
# from the client's options and connection: where it connected, its cookie, its -b.
NOT_WRITTEN = {"rttvar", "connecting_to", "cookie", "target_bitrate"}

# Four flows over one 10 Mb/s bottleneck with loss, the fourth from 2 s: retransmissions
# in most intervals, flows of different ages.
SHARED = {
    "name": "iperf3-shared",
    "duration": "5s",
    "interval": "500ms",
    "hosts": [{"name": n} for n in ("s0", "s1", "s2", "d0", "d1", "d2")],
    "routers": [{"name": "r1"}, {"name": "r2"}],
    "links": [
        *({"between": [f"s{i}", "r1"], "rate": "100Mbps", "delay": "2ms"} for i in range(3)),
        {"between": ["r1", "r2"], "rate": "10Mbps", "delay": "20ms", "loss": 0.002,
         "queue": {"limit": "60p"}},
        *({"between": ["r2", f"d{i}"], "rate": "100Mbps", "delay": "1ms"} for i in range(3)),
    ],
    "flows": [{"src": "s0", "dst": "d0"}, {"src": "s1", "dst": "d1"},
              {"src": "s2", "dst": "d2", "start": "2s"}],
}  # fmt: skip


@pytest.fixture(scope="module")
def shared() -> tuple[tcplab.RunResult, dict[str, Any]]:
    result = tcplab.run(SHARED)
    return result, result.to_iperf3()


def keys(data: Any) -> dict[str, set[str]]:
    """Every object's keys in an iperf3 JSON, by where it sits (lists by their first item)."""
    found: dict[str, set[str]] = {}

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            found.setdefault(where, set()).update(value)
            for key, item in value.items():
                # system_info, timestamp and cpu values are leaves, whatever their shape.
                walk(item, f"{where}.{key}")
        elif isinstance(value, list) and value:
            walk(value[0], f"{where}[]")

    walk(data, "")
    return found


def real_iperf3_outputs() -> list[dict[str, Any]]:
    outputs = [json.loads((DATA / "iperf3-3.12-client-P2.json").read_text())]
    if shutil.which("iperf3") is None:
        return outputs
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    server = subprocess.Popen(
        ["iperf3", "-s", "-1", "-p", port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(50):
            client = subprocess.run(
                ["iperf3", "-c", "127.0.0.1", "-p", port, "-t", "1", "-i", "0.5", "-b", "10M",
                 "-P", "2", "-J"],
                capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
            data = json.loads(client.stdout)
            if "error" not in data:
                outputs.append(data)
                break
    finally:
        server.wait(timeout=30)
    return outputs


def test_every_key_a_real_iperf3_writes_is_there(shared: tuple) -> None:
    _, ours = shared
    outputs = real_iperf3_outputs()
    assert len(outputs) == (2 if shutil.which("iperf3") else 1)
    mine = keys(ours)
    for real in outputs:
        for where, names in keys(real).items():
            if where.startswith(".start.system_info") or where.startswith(".start.timestamp"):
                continue
            if where.split(".")[-1].rstrip("[]") in NOT_WRITTEN:
                continue
            assert names - NOT_WRITTEN <= mine.get(where, set()), where


def test_an_iperf3_consumer_reads_it(shared: tuple) -> None:
    result, ours = shared
    read = iperf3.TestResult(json.dumps(ours))
    assert read.error is None
    assert (read.protocol, read.num_streams) == ("TCP", 3)
    assert read.received_bytes == result.summary["bytes_delivered"]
    assert read.received_bps == pytest.approx(result.summary["goodput_bps"])
    assert read.retransmits == result.summary["retransmits"]
    assert read.duration == 5.0
    assert read.tcp_mss_default == 1460


def test_intervals_add_up_to_the_simulators_counters(shared: tuple) -> None:
    result, ours = shared
    intervals = ours["intervals"]
    assert [i["sum"]["end"] for i in intervals] == pytest.approx(
        [0.5 * k for k in range(1, 11)]
    )
    for interval in intervals:
        rows, total = interval["streams"], interval["sum"]
        assert [row["socket"] for row in rows] == [1, 2, 3]
        assert total["bytes"] == sum(row["bytes"] for row in rows)
        assert total["retransmits"] == sum(row["retransmits"] for row in rows)
        for row in rows:
            assert row["bits_per_second"] == pytest.approx(8 * row["bytes"] / row["seconds"])
    trace = result.trace_frame()
    for index, flow in enumerate(result.flows):
        mine = [i["streams"][index] for i in intervals]
        # The trace samples at the run's end: the intervals hold every retransmission.
        assert sum(row["retransmits"] for row in mine) == flow["retransmits"] > 0
        end = ours["end"]["streams"][index]
        assert end["sender"]["bytes"] == sum(row["bytes"] for row in mine)
        assert end["sender"]["bytes"] == trace[trace.flow == index].acked_bytes.max()
        assert end["receiver"]["bytes"] == flow["bytes_delivered"]
        # What the receiver acknowledged, the sender learns of one way later at most.
        assert 0 <= end["receiver"]["bytes"] - end["sender"]["bytes"] < 64 * 1460
        assert end["sender"]["min_rtt"] == round(flow["min_rtt_s"] * 1e6)
        last = trace[trace.flow == index].iloc[-1]
        assert mine[-1]["snd_cwnd"] == last.cwnd_bytes
        assert mine[-1]["rtt"] == round(last.srtt_s * 1e6)
    # The third flow opens at 2 s: nothing before.
    assert all(i["streams"][2]["bytes"] == 0 for i in intervals[:4])
    assert ours["end"]["sum_received"]["bytes"] == result.summary["bytes_delivered"]
    assert ours["end"]["sum_sent"]["retransmits"] == result.summary["retransmits"]


def test_the_cli_prints_the_same_json(tmp_path: Path) -> None:
    path = tmp_path / "shared.toml"
    import tomli_w

    path.write_text(tomli_w.dumps(SHARED))
    printed = subprocess.run(
        [sys.executable, "-m", "tcplab", "run", str(path), "--format", "iperf3", "--no-save"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(printed.stdout) == json.loads(json.dumps(tcplab.run(path).to_iperf3()))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"repetitions": 2}, "--format iperf3 prints one run; this scenario has 2 repetitions"),
        ({"sweep": {"links.3.delay": ["10ms", "20ms"]}}, "this scenario has a [sweep]"),
    ],
)
def test_one_run_only(tmp_path: Path, change: dict[str, Any], expected: str) -> None:
    import tomli_w

    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps({**SHARED, **change}))
    command = [sys.executable, "-m", "tcplab", "run", str(path), "--format", "iperf3"]
    completed = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert completed.returncode == 2
    assert expected in json.loads(completed.stdout)["error"]["message"]


def test_a_result_of_repetitions_is_refused() -> None:
    result = tcplab.run({**SHARED, "duration": "1s", "repetitions": 2})
    with pytest.raises(TcplabError, match="holds 2 repetitions"):
        result.to_iperf3()


def test_a_bad_format_names_the_accepted_ones(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "tcplab", "run", "x.toml", "--format", "csv"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert completed.returncode == 2
    assert "--format: 'csv' is not a format; accepted: json, iperf3" in completed.stdout
