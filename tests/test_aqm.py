"""Queue disciplines (docs/models/aqm.md): the [links.queue] table's kinds, defaults and
errors, the plan they resolve to, the backends that run them, and FQ-CoDel against
bufferbloat (#18's done-when) on the simulator. The rules of each AQM are unit-tested
beside their code (crates/sim/src/net/aqm/)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import tcplab
from tcplab.plan import resolve
from tcplab.spec import validate_spec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "fq-codel-bufferbloat.toml"
MS = 1_000_000


def path(**queue: Any) -> dict[str, Any]:
    return {
        "duration": "1s",
        "links": [{"rate": "10Mbps", "delay": "10ms", "queue": queue}],
    }


def forward(spec: dict[str, Any]) -> dict[str, Any]:
    plan: dict[str, Any] = resolve(validate_spec(spec))
    return plan["links"][0]["forward"]


def problems(spec: dict[str, Any]) -> list[str]:
    with pytest.raises(tcplab.SpecError) as error:
        validate_spec(spec)
    return error.value.problems


def test_drop_tail_plans_have_no_discipline() -> None:
    channel = forward(path())
    assert channel["queue"] == {"packets": 100}
    assert channel["aqm"] is None


def test_each_kind_defaults_to_its_rfcs_parameters() -> None:
    fq_codel = forward(path(kind="fq_codel"))
    assert fq_codel["queue"] == {"packets": 10240}  # RFC 8290 §5.2.3
    assert fq_codel["aqm"] == {
        "kind": "fq_codel",
        "target_ns": 5 * MS,  # §5.2.2
        "interval_ns": 100 * MS,  # §5.2.1
        "flows": 1024,  # §5.2.5
        "quantum": 1514,  # §5.2.4
        "ecn": True,  # §5.2.6, Linux's default
    }
    codel = forward(path(kind="codel"))
    assert codel["aqm"] == {
        "kind": "codel",
        "target_ns": 5 * MS,  # RFC 8289 §4.4
        "interval_ns": 100 * MS,  # §4.3
        "ecn": False,
    }
    assert codel["queue"] == {"packets": 1000}  # Linux's sch_codel
    pie = forward(path(kind="pie"))["aqm"]
    # RFC 8033 §4.2 and §4.4.
    assert (pie["target_ns"], pie["t_update_ns"]) == (15 * MS, 15 * MS)
    assert pie["max_burst_ns"] == 150 * MS
    assert (pie["alpha"], pie["beta"]) == (0.125, 1.25)
    red = forward(path(kind="red"))["aqm"]
    assert (red["min_th"], red["max_th"], red["max_p"], red["w_q"]) == (5, 15, 0.1, 0.002)


def test_a_given_parameter_replaces_the_default() -> None:
    aqm = forward(path(kind="codel", target="2ms", ecn=True, limit="64KiB"))
    assert aqm["aqm"]["target_ns"] == 2 * MS and aqm["aqm"]["ecn"] is True
    assert aqm["queue"] == {"bytes": 65536}


def test_red_thresholds_follow_a_byte_limit() -> None:
    red = forward(path(kind="red", limit="150000B"))["aqm"]
    assert (red["min_th"], red["max_th"]) == (5000, 15000)


@pytest.mark.parametrize(
    ("queue", "expect"),
    [
        ({"kind": "codel", "flows": 16}, 'flows: not a parameter of kind = "codel"; it is one of'),
        ({"target": "5ms"}, 'target: not a parameter of kind = "droptail"'),
        ({"kind": "red", "min_th": "5KiB"}, "min_th: 5KiB counts bytes"),
        ({"kind": "red", "min_th": "20p"}, "max_th: 15p must be above min_th (20p)"),
        ({"kind": "fq_codel", "flows": 0}, "flows"),
        ({"kind": "blue"}, "kind"),
    ],
)
def test_bad_queue_tables_name_the_field(queue: dict[str, Any], expect: str) -> None:
    found = problems(path(**queue))
    assert any(p.startswith("links.0.queue") and expect in p for p in found), found


def test_a_wlan_station_queue_stays_drop_tail() -> None:
    spec = path(kind="codel")
    spec["links"][0] |= {"kind": "wlan", "rate": "11Mbps"}
    assert any("wlan station's queue is drop-tail" in p for p in problems(spec))


def test_the_model_refuses_an_aqm() -> None:
    with pytest.raises(tcplab.Unsupported) as error:
        tcplab.run(path(kind="fq_codel"), backend="model")
    assert error.value.field == "links.0.forward.aqm"
    assert error.value.supported_by == ("sim", "emu")


def bufferbloat(kind: str) -> tcplab.RunResult:
    """The example for 10 s with the bottleneck's queue of `kind` (500 packets either way)."""
    spec = copy.deepcopy(tcplab.load_spec(EXAMPLE).model_dump(mode="json", exclude_none=True))
    spec["duration"] = "10s"
    spec["links"][1]["queue"] = {"kind": kind, "limit": "500p"}
    return tcplab.run(spec)


# The path's bare round trip: 2 × (1 ms + 20 ms) of propagation.
BASE_RTT_S = 0.042


def test_fq_codel_holds_the_queue_where_drop_tail_fills_the_buffer() -> None:
    """#18: under a bulk CUBIC flow FQ-CoDel keeps the standing queue near its 5 ms target
    and a request/response flow near the bare round trip; drop-tail lets the queue grow to
    the buffer (500 packets = 0.6 s at 10 Mb/s) and adds it to every transaction."""
    results = {kind: bufferbloat(kind) for kind in ("fq_codel", "droptail")}
    srtt = {}
    for kind, result in results.items():
        trace = result.trace_frame()
        bulk = trace[(trace["flow"] == 0) & (trace["t_s"] >= 3.0)]
        srtt[kind] = float(bulk["srtt_s"].median())
    rr = {kind: r.summary["rr"] for kind, r in results.items()}
    # The bottleneck's queue per interval (the result's `queue` part), from 3 s on.
    queue = {}
    for kind, result in results.items():
        q = result.queue_frame()
        queue[kind] = q[(q["link"] == 1) & (q["direction"] == "forward") & (q["t_s"] > 3.0)]
    # FQ-CoDel: packets wait a few ms on average in every interval, never near 20 ms.
    assert queue["fq_codel"]["sojourn_mean_s"].max() < 0.005, queue["fq_codel"]
    assert queue["fq_codel"]["sojourn_max_s"].max() < 0.020, queue["fq_codel"]
    # Drop-tail: the queue grows towards the buffer, and the wait with it.
    assert queue["droptail"]["packets_max"].max() > 400, queue["droptail"]
    assert queue["droptail"]["sojourn_mean_s"].max() > 0.4, queue["droptail"]
    # FQ-CoDel: the bulk flow's queueing delay (srtt over the bare round trip) near 5 ms.
    assert srtt["fq_codel"] - BASE_RTT_S < 0.010, srtt
    # Its transactions take the round trip and a few serializations, not the queue.
    assert rr["fq_codel"]["latency_p99_s"] < BASE_RTT_S + 0.010, rr
    # Drop-tail: the bulk flow's queue holds hundreds of milliseconds ...
    assert srtt["droptail"] - BASE_RTT_S > 0.3, srtt
    # ... and every transaction waits behind it.
    assert rr["droptail"]["latency_p50_s"] > BASE_RTT_S + 0.2, rr
    # Both keep the line busy.
    for result in results.values():
        assert result.summary["goodput_bps"] > 8.5e6


def test_ecn_defaults_as_each_stack_negotiates_it() -> None:
    """Linux's net.ipv4.tcp_ecn = 2 accepts ECN but never asks: passive; Windows: off."""

    def ecn(*tcp: dict[str, Any]) -> list[str]:
        hosts = [{"name": name, "tcp": t} for name, t in zip("ab", tcp, strict=True)]
        plan = resolve(validate_spec({**path(), "hosts": hosts}))
        return [h["tcp"]["ecn"] for h in plan["hosts"]]

    assert ecn({"profile": "linux"}, {"profile": "windows-95"}) == ["passive", "off"]
    assert ecn({"profile": "windows-95", "ecn": "on"}, {}) == ["on", "passive"]
    bad = problems({**path(), "hosts": [{"name": "a", "tcp": {"ecn": 1}}, {"name": "b"}]})
    assert any(p.startswith("hosts.0.tcp.ecn") for p in bad), bad


def test_with_ecn_fq_codel_marks_instead_of_dropping() -> None:
    """RFC 3168 with RFC 8290 §5.2.6: a client that asks for ECN (the server's Linux
    default accepts) has its bulk flow's queue held by CE marks, answered by the sender's
    window reductions: the same short queue with no retransmission at all."""
    spec = tcplab.load_spec(EXAMPLE).model_dump(mode="json", exclude_none=True)
    spec["duration"] = "10s"
    spec["hosts"][0]["tcp"]["ecn"] = "on"
    result = tcplab.run(spec)
    trace = result.trace_frame()
    bulk = trace[(trace["flow"] == 0) & (trace["t_s"] >= 3.0)]
    assert result.summary["retransmits"] == 0
    assert float(bulk["srtt_s"].median()) - BASE_RTT_S < 0.010
    assert result.summary["rr"]["latency_p99_s"] < BASE_RTT_S + 0.010
    assert result.summary["goodput_bps"] > 8.5e6
