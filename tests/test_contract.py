"""The plan Python builds and the results the Python backends build satisfy the contract the
Rust core defines once: the JSON Schemas schemars generates from crates/sim/src/plan.rs and
result.rs (tcplab.shared.PLAN_SCHEMA, RESULT_SCHEMA; docs/internals/plan-and-result.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import make_plan
from contract import PLAN, check_plan, check_result

import tcplab
from tcplab import _sim, profiles
from tcplab.backends import capabilities, model
from tcplab.errors import Unsupported
from tcplab.experiments.sweeps import expand
from tcplab.papers import PACKS
from tcplab.plan import resolve, topology_form
from tcplab.shared import PLAN_SCHEMA, RESULT_SCHEMA
from tcplab.spec import json_schema, validate_spec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
PATH = {"duration": "1s", "links": [{"rate": "10Mbps", "delay": "10ms"}]}


def test_the_schemas_are_valid_json_schemas() -> None:
    jsonschema.Draft202012Validator.check_schema(PLAN_SCHEMA)
    jsonschema.Draft202012Validator.check_schema(RESULT_SCHEMA)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_point_of_every_example_resolves_to_a_plan_of_the_cores_schema(
    example: Path,
) -> None:
    for point in expand(tcplab.load_spec(example), example):
        check_plan(resolve(point.spec))


@pytest.mark.parametrize("profile", list(profiles.STACKS))
def test_every_profiles_plan_is_of_the_cores_schema(profile: str) -> None:
    hosts = [{"name": "a", "tcp": {"profile": profile}}, {"name": "b", "tcp": {"profile": profile}}]
    check_plan(resolve(validate_spec({**PATH, "hosts": hosts})))


@pytest.mark.parametrize("pack", list(PACKS))
def test_every_point_of_every_packs_quick_run_is_of_the_cores_schema(pack: str) -> None:
    # Points that differ in numbers only have one shape: each shape is checked once.
    shapes = set()
    for experiment in PACKS[pack].experiments:
        for point in expand(validate_spec(experiment.scenario(True))):
            plan = resolve(point.spec)
            shape = json.dumps(_shape(plan))
            if shape not in shapes:
                shapes.add(shape)
                check_plan(plan)


def _shape(node: Any) -> Any:
    """The plan with every number made 0 (an integer or a float): what a schema checks of
    it, but for the values' sizes."""
    if isinstance(node, dict):
        return {key: _shape(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_shape(value) for value in node]
    if isinstance(node, bool) or not isinstance(node, int | float):
        return node
    return type(node)(0)


def test_parallel_connections_that_open_apart_are_of_the_cores_schema() -> None:
    app = {"kind": "bulk", "parallel": 3, "start_jitter": "5ms"}
    check_plan(resolve(validate_spec({**PATH, "app": app})))


def test_the_tests_own_plan_is_of_the_cores_schema() -> None:
    check_plan(make_plan())


def test_a_plan_the_schema_refuses_the_core_refuses() -> None:
    # The schema is the core's: a field it does not know, or a required one left out, is
    # refused by both.
    plan = topology_form(resolve(validate_spec(PATH)))
    for bad in ({**plan, "colour": 1}, {k: v for k, v in plan.items() if k != "seed"}):
        assert not PLAN.is_valid(bad)
        with pytest.raises(ValueError):
            _sim.run(json.dumps(bad))


def test_the_simulators_own_result_is_of_the_result_schema() -> None:
    plan = topology_form(resolve(validate_spec(PATH)))
    jsonschema.validate(
        json.loads(_sim.run(json.dumps(plan))), RESULT_SCHEMA, cls=jsonschema.Draft202012Validator
    )


def _model_accepts(plan: dict[str, Any]) -> bool:
    try:
        capabilities.check(plan, "model")
        model.run(plan)
    except Unsupported:
        return False
    return True


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_the_models_result_is_of_the_cores_result_schema(example: Path) -> None:
    plan = resolve(expand(tcplab.load_spec(example), example)[0].spec)
    if not _model_accepts(plan):
        pytest.skip("the model backend does not run this example")
    check_result(model.run(plan), "model")


def test_the_tcp_table_of_tcplab_schema_is_the_plans() -> None:
    # Every [hosts.tcp] field of the scenario schema reaches the plan's TcpPlan (durations
    # as _ns), and each named choice accepts exactly the values the core does.
    shown = json_schema()["$defs"]["Tcp"]["properties"]
    planned = PLAN_SCHEMA["$defs"]["TcpPlan"]["properties"]
    assert {name.removesuffix("_ns") for name in planned} == set(shown) - {"profile"}
    for name, prop in planned.items():
        if "$ref" in prop:
            choices = PLAN_SCHEMA["$defs"][prop["$ref"].rsplit("/", 1)[1]]
            assert _shown(shown[name]) == _values(choices), name


def _shown(prop: dict[str, Any]) -> set[str]:
    """The names a scenario field accepts; a field left to the profile (`ecn`) may also
    be null, which resolves to a name before the plan."""
    if "anyOf" in prop:
        return set().union(*(set(p["enum"]) for p in prop["anyOf"] if "enum" in p))
    return set(prop["enum"])


def _values(schema: dict[str, Any]) -> set[str]:
    """The strings an enum's schema accepts, as schemars writes them (one `enum`, or a
    `oneOf` of documented `const`s and `enum`s; a buffer's `anyOf` of a size and names)."""
    if "oneOf" in schema:
        return set().union(*(_values(variant) for variant in schema["oneOf"]))
    if "anyOf" in schema:
        named = [v for v in schema["anyOf"] if v.get("type") != "integer"]
        return set().union(*(_values(_resolved(variant)) for variant in named))
    return set(schema["enum"]) if "enum" in schema else {schema["const"]}


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return PLAN_SCHEMA["$defs"][ref.rsplit("/", 1)[1]] if ref else schema


def test_a_result_row_off_the_schema_is_refused() -> None:
    result = model.run(resolve(validate_spec(PATH)))
    check_result(result, "model")
    extra = {**result, "flows": [{**result["flows"][0], "colour": 1}]}
    missing = {**result, "links": [{k: v for k, v in result["links"][0].items() if k != "bytes"}]}
    for bad in (extra, missing):
        with pytest.raises(jsonschema.ValidationError):
            check_result(bad, "model")


def _without_each_key(node: Any, path: str = "") -> Any:
    """(path, the plan with that one key left out) for every key of every object in the
    plan (the first element of each list)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield f"{path}{key}", {k: v for k, v in node.items() if k != key}
            for inner, smaller in _without_each_key(value, f"{path}{key}."):
                yield inner, {**node, key: smaller}
    elif isinstance(node, list) and node:
        for inner, smaller in _without_each_key(node[0], f"{path}0."):
            yield inner, [smaller, *node[1:]]


@pytest.mark.parametrize(
    "example", ["atm-abr", "wlan-two-stations", "satellite-pep", "geo-videoconference"]
)
def test_the_core_requires_every_field_the_schema_requires(example: str) -> None:
    # No serde default at the boundary: leaving out any one field of a plan, null ones
    # included, is refused, as the schema (every property required) says.
    spec = tcplab.load_spec(ROOT / "examples" / f"{example}.toml")
    plan = topology_form(resolve(expand(spec)[0].spec))
    for path, smaller in _without_each_key(plan):
        with pytest.raises(ValueError):
            _sim.run(json.dumps(smaller))
        assert not PLAN.is_valid(smaller), path
