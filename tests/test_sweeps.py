"""Sweep expansion: points, runs and their ids, and bad sweep tables named by their path."""

from __future__ import annotations

from typing import Any

import pytest

from tcplab import SpecError
from tcplab.experiments.sweeps import expand, runs
from tcplab.plan import derive_seed
from tcplab.spec import json_schema, spec_hash, validate_spec

BASE: dict[str, Any] = {
    "name": "grid",
    "repetitions": 2,
    "links": [{"rate": "2.048Mbps", "delay": "275ms"}],
}


def scenario(sweep: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**BASE, **fields, "sweep": sweep}


def test_a_grid_is_every_combination_with_the_first_path_slowest() -> None:
    points = expand(
        validate_spec(
            scenario(
                {"hosts.0.tcp.sndbuf": ["4KiB", "8KiB"], "links.0.delay": ["1ms", "2ms", "3ms"]}
            )
        )
    )
    assert [(p.labels["hosts.0.tcp.sndbuf"], p.labels["links.0.delay"]) for p in points] == [
        ("4KiB", "1ms"), ("4KiB", "2ms"), ("4KiB", "3ms"),
        ("8KiB", "1ms"), ("8KiB", "2ms"), ("8KiB", "3ms"),
    ]  # fmt: skip
    # Parameters are held in base units (bytes, ns), so that they sort and plot as numbers.
    assert points[4].params == {"hosts.0.tcp.sndbuf": 8192, "links.0.delay": 2_000_000}
    assert points[4].spec.hosts[0].tcp.sndbuf == 8192
    assert points[4].spec.links[0].delay == 2_000_000
    assert points[4].spec.sweep is None


def test_zip_pairs_the_lists_and_hosts_can_be_named() -> None:
    points = expand(
        validate_spec(
            scenario(
                {"mode": "zip", "hosts.client.tcp.sndbuf": [4096, 8192], "app.message_size": [1, 2]}
            )
        )
    )
    assert [p.params for p in points] == [
        {"hosts.client.tcp.sndbuf": 4096, "app.message_size": 1},
        {"hosts.client.tcp.sndbuf": 8192, "app.message_size": 2},
    ]
    assert points[1].spec.hosts[0].tcp.sndbuf == 8192
    assert points[1].spec.hosts[1].tcp.sndbuf == validate_spec(BASE).hosts[1].tcp.sndbuf


def test_values_that_are_no_scalars_become_their_canonical_text() -> None:
    (point,) = expand(validate_spec(scenario({"links.0.queue": [{"limit": "10p"}]})))
    assert point.params == {"links.0.queue": '{"limit": "10p"}'}


def test_a_scenario_without_a_sweep_is_one_point() -> None:
    spec = validate_spec(BASE)
    (point,) = expand(spec)
    assert point.spec == spec
    assert point.params == {}


def test_runs_are_repetitions_with_derived_seeds_and_content_ids() -> None:
    spec = validate_spec(scenario({"links.0.delay": ["1ms", "2ms"]}, seed=7))
    all_runs = runs(expand(spec))
    assert [(r.repetition, r.seed) for r in all_runs] == [
        (0, 7), (1, derive_seed(7, 1)), (0, 7), (1, derive_seed(7, 1))
    ]  # fmt: skip
    for run in all_runs:
        # The run's spec is exactly what runs: its seed, one repetition, no sweep table.
        assert (run.spec.seed, run.spec.repetitions, run.spec.sweep) == (run.seed, 1, None)
        assert run.spec_hash == spec_hash(run.spec)
        assert run.run_id == f"{run.spec_hash[:16]}-{run.seed}"
    # A point's id is the hash of its first run, so it does not move with `repetitions`.
    assert all_runs[0].point.point_id == all_runs[0].spec_hash[:16]
    more = runs(expand(validate_spec(scenario({"links.0.delay": ["1ms", "2ms"]}, seed=7,
                                              repetitions=3))))  # fmt: skip
    assert {r.run_id for r in all_runs} < {r.run_id for r in more}


def test_the_sweep_table_is_not_part_of_a_points_hash() -> None:
    (swept,) = expand(validate_spec(scenario({"links.0.delay": ["1ms"]})))
    plain = validate_spec({**BASE, "links": [{"rate": "2.048Mbps", "delay": "1ms"}]})
    assert spec_hash(swept.spec) == spec_hash(plain)


@pytest.mark.parametrize(
    ("sweep", "expected"),
    [
        ({"hosts.0.tcp.sndbf": ["4KiB"]}, 'sweep."hosts.0.tcp.sndbf": unknown field'),
        ({"hots.0.tcp.sndbuf": ["4KiB"]}, 'sweep."hots.0.tcp.sndbuf": hots: unknown field'),
        ({"hosts.2.tcp.sndbuf": ["4KiB"]}, 'sweep."hosts.2.tcp.sndbuf": hosts has 2 entries'),
        ({"hosts.clinet.tcp.sndbuf": ["4KiB"]}, "no entry of hosts is named 'clinet'"),
        ({"links.0.delay.x": ["1ms"]}, 'sweep."links.0.delay.x": links.0.delay is a single'),
        ({"hosts.0.tcp.sndbuf": []}, 'sweep."hosts.0.tcp.sndbuf": an empty list'),
        ({"hosts.0.tcp.sndbuf": "4KiB"}, 'sweep."hosts.0.tcp.sndbuf": Input should be a valid'),
        ({"mode": "zip", "links.0.delay": ["1ms", "2ms"], "app.message_size": [1]},
         'sweep: mode = "zip" pairs the i-th values, so the lists need equal lengths:'
         ' "links.0.delay" has 2, "app.message_size" has 1'),
        ({"mode": "diagonal", "links.0.delay": ["1ms"]}, "sweep.mode: "),
        ({"hosts.0.tcp.sndbuf": ["4KiB", "4 KiB/s"]},
         'sweep."hosts.0.tcp.sndbuf": "4 KiB/s" is not a size'),
        ({"links.0.ebno_db": [7.0]}, 'sweep."links.0.ebno_db": needs ber_curve'),
        ({"links.0.loss": [0.1, 2.0]}, 'sweep."links.0.loss": '),
        ({"app.kind": ["file"]}, 'sweep: with app.kind = "file": app.bytes: required'),
        ({"hosts.0.tcp.sndbuf": [4096, "4KiB"]}, "are the same experiment"),
        ({"repetitions": [1, 2]}, "sweep.repetitions: repetitions applies to every point"),
        ({"seed": [1, 2]}, "sweep.seed: "),
        ({}, "sweep: no field paths to sweep"),
    ],
)  # fmt: skip
def test_bad_sweeps_are_refused_naming_the_path(sweep: dict[str, Any], expected: str) -> None:
    with pytest.raises(SpecError) as raised:
        expand(validate_spec(scenario(sweep)))
    assert expected in str(raised.value)


def test_every_bad_value_is_reported_once() -> None:
    with pytest.raises(SpecError) as raised:
        expand(
            validate_spec(
                scenario({"hosts.0.tcp.sndbuf": ["x", "y"], "links.0.delay": ["1ms", "2ms", "3ms"]})
            )
        )
    assert [p.split(":")[0] for p in raised.value.problems] == ['sweep."hosts.0.tcp.sndbuf"'] * 2


def test_the_json_schema_describes_the_sweep_table() -> None:
    sweep = json_schema()["$defs"]["Sweep"]
    assert sweep["properties"]["mode"]["enum"] == ["grid", "zip"]
    assert sweep["additionalProperties"] == {"type": "array", "minItems": 1}
