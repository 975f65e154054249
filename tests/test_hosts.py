"""Hosts, applications and several flows: the scenario fields, the plan they resolve to, and
what the simulator does with them (docs/models/hosts.md)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import PLAIN_APP

import tcplab
from tcplab.errors import BackendError, SpecError
from tcplab.plan import resolve
from tcplab.spec import validate_spec

LINK = {"rate": "10Mbps", "delay": "5ms"}
KIB = 1024


def problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as error:
        validate_spec(data)
    return error.value.problems


def dumbbell(n: int, **app: Any) -> dict[str, Any]:
    """n sources on their own access links into r1, one 10 Mb/s bottleneck to r2, n sinks."""
    access = {"rate": "100Mbps", "delay": "100us"}
    links = [{"between": [f"s{i}", "r1"], **access} for i in range(n)]
    links.append({"between": ["r1", "r2"], "rate": "10Mbps", "delay": "10ms"})
    links += [{"between": ["r2", f"d{i}"], **access} for i in range(n)]
    return {
        "duration": "20s",
        "hosts": [{"name": f"s{i}"} for i in range(n)] + [{"name": f"d{i}"} for i in range(n)],
        "routers": [{"name": "r1"}, {"name": "r2"}],
        "links": links,
        "flows": [{"src": f"s{i}", "dst": f"d{i}"} for i in range(n)],
        "app": {"kind": "bulk", **app},
    }


def test_a_cpu_profile_is_named_or_overridden_cost_by_cost() -> None:
    spec = validate_spec(
        {
            "links": [LINK],
            "hosts": [
                {"name": "pda", "cpu": "pda-400mhz"},
                {"name": "pc", "cpu": {"profile": "pentium-133", "per_packet": "10us"}},
            ],
        }
    )
    plan = resolve(spec)
    assert plan["hosts"][0]["cpu"]["storage_per_byte_ns"] == 1_000
    assert plan["hosts"][1]["cpu"]["per_packet_ns"] == 10_000
    assert plan["hosts"][1]["cpu"]["per_byte_ns"] == 350
    # The default host, `modern`, costs nothing and has no CPU model in the plan at all.
    assert resolve(validate_spec({"links": [LINK]}))["hosts"][0]["cpu"] is None


def test_a_plan_writes_the_app_fields_a_scenario_leaves_out() -> None:
    plan = resolve(validate_spec({"links": [LINK], "app": {"kind": "file", "bytes": "1MiB"}}))
    file = {"kind": "file", "message_size": 64 * KIB, "bytes": KIB * KIB}
    assert plan["app"] == {**file, **PLAIN_APP}
    assert "flows" not in plan and "routers" not in plan


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"links": [LINK], "hosts": [{"name": "a", "cpu": "p133"}, {"name": "b"}]},
         "hosts.0.cpu.profile: "),
        ({"links": [LINK], "hosts": [{"name": "a", "cpu": {"ring": 0}}, {"name": "b"}]},
         "hosts.0.cpu.ring: "),
        ({"links": [LINK], "app": {"kind": "message"}}, "app.bytes: "),
        ({"links": [LINK], "app": {"kind": "message", "recording": "60s"}}, "app.codec_rate: "),
        ({"links": [LINK], "app": {"kind": "bulk", "direction": "both"}}, "app.direction: "),
        ({"links": [LINK], "app": {"kind": "file", "bytes": 1, "request_size": 1}},
         "app.request_size: "),
        ({"links": [LINK], "app": {"kind": "rr", "bytes": 100}}, "app.bytes: "),
        ({"links": [LINK], "hosts": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
         "hosts: exactly 2 hosts"),
        ({"links": [{**LINK, "between": ["a", "b"]}]}, "links.0.between: only with [[flows]]"),
        ({**dumbbell(1), "flows": [{"src": "s0", "dst": "nowhere"}]}, "flows.0.dst: "),
        ({**dumbbell(1), "flows": [{"src": "s0", "dst": "s0"}]}, "flows.0.dst: "),
        ({**dumbbell(1), "links": [{"between": ["s0", "r9"], **LINK}]}, "links.0.between.1: "),
        ({**dumbbell(1), "links": [LINK]}, "links.0.between: required"),
        ({**dumbbell(2), "flows": [{"src": "s0", "dst": "d0"}, {"src": "s1", "dst": "d1",
                                                              "after": 0}]},
         "flows.1.after: "),
        ({**dumbbell(2), "flows": [{"src": "s0", "dst": "d0", "app": {"kind": "file",
                                                                      "bytes": 1}},
                                   {"src": "s1", "dst": "d1", "after": 0,
                                    "start_jitter": "1ms"}]},
         "flows.1.start_jitter: "),
        ({**dumbbell(1), "routers": [{"name": "s0"}]}, "routers.0.name: "),
    ],
)  # fmt: skip
def test_each_problem_names_its_field(data: dict[str, Any], expected: str) -> None:
    assert any(p.startswith(expected) for p in problems(data)), problems(data)


def test_start_jitter_reaches_the_plan_and_repetitions_draw_anew() -> None:
    scenario = {**dumbbell(2), "flows": [{"src": f"s{i}", "dst": f"d{i}", "start_jitter": "2ms"}
                                         for i in range(2)]}  # fmt: skip
    assert [f["start_jitter_ns"] for f in resolve(validate_spec(scenario))["flows"]] == [2e6] * 2
    scenario["duration"] = "1s"
    runs = [
        [f["bytes_delivered"] for f in tcplab.run({**scenario, "seed": seed}).flows]
        for seed in (1, 2)
    ]
    assert runs[0] != runs[1]


def test_the_simulator_finds_flows_without_a_route() -> None:
    scenario = dumbbell(1)
    scenario["links"] = scenario["links"][:1]  # s0 - r1 only: d0 is unreachable
    with pytest.raises(BackendError, match=r"flows\.0: no path"):
        tcplab.run(scenario)


def test_flows_sharing_a_bottleneck_split_it_fairly() -> None:
    result = tcplab.run(dumbbell(3))
    rows = result.flows
    assert [(r["src"], r["dst"]) for r in rows] == [("s0", "d0"), ("s1", "d1"), ("s2", "d2")]
    total = sum(r["goodput_bps"] for r in rows)
    # Three flows fill the 10 Mb/s bottleneck (less the headers) between them ...
    assert 9.0e6 < total < 10e6
    # ... in nearly equal shares: Jain's index is 1 for equal shares, 1/3 for one hog.
    assert result.summary["fairness"] > 0.95
    # The bottleneck's queue is where the flows meet: both its directions carry all three.
    bottleneck = [row for row in result.links if row["link"] == 3]
    assert bottleneck[0]["utilisation"] > 0.95


def test_the_model_backend_refuses_what_it_cannot_model() -> None:
    with pytest.raises(BackendError, match=r"flows: the model backend"):
        tcplab.run({**dumbbell(2), "backend": "model"})
    cpu = {"links": [LINK], "backend": "model",
           "hosts": [{"name": "a", "cpu": "pentium-133"}, {"name": "b"}]}  # fmt: skip
    with pytest.raises(BackendError, match=r"hosts\.0\.cpu: "):
        tcplab.run(cpu)
    paced = {"links": [LINK], "backend": "model", "app": {"write_delay": "5ms"}}
    with pytest.raises(BackendError, match=r"app\.write_delay_ns: "):
        tcplab.run(paced)
    slow_reader = {"links": [LINK], "backend": "model", "app": {"read_delay": "5ms"}}
    with pytest.raises(BackendError, match=r"app\.read_delay_ns: "):
        tcplab.run(slow_reader)


def test_request_response_runs_one_transaction_per_round_trip() -> None:
    # netperf TCP_RR with one-byte messages: a transaction is one round trip (10 ms of
    # propagation plus serialization), however Nagle and delayed ACKs are set, because
    # the response carries the request's ACK and the next request its own.
    result = tcplab.run(
        {"links": [LINK], "duration": "5s", "app": {"kind": "rr"}, "hosts": [
            {"name": "client", "tcp": {"profile": "windows-2000"}},
            {"name": "server", "tcp": {"profile": "windows-2000"}}]}
    )  # fmt: skip
    rr = result.summary["rr"]
    assert rr["latency_p50_s"] == pytest.approx(0.0101, rel=0.01)
    assert rr["latency_p99_s"] == pytest.approx(rr["latency_p50_s"], rel=0.01)
    assert rr["transactions_per_s"] == pytest.approx(1 / rr["latency_mean_s"], rel=0.01)


def test_large_responses_take_longer_transactions() -> None:
    def p50(response: str) -> float:
        app = {"kind": "rr", "request_size": "100B", "response_size": response}
        return tcplab.run({"links": [LINK], "duration": "5s", "app": app}).summary["rr"][
            "latency_p50_s"
        ]

    # 64 KiB at 10 Mb/s is ~54 ms of serialization, more than the 10 ms round trip.
    assert p50("64KiB") > p50("1KiB") + 0.04


def test_a_message_sent_both_ways_is_stored_then_forwarded() -> None:
    # Seed 003's voice messenger: 60 s recorded at 64 kb/s goes up to the server, and down
    # only once the server holds all of it; the receive time is the sum of both legs.
    def run(direction: str) -> tcplab.RunResult:
        app = {"kind": "message", "recording": "60s", "codec_rate": "64kbps",
               "message_size": "4KiB", "direction": direction}  # fmt: skip
        return tcplab.run({"links": [LINK], "duration": "60s", "app": app})

    both = run("both")
    assert both.summary["bytes_delivered"] == 2 * 480_000
    up, down = (row["completed_s"] for row in both.flows)
    assert [(r["src"], r["dst"]) for r in both.flows] == [
        ("client", "server"),
        ("server", "client"),
    ]
    assert up == pytest.approx(run("upstream").summary["elapsed_s"])
    # The downstream leg starts when the upstream ends and takes as long as on its own.
    assert down - up == pytest.approx(run("downstream").summary["elapsed_s"], rel=0.01)
    assert both.summary["elapsed_s"] == down


def test_a_later_flow_starts_at_its_start_time() -> None:
    scenario = dumbbell(2)
    scenario["flows"][1]["start"] = "5s"
    rows = tcplab.run(scenario).flows
    # Flow 1's goodput counts from its start, 15 of the run's 20 seconds.
    assert rows[1]["goodput_bps"] == pytest.approx(rows[1]["bytes_delivered"] * 8 / 15)
    assert rows[0]["goodput_bps"] == pytest.approx(rows[0]["bytes_delivered"] * 8 / 20)


def test_a_cpu_bound_sender_reports_its_utilisation_and_goodput_per_cpu() -> None:
    # 100 µs per packet and nothing else: two data packets and one ACK per 2920 bytes,
    # so the sender's CPU is full at 2920 · 8 / 300 µs = 77.9 Mb/s on a 1 Gb/s link.
    cpu = {"per_packet": "100us", "per_byte": "0ns", "per_call": "0ns"}
    tcp = {"profile": "windows-2000", "window_scaling": True, "sndbuf": "1MiB", "rcvbuf": "1MiB"}
    result = tcplab.run(
        {
            "duration": "5s",
            "links": [{"rate": "1Gbps", "delay": "1ms"}],
            "hosts": [{"name": "a", "cpu": cpu, "tcp": tcp}, {"name": "b", "tcp": tcp}],
            "app": {"kind": "bulk"},
        }
    )  # fmt: skip
    sender, receiver = result.hosts
    assert sender["cpu_utilisation"] > 0.99 and receiver["cpu_utilisation"] == 0.0
    assert result.summary["goodput_bps"] == pytest.approx(2920 * 8 / 300e-6, rel=0.02)
    assert sender["goodput_per_cpu_bps"] == pytest.approx(result.summary["goodput_bps"], rel=0.02)


@pytest.mark.parametrize("cpu", ["modern", "pentium4-2.4ghz"])
def test_a_reader_that_sleeps_after_each_read_takes_one_read_size_per_pause(cpu: str) -> None:
    # 100 KiB read 4 KiB at a time with a 10 ms sleep after each call: 25 calls and 24
    # sleeps between them, so at least 240 ms; the link (10 Mb/s, 10 ms round trip) and
    # the PC's costs add milliseconds, not another pause.
    app = {"kind": "file", "bytes": "100KiB", "read_size": "4KiB", "read_delay": "10ms"}
    hosts = [{"name": "a", "cpu": cpu}, {"name": "b", "cpu": cpu}]
    result = tcplab.run({"links": [LINK], "hosts": hosts, "app": app})
    assert result.summary["completed"]
    assert 0.240 <= result.summary["elapsed_s"] < 0.250 + 0.030
