"""Packet captures (docs/pcap.md): tshark dissects them without complaint and counts what
the simulator counted.

The test needs tshark (Debian package `tshark`; scripts/setup installs it when run as
root) and fails without it rather than skipping.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import tcplab
from tcplab import _sim
from tcplab.errors import SpecError, Unsupported
from tcplab.experiments import sweeps
from tcplab.plan import resolve, topology_form
from tcplab.spec import validate_spec

SENDER, RECEIVER = "10.0.0.1", "10.0.0.2"
FIELDS = (
    "ip.src",
    "tcp.seq",
    "tcp.len",
    "frame.len",
    "frame.cap_len",
    "ip.checksum.status",
    "tcp.checksum.status",
    "tcp.analysis.retransmission",
    "_ws.malformed",
)
# tshark's checksum status: 1 good, 2 not verified (the payload was cut at the snaplen).
GOOD, UNVERIFIED = "1", "2"

TCP = {
    "sndbuf": "32KiB",
    "rcvbuf": "32KiB",
    "window_scaling": False,
    "sack": True,
    "timestamps": True,
}


def geo_with_errors(snaplen: int) -> dict[str, Any]:
    """Seed 000's GEO hop with bit errors: fast retransmits, SACK and timestamp options."""
    return {
        "name": "geo-pcap",
        "duration": "30s",
        "hosts": [{"name": "client", "tcp": TCP}, {"name": "server", "tcp": TCP}],
        "links": [{"rate": "2.048Mbps", "delay": "275ms", "ber": 3e-6}],
        "trace": {"pcap": ["links.0"], "snaplen": snaplen},
    }


def tshark_rows(path: Path) -> list[dict[str, str]]:
    tshark = shutil.which("tshark")
    assert tshark, "tshark is not installed: run scripts/setup as root, or apt-get install tshark"
    command = [tshark, "-r", str(path), "-n", "-T", "fields", "-E", "occurrence=a"]
    command += ["-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"]
    for name in FIELDS:
        command += ["-e", name]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return [dict(zip(FIELDS, line.split("\t"), strict=True)) for line in out.splitlines()]


def warnings(path: Path) -> set[str]:
    """The summaries of tshark's expert infos at warning level or above."""
    command = [str(shutil.which("tshark")), "-r", str(path), "-n", "-q", "-z", "expert,warn"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return {
        line.split(None, 3)[3]
        for line in out.splitlines()
        if line.strip()[:1].isdigit() and len(line.split(None, 3)) == 4
    }


# The one warning a correct capture may carry: the sender filled the window the receiver
# offered, which a window-limited flow does (a window growing from the linux profile's
# initial 10 segments fills it exactly).
WINDOW_FULL = "TCP window specified by the receiver is now completely full"


def retransmitted(rows: list[dict[str, str]]) -> list[int]:
    """Frames whose payload starts below the highest sequence sent before them: the
    simulator's own definition of a retransmission (seq < snd_max)."""
    frames, highest = [], 0
    for number, row in enumerate(rows):
        length = int(row["tcp.len"])
        if row["ip.src"] != SENDER or length == 0:
            continue
        seq = int(row["tcp.seq"])
        if seq < highest:
            frames.append(number)
        highest = max(highest, seq + length)
    return frames


@pytest.mark.parametrize("snaplen", [128, 65535])
def test_tshark_counts_what_the_simulator_counted(snaplen: int, tmp_path: Path) -> None:
    result = tcplab.run(geo_with_errors(snaplen))
    assert list(result.captures) == ["links.0"]
    result.save(tmp_path)
    rows = tshark_rows(tmp_path / "links.0.pcap")

    # Dissected whole: nothing malformed, no warning or error but a full window, IPv4
    # checksums right, TCP checksums right wherever the whole segment was kept.
    assert not [row for row in rows if row["_ws.malformed"]]
    assert warnings(tmp_path / "links.0.pcap") <= {WINDOW_FULL}
    assert {row["ip.checksum.status"] for row in rows} == {GOOD}
    for row in rows:
        whole = row["frame.len"] == row["frame.cap_len"]
        assert row["tcp.checksum.status"] == (GOOD if whole else UNVERIFIED)
        assert int(row["frame.cap_len"]) == min(snaplen, int(row["frame.len"]))

    # Both directions, every frame that went onto the wire (error losses included).
    forward, reverse = result.links
    assert sum(row["ip.src"] == SENDER for row in rows) == forward["packets"]
    assert sum(row["ip.src"] == RECEIVER for row in rows) == reverse["packets"]
    # Every data segment the sender sent; none was dropped before the wire.
    assert forward["drops_queue"] == 0 and forward["drops_error"] > 0
    data = [row for row in rows if row["ip.src"] == SENDER and int(row["tcp.len"]) > 0]
    assert len(data) == result.summary["segments_sent"]

    # Retransmissions: tshark's analysis, the set derived from the sequence numbers, and the
    # simulator's counter agree. tshark calls a resent segment out-of-order instead when it
    # follows the highest one closely (within the initial RTT it measured, else 3 ms); here
    # the capture is at the sender's own 2 Mb/s link, where frames are 5.9 ms apart.
    flagged = [number for number, row in enumerate(rows) if row["tcp.analysis.retransmission"]]
    assert flagged == retransmitted(rows)
    assert len(flagged) == result.summary["retransmits"] > 0


def test_a_capture_names_an_existing_link() -> None:
    spec = geo_with_errors(128)
    spec["trace"] = {"pcap": ["links.0.forward", "links.1", "links.0.forward", "link.0"]}
    with pytest.raises(SpecError) as raised:
        validate_spec(spec)
    assert raised.value.problems == [
        "trace.pcap.1: there is no link 1; the path has 1",
        "trace.pcap.2: links.0.forward is listed twice",
        "trace.pcap.3: 'link.0' is neither a link path (links.N, links.N.forward,"
        " links.N.reverse) nor a host; hosts: client, server",
    ]
    spec["trace"]["pcap"] = ["links.0.both", "client", "client", "-x"]
    with pytest.raises(SpecError) as raised:
        validate_spec(spec)
    assert raised.value.problems == [
        "trace.pcap.0: 'links.0.both' is not a link path; write links.N for both directions"
        " of link N, or links.N.forward or links.N.reverse for one",
        "trace.pcap.3: '-x' is neither a link path (links.N, links.N.forward, links.N.reverse)"
        " nor a host's name",
    ]
    spec["trace"]["pcap"] = ["client", "client"]
    with pytest.raises(SpecError) as raised:
        validate_spec(spec)
    assert raised.value.problems == ["trace.pcap.1: client is listed twice"]


def test_captures_come_from_the_sim_backend_only() -> None:
    with pytest.raises(
        Unsupported, match="trace.pcap: packet captures come from the sim"
    ) as raised:
        tcplab.run({**geo_with_errors(128), "backend": "model"})
    assert (raised.value.backend, raised.value.supported_by) == ("model", ("sim",))


def test_a_sweep_refuses_captures(tmp_path: Path) -> None:
    spec = {**geo_with_errors(128), "sweep": {"seed": [1, 2]}}
    with pytest.raises(SpecError, match="trace.pcap: a sweep's results store keeps no"):
        sweeps.plan_sweep(spec, out=tmp_path)


def test_one_direction_and_repetitions(tmp_path: Path) -> None:
    spec = {**geo_with_errors(128), "duration": "2s", "repetitions": 2}
    spec["trace"] = {"pcap": ["links.0.reverse"]}
    result = tcplab.run(spec)
    assert sorted(result.captures) == ["links.0.reverse.rep0", "links.0.reverse.rep1"]
    result.save(tmp_path)
    rows = tshark_rows(tmp_path / "links.0.reverse.rep1.pcap")
    assert rows and {row["ip.src"] for row in rows} == {RECEIVER}
    assert len(rows) == result.runs[1].links[1]["packets"]


def test_the_core_refuses_to_drop_captures() -> None:
    plan = resolve(validate_spec(geo_with_errors(128)))
    with pytest.raises(ValueError, match="trace.pcap: run_json returns no packet captures"):
        _sim.run(json.dumps(topology_form(plan)))


def tshark_count(path: Path, display_filter: str) -> int:
    command = [str(shutil.which("tshark")), "-r", str(path), "-n", "-Y", display_filter]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return len(out.splitlines())


def ack_rtts(path: Path) -> list[float]:
    command = [str(shutil.which("tshark")), "-r", str(path), "-n", "-Y", "tcp.analysis.ack_rtt"]
    command += ["-T", "fields", "-e", "tcp.analysis.ack_rtt"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return [float(value) for value in out.split()]


def nt4_geo(ber: float, rcvbuf: str, captures: list[str]) -> dict[str, Any]:
    """Seed 000's stack (Windows NT 4.0: Reno, no SACK) on its GEO hop."""
    tcp = {"profile": "windows-nt4", "sndbuf": "32KiB", "rcvbuf": rcvbuf}
    return {
        "name": "geo-host-capture",
        "duration": "60s",
        "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
        "links": [{"rate": "2.048Mbps", "delay": "275ms", "ber": ber}],
        "trace": {"pcap": ["client", "links.0"]},
    }


def test_a_capture_at_the_sender_reads_as_the_simulator_counted(tmp_path: Path) -> None:
    """At the sending host's interface tshark sees what the sender saw: dup ACKs arriving
    before the retransmission they trigger (its fast-retransmission rule: 2 or more dup
    ACKs, then the segment at the ACK point within 20 ms) and each ACK a full RTT after its
    segment left. A capture of the link, whose ACKs are taken as they leave the receiver,
    sees neither."""
    result = tcplab.run(nt4_geo(3e-6, "32KiB", ["client", "links.0"]))
    result.save(tmp_path)
    host, link = tmp_path / "client.pcap", tmp_path / "links.0.pcap"
    summary, flow = result.summary, result.flows[0]
    assert summary["fast_retransmits"] >= 5 and summary["timeouts"] >= 1
    assert tshark_count(host, "tcp.analysis.fast_retransmission") == summary["fast_retransmits"]
    assert tshark_count(host, "tcp.analysis.retransmission") == summary["retransmits"]
    assert tshark_count(link, "tcp.analysis.fast_retransmission") == 0
    # tshark's ACK RTT: from a segment leaving the host to the ACK reaching it. Its least
    # is the simulator's min RTT (the first segment of a burst waits in no queue).
    assert min(ack_rtts(host)) == pytest.approx(flow["min_rtt_s"], abs=1e-6)
    assert min(ack_rtts(link)) == pytest.approx(flow["min_rtt_s"] / 2, abs=1e-3)
    # Reno enters recovery on the third duplicate ACK; every ACK the host gets, the link
    # capture saw leave the receiver (bit errors may destroy some on the way).
    dupacks = tshark_count(host, "tcp.analysis.duplicate_ack")
    lost_acks = result.links[1]["drops_error"]
    assert dupacks >= 3 * summary["fast_retransmits"]
    left = tshark_count(link, "tcp.analysis.duplicate_ack && ip.src == 10.0.0.2")
    assert left - lost_acks <= dupacks <= left
    # Both directions, every frame: what the client sent and what reached it.
    assert tshark_count(host, "ip.src == 10.0.0.1") == result.links[0]["packets"]
    # ...less those still on the way when the run ended, sent in its last 275 ms.
    in_flight = tshark_count(link, "ip.src == 10.0.0.2 && frame.time_relative > 59.725")
    received = tshark_count(host, "ip.src == 10.0.0.2")
    assert received == result.links[1]["packets"] - lost_acks - in_flight


@pytest.mark.parametrize(("sndbuf", "rcvbuf", "limited"), [("32KiB", "21900B", True),
                                                       ("16KiB", "64KiB", False)])
def test_window_full_at_the_sender_when_the_receive_window_limits(
    sndbuf: str, rcvbuf: str, limited: bool, tmp_path: Path
) -> None:
    """NT4 offers its receive buffer as the window. With 15 whole segments of it, the
    simulator's sender spends most samples with the window exactly full, each ACK letting it
    send up to the edge again, and tshark flags those segments window-full; with a 16 KiB
    send buffer under a 64 KiB window the sender never reaches the edge, and tshark flags
    none."""
    spec = nt4_geo(0.0, rcvbuf, ["client"])
    spec["hosts"][0]["tcp"]["sndbuf"] = sndbuf
    result = tcplab.run({**spec, "duration": "30s"})
    result.save(tmp_path)
    full = tshark_count(tmp_path / "client.pcap", "tcp.analysis.window_full")
    data = tshark_count(tmp_path / "client.pcap", "tcp.len > 0")
    trace = result.trace_frame()
    trace = trace[trace.rwnd_bytes > 0]  # from the first window offered
    at_edge = float((trace.flight_bytes == trace.rwnd_bytes).mean())
    if limited:
        assert at_edge > 0.5
        # A delayed ACK per two segments opens the window by two: the second fills it.
        assert full >= 0.4 * data
    else:
        assert (trace.flight_bytes < trace.rwnd_bytes).all()
        assert full == 0
