"""ABR over the simulated ATM network (docs/models/abr.md): TCP connections on ABR VCs
through a switch with ERICA or binary (EFCI) feedback, beside plain UBR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tcplab
from tcplab.backends import get_backend
from tcplab.errors import BackendError, SpecError
from tcplab.plan import resolve
from tcplab.spec import validate_spec

VCS = 5
RATE = "25Mbps"  # ATM25's rate without its command octet: 58 962 cells/s
CELLS_S = 25e6 / 424
BUFFER = 1000


def scenario(switch: dict[str, Any], vcs: int = VCS) -> dict[str, Any]:
    """`vcs` TCP connections, each on its own access link into switch 1, a 25 Mb/s trunk of
    200 km (1 ms) to switch 2 and the destinations; windows far above the trunk's share."""
    tcp = {"cc": "reno", "sndbuf": "256KiB", "rcvbuf": "256KiB", "min_rto": "200ms"}
    access = {"kind": "atm", "rate": RATE, "delay": "10us"}
    links = [{"between": [f"s{i}", "sw1"], **access} for i in range(vcs)]
    links.append({"between": ["sw1", "sw2"], "kind": "atm", "rate": RATE, "delay": "1ms"})
    links += [{"between": ["sw2", f"d{i}"], **access} for i in range(vcs)]
    return {
        "duration": "2s",
        "trace_interval": "10ms",
        "hosts": [{"name": f"{e}{i}", "tcp": tcp} for e in ("s", "d") for i in range(vcs)],
        "routers": [
            {"name": "sw1", "switch": {"buffer_cells": BUFFER, **switch}},
            {"name": "sw2", "switch": {"buffer_cells": BUFFER}},
        ],
        "links": links,
        "flows": [{"src": f"s{i}", "dst": f"d{i}"} for i in range(vcs)],
        "app": {"kind": "bulk"},
    }


ERICA = {"feedback": "erica", "erica": {"measure_ccr": True}}
EFCI = {"feedback": "efci", "efci": {"mark": "relative-rate"}}
SCHEMES = {"ubr": {}, "efci": EFCI, "erica": ERICA}
# Paths of 3, 5 and 8 connections over a trunk of 1 ms and of 3 ms.
CASES = [(vcs, delay) for vcs in (3, 5, 8) for delay in ("1ms", "3ms")]


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, int, str], tcplab.RunResult]:
    out = {}
    for vcs, delay in CASES:
        for name, switch in SCHEMES.items():
            spec = scenario(switch, vcs)
            spec["links"][vcs]["delay"] = delay
            out[(name, vcs, delay)] = tcplab.run(spec)
    return out


def test_erica_shares_the_trunk_equally_without_losing_a_cell(runs: dict) -> None:
    for vcs, delay in CASES:
        summary = runs[("erica", vcs, delay)].summary
        assert summary["fairness"] >= 0.98, (vcs, delay)
        assert summary["atm"]["cells_dropped"] == 0, (vcs, delay)
        # ERICA holds the ABR input between U and (1 + delta) x U of the trunk, and one
        # cell in Nrm = 32 is an RM cell: efficiency in 0.9 x 31/32 x [1, 1.1], less the
        # start-up.
        assert 0.95 * 0.9 * 31 / 32 < summary["atm"]["efficiency"] <= 1.1 * 0.9 * 31 / 32


def test_each_erica_vc_ends_near_its_fair_share_of_the_target(runs: dict) -> None:
    # ERICA's fair share: U x the trunk's cell rate / VCs; the sources' ACRs sit in
    # [FairShare, (1 + delta) x FairShare] once the load settles (docs/models/abr.md).
    result = runs[("erica", VCS, "1ms")]
    acr = result.abr_acr_frame()
    last = acr[(acr.t_s == acr.t_s.max()) & (acr.direction == "forward")]
    assert len(last) == VCS
    share = 0.9 * CELLS_S / VCS
    assert last.acr_cells_s.between(share * 0.999, share * 1.1).all()
    # Both directions of every connection are ABR VCs.
    assert set(acr.direction) == {"forward", "reverse"}
    assert result.summary["atm"]["rm_cells"] > 0


def test_ubr_has_no_abr_vcs(runs: dict) -> None:
    result = runs[("ubr", VCS, "1ms")]
    assert result.abr_acr == {}
    assert result.summary["atm"]["rm_cells"] == 0


def test_efci_sits_between_ubr_and_erica_in_fairness(runs: dict) -> None:
    # Binary feedback slows the sources that fill the queue, but one bit per RM cell,
    # acting a round trip late, cannot hold equal rates as ERICA's explicit rate does:
    # over the six paths, EFCI's mean fairness lies between UBR's and ERICA's.
    mean = {
        name: sum(runs[(name, *case)].summary["fairness"] for case in CASES) / len(CASES)
        for name in SCHEMES
    }
    assert mean["ubr"] < mean["efci"] < mean["erica"], mean


def test_feedback_and_abr_parameters_resolve_to_the_plan() -> None:
    spec = scenario({"feedback": "efci"})
    spec["abr"] = {"pcr": "21.2Mbps", "rif": 1 / 8, "rdf": 1 / 512, "frtt": "4ms"}
    plan = resolve(validate_spec(spec))
    # Defaults: 0.8 and 0.6 of the buffer (models.md §3.5), EFCI on data cells.
    assert plan["routers"][0]["switch"]["feedback"] == {
        "kind": "efci",
        "mark": "efci",
        "q_hi_cells": 800,
        "q_lo_cells": 600,
        "q_ni_cells": None,
    }
    assert plan["routers"][1]["switch"]["feedback"] == {"kind": "none"}
    # Rates are bit rates of 424-bit cells; everything else is TM 4.0's default.
    assert plan["abr"] == {
        "pcr_cells_s": 50_000.0,
        "mcr_cells_s": 0.0,
        "tcr_cells_s": 10.0,
        "rif": 0.125,
        "rdf": 1 / 512,
        "cdf": 1 / 16,
        "nrm": 32,
        "mrm": 2,
        "trm_ns": 100_000_000,
        "adtf_ns": 500_000_000,
        "tbe_cells": 16_777_215,
        "frtt_ns": 4_000_000,
        "icr_cells_s": None,
    }
    erica = resolve(validate_spec(scenario(ERICA)))
    assert erica["routers"][0]["switch"]["feedback"] == {
        "kind": "erica",
        "target_utilization": 0.9,
        "delta": 0.1,
        "interval_ns": 1_000_000,
        "fair_share": "active",
        "measure_ccr": True,
        "interval_cells": None,
        "plus": None,
    }
    # A switch with feedback makes its connections ABR: TM 4.0's parameters come along.
    assert erica["abr"]["nrm"] == 32 and erica["abr"]["pcr_cells_s"] is None
    # Without feedback and without [abr], the plan has no ABR at all; "none" is no feedback.
    plan = resolve(validate_spec(scenario({"feedback": "none"})))
    assert plan["abr"] is None and plan["routers"][0]["switch"]["feedback"] == {"kind": "none"}


def test_the_simulator_refuses_feedback_without_abr_parameters() -> None:
    plan = resolve(validate_spec(scenario(ERICA)))
    plan["abr"] = None
    with pytest.raises(BackendError, match="abr: routers.0.switch gives ABR feedback"):
        get_backend("sim").run(plan)


def test_feedback_settings_are_checked_against_the_switch() -> None:
    low_above_high = {"feedback": "efci", "efci": {"high": 100, "low": 200}}
    with pytest.raises(SpecError, match="efci.low"):
        tcplab.run(scenario(low_above_high))
    beyond = {"feedback": "efci", "efci": {"high": 2 * BUFFER}}
    with pytest.raises(SpecError, match="exceed buffer_cells"):
        tcplab.run(scenario(beyond))
    with pytest.raises(SpecError, match="target_utilization"):
        tcplab.run(scenario({"feedback": "erica", "erica": {"target_utilization": 1.5}}))
    with pytest.raises(SpecError, match="no_increase"):
        tcplab.run(scenario({"feedback": "efci", "efci": {"no_increase": 10}}))
    spec = scenario(ERICA)
    spec["abr"] = {"pcr": "10Mbps", "icr": "20Mbps"}
    with pytest.raises(SpecError, match="icr must not exceed pcr"):
        tcplab.run(spec)
    packets = {"links": [{"rate": "10Mbps", "delay": "1ms"}], "abr": {}}
    with pytest.raises(SpecError, match="abr: ABR VCs run over ATM links"):
        tcplab.run(packets)


def test_the_example_runs_its_vcs_at_one_rate_without_loss() -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "atm-abr.toml"
    summary = tcplab.run(example).summary
    assert summary["fairness"] > 0.999
    assert summary["atm"]["cells_dropped"] == 0
