"""`tcplab schema` shows, for every field, the default that applies: a scenario that writes
out every default the schema shows for a table resolves to the same plan as one that
writes none of them (per stack profile for [hosts.tcp], where the profiles differ)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tcplab import profiles
from tcplab.plan import resolve
from tcplab.spec import json_schema, validate_spec

SCHEMA = json_schema()
LINK = {"rate": "10Mbps", "delay": "10ms"}
ATM = {"kind": "atm", "rate": "150Mbps", "delay": "1ms"}
FADE: dict[str, Any] = {
    "ber_curve": "qpsk",
    "ebno_db": 9.0,
    "rain_fade": {"m": -0.5, "sigma": 1.0, "p_rain": 0.05},
}
ACM = {"symbol_rate": 1e6, "clear_sky_esno_db": 8.0}


def path() -> dict[str, Any]:
    return {"duration": "1s", "links": [dict(LINK)]}


def atm(switch: dict[str, Any]) -> dict[str, Any]:
    """Two hosts joined through one ATM switch."""
    return {
        "duration": "1s",
        "hosts": [{"name": "a"}, {"name": "b"}],
        "routers": [{"name": "sw", "switch": switch}],
        "links": [{**ATM, "between": ["a", "sw"]}, {**ATM, "between": ["sw", "b"]}],
        "flows": [{"src": "a", "dst": "b"}],
    }


def media(**stream: Any) -> dict[str, Any]:
    video = {"name": "v", "transport": "tcp", "rate": 10, "message_size": 1000, **stream}
    return {**path(), "app": {"kind": "media", "streams": [video]}}


# Each table of the schema ($defs name): a scenario that has it, and where it is in it
# (a function giving the table's dict). None: the whole scenario.
Place = Callable[[dict[str, Any]], dict[str, Any]]
TABLES: dict[str, tuple[Callable[[], dict[str, Any]], Place]] = {
    "Spec": (path, lambda s: s),
    "Host": (lambda: {**path(), "hosts": [{"name": "a"}, {"name": "b"}]}, lambda s: s["hosts"][0]),
    "Cpu": (
        lambda: {**path(), "hosts": [{"name": "a", "cpu": {}}, {"name": "b"}]},
        lambda s: s["hosts"][0]["cpu"],
    ),
    "Link": (path, lambda s: s["links"][0]),
    "Queue": (
        lambda: {**path(), "links": [{**LINK, "queue": {}}]},
        lambda s: s["links"][0]["queue"],
    ),
    "GilbertElliott": (
        lambda: {**path(), "links": [{**LINK, "gilbert_elliott": {"p_gb": 0.01, "p_bg": 0.1}}]},
        lambda s: s["links"][0]["gilbert_elliott"],
    ),
    "Wlan": (
        lambda: {
            **path(),
            "links": [{"kind": "wlan", "rate": "11Mbps", "delay": "1us", "wlan": {}}],
        },
        lambda s: s["links"][0]["wlan"],
    ),
    "App": (path, lambda s: s.setdefault("app", {})),
    "Stream": (media, lambda s: s["app"]["streams"][0]),
    "MediaObjectives": (
        lambda: {**media(), "app": {**media()["app"], "objectives": {}}},
        lambda s: s["app"]["objectives"],
    ),
    "Router": (lambda: atm({}), lambda s: s["routers"][0]),
    "Switch": (lambda: atm({}), lambda s: s["routers"][0]["switch"]),
    "Efci": (
        lambda: atm({"feedback": "efci", "efci": {}}),
        lambda s: s["routers"][0]["switch"]["efci"],
    ),
    "Erica": (
        lambda: atm({"feedback": "erica", "erica": {}}),
        lambda s: s["routers"][0]["switch"]["erica"],
    ),
    "EricaPlus": (
        lambda: atm({"feedback": "erica", "erica": {"plus": {}}}),
        lambda s: s["routers"][0]["switch"]["erica"]["plus"],
    ),
    "Abr": (lambda: {**atm({}), "abr": {}}, lambda s: s["abr"]),
    "Flow": (lambda: atm({}), lambda s: s["flows"][0]),
    "Pep": (
        lambda: {**path(), "links": [LINK, LINK], "peps": [{"name": "p", "after_link": 0}]},
        lambda s: s["peps"][0],
    ),
    "Trace": (lambda: {**path(), "trace": {}}, lambda s: s["trace"]),
    "Leo": (
        lambda: {**path(), "links": [{**LINK, "leo": {}}]},
        lambda s: s["links"][0]["leo"],
    ),
    "RainFade": (
        lambda: {**path(), "links": [{**LINK, **FADE}]},
        lambda s: s["links"][0]["rain_fade"],
    ),
    "Acm": (
        lambda: {
            **path(),
            "links": [{**LINK, "rain_fade": {**FADE["rain_fade"], "acm": dict(ACM)}}],
        },
        lambda s: s["links"][0]["rain_fade"]["acm"],
    ),
    "ScheduleRow": (
        lambda: {**path(), "links": [{**LINK, "schedule": [{"at": "1s", "rate": "1Mbps"}]}]},
        lambda s: s["links"][0]["schedule"][0],
    ),
}
# Tables that resolve to no single plan: a sweep's grid is checked by tests/test_sweeps.py.
NOT_A_PLAN = {"Sweep"}
# [hosts.tcp] is checked per stack profile below.
PER_PROFILE = {"Tcp"}


def properties(table: str) -> dict[str, Any]:
    schema = SCHEMA if table == "Spec" else SCHEMA["$defs"][table]
    return dict(schema["properties"])


def test_every_table_of_the_schema_is_checked() -> None:
    assert set(SCHEMA["$defs"]) == set(TABLES) - {"Spec"} | NOT_A_PLAN | PER_PROFILE


@pytest.mark.parametrize("table", sorted(set(TABLES) - {"Spec"} | {"Spec"}))
def test_every_optional_field_shows_a_default(table: str) -> None:
    schema = SCHEMA if table == "Spec" else SCHEMA["$defs"][table]
    required = set(schema.get("required", ()))
    missing = [name for name in schema["properties"] if name not in required]
    assert [name for name in missing if "default" not in schema["properties"][name]] == []


@pytest.mark.parametrize("table", sorted(TABLES))
def test_writing_out_the_shown_defaults_changes_no_plan(table: str) -> None:
    scenario, place = TABLES[table]
    given = scenario()
    written = copy.deepcopy(given)
    # Every default shown, except for the fields the scenario itself sets.
    shown = {
        name: prop["default"]
        for name, prop in properties(table).items()
        if "default" in prop and prop["default"] is not None and name not in place(given)
    }
    place(written).update(shown)
    assert resolve(validate_spec(written)) == resolve(validate_spec(given)), shown


@pytest.mark.parametrize("profile", list(profiles.STACKS))
def test_the_tcp_defaults_shown_for_each_profile_apply(profile: str) -> None:
    fields = properties("Tcp")
    shown = {
        name: prop.get("x-default-by-profile", {}).get(profile, prop["default"])
        for name, prop in fields.items()
        if name != "profile"
    }

    def plan(tcp: dict[str, Any]) -> dict[str, Any]:
        spec = validate_spec({**path(), "hosts": [{"name": "a", "tcp": tcp}, {"name": "b"}]})
        return resolve(spec)["hosts"][0]["tcp"]

    assert plan({"profile": profile, **shown}) == plan({"profile": profile})
    # And the schema's default is not the model's own where a profile replaces it.
    if profile == profiles.DEFAULT_STACK:
        assert fields["cc"]["default"] == profiles.STACKS[profile].settings["cc"]
