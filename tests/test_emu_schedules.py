"""The real Linux stack over an emulated link that changes over the run: the emulator runs
the simulator's schedule code (crates/sim/src/net/schedule.rs), started at the moment the
data connection opens, so per-second goodput must match the simulator's. Needs root (CI
has it), TUN devices and network namespaces; run under `flock /work/emu.lock` on a shared
machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_schedules import TRACE, scenario, trace_goodputs

import tcplab

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# 10 → 2 → 10 Mb/s, a second of each and a second more at 10 for the window to refill.
STEPS = [{"at": "1s", "rate": "2Mbps"}, {"at": "2s", "rate": "10Mbps"}]


def goodputs(spec: dict[str, Any], backend: str) -> list[float]:
    return tcplab.run(spec, backend=backend).interval_goodputs()


def test_emu_follows_a_rate_that_steps_10_2_10_mbps_as_the_simulator_does() -> None:
    spec = {**scenario(schedule=STEPS), "duration": "4s"}
    sim, emu = goodputs(spec, "sim"), goodputs(spec, "emu")
    assert len(emu) == len(sim) == 4
    # Every second, the first too: its handshake and slow start take the same few round
    # trips of 20 ms on both.
    assert emu == pytest.approx(sim, rel=0.05), (sim, emu)
    assert sim[1] < 0.25 * sim[0]


def test_a_trace_drives_emu_and_sim_to_the_same_goodput_and_its_capacity() -> None:
    spec = {**scenario(trace=str(TRACE)), "duration": "4s"}
    sim, emu = goodputs(spec, "sim"), goodputs(spec, "emu")
    assert emu == pytest.approx(sim, rel=0.05), (sim, emu)
    # After the first second's handshake and slow start, what the trace delivers.
    assert emu[1:] == pytest.approx(trace_goodputs(4)[1:], rel=0.05), emu


def test_emu_and_sim_dip_at_the_same_leo_handovers() -> None:
    """examples/leo-handover.toml, 8 s long with a handover every 3 s."""
    spec = tcplab.load_spec(EXAMPLES / "leo-handover.toml").model_dump(mode="json")
    spec["duration"] = "8s"
    spec["links"][0]["leo"]["handover_interval"] = "3s"
    sim, emu = goodputs(spec, "sim"), goodputs(spec, "emu")
    assert emu == pytest.approx(sim, rel=0.05), (sim, emu)
    for run in (sim, emu):
        # The seconds that hold a handover (3 s, 6 s) lose its outage and queue overflow.
        assert run[3] < 0.97 * run[2] and run[6] < 0.97 * run[5], run


@pytest.mark.parametrize("sack", [True, False])
def test_a_delay_spike_s_spurious_timeout_is_undone_in_sim_and_emu(sack: bool) -> None:
    """examples/delay-spike.toml: 50 ms of a 600 ms delay stop the ACK clock past the
    retransmission timer. Linux (tcp_frto = 2, timestamps) finds the timeout spurious on
    the delayed segments' ACKs and undoes it; so does the simulator's linux profile, and
    without undo and F-RTO it resends the whole window. Without SACK Linux keeps the same
    states, counting duplicate ACKs as SACKed segments (tcp_add_reno_sack), and so does
    the simulator (before, its NewReno fallback resent hundreds of segments here).

    The spike starts at 3.3 s, not the example's 3 s: without SACK a fast retransmission
    leaves the bottleneck at 2.990-2.999 s, and a spike that holds it makes the timeout
    one in Recovery, which Linux does not undo (no F-RTO there, and the first ACK echoes
    that retransmission's own timestamp); so does the simulator with the spike at 2.91-2.992 s.
    From 3.1 s to 3.675 s both variants undo it in the simulator."""
    spec = tcplab.load_spec(EXAMPLES / "delay-spike.toml").model_dump(mode="json")
    spec["duration"] = "5s"
    spec["links"][0]["schedule"] = [
        {"at": "3.3s", "delay": "600ms"},
        {"at": "3.35s", "delay": "20ms"},
    ]
    for host in spec["hosts"]:
        host["tcp"]["sack"] = sack
    runs = {"sim": tcplab.run(spec, backend="sim"), "emu": tcplab.run(spec, backend="emu")}
    for backend, result in runs.items():
        assert result.summary["timeouts"] >= 1, backend
        assert result.summary["retransmits"] < 20, (backend, result.summary["retransmits"])
    assert runs["emu"].summary["goodput_bps"] == pytest.approx(
        runs["sim"].summary["goodput_bps"], rel=0.02
    )
    for host in spec["hosts"]:
        host["tcp"].update(undo=False, frto=False)
    paid = tcplab.run(spec, backend="sim").summary
    assert paid["retransmits"] > 40
    assert paid["goodput_bps"] < 0.98 * runs["sim"].summary["goodput_bps"]
