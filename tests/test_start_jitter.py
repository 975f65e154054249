"""app.start_jitter: an app's parallel connections open at seeded draws from [0, jitter),
the one draw of the Rust core (stream flows.<k>.start_jitter), which the simulator opens
its flows at and the emu backend its clients' data connections at."""

from __future__ import annotations

import json
from typing import Any

import pytest

import tcplab
from tcplab import _sim
from tcplab.backends import emu
from tcplab.errors import SpecError
from tcplab.plan import resolve, topology_form
from tcplab.spec import validate_spec

JITTER_NS = 20_000_000
# 10 Mb/s, 10 ms each way: the handshake takes one 20 ms round trip (and the SYN's and
# SYN-ACK's serialization) before a connection has data in flight.
RTT_S = 0.020


def scenario(seed: int = 1, parallel: int = 4, **app: Any) -> dict[str, Any]:
    return {
        "name": "jitter",
        "seed": seed,
        "duration": "100ms",
        "trace_interval": "1ms",
        "links": [{"rate": "10Mbps", "delay": "10ms"}],
        "app": {"kind": "bulk", "parallel": parallel, "start_jitter": "20ms", **app},
    }


def openings(spec: dict[str, Any]) -> list[int]:
    return _sim.flow_openings(json.dumps(topology_form(resolve(validate_spec(spec)))))


def test_each_connection_opens_at_its_own_draw_the_same_for_one_seed() -> None:
    first = openings(scenario(seed=1))
    assert first == openings(scenario(seed=1))
    assert first != openings(scenario(seed=2))
    assert len(set(first)) == 4
    assert all(0 <= at < JITTER_NS for at in first), first


def test_the_simulator_opens_each_connection_at_its_draw() -> None:
    # A connection has data in flight one handshake after it opens: the trace's first
    # sample (every 1 ms) showing some is within a sample and the SYNs' serialization of it.
    spec = scenario(seed=3, parallel=3)
    trace = tcplab.run(spec, backend="sim").trace.to_pandas()
    first_flight = trace[trace.flight_bytes > 0].groupby("flow").t_s.min()
    for flow, opening in enumerate(openings(spec)):
        assert 0 <= first_flight[flow] - RTT_S - opening / 1e9 <= 0.002, (flow, first_flight)


def test_the_flows_carry_the_apps_jitter_and_no_jitter_opens_them_together() -> None:
    flows = topology_form(resolve(validate_spec(scenario())))["flows"]
    assert [(f["start_ns"], f["start_jitter_ns"]) for f in flows] == [(0, JITTER_NS)] * 4
    assert all("start_jitter_ns" not in f["app"] for f in flows)
    together = {**scenario(), "app": {"kind": "bulk", "parallel": 4}}
    assert openings(together) == [0] * 4


def test_the_emu_clients_open_at_the_origin_plus_the_same_draws() -> None:
    plan = resolve(validate_spec(scenario(seed=5)))
    configs = emu.client_configs(plan, {"role": "client"}, 10**12)
    assert [c["start_at_ns"] - 10**12 for c in configs] == openings(scenario(seed=5))
    # Each counts its test from the common origin, as the simulator counts from time 0.
    assert all(c["origin_ns"] == 10**12 and c["role"] == "client" for c in configs)
    # One connection on an unscheduled path has no origin: it opens at once.
    single = resolve(validate_spec({**scenario(), "app": {"kind": "bulk"}}))
    assert emu.client_configs(single, {}, None) == [{"start_at_ns": None, "origin_ns": None}]


@pytest.mark.parametrize(
    ("app", "problem"),
    [
        ({"parallel": None}, "app.start_jitter: only with parallel > 1"),
        ({"parallel": 1}, "app.start_jitter: only with parallel > 1"),
        ({"start_jitter": "-1ms"}, "app.start_jitter: "),
    ],
)
def test_start_jitter_refusals_name_the_field(app: dict[str, Any], problem: str) -> None:
    spec = scenario(**app)
    spec["app"] = {key: value for key, value in spec["app"].items() if value is not None}
    with pytest.raises(SpecError) as error:
        validate_spec(spec)
    assert any(p.startswith(problem) for p in error.value.problems), error.value.problems


def test_the_model_refuses_connections_that_open_apart() -> None:
    with pytest.raises(tcplab.errors.Unsupported, match="app.parallel"):
        tcplab.run(scenario(), backend="model")
