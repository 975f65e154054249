"""Scenario validation: defaults, refusals naming the field, schema, canonical form, hash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest

from tcplab.analytic import ber_curves
from tcplab.analytic.framing import FRAMING, LinkKind
from tcplab.backends import capabilities
from tcplab.errors import SpecError, Unsupported
from tcplab.plan import resolve
from tcplab.spec import BerCurve, canonical_dict, json_schema, load_spec, spec_hash
from tcplab.spec import validate_spec as validate
from tcplab.spec.loading import tomllib

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LINK = {"rate": "2.048Mbps", "delay": "275ms"}


def problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as raised:
        validate(data)
    return raised.value.problems


def test_defaults_fill_everything_but_the_path() -> None:
    spec = validate({"links": [LINK]})
    assert (spec.name, spec.backend, spec.seed, spec.repetitions) == ("scenario", "sim", 1, 1)
    assert spec.duration == 60 * 10**9
    assert spec.interval == 10**9
    assert spec.trace_interval == 10 * 10**6
    assert [host.name for host in spec.hosts] == ["client", "server"]
    # With no stack named, a host is current Linux (see python/tcplab/profiles.py).
    tcp = spec.hosts[0].tcp
    assert tcp.profile == "linux"
    assert (tcp.cc, tcp.sndbuf, tcp.rcvbuf, tcp.mss, tcp.initial_window) == (
        "cubic",
        4 * 2**20,
        3 * 2**20,
        1460,
        10,
    )
    assert (tcp.window_scaling, tcp.sack, tcp.timestamps, tcp.abc) == (True, True, True, True)
    assert (tcp.delayed_ack, tcp.nagle, tcp.fast_retransmit) == (True, True, True)
    assert tcp.delack_timeout == 40 * 10**6
    # Linux's TCP_RTO_MIN, and its loss recovery, HyStart, CUBIC and receiver.
    assert tcp.min_rto == 200 * 10**6
    assert (tcp.loss_recovery, tcp.hystart_variant, tcp.cubic_variant, tcp.reno_variant) == (
        "rack",
        "linux",
        "linux",
        "linux",
    )
    assert (tcp.quickack, tcp.initial_rwnd, tcp.rto_form) == (True, 10, "linux")
    link = spec.links[0]
    assert (link.kind, link.rate, link.delay) == ("p2p", 2_048_000, 275 * 10**6)
    assert (link.queue.limit.unit, link.queue.limit.value) == ("packets", 100)
    assert (spec.app.kind, spec.app.message_size, spec.app.bytes) == ("bulk", 65536, None)


def test_a_profile_is_overridden_field_by_field() -> None:
    hosts = [
        {"name": "pc", "tcp": {"profile": "windows-nt4", "sndbuf": "32KiB"}},
        {"name": "pda", "tcp": {"profile": "windows-ce"}},
    ]
    spec = validate({"links": [LINK], "hosts": hosts})
    nt4, ce = spec.hosts[0].tcp, spec.hosts[1].tcp
    assert (nt4.sndbuf, nt4.rcvbuf, nt4.window_scaling, nt4.sack, nt4.cc) == (
        32768,
        8760,
        False,
        False,
        "reno",
    )
    assert (ce.sndbuf, ce.rcvbuf) == (16384, 32768)


def test_an_unknown_profile_names_the_field_and_the_choices() -> None:
    found = problems({"links": [LINK], "hosts": [{"name": "a", "tcp": {"profile": "os2"}},
                                                   {"name": "b"}]})  # fmt: skip
    assert any(p.startswith("hosts.0.tcp.profile: ") and "windows-nt4" in p for p in found)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"links": [{**LINK, "foo": 1}]}, "links.0.foo: unknown field"),
        ({"links": [LINK], "sweep": {}}, "sweep: no field paths to sweep"),
        ({"links": [LINK], "hosts": [{"name": "a", "cpu": "p133"}, {"name": "b"}]}, "hosts.0.cpu"),
        ({"links": [{**LINK, "rate": "2 Mbps/s"}]}, "links.0.rate: "),
        ({"links": [{**LINK, "delay": "-5ms"}]}, "links.0.delay: "),
        ({}, "links: at least one link is required"),
        ({"links": []}, "links: at least one link is required"),
        ({"links": [LINK], "hosts": [{"name": "a", "tcp": {"cc": "foo"}}, {"name": "b"}]},
         "hosts.0.tcp.cc: "),
        ({"links": [LINK], "hosts": [{"name": "a"}, {"name": "a"}]}, "hosts: "),
        ({"links": [LINK], "hosts": [{"name": "a"}]}, "hosts: exactly 2 hosts"),
        ({"links": [LINK], "hosts": [{"name": "a"}, {"name": "b", "tcp": {"sack": "yes"}}]},
         "hosts.1.tcp.sack: "),
        ({"links": [LINK], "hosts": [{"name": "a", "tcp": {"mss": 40}}, {"name": "b"}]},
         "hosts.0.tcp.mss: "),
        ({"links": [LINK], "hosts": [{"name": "a", "tcp": {"mss": "1460"}}, {"name": "b"}]},
         "hosts.0.tcp.mss: "),
        ({"links": [LINK], "hosts": [{"name": "a/b"}, {"name": "b"}]}, "hosts.0.name: "),
        ({"links": [{**LINK, "ebno_db": 9.0, "ber_curve": "koreasat-2000"}]},
         "links.0.ebno_db: "),
        ({"links": [{**LINK, "ebno_db": 7.0}]}, "links.0.ebno_db: needs ber_curve"),
        ({"links": [{**LINK, "reverse_ber_curve": "qpsk"}]},
         "links.0.reverse_ebno_db: required when reverse_ber_curve is given"),
        ({"links": [{**LINK, "ber_curve": "bpsk", "ebno_db": 7.0}]}, "links.0.ber_curve: "),
        ({"links": [{**LINK, "ber": 1e-6, "loss": 0.01}]}, "links.0: ber and loss"),
        ({"links": [{**LINK, "reverse_loss": 0.1, "reverse_gilbert_elliott": {"p_gb": 0.1,
          "p_bg": 0.5}}]}, "links.0: reverse_loss and reverse_gilbert_elliott"),
        ({"links": [{**LINK, "loss": 1.5}]}, "links.0.loss: "),
        ({"links": [{**LINK, "ber": float("nan")}]}, "links.0.ber: "),
        ({"links": [{**LINK, "gilbert_elliott": {"p_gb": 0.1}}]},
         "links.0.gilbert_elliott.p_bg: required"),
        ({"links": [{**LINK, "queue": {"limit": 100}}]}, "links.0.queue.limit: "),
        ({"links": [{**LINK, "kind": "x25"}]}, "links.0.kind: "),
        ({"links": [LINK], "app": {"kind": "file"}}, 'app.bytes: required when kind = "file"'),
        ({"links": [LINK], "app": {"bytes": "1MiB"}}, 'app.bytes: only for kind = "file"'),
        ({"links": [LINK], "app": {"kind": "rr", "read_delay": "5ms"}},
         'app.read_delay: only for kind = "bulk", "file" or "message"'),
        ({"links": [LINK], "backend": "ns3"}, "backend: "),
        ({"links": [LINK], "seed": -1}, "seed: "),
        ({"links": [LINK], "repetitions": 0}, "repetitions: "),
        ({"links": [LINK], "duration": "0s"}, "duration: "),
    ],
)  # fmt: skip
def test_each_problem_names_its_field(data: dict[str, Any], expected: str) -> None:
    assert any(problem.startswith(expected) for problem in problems(data)), problems(data)


def test_refusals_list_the_accepted_values() -> None:
    (cc,) = problems(
        {"links": [LINK], "hosts": [{"name": "a", "tcp": {"cc": "foo"}}, {"name": "b"}]}
    )
    assert '"foo"' in cc and "newreno" in cc
    (rate,) = problems({"links": [{**LINK, "rate": "2 Mbps/s"}]})
    assert '"2 Mbps/s"' in rate and "Mbps" in rate and "kbit/s" in rate
    (curve,) = problems({"links": [{**LINK, "ebno_db": 7.0}]})
    assert all(name in curve for name in get_args(BerCurve))


def test_duplicate_host_is_named() -> None:
    (duplicate,) = problems({"links": [LINK], "hosts": [{"name": "pc"}, {"name": "pc"}]})
    assert "'pc'" in duplicate and "hosts.0.name" in duplicate and "hosts.1.name" in duplicate


def test_all_problems_are_reported_at_once() -> None:
    found = problems({"links": [{"rate": "fast", "delay": "-1s", "foo": 1}], "seed": -1})
    assert [p.split(":")[0] for p in found] == [
        "seed",
        "links.0.rate",
        "links.0.delay",
        "links.0.foo",
    ]


def test_ebno_within_the_curve_range_is_accepted() -> None:
    spec = validate({"links": [{**LINK, "ebno_db": 8, "ber_curve": "koreasat-2000"}]})
    assert spec.links[0].ebno_db == 8.0


def test_spec_curve_names_are_the_curves_ber_curves_provides() -> None:
    assert set(get_args(BerCurve)) == set(ber_curves.CURVES)


def test_every_link_kind_has_framing() -> None:
    assert set(get_args(LinkKind)) == set(FRAMING)


def test_canonical_dict_validates_back_to_the_same_spec() -> None:
    spec = load_spec(EXAMPLES / "geo-netperf.toml")
    assert validate(canonical_dict(spec)) == spec
    assert canonical_dict(spec)["links"][0]["rate"] == "2.048Mbps"


def test_hash_ignores_spelling_but_not_meaning() -> None:
    one = validate({"links": [{"rate": "2.048Mbps", "delay": "275ms"}], "duration": "60s"})
    same = validate({"links": [{"rate": "2048kbit/s", "delay": "0.275s"}], "duration": "1min"})
    other = validate({"links": [{"rate": "2.048Mbps", "delay": "276ms"}], "duration": "60s"})
    assert spec_hash(one) == spec_hash(same) != spec_hash(other)
    assert len(spec_hash(one)) == 64


def test_load_spec_takes_the_name_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sat-hop.toml"
    path.write_text('[[links]]\nrate = "1Mbps"\ndelay = "250ms"\n')
    assert load_spec(path).name == "sat-hop"
    path.write_text('name = "other"\n[[links]]\nrate = "1Mbps"\ndelay = "250ms"\n')
    assert load_spec(path).name == "other"


def test_toml_syntax_errors_carry_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\n[[links]]\nrate = 2.048Mbps\n')
    with pytest.raises(SpecError, match=r"invalid TOML: .*line 3"):
        load_spec(path)


TYPOS = """\
name = "typos"
durration = "3s"

[[hosts]]
name = "client"

[[hosts]]
name = "server"
[hosts.tcp]
sndbuff = "32KiB"   # a comment
"min_rto" = "-1ms"

[[links]]
rate = "2.048Mbps"
delay = "275ms"
queue = { limt = "64KiB" }

[app]
kind = "file"
bytes = "1MiB"
mesage_size = "64KiB"
xyzzy = true
"""


def test_unknown_fields_get_the_closest_name_and_every_problem_its_line(tmp_path: Path) -> None:
    path = tmp_path / "typos.toml"
    path.write_text(TYPOS)
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    assert sorted(raised.value.problems) == [
        "app.mesage_size: unknown field, did you mean 'message_size'? (line 21)",
        "app.xyzzy: unknown field (line 22)",  # nothing close: no suggestion
        "durration: unknown field, did you mean 'duration'? (line 2)",
        'hosts.1.tcp.min_rto: "-1ms" is negative; a duration must not be negative (line 11)',
        "hosts.1.tcp.sndbuff: unknown field, did you mean 'sndbuf'? (line 10)",
        # Inline in the table on line 16: no line of its own.
        "links.0.queue.limt: unknown field, did you mean 'limit'?",
    ]


def test_a_scenario_given_as_a_mapping_gets_suggestions_without_lines() -> None:
    assert problems({"links": [{**LINK, "rat": "1Mbps"}]}) == [
        "links.0.rat: unknown field, did you mean 'rate'?"
    ]


def test_missing_file_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such file"):
        load_spec(tmp_path / "absent.toml")


def test_spec_error_is_one_line_listing_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('seed = -1\n[[links]]\nrate = "1Mbps"\ndelay = "-1ms"\n')
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    assert "seed: " in message and "links.0.delay: " in message


def test_json_schema_is_a_valid_schema_that_accepts_the_examples() -> None:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for path in sorted(EXAMPLES.glob("*.toml")):
        validator.validate(tomllib.loads(path.read_text()))
    assert not validator.is_valid({"links": [{**LINK, "rate": "2 Mbps/s"}]})
    assert not validator.is_valid({"links": [{**LINK, "bogus": 1}]})
    json.dumps(schema)


def test_spec_is_immutable_so_its_hash_stays_true() -> None:
    spec = validate({"links": [LINK]})
    with pytest.raises(ValueError, match="frozen"):
        spec.seed = 2  # type: ignore[misc]


def test_iperf3_runs_on_the_emu_backend_only() -> None:
    # iperf3 -w sets both buffers of both hosts to one size.
    tcp = {"sndbuf": "1MiB", "rcvbuf": "1MiB"}
    hosts = [{"name": "a", "tcp": tcp}, {"name": "b", "tcp": tcp}]
    iperf3 = {"links": [LINK], "hosts": hosts, "app": {"tool": "iperf3"}}
    with pytest.raises(Unsupported, match='app.tool: "iperf3" runs only on the emu backend') as e:
        capabilities.check(resolve(validate(iperf3)), "sim")
    assert e.value.supported_by == ("emu",)
    capabilities.check(resolve(validate({**iperf3, "backend": "emu"})), "emu")


# Issue #15: each of these reached a traceback or a Rust panic instead of a clean error.
@pytest.mark.parametrize(
    ("tcp", "expected"),
    [
        ({"profile": [1, 2]}, "hosts.0.tcp.profile: [1, 2] is not accepted; accepted values: "),
        ({"profile": {"a": 1}}, "hosts.0.tcp.profile: {'a': 1} is not accepted"),
        ({"min_rto": "61s"}, "hosts.0.tcp.min_rto: 61s is above the largest RTO; accepted: 1ns"),
        # A bulk writer filling a buffer of 2^63 - 1 bytes never returned.
        ({"sndbuf": 2**63 - 1}, "hosts.0.tcp.sndbuf: 9223372036854775807B is not accepted; "),
        ({"rcvbuf": "2GiB"}, "hosts.0.tcp.rcvbuf: 2GiB is not accepted; accepted: 1B to 1GiB"),
    ],
)
def test_hostile_tcp_values_are_refused_naming_the_field(tcp: dict, expected: str) -> None:
    data = {"hosts": [{"name": "a", "tcp": tcp}, {"name": "b"}], "links": [LINK]}
    with pytest.raises(SpecError) as info:
        validate(data)
    assert expected in str(info.value)


def test_min_rto_at_the_largest_rto_is_accepted() -> None:
    data = {"hosts": [{"name": "a", "tcp": {"min_rto": "60s"}}, {"name": "b"}], "links": [LINK]}
    assert validate(data).hosts[0].tcp.min_rto == 60 * 10**9


def test_repetitions_and_ebno_are_bounded() -> None:
    with pytest.raises(SpecError, match="repetitions: Input should be less than or equal to 10000"):
        validate({"links": [LINK], "repetitions": 10**30})
    link = {**LINK, "ber_curve": "qpsk", "ebno_db": 1e308}
    with pytest.raises(SpecError, match=r"links\.0\.ebno_db: ebno_db must be within -100\.\.100"):
        validate({"links": [link]})


def test_a_stream_rate_too_low_for_an_integer_clock_is_refused() -> None:
    # Issue #15's fuzzing: rate = 1e-300 overflowed computing its interval (OverflowError).
    app = {
        "kind": "media",
        "streams": [{"name": "v", "transport": "tcp", "rate": 1e-300, "message_size": 100}],
    }
    with pytest.raises(SpecError, match=r"app\.streams\.0\.rate: 1e-300 per second is below one"):
        validate({"links": [LINK], "app": app})
