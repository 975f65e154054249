"""The Python backends' results have the simulator's columns (tcplab.backends.rows against
crates/sim/src/result.rs, as tcplab.shared.RESULT_COLUMNS exports them)."""

from __future__ import annotations

from dataclasses import fields

import pytest
from contract import check_result

import tcplab
from tcplab.backends import emu, rows
from tcplab.backends.rows import Counts, FlowRow, HostRow, LinkRow, SegmentRow, SenderState, Summary
from tcplab.shared import RESULT_COLUMNS

# Summary fields that are not columns of every result: `rr` only with request/response
# flows (as in the simulator), `backend` the backend's own part under its name.
SUMMARY_EXTRAS = {"rr", "backend"}


def names(row: type) -> set[str]:
    columns = {f.name for f in fields(row)}
    if row is FlowRow:  # its sender's columns in a part of their own
        return columns - {"sender"} | names(SenderState)
    if row is Summary:  # its counters in a part of their own
        return columns - {"counts"} | names(Counts)
    return columns


def test_each_row_has_exactly_the_cores_columns() -> None:
    assert names(FlowRow) == set(RESULT_COLUMNS["flows"])
    assert {"segment", "relay_peak_bytes"} | names(FlowRow) == set(RESULT_COLUMNS["segments"])
    assert names(HostRow) == set(RESULT_COLUMNS["hosts"])
    assert names(LinkRow) == set(RESULT_COLUMNS["links"])
    assert names(Summary) - SUMMARY_EXTRAS == set(RESULT_COLUMNS["summary"])
    assert tuple(rows.empty_trace()) == RESULT_COLUMNS["trace"]


def test_rows_come_out_in_the_order_result_rs_declares() -> None:
    flow = FlowRow(0, "a", "b", 1.0, 2, completed_s=3.0)
    assert tuple(flow.to_dict()) == RESULT_COLUMNS["flows"]
    segment = SegmentRow(1, None, flow).to_dict()
    assert tuple(segment) == RESULT_COLUMNS["segments"]
    assert tuple(LinkRow(0, "forward", 0.5).to_dict()) == RESULT_COLUMNS["links"]
    summary = Summary(1.0, 1.0, 1, None, True, 0, rows.UNKNOWN_LIMITS, None, backend=("x", {}))
    assert tuple(summary.to_dict()) == (*RESULT_COLUMNS["summary"], "x")


@pytest.mark.parametrize("app", [{"kind": "bulk"}, {"kind": "file", "bytes": "100kB"}])
def test_the_model_and_the_simulator_give_the_same_columns(app: dict) -> None:
    scenario = {"duration": "2s", "links": [{"rate": "10Mbps", "delay": "10ms"}], "app": app}
    sim = tcplab.run(scenario)
    closed_form = tcplab.run(scenario, backend="model")
    assert set(closed_form.summary) - {"model"} == set(sim.summary)
    for part in ("flows", "hosts", "links"):
        got = getattr(closed_form, part)
        assert [set(row) for row in got] == [set(row) for row in getattr(sim, part)], part
    assert set(closed_form.trace) == set(sim.trace)
    assert set(closed_form.series) == set(sim.series)


def test_an_emu_result_through_a_pep_has_the_cores_rows() -> None:
    # A measurement's result (no kernel needed: the tool's and the emulator's reports as
    # they come back), through one PEP whose relay reports its onward socket.
    plan = {
        "interval_ns": 1_000_000_000,
        "hosts": [{"name": "client"}, {"name": "server"}],
        "peps": [{"name": "gw", "node": 2}],
    }
    info = {"rtt": 20_000, "min_rtt": 10_000, "snd_cwnd": 10, "snd_mss": 1448}
    pair = {
        "to_server_bytes": 5000,
        "peak_bytes": 700,
        "opened_tcp_info": {**info, "total_retrans": 2},
        "accepted_options": {},
        "opened_options": {},
    }
    measurement = emu.Measurement(
        elapsed_s=1.0,
        bytes_written=5000,
        completed=True,
        emu={"cpu_percent_sender": 50.0, "cpu_percent_receiver": 25.0},
        counts=Counts(retransmits=1),
    )
    client = emu.sender_state(info, retransmits=1, timeouts=0, persist_probes=0)
    emulator = {
        "directions": [{"packets_in": 7}, {"packets_in": 3}],
        "links": [
            {
                "link": 0,
                "direction": d,
                "packets": 1,
                "wire_bytes": 2,
                "drops_queue": 0,
                "drops_error": 0,
                "max_queue_bytes": 3,
                "busy_ns": 500_000_000,
            }
            for d in ("forward", "reverse")
        ],  # fmt: skip
    }
    result = measurement.result(
        plan,
        emulator,
        flows=[measurement.flow(plan, 0, client, 4000)],
        series=rows.series([1.0], [4000]),
        trace=rows.empty_trace(),
        relays=[{"pairs": [pair]}],
    )
    for part, columns in (("flows", "flows"), ("hosts", "hosts"), ("links", "links")):
        assert [tuple(row) for row in result[part]] == [RESULT_COLUMNS[columns]] * len(
            result[part]
        ), part
    assert [tuple(row) for row in result["segments"]] == [RESULT_COLUMNS["segments"]] * 2
    assert set(result["summary"]) == {*RESULT_COLUMNS["summary"], "emu"}
    check_result(result, "emu")
    # The flow's retransmissions add its connections'; the busiest host's CPU is the summary's.
    assert result["flows"][0]["retransmits"] == 3
    assert result["summary"]["events"] == 10
    assert result["summary"]["cpu_utilisation"] == 0.5
    assert result["summary"]["goodput_per_cpu_bps"] == 8 * 4000 / 0.5
    assert [row["relay_peak_bytes"] for row in result["segments"]] == [700, None]
    assert result["summary"]["emu"]["peps"] == [
        {"name": "gw", "client_side": {}, "server_side": {}}
    ]


def test_parallel_emu_connections_give_the_simulators_fairness() -> None:
    # Jain's index (Σx)² / (n Σx²) of the flows' goodputs: 4000 and 2000 bytes in 1 s, 0.9.
    plan = {"hosts": [{"name": "client"}, {"name": "server"}]}
    measurement = emu.Measurement(1.0, 6000, completed=True, emu={}, counts=Counts())
    flows = [measurement.flow(plan, k, SenderState(), size) for k, size in enumerate((4000, 2000))]
    emulator = {"directions": [], "links": []}
    result = measurement.result(
        plan, emulator, flows, rows.series([1.0], [6000]), rows.empty_trace()
    )
    check_result(result, "emu")
    assert result["summary"]["fairness"] == pytest.approx(0.9)
    assert [row["flow"] for row in result["flows"]] == [0, 1]
    assert result["summary"]["goodput_bps"] == 8 * 6000


def test_the_kernel_s_fast_retransmits_are_its_recoveries_not_its_resent_segments() -> None:
    # tcp_enter_recovery counts TCPSackRecovery (TCPRenoRecovery without SACK) once per
    # episode, as the simulator counts fast_retransmits; TCPFastRetrans counts segments.
    netstat = {"TCPFastRetrans": 10, "TCPSackRecovery": 4, "TCPRenoRecovery": 0}
    assert emu._recoveries(netstat) == 4
    assert emu._recoveries({"TCPRenoRecovery": 2}) == 2
    assert emu._recoveries({"TCPFastRetrans": 3}) is None
