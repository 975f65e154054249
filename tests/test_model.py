"""The model backend: each closed-form model by hand, then whole plans through run()."""

from __future__ import annotations

import json
import math
import re

import pytest
from conftest import make_plan

from tcplab.analytic.framing import wire_bytes
from tcplab.analytic.loss import (
    cubic_response_bps,
    mathis_bps,
    packet_error_rate,
    path_loss_probability,
    pftk_approx_bps,
    pftk_bps,
    rto_after_first_sample_s,
)
from tcplab.analytic.path import (
    effective_rtt_s,
    header_rtt_s,
    link_goodput_bound_bps,
    serialization_s,
)
from tcplab.analytic.slow_start import FluidTransfer, rounds_to_window, slow_start_rounds
from tcplab.analytic.window import window_bound_bps, window_in_flight_bytes, window_limit_bytes
from tcplab.backends import capabilities, model
from tcplab.backends.model import run
from tcplab.errors import BackendError, Unsupported
from tcplab.shared import RESULT_COLUMNS

# The GEO path of make_plan(): 2.048 Mb/s, 275 ms each way, PPP framing (2 bytes).
RATE = 2_048_000
DATA_WIRE = 1460 + 40 + 2  # 1502
ACK_WIRE = 40 + 2  # 42
RTT_EFF = 0.275 + 8 * DATA_WIRE / RATE + 0.275 + 8 * ACK_WIRE / RATE  # 0.5560313 s
HANDSHAKE = 0.55 + 2 * 8 * ACK_WIRE / RATE
LINK_BOUND = RATE * 1460 / DATA_WIRE  # 1 990 721 bit/s
W_EFF = 22 * 1460  # 32 KiB window, Nagle: 22 whole segments = 32120 bytes
WINDOW_BOUND = 8 * W_EFF / RTT_EFF  # 462 136 bit/s


# --- framing, serialization, bounds -------------------------------------------------------


def test_wire_bytes_pads_then_adds_overhead() -> None:
    assert wire_bytes(1500, 2, 0) == 1502
    # Ethernet (38 bytes of preamble, header, FCS, gap): a bare ACK is padded to 46.
    assert wire_bytes(40, 38, 46) == 84
    assert wire_bytes(1500, 38, 46) == 1538


def test_serialization_time() -> None:
    assert serialization_s(1502, RATE) == 8 * 1502 / RATE


def test_effective_rtt_and_link_bound_by_hand() -> None:
    plan = make_plan()
    assert effective_rtt_s(plan["links"], 1460) == pytest.approx(RTT_EFF, rel=1e-15)
    assert RTT_EFF == pytest.approx(0.5560313, abs=1e-7)
    assert link_goodput_bound_bps([plan["links"][0]["forward"]], 1460) == LINK_BOUND
    assert header_rtt_s(plan["links"]) == pytest.approx(HANDSHAKE, rel=1e-15)


def test_rtt_sums_over_links_of_different_speeds() -> None:
    fast = {
        "rate_bps": 100_000_000,
        "delay_ns": 1_000_000,
        "queue": {"packets": 100},
        "error": {"kind": "none"},
        "framing": {"overhead_bytes": 38, "min_payload_bytes": 46},
        "atm": None,
    }
    plan = make_plan()
    links = [{"forward": fast, "reverse": fast, "wlan": None}, plan["links"][0]]
    expected = RTT_EFF + 0.001 + 8 * 1538 / 1e8 + 0.001 + 8 * 84 / 1e8
    assert effective_rtt_s(links, 1460) == pytest.approx(expected, rel=1e-15)
    # The slower link is the bottleneck.
    assert link_goodput_bound_bps([fast, plan["links"][0]["forward"]], 1460) == LINK_BOUND


def test_window_limit_terms() -> None:
    assert window_limit_bytes(32768, 32768, False) == (32768, "rwnd")
    assert window_limit_bytes(16384, 32768, False) == (16384, "sndbuf")
    assert window_limit_bytes(1 << 20, 1 << 20, False) == (65535, "rwnd")
    assert window_limit_bytes(1 << 20, 1 << 19, True) == (1 << 19, "rwnd")


def test_nagle_drops_the_sub_mss_tail() -> None:
    assert window_in_flight_bytes(32768, 1460, nagle=True) == 32120
    assert window_in_flight_bytes(65535, 1460, nagle=True) == 44 * 1460
    assert window_in_flight_bytes(32768, 1460, nagle=False) == 32768
    assert window_in_flight_bytes(1000, 1460, nagle=True) == 1000


def test_window_65535_at_550_ms_is_953_kbps() -> None:
    # Kim & Song (2000): 64 KB / 550 ms ~ 953 000 bit/s whatever the link rate.
    assert round(window_bound_bps(65535, 0.55) / 1000) == 953


# --- loss ---------------------------------------------------------------------------------


def test_packet_error_rates() -> None:
    assert packet_error_rate({"kind": "none"}, 1502) == 0.0
    assert packet_error_rate({"kind": "loss", "p": 0.01}, 1502) == 0.01
    ber = packet_error_rate({"kind": "ber", "ber": 1e-6}, 1502)
    assert ber == pytest.approx(1 - (1 - 1e-6) ** (8 * 1502), rel=1e-9)
    ge = {"kind": "gilbert_elliott", "p_gb": 0.001, "p_bg": 0.1, "loss_good": 0.0,
          "loss_bad": 0.5}  # fmt: skip
    assert packet_error_rate(ge, 1502) == pytest.approx(0.001 / 0.101 * 0.5, rel=1e-12)
    stuck = {"kind": "gilbert_elliott", "p_gb": 0.0, "p_bg": 0.0, "loss_good": 0.02,
             "loss_bad": 1.0}  # fmt: skip
    assert packet_error_rate(stuck, 1502) == 0.02
    with pytest.raises(ValueError, match="accepted: none, loss, ber, gilbert_elliott"):
        packet_error_rate({"kind": "fade"}, 1502)


def test_path_loss_combines_hops() -> None:
    assert path_loss_probability([0.01, 0.02]) == pytest.approx(1 - 0.99 * 0.98)
    assert path_loss_probability([]) == 0.0


def test_rto_after_one_sample_is_three_rtt_or_the_minimum() -> None:
    assert rto_after_first_sample_s(0.55, 0.2) == pytest.approx(1.65)
    assert rto_after_first_sample_s(0.01, 0.2) == 0.2


# Padhye et al. on the GEO path: RTT 0.55 s, T0 1.1 s, MSS 1460, W_max 44, b = 2.
# (p, Mathis, PFTK full, PFTK approximation) in kb/s.
GEO_TABLE = [
    (1e-4, 1839, 885, 934),
    (1e-3, 582, 564, 579),
    (1e-2, 184, 163, 176),
    (1e-1, 58, 35, None),
]


@pytest.mark.parametrize(("p", "mathis", "full", "approx"), GEO_TABLE)
def test_pftk_and_mathis_geo_table(p: float, mathis: int, full: int, approx: int | None) -> None:
    assert round(mathis_bps(1460, 0.55, p, 2) / 1000) == mathis
    assert round(pftk_bps(1460, 0.55, p, 2, 44, 1.1) / 1000) == full
    if approx is not None:
        assert round(pftk_approx_bps(1460, 0.55, p, 2, 44, 1.1) / 1000) == approx


def test_pftk_approx_at_ten_percent_loss() -> None:
    # 1 / (0.55 sqrt(0.4/3) + 1.1 * 3 sqrt(0.075) * 0.1 * 1.32) packets/s * 11680 bits.
    expected = 11680 / (0.55 * math.sqrt(0.4 / 3) + 1.1 * 3 * math.sqrt(0.075) * 0.1 * 1.32)
    assert pftk_approx_bps(1460, 0.55, 0.1, 2, 44, 1.1) == pytest.approx(expected, rel=1e-14)
    assert round(expected) == 36486


def test_mathis_constant() -> None:
    # C = sqrt(3/2) = 1.22 with an ACK per segment.
    assert mathis_bps(1000, 1.0, 0.01, 1) == pytest.approx(8000 * math.sqrt(1.5) / 0.1)


def test_pftk_window_limited_tends_to_window_over_rtt() -> None:
    assert pftk_bps(1460, 0.55, 1e-9, 2, 44, 1.1) == pytest.approx(44 * 1460 * 8 / 0.55, rel=1e-3)


def test_pftk_without_fast_retransmit_is_all_timeouts() -> None:
    with_fr = pftk_bps(1460, 0.55, 1e-2, 2, 44, 1.1)
    without = pftk_bps(1460, 0.55, 1e-2, 2, 44, 1.1, fast_retransmit=False)
    assert without < with_fr
    assert pftk_bps(1460, 0.55, 1.0, 2, 44, 1.1) == 0.0
    with pytest.raises(ValueError):
        pftk_bps(1460, 0.55, 0.0, 2, 44, 1.1)


# --- slow start -----------------------------------------------------------------------------


def test_rounds_to_reach_a_44_segment_window() -> None:
    assert rounds_to_window(44, 1, 2.0) == 6
    assert rounds_to_window(44, 1, 1.5) == 10
    assert rounds_to_window(44, 4, 2.0) == 4
    assert rounds_to_window(44, 10, 2.0) == 3
    assert rounds_to_window(8, 8, 2.0) == 0


def test_rounds_to_deliver_segments() -> None:
    # IW 2, doubling: 2, 4, 8 -> 7 segments need 3 rounds, 6 need 2.
    assert slow_start_rounds(7, 2, 2.0) == 3
    assert slow_start_rounds(6, 2, 2.0) == 2
    assert slow_start_rounds(1, 1, 2.0) == 1
    # ceil(log_1.5(d (1.5-1)/IW + 1)) with d = 10, IW = 1: log_1.5(6) = 4.42 -> 5.
    assert slow_start_rounds(10, 1, 1.5) == 5


def test_fluid_delivery_inverts() -> None:
    fluid = FluidTransfer(0.5, 0.55, 2920.0, 2.0, 32120.0, 32120.0 / 0.55)
    for nbytes in (1.0, 2920.0, 5000.0, 43800.0, 1e6):
        t = fluid.time_to_deliver(nbytes)
        assert t is not None
        assert fluid.delivered(t) == pytest.approx(nbytes, rel=1e-12)
    assert fluid.delivered(0.5) == 0.0
    assert fluid.ss_rounds == 4 and fluid.ss_bytes == 2920 * 15


# --- whole plans ----------------------------------------------------------------------------


def test_geo_bulk_is_window_limited() -> None:
    result = run(make_plan())
    m = result["summary"]["model"]
    assert m["rtt_eff_s"] == pytest.approx(RTT_EFF, rel=1e-15)
    assert m["link_bound_bps"] == LINK_BOUND
    assert m["window_bytes"] == 32768 and m["window_in_flight_bytes"] == W_EFF
    assert m["window_bound_bps"] == pytest.approx(WINDOW_BOUND, rel=1e-15)
    assert m["steady_goodput_bps"] == m["window_bound_bps"]
    assert m["binding"] == "window"
    assert m["loss_probability"] == 0.0 and m["pftk_bps"] is None and m["mathis_bps"] is None
    assert result["summary"]["limited_by"] == {"rwnd": 1.0, "sndbuf": 0.0, "cwnd": 0.0, "app": 0.0}

    # Slow start from 2 segments doubling: 2920, 5840, 11680, 23360 (< 32120), then steady.
    assert m["slow_start_rounds"] == 4
    assert m["slow_start_bytes"] == 2920 * 15
    delivered = 43800 + (100.0 - HANDSHAKE - 4 * RTT_EFF) * WINDOW_BOUND / 8
    s = result["summary"]
    assert s["bytes_delivered"] == math.floor(delivered)
    assert s["elapsed_s"] == 100.0 and s["completed"] is True
    assert s["goodput_bps"] == pytest.approx(8 * math.floor(delivered) / 100.0, rel=1e-15)
    assert s["retransmits"] is None and s["timeouts"] is None and s["events"] == 0


def test_without_a_handshake_data_flows_from_the_start() -> None:
    # tcp.handshake = false (YATS, ns-2's one-way agents): the same ramp, one handshake
    # (a SYN and a SYN-ACK, HANDSHAKE seconds) earlier.
    with_handshake = run(make_plan())["summary"]
    without = run(make_plan(tcp__handshake=False))
    assert without["summary"]["model"]["handshake_s"] == 0.0
    extra = math.floor(43800 + (100.0 - 4 * RTT_EFF) * WINDOW_BOUND / 8)
    assert without["summary"]["bytes_delivered"] == extra
    assert extra - with_handshake["bytes_delivered"] == pytest.approx(
        HANDSHAKE * WINDOW_BOUND / 8, abs=1
    )


def test_series_adds_up_and_follows_the_ramp() -> None:
    result = run(make_plan())
    series = result["series"]
    assert series["t_s"] == [float(i) for i in range(1, 101)]
    assert sum(series["interval_bytes"]) == result["summary"]["bytes_delivered"]
    # Nothing arrives during the 0.55 s handshake; the first 0.45 s carries slow start's
    # first round at 2920 bytes per RTT.
    assert series["interval_bytes"][0] == math.floor((1.0 - HANDSHAKE) / RTT_EFF * 2920)
    # Steady state: one window per RTT.
    assert series["interval_bytes"][50] == pytest.approx(WINDOW_BOUND / 8, abs=1)


def test_series_keeps_a_last_partial_interval() -> None:
    result = run(make_plan(duration_ns=2_500_000_000))
    assert result["series"]["t_s"] == [1.0, 2.0, 2.5]
    assert sum(result["series"]["interval_bytes"]) == result["summary"]["bytes_delivered"]


def test_trace_follows_the_same_evolution() -> None:
    result = run(make_plan())
    trace = result["trace"]
    assert len(trace["t_s"]) == 10_000 and trace["t_s"][0] == 0.01
    i_before = 53  # t = 0.54 s, before the handshake ends
    assert trace["srtt_s"][i_before] == 0.0 and trace["cwnd_bytes"][i_before] == 2920
    i_after = 60  # t = 0.61 s: first round
    assert (
        trace["srtt_s"][i_after] == pytest.approx(RTT_EFF, rel=1e-15)
        and trace["cwnd_bytes"][i_after] == 2920
    )
    assert trace["cwnd_bytes"][-1] == W_EFF
    assert set(trace["rwnd_bytes"]) == {32768}
    assert set(trace["ssthresh_bytes"]) == {2**32 - 1}
    assert result["flows"][0]["final_cwnd_bytes"] == W_EFF


def test_result_has_the_simulator_schema() -> None:
    # The columns are the Rust core's (crates/sim/src/result.rs via tcplab.shared).
    result = run(make_plan())
    assert set(result) == {"summary", "flows", "hosts", "links", "series", "trace", "streams"}
    assert set(result["summary"]) == {*RESULT_COLUMNS["summary"], "model"}
    for part in ("flows", "hosts", "links"):
        assert all(set(row) == set(RESULT_COLUMNS[part]) for row in result[part]), part
    assert [(r["link"], r["direction"]) for r in result["links"]] == [
        (0, "forward"),
        (0, "reverse"),
    ]
    assert set(result["trace"]) == set(RESULT_COLUMNS["trace"])
    assert sum(result["summary"]["limited_by"].values()) == 1.0
    json.dumps(result, allow_nan=False)  # plain JSON, no inf/nan


def test_link_utilisation() -> None:
    result = run(make_plan())
    segments = math.ceil(result["summary"]["bytes_delivered"] / 1460)
    fwd, rev = result["links"]
    assert fwd["utilisation"] == pytest.approx(segments * DATA_WIRE * 8 / RATE / 100.0)
    assert rev["utilisation"] == pytest.approx(segments * ACK_WIRE * 8 / RATE / 100.0)


def test_sndbuf_smaller_than_rcvbuf_limits() -> None:
    result = run(make_plan(hosts__0__tcp__sndbuf=8192))
    m = result["summary"]["model"]
    assert m["window_in_flight_bytes"] == 5 * 1460
    assert m["window_bound_bps"] == pytest.approx(8 * 5 * 1460 / RTT_EFF)
    assert result["summary"]["limited_by"]["sndbuf"] == 1.0


def test_nagle_off_uses_the_whole_window() -> None:
    m = run(make_plan(tcp__nagle=False))["summary"]["model"]
    assert m["window_in_flight_bytes"] == 32768
    assert m["window_bound_bps"] == pytest.approx(8 * 32768 / RTT_EFF)


def test_unscaled_window_stops_at_65535_if_either_side_lacks_scaling() -> None:
    plan = make_plan(tcp__sndbuf=1 << 20, tcp__rcvbuf=1 << 20, hosts__0__tcp__window_scaling=True)
    m = run(plan)["summary"]["model"]
    assert m["window_bytes"] == 65535 and m["window_in_flight_bytes"] == 44 * 1460
    assert m["window_bound_bps"] == pytest.approx(8 * 44 * 1460 / RTT_EFF)


def test_scaled_window_makes_the_link_bind() -> None:
    plan = make_plan(tcp__sndbuf=1 << 20, tcp__rcvbuf=1 << 20, tcp__window_scaling=True)
    result = run(plan)
    m = result["summary"]["model"]
    assert m["binding"] == "link" and m["steady_goodput_bps"] == LINK_BOUND
    # 1 MiB exceeds the pipe (LINK_BOUND * RTT / 8 = 138 kB) plus 100 queued segments.
    assert result["summary"]["limited_by"]["cwnd"] == 1.0
    assert any("drop-tail" in note for note in m["notes"])
    # A queue that holds the excess leaves the receive window as the limit.
    plan["links"][0]["forward"]["queue"] = {"packets": 1000}
    result = run(plan)
    assert result["summary"]["limited_by"]["rwnd"] == 1.0
    assert result["summary"]["model"]["notes"] == []


def test_slow_ack_path_binds() -> None:
    # 9.6 kb/s back: 9600 / (8 * 42) ACKs/s, each for one 1460-byte segment.
    result = run(make_plan(links__0__reverse__rate_bps=9600))
    m = result["summary"]["model"]
    assert m["ack_path_bound_bps"] == pytest.approx(9600 / (8 * 42) * 1460 * 8)
    assert m["binding"] == "ack_path"
    assert m["steady_goodput_bps"] == m["ack_path_bound_bps"]
    assert m["rtt_eff_s"] == pytest.approx(0.55 + 8 * DATA_WIRE / RATE + 8 * 42 / 9600)


def test_loss_uses_pftk_with_rfc6298_t0() -> None:
    plan = make_plan(links__0__forward__error={"kind": "loss", "p": 0.01})
    result = run(plan)
    m = result["summary"]["model"]
    t0 = 3 * RTT_EFF  # max(200 ms, RTT + 4 RTT/2)
    assert m["loss_probability"] == 0.01
    assert m["rto_s"] == pytest.approx(t0)
    assert m["w_max_segments"] == 22
    assert m["pftk_bps"] == pytest.approx(pftk_bps(1460, RTT_EFF, 0.01, 1, 22, t0), rel=1e-14)
    assert m["mathis_bps"] == pytest.approx(mathis_bps(1460, RTT_EFF, 0.01, 1), rel=1e-14)
    assert m["binding"] == "loss"
    assert m["steady_goodput_bps"] == m["pftk_bps"] < WINDOW_BOUND
    assert result["summary"]["limited_by"]["cwnd"] == 1.0


def test_ber_on_two_hops_combines() -> None:
    direction = make_plan()["links"][0]["forward"] | {"error": {"kind": "ber", "ber": 1e-6}}
    plan = make_plan(links=[{"forward": direction, "reverse": direction, "wlan": None}] * 2)
    m = run(plan)["summary"]["model"]
    per = 1 - (1 - 1e-6) ** (8 * DATA_WIRE)
    assert m["data_loss_per_link"] == pytest.approx([per, per], rel=1e-9)
    assert m["loss_probability"] == pytest.approx(1 - (1 - per) ** 2, rel=1e-9)
    assert m["ack_loss_probability"] == pytest.approx(1 - (1 - 1e-6) ** (8 * 42 * 2), rel=1e-6)


def test_delayed_ack_changes_b_and_gamma() -> None:
    plan = make_plan(tcp__delayed_ack=True, links__0__forward__error={"kind": "loss", "p": 0.01})
    m = run(plan)["summary"]["model"]
    assert m["segments_per_ack"] == 2 and m["slow_start_gamma"] == 1.5
    assert m["mathis_bps"] == pytest.approx(mathis_bps(1460, RTT_EFF, 0.01, 2), rel=1e-14)


def test_small_file_ends_in_slow_start() -> None:
    # 10 000 bytes from IW 2: rounds of 2920 and 5840 (8760 bytes), then 1240 bytes of the
    # third round's 11680, delivered at 11680 bytes per RTT.
    plan = make_plan(app={"kind": "file", "message_size": 65536, "bytes": 10_000})
    result = run(plan)
    s, m = result["summary"], result["summary"]["model"]
    assert s["elapsed_s"] == pytest.approx(HANDSHAKE + (2 + 1240 / 11680) * RTT_EFF, rel=1e-12)
    assert s["completed"] is True
    assert s["bytes_delivered"] == s["bytes_written"] == 10_000
    assert s["goodput_bps"] == pytest.approx(8 * 10_000 / s["elapsed_s"])
    assert m["file_segments"] == 7 and m["file_slow_start_rounds"] == 3
    assert sum(result["series"]["interval_bytes"]) == 10_000
    assert result["series"]["t_s"][-1] == s["elapsed_s"]


def test_large_file_adds_steady_remainder() -> None:
    plan = make_plan(app={"kind": "file", "message_size": 65536, "bytes": 2_097_152})
    s = run(plan)["summary"]
    expected = HANDSHAKE + 4 * RTT_EFF + (2_097_152 - 43800) * 8 / WINDOW_BOUND
    assert s["elapsed_s"] == pytest.approx(expected, rel=1e-12)
    assert s["model"]["file_slow_start_rounds"] is None


def test_file_cut_off_by_duration() -> None:
    plan = make_plan(
        duration_ns=3_000_000_000, app={"kind": "file", "message_size": 65536, "bytes": 10**7}
    )
    s = run(plan)["summary"]
    assert s["completed"] is False and s["elapsed_s"] == 3.0 and s["bytes_written"] is None
    assert 0 < s["bytes_delivered"] < 10**7


def test_total_loss_delivers_nothing() -> None:
    plan = make_plan(
        links__0__forward__error={"kind": "loss", "p": 1.0},
        app={"kind": "file", "message_size": 65536, "bytes": 10_000},
    )
    s = run(plan)["summary"]
    assert s["bytes_delivered"] == 0 and s["completed"] is False and s["goodput_bps"] == 0.0


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"hosts": [make_plan()["hosts"][0]]}, "hosts"),
        ({"hosts__0__tcp__cc": "bbr"}, "hosts.0.tcp.cc"),
        ({"links__0__reverse__rate_bps": 0}, "links.0.reverse.rate_bps"),
        ({"links__0__forward__error": {"kind": "fade"}}, "links.0.forward.error.kind"),
        ({"app": {"kind": "file", "message_size": 1, "bytes": None}}, "app.bytes"),
        ({"app": {"kind": "rr", "message_size": 1, "bytes": None}}, "app.kind"),
        (
            {"app": {"kind": "bulk", "message_size": 1, "bytes": None, "parallel": 2}},
            "app.parallel",
        ),
        ({"links": []}, "links"),
    ],
)
def test_refusals_name_the_field(overrides: dict, field: str) -> None:
    # What the model does not honour is refused by the capability registry before a run,
    # a plan its formulas cannot read by the backend itself; both name the plan field.
    plan = make_plan(**overrides)
    with pytest.raises(BackendError, match=re.escape(field) + ":") as raised:
        capabilities.check(plan, "model")
        run(plan)
    assert raised.value.field == field


def test_cubic_under_loss_takes_the_larger_of_its_response_and_pftk() -> None:
    # RFC 9438 §5.1: (C(3+β)/(4(1−β)))^(1/4) · RTT^(3/4) / p^(3/4) segments on average.
    rtt, p = 0.1, 1e-4
    window = (0.4 * 3.7 / (4 * 0.3)) ** 0.25 * rtt**0.75 / p**0.75
    assert cubic_response_bps(1000, rtt, p, 10_000) == pytest.approx(8000 * window / rtt)
    assert cubic_response_bps(1000, rtt, p, 10) == pytest.approx(8000 * 10 / rtt)
    lossy = make_plan(tcp__cc="cubic", links__0__forward__error={"kind": "ber", "ber": 1e-6})
    m = model.run(lossy)["summary"]["model"]
    assert m["cubic_bps"] is not None
    reno = model.run(make_plan(links__0__forward__error={"kind": "ber", "ber": 1e-6}))
    assert reno["summary"]["model"]["cubic_bps"] is None


def test_model_has_no_hybla() -> None:
    with pytest.raises(Unsupported, match=r"hosts\.0\.tcp\.cc") as raised:
        capabilities.check(make_plan(tcp__cc="hybla"), "model")
    assert raised.value.supported_by == ("sim", "emu")


def test_model_refuses_rack_with_sack_only_where_it_would_recover_losses() -> None:
    # PFTK's timeout term is recovery by duplicate ACKs'; RACK-TLP (RFC 8985) probes a
    # tail loss instead of waiting for the RTO, so the formula does not hold for it.
    rack = {"tcp__sack": True, "tcp__loss_recovery": "rack"}
    loss = {"links__0__forward__error": {"kind": "loss", "p": 0.01}}
    with pytest.raises(Unsupported, match=r"hosts\.0\.tcp\.loss_recovery") as raised:
        capabilities.check(make_plan(**rack, **loss), "model")
    assert raised.value.supported_by == ("sim", "emu")
    # Without losses there is nothing to recover; without SACK RACK is classic recovery.
    capabilities.check(make_plan(**rack), "model")
    capabilities.check(make_plan(**loss, tcp__loss_recovery="rack"), "model")

