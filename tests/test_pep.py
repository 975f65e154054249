"""The split-connection PEP (docs/models/pep.md) through the scenario: its fields and their
errors, its plan, and on seed 004's path (issue 7, item 4) the end-to-end goodput with and
without it on the simulator."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import tcplab
from tcplab.backends import capabilities
from tcplab.errors import BackendError, SpecError, Unsupported
from tcplab.experiments.store import Store
from tcplab.plan import resolve
from tcplab.spec import validate_spec

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "satellite-pep.toml"


def example() -> dict[str, Any]:
    return copy.deepcopy(tcplab.load_spec(EXAMPLE).model_dump(mode="json", exclude_unset=True))


def without_pep(scenario: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in scenario.items() if key != "peps"}


def problems(data: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as error:
        validate_spec(data)
    return str(error.value)


def topology(**pep: Any) -> dict[str, Any]:
    """client — gw — server as the topology form, gw a PEP."""
    link = {"rate": "10Mbps", "delay": "10ms"}
    return {
        "hosts": [{"name": "client"}, {"name": "server"}],
        "links": [
            {**link, "between": ["client", "gw"]},
            {**link, "between": ["gw", "server"]},
        ],
        "peps": [{"name": "gw", **pep}],
        "flows": [{"src": "client", "dst": "server"}],
    }


def test_the_path_form_places_the_pep_after_a_link() -> None:
    plan = resolve(tcplab.load_spec(EXAMPLE))
    (pep,) = plan["peps"]
    # The router after link 0 is node 2 (docs/internals/plan-and-result.md).
    assert (pep["name"], pep["node"], pep["buffer"]) == ("gateway", 2, 4 * 2**20)
    assert (pep["client_side"]["cc"], pep["client_side"]["initial_window"]) == ("reno", 10)
    assert (pep["server_side"]["cc"], pep["server_side"]["initial_window"]) == ("cubic", 2560)
    assert resolve(validate_spec(without_pep(example())))["peps"] == []


def test_the_topology_form_makes_the_pep_a_router_node() -> None:
    plan = resolve(validate_spec(topology(tcp_server_side={"cc": "hybla"})))
    assert plan["routers"] == [{"name": "gw", "switch": None}]
    assert [link["nodes"] for link in plan["links"]] == [[0, 2], [2, 1]]
    assert plan["peps"][0]["node"] == 2
    assert plan["peps"][0]["server_side"]["cc"] == "hybla"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"after_link": None}, "peps.0.after_link: required without [[flows]]"),
        ({"after_link": 1}, "peps.0.after_link: 1 has no link after it"),
        ({"buffer": "0B"}, 'peps.0.buffer: "0B" is zero'),
        ({"name": "client"}, "peps.0.name: 'client' is already a host, router or PEP"),
        (
            {"tcp_server_side": {"cc": "vegas"}},
            'peps.0.tcp_server_side.cc: "vegas" is not accepted',
        ),
        ({"relay": "1MiB"}, "peps.0.relay: unknown field"),
    ],
)
def test_path_form_errors_name_the_field(change: dict[str, Any], expected: str) -> None:
    scenario = example()
    scenario["peps"][0].update(change)
    scenario["peps"][0] = {k: v for k, v in scenario["peps"][0].items() if v is not None}
    assert expected in problems(scenario)


def test_two_peps_cannot_share_a_position_and_rr_is_refused() -> None:
    scenario = example()
    scenario["links"].append(scenario["links"][1])
    scenario["peps"].append({**scenario["peps"][0], "name": "second"})
    assert "peps.1.after_link: peps.0 already sits after link 0" in problems(scenario)
    scenario = example()
    scenario["app"] = {"kind": "rr"}
    assert "app.kind: a PEP relays one-way transfers" in problems(scenario)


def test_topology_form_errors_name_the_field() -> None:
    assert "peps.0.after_link: only without [[flows]]" in problems(topology(after_link=0))
    unnamed = topology()
    unnamed["links"][1]["between"] = ["client", "server"]
    unnamed["links"][0]["between"] = ["client", "server"]
    assert "peps.0.name: no link's `between` names 'gw'" in problems(unnamed)


def test_the_model_backend_refuses_a_pep() -> None:
    scenario = example()
    scenario["backend"] = "model"
    with pytest.raises(BackendError, match="peps: the model backend models one end-to-end"):
        tcplab.run(scenario)


def test_a_large_satellite_window_behind_the_pep_beats_the_unsplit_connection(
    tmp_path: Path,
) -> None:
    # Issue 7, item 4, on the simulator for the paper's 10 s: the unsplit connection runs
    # the client's Reno with 10 segments over 610 ms; the PEP's satellite side runs CUBIC
    # with 2560 and is held only by the 3 MiB receive window (about 5 MiB/s over 600 ms).
    split = tcplab.run(example())
    unsplit = tcplab.run(without_pep(example()))
    assert split.summary["bytes_delivered"] > 1.5 * unsplit.summary["bytes_delivered"]
    assert split.flows[0]["src"] == "client" and split.flows[0]["dst"] == "server"
    assert [row["segment"] for row in split.segments] == [0, 1]
    assert split.segments[1]["bytes_delivered"] == split.summary["bytes_delivered"]
    assert split.segments[0]["relay_peak_bytes"] <= 4 * 2**20
    assert not unsplit.segments and "segments" not in unsplit.to_dict()
    # The segment rows survive the store; a run without them has no segments file.
    store = Store(tmp_path)
    for i, result in enumerate((split, unsplit)):
        keys = {"run_id": f"r{i}", "point_id": f"p{i}", "repetition": 0, "seed": 1}
        meta = {**keys, "spec_hash": "h", "backend": "sim", "tcplab_version": "0", "params": {}}
        store.write_run(meta, result.to_dict())
    segments = store.segments()
    assert list(segments["run_id"]) == ["r0", "r0"]
    assert list(segments["dst"]) == ["gateway", "server"]


def test_the_emu_backend_refuses_sides_that_one_namespace_cannot_hold() -> None:
    # A PEP's two sides share its namespace's tcp_sack, tcp_timestamps and
    # tcp_window_scaling sysctls.
    scenario = example()
    scenario["peps"][0]["tcp_server_side"]["sack"] = False
    with pytest.raises(Unsupported, match="peps.0.server_side.sack: a PEP's namespace has one"):
        capabilities.check(resolve(validate_spec(scenario)), "emu")
    scenario = example()
    scenario["peps"][0]["tcp_server_side"]["cc"] = "tahoe"
    with pytest.raises(Unsupported, match="peps.0.server_side.cc: Linux has no 'tahoe'"):
        capabilities.check(resolve(validate_spec(scenario)), "emu")


def test_a_flow_through_two_peps_runs_as_three_connections() -> None:
    link = {"rate": "10Mbps", "delay": "10ms"}
    pep = {"buffer": "64KiB", "tcp_server_side": {"initial_window": 40}}
    result = tcplab.run(
        {
            "duration": "60s",
            "links": [link, link, link],
            "peps": [{"name": "a", "after_link": 0, **pep}, {"name": "b", "after_link": 1, **pep}],
            "app": {"kind": "file", "bytes": "1MB"},
        }
    )
    assert result.summary["completed"]
    assert [(row["src"], row["dst"]) for row in result.segments] == [
        ("client", "a"),
        ("a", "b"),
        ("b", "server"),
    ]
    # Every connection carried the whole file; only the last one's count is the flow's.
    assert {row["bytes_delivered"] for row in result.segments} == {10**6}
    assert result.summary["bytes_delivered"] == 10**6
    assert [row["relay_peak_bytes"] is None for row in result.segments] == [False, False, True]
    # Each connection's sender is traced, every trace interval, its count of bytes
    # acknowledged rising towards the file's size (the run ends between two samples).
    trace = result.trace_frame()
    assert sorted(trace.groupby("segment")["t_s"].count().index) == [0, 1, 2]
    assert len(set(trace.groupby("segment")["t_s"].count())) == 1
    for _, connection in trace.groupby("segment"):
        assert connection["acked_bytes"].is_monotonic_increasing
        assert 0.9 * 10**6 < connection["acked_bytes"].max() <= 10**6


def test_in_the_topology_form_only_the_flows_that_cross_the_pep_are_split() -> None:
    scenario = topology()
    scenario["hosts"].append({"name": "local"})
    scenario["links"].append({"rate": "10Mbps", "delay": "1ms", "between": ["client", "local"]})
    scenario["flows"].append({"src": "client", "dst": "local"})
    scenario["duration"] = "5s"
    result = tcplab.run(scenario)
    assert [(row["flow"], row["src"], row["dst"]) for row in result.flows] == [
        (0, "client", "server"),
        (1, "client", "local"),
    ]
    assert {row["flow"] for row in result.segments} == {0}
    assert [row["dst"] for row in result.segments] == ["gw", "server"]
    # An rr flow through the PEP is refused by the simulator, on the flow's field.
    scenario["flows"][0]["app"] = {"kind": "rr"}
    with pytest.raises(BackendError, match="flows.0.app.kind: a PEP relays one-way"):
        tcplab.run(scenario)
