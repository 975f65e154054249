"""tcplab.run end to end on both backends: inputs, overrides, repetitions, determinism."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tcplab
from tcplab.plan import derive_seed
from tcplab.spec import spec_hash, validate_spec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SHORT: dict[str, Any] = {
    "name": "short",
    "duration": "5s",
    "links": [{"rate": "2.048Mbps", "delay": "275ms"}],
}


@pytest.mark.parametrize("backend", ["sim", "model"])
def test_run_a_dict_on_each_backend(backend: str) -> None:
    result = tcplab.run(SHORT, backend=backend)
    assert result.meta["backend"] == backend
    assert result.summary["bytes_delivered"] > 0
    assert result.summary["elapsed_s"] == 5.0
    assert result.series["t_s"][-1] == 5.0
    assert set(result.summary["limited_by"]) == {"rwnd", "sndbuf", "cwnd", "app"}
    assert result.runs == []


def test_path_spec_and_dict_give_the_same_result(tmp_path: Path) -> None:
    path = tmp_path / "short.toml"
    path.write_text('duration = "5s"\n[[links]]\nrate = "2.048Mbps"\ndelay = "275ms"\n')
    spec = tcplab.load_spec(path)
    from_path, from_str = tcplab.run(path), tcplab.run(str(path))
    assert from_path.to_json() == from_str.to_json() == tcplab.run(spec).to_json()
    assert tcplab.run(SHORT).to_json() == from_path.to_json()


def test_meta_describes_what_ran() -> None:
    result = tcplab.run(SHORT, seed=9)
    spec = validate_spec({**SHORT, "seed": 9})
    assert result.meta == {
        "name": "short",
        "backend": "sim",
        "seed": 9,
        "repetition": 0,
        "spec_hash": spec_hash(spec),
        "spec": result.meta["spec"],
        "tcplab_version": tcplab.__version__,
    }
    assert result.meta["spec"]["seed"] == 9
    assert validate_spec(result.meta["spec"]) == spec


def test_same_spec_and_seed_give_identical_json() -> None:
    lossy = {**SHORT, "links": [{**SHORT["links"][0], "loss": 0.02}]}
    assert tcplab.run(lossy).to_json() == tcplab.run(lossy).to_json()


def test_overrides_are_validated_like_the_file() -> None:
    with pytest.raises(tcplab.SpecError, match="seed: "):
        tcplab.run(SHORT, seed=-1)
    with pytest.raises(tcplab.SpecError, match="backend: "):
        tcplab.run(SHORT, backend="ns3")


def test_repetitions_run_with_derived_seeds_and_combine() -> None:
    lossy = {**SHORT, "repetitions": 3, "links": [{**SHORT["links"][0], "loss": 0.02}]}
    result = tcplab.run(lossy)
    assert [run.meta["seed"] for run in result.runs] == [derive_seed(1, i) for i in range(3)]
    assert [run.meta["repetition"] for run in result.runs] == [0, 1, 2]
    assert result.meta["repetitions"] == 3
    goodputs = [run.summary["goodput_bps"] for run in result.runs]
    assert result.summary["goodput_bps"] == pytest.approx(sum(goodputs) / 3)
    assert result.summary["goodput_bps_std"] >= 0.0
    assert result.summary["goodput_bps_ci95"] == pytest.approx(
        4.3027 * result.summary["goodput_bps_std"] / 3**0.5
    )
    assert sorted(set(result.to_pandas()["repetition"])) == [0, 1, 2]


def test_the_geo_example_is_window_limited_below_the_model_bound() -> None:
    # 32 KiB buffers over a 550 ms round trip: the receive window, not the link, limits.
    result = tcplab.run(EXAMPLES / "geo-netperf.toml")
    bound = tcplab.run(EXAMPLES / "geo-netperf.toml", backend="model")
    window_bound = bound.summary["model"]["window_bound_bps"]
    assert 0.9 * window_bound < result.summary["goodput_bps"] <= window_bound
    assert result.summary["limited_by"]["rwnd"] > 0.9


def test_a_backend_refusing_a_field_is_a_backend_error_naming_it() -> None:
    # The model backend has no formula for a host's CPU costs: the field it refuses comes
    # back as BackendError, with the plan path in `field`.
    spec = {**SHORT, "hosts": [{"name": "a", "cpu": "pentium-133"}, {"name": "b"}]}
    with pytest.raises(tcplab.BackendError) as info:
        tcplab.run(spec, backend="model")
    assert info.value.field == "hosts.0.cpu"
    assert str(info.value).startswith("the model backend cannot run this scenario: hosts.0.cpu: ")


def test_a_backend_bug_raising_value_error_is_not_blamed_on_the_scenario(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Issue #15: a math domain error in a model formula was reported as "cannot run this
    # scenario", as if the spec were at fault.
    from tcplab.backends import model

    def broken(plan: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("math domain error")

    monkeypatch.setattr(model, "run", broken)
    with pytest.raises(ValueError, match="math domain error") as info:
        tcplab.run(SHORT, backend="model")
    assert not isinstance(info.value, tcplab.TcplabError)
