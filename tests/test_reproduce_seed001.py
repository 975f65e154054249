"""Seed 001's pack (docs/reproduce.md): its experiments are the paper's runs, each scheme is
the switch table it names, and Table 2's layout holds the paper's numbers beside tcplab's."""

from __future__ import annotations

import json

import tcplab
from tcplab.api import prepare
from tcplab.papers import seed001
from tcplab.sweeps import expand


def points(name: str) -> list:
    experiment = next(e for e in seed001.EXPERIMENTS if e.name == name)
    return expand(prepare(experiment.scenario(False)))


def test_table2_is_52_runs_of_300_ms() -> None:
    runs = [p for e in seed001.EXPERIMENTS if e.name.startswith("table2-") for p in points(e.name)]
    assert len(runs) == 13 * 4
    assert {p.spec.duration for p in runs} == {300_000_000}


def test_the_distance_rows_sweep_the_trunk_with_every_scheme() -> None:
    found = {
        (seed001.scheme_of(p.params[seed001.SWITCH]), p.params[seed001.trunk(50)] // 5_000)
        for p in points("table2-distance")
    }
    assert found == {(s, km) for s in seed001.SCHEMES for km in seed001.KMS}


def test_each_scheme_is_the_switch_table_it_names() -> None:
    for name, table in seed001.SWITCHES.items():
        assert seed001.scheme_of(json.dumps(table)) == name


def test_sources_sit_n_times_0_56_km_from_their_switch() -> None:
    spec = seed001.network(10, 500)
    # Fig. 3 / §3.1: 10 × 0.56 km at 5 µs/km = 28 µs; the trunk 500 km = 2.5 ms.
    assert spec["links"][0]["delay"] == "28000ns"
    assert spec["links"][10]["delay"] == "2500000ns"
    assert len(spec["links"]) == 21 and len(spec["flows"]) == 10


def test_the_efficiency_bound_is_the_papers_2279_byte_segment() -> None:
    # §3.2: 2000 + 20 + 20 + 8 (LLC/SNAP) + 8 (AAL5) → 43 cells, 2279 bytes on the wire;
    # on 150 Mb/s of cells that is 150e6 × 2000 / 2279 ≈ 131.6 Mb/s.
    spec = seed001.network(2, 500)
    spec["duration"] = "20ms"
    bound = tcplab.run(spec).summary["atm"]["max_goodput_bps"]
    assert abs(bound - 150e6 * 2000 / 2279) < 1.0
