"""Links that change over the run (docs/models/schedules.md): the scenario's schedule rows
and trace files, their plan, the simulator following them, and the backends that refuse.
The Rust rules (a frame straddling a step, outages, ramps, FIFO delivery, mahimahi's
opportunities) are unit-tested in crates/sim/src/net/schedule.rs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from contract import check_plan

import tcplab
from tcplab.api import prepare
from tcplab.errors import SpecError, Unsupported
from tcplab.plan import resolve
from tcplab.presets import traces
from tcplab.spec import validate_spec

MBPS = 1_000_000
ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "examples" / "traces" / "varying-10mbps.trace"
# Full-size frames on a p2p link: 1460 bytes of payload in 1508 on the wire.
PAYLOAD_SHARE = 1460 / 1508


def scenario(**link: Any) -> dict[str, Any]:
    """A bulk flow whose 96 KiB window fills a 10 Mb/s, 20 ms path (25 KB) and its queue
    never overflows (200 packets), so that goodput is the line's rate at every moment."""
    tcp = {"sndbuf": "256KiB", "rcvbuf": "96KiB"}
    return {
        "name": "scheduled",
        "duration": "6s",
        "seed": 1,
        "hosts": [{"name": "a", "tcp": tcp}, {"name": "b", "tcp": tcp}],
        "links": [
            {"rate": "10Mbps", "delay": "10ms", "queue": {"limit": "200p"}, **link},
        ],
        "app": {"kind": "bulk"},
    }


STEPS = [{"at": "2s", "rate": "2Mbps"}, {"at": "4s", "rate": "10Mbps"}]


def problems(spec: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as caught:
        validate_spec(spec)
    return str(caught.value)


def test_goodput_follows_a_rate_that_steps_10_2_10_mbps() -> None:
    goodputs = tcplab.run(scenario(schedule=STEPS), backend="sim").interval_goodputs()
    assert goodputs == pytest.approx(line_goodputs(STEPS), rel=0.01)


def line_goodputs(steps: list[dict[str, str]], delay_s: float = 0.01) -> list[float]:
    """What a line stepping through `steps` (from 10 Mb/s) delivers in each of 6 seconds:
    second s receives what left in [s - delay, s + 1 - delay). The first second loses the
    handshake's round trip and slow start's first round trips, about 30 ms of line."""
    changes = [(0.0, 10.0)] + [(int(r["at"][:-1]), float(r["rate"][:-4])) for r in steps]

    def rate(t: float) -> float:
        return [mbps for at, mbps in changes if at <= t][-1]

    ms = [rate(i / 1000) for i in range(6000)]
    seconds = []
    for s in range(6):
        window = range(max(0, round((s - delay_s) * 1000)), round((s + 1 - delay_s) * 1000))
        seconds.append(sum(ms[i] for i in window) / 1000 * MBPS * PAYLOAD_SHARE)
    seconds[0] *= 0.97
    return seconds


def test_a_schedule_is_deterministic_and_a_link_without_one_plans_as_before() -> None:
    runs = [tcplab.run(scenario(schedule=STEPS), backend="sim").summary for _ in range(2)]
    assert runs[0] == runs[1]
    plain = resolve(prepare(scenario()))
    assert plain["links"][0]["forward"]["schedule"] is None
    assert plain["links"][0]["reverse"]["schedule"] is None


def test_each_field_a_row_sets_becomes_a_table_from_time_zero() -> None:
    rows = [
        {"at": "1s", "rate": "2Mbps", "loss": 0.01},
        {"at": "2s", "delay": "30ms", "up": False},
        {"at": "2.5s", "up": True, "ber": 1e-6},
    ]
    link = resolve(prepare(scenario(schedule=rows, schedule_interpolation="linear")))["links"][0]
    schedule = link["forward"]["schedule"]
    assert schedule["rate_bps"] == {"linear": True, "points": [[0, 10 * MBPS], [10**9, 2 * MBPS]]}
    assert schedule["delay_ns"]["points"] == [[0, 10_000_000], [2 * 10**9, 30_000_000]]
    assert schedule["error"] == [
        [0, {"kind": "none"}],
        [10**9, {"kind": "loss", "p": 0.01}],
        [2_500_000_000, {"kind": "ber", "ber": 1e-6}],
    ]
    assert schedule["up"] == [[0, True], [2 * 10**9, False], [2_500_000_000, True]]
    assert link["reverse"]["schedule"] is None
    check_plan(resolve(prepare(scenario(schedule=rows))))


def test_an_ebno_row_becomes_the_ber_of_the_directions_curve() -> None:
    spec = scenario(
        ber_curve="qpsk",
        ebno_db=10.0,
        schedule=[{"at": "1s", "ebno_db": 4.0}],
    )
    error = resolve(prepare(spec))["links"][0]["forward"]["schedule"]["error"]
    ber = tcplab.analytic.ber_curves.ber_from_ebno("qpsk", 4.0)
    assert error[1] == [10**9, {"kind": "ber", "ber": ber}]
    assert error[0][1]["kind"] == "ber"


def test_an_outage_stops_delivery_and_the_flow_recovers_after_it() -> None:
    rows = [{"at": "2s", "up": False}, {"at": "3s", "up": True}]
    goodputs = tcplab.run(scenario(schedule=rows), backend="sim").interval_goodputs()
    line = 10 * MBPS * PAYLOAD_SHARE
    # Only what was propagating when the line went down (10 ms of it) arrives in second 2.
    assert goodputs[2] == pytest.approx(0.01 * line, rel=0.1)
    # The sender's retransmission timer fired during the outage; the queue it had filled
    # refills the line as soon as it is back, and a second later the flow is at full rate.
    assert goodputs[3] > 0.85 * line
    assert goodputs[4] == pytest.approx(line, rel=0.01)


@pytest.mark.parametrize(
    ("link", "message"),
    [
        (
            {"schedule": [{"at": "1s", "rate": "2Mbs"}]},
            'links.0.schedule.0.rate: "2Mbs" is not a data rate: unknown unit "Mbs"',
        ),
        ({"schedule": [{"at": "1s"}]}, "links.0.schedule.0: sets nothing; give at least one of"),
        (
            {"schedule": [{"at": "1s", "loss": 0.1, "ber": 1e-6}]},
            "loss and ber: a row sets at most one error model",
        ),
        (
            {"schedule": [{"at": "2s", "rate": "1Mbps"}, {"at": "1s", "rate": "2Mbps"}]},
            "schedule.1.at: comes before the row above",
        ),
        (
            {"schedule": [{"at": "1s", "ebno_db": 3.0}]},
            "schedule.0.ebno_db: needs ber_curve",
        ),
        ({"schedule": [{"at": "1s", "rat": "2Mbps"}]}, "did you mean 'rate'"),
        (
            {"schedule_interpolation": "cubic"},
            "schedule_interpolation: \"cubic\" is not accepted; accepted values: 'step' or",
        ),
        (
            {"kind": "wlan", "rate": "11Mbps", "schedule": [{"at": "1s", "delay": "1ms"}]},
            "only for p2p and ethernet links",
        ),
    ],
)
def test_bad_schedules_are_refused_naming_the_field(link: dict[str, Any], message: str) -> None:
    assert message in problems(scenario(**link))


def test_a_schedule_csv_is_read_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "steps.csv").write_text("at,rate,up\n2s,2Mbps,\n4s,10Mbps,true\n")
    (tmp_path / "run.toml").write_text(
        'duration = "6s"\n[[links]]\nrate = "10Mbps"\ndelay = "10ms"\nschedule = "steps.csv"\n'
    )
    spec = tcplab.load_spec(tmp_path / "run.toml")
    rows = spec.links[0].schedule
    assert rows is not None
    assert [(row.at, row.rate, row.up) for row in rows] == [
        (2 * 10**9, 2 * MBPS, None),
        (4 * 10**9, 10 * MBPS, True),
    ]


def test_a_csv_with_an_unknown_column_names_it_and_the_accepted_ones(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("at,delya\n1s,10ms\n")
    (tmp_path / "run.toml").write_text(
        '[[links]]\nrate = "10Mbps"\ndelay = "10ms"\nschedule = "bad.csv"\n'
    )
    with pytest.raises(SpecError, match=r"column \"delya\" is not a schedule field \(did you mean"):
        tcplab.load_spec(tmp_path / "run.toml")


def test_the_model_backend_refuses_a_schedule() -> None:
    with pytest.raises(Unsupported, match="links.0.forward.schedule runs on: sim, emu"):
        tcplab.run(scenario(schedule=STEPS), backend="model")


def test_the_emu_backend_refuses_a_schedule_it_cannot_start() -> None:
    spec = scenario(schedule=STEPS)
    spec["app"] = {"kind": "bulk", "tool": "iperf3"}
    with pytest.raises(Unsupported, match="starts a schedule's clock"):
        tcplab.run(spec, backend="emu")


def trace_goodputs(seconds: int, delay_s: float = 0.01) -> list[float]:
    """What the shipped trace delivers each second as TCP payload: 1460 bytes per
    opportunity, second s receiving the opportunities in [s - delay, s + 1 - delay)."""
    times = traces.opportunities(traces.varying_10mbps, 4000)
    period = times[-1]
    looped = [ms + cycle * period for cycle in range(seconds // 4 + 1) for ms in times]
    return [
        sum(1 for ms in looped if (s - delay_s) * 1000 <= ms < (s + 1 - delay_s) * 1000) * 1460 * 8
        for s in range(seconds)
    ]


def test_the_shipped_trace_is_what_its_generator_writes() -> None:
    times = traces.opportunities(traces.varying_10mbps, 4000)
    assert TRACE.read_text() == "".join(f"{ms}\n" for ms in times)
    # 10 Mb/s on average, in whole 1500-byte packets.
    assert traces.capacity_bps(times) == pytest.approx(10 * MBPS, rel=1e-3)


def test_a_trace_drives_goodput_to_its_capacity_each_second() -> None:
    spec = {**scenario(trace=str(TRACE)), "duration": "4s"}
    goodputs = tcplab.run(spec, backend="sim").interval_goodputs()
    expected = trace_goodputs(4)
    # The first second loses the handshake and slow start; after it, the line's capacity.
    assert goodputs[0] == pytest.approx(expected[0], rel=0.05)
    assert goodputs[1:] == pytest.approx(expected[1:], rel=0.01)


def test_a_trace_file_is_read_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "t.trace").write_text("1\n1\n3\n")
    (tmp_path / "run.toml").write_text(
        '[[links]]\nrate = "1Mbps"\ndelay = "1ms"\ntrace = "t.trace"\n'
    )
    spec = tcplab.load_spec(tmp_path / "run.toml")
    opportunities = resolve(spec)["links"][0]["forward"]["schedule"]["trace"]
    # 1500 IP bytes and PPP's 2 per opportunity.
    assert opportunities == {
        "opportunities_ns": [1_000_000, 1_000_000, 3_000_000],
        "bytes_per_opportunity": 1502,
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "a trace needs at least one opportunity after 0 ms"),
        ("5\n3\n", "line 2: 3 ms comes before the line above"),
        ("1.5\n", 'line 1: "1.5" is not a whole number of milliseconds'),
    ],
)
def test_bad_traces_are_refused_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "t.trace").write_text(text)
    spec = scenario(trace=str(tmp_path / "t.trace"))
    assert message in problems(spec)
    assert "links.0.trace" in problems(spec)


def test_a_trace_leaves_no_room_for_rate_rows() -> None:
    spec = scenario(trace=str(TRACE), schedule=[{"at": "1s", "rate": "1Mbps"}])
    assert "trace gives this direction's rate and state" in problems(spec)


def test_a_trace_path_the_filesystem_cannot_hold_is_a_clean_error(tmp_path: Path) -> None:
    (tmp_path / "run.toml").write_text(
        '[[links]]\nrate = "1Mbps"\ndelay = "1ms"\ntrace = "a\\u0000b"\n'
    )
    with pytest.raises(SpecError, match="links.0.trace: .*cannot read the trace file"):
        tcplab.load_spec(tmp_path / "run.toml")


def test_a_sweep_ranges_over_schedule_files_and_preset_parameters(tmp_path: Path) -> None:
    (tmp_path / "slow.csv").write_text("at,rate\n1s,2Mbps\n")
    (tmp_path / "fast.csv").write_text("at,rate\n1s,8Mbps\n")
    (tmp_path / "files.toml").write_text(
        'duration = "3s"\n[[links]]\nrate = "10Mbps"\ndelay = "10ms"\n'
        '[sweep]\n"links.0.schedule" = ["slow.csv", "fast.csv"]\n'
    )
    store = tcplab.sweep(tmp_path / "files.toml", out=tmp_path / "a", backend="sim", jobs=1)
    # A point is named by its rows, which the store keeps as the swept value.
    goodput = {
        "slow" if "2Mbps" in row["links.0.schedule"] else "fast": row["goodput_bps"]
        for row in store.aggregate().to_dict("records")
    }
    assert goodput["slow"] < 0.6 * goodput["fast"]
    (tmp_path / "leo.toml").write_text(
        'duration = "6s"\n[[links]]\nrate = "10Mbps"\ndelay = "10ms"\n[links.leo]\n'
        '[sweep]\n"links.0.leo.handover_interval" = ["1s", "15s"]\n'
    )
    store = tcplab.sweep(tmp_path / "leo.toml", out=tmp_path / "b", backend="sim", jobs=1)
    rows = store.aggregate().to_dict("records")
    often = next(r for r in rows if r["links.0.leo.handover_interval"] == 10**9)
    rarely = next(r for r in rows if r["links.0.leo.handover_interval"] == 15 * 10**9)
    # Five handovers' outages against none.
    assert often["goodput_bps"] < rarely["goodput_bps"]
