"""Media streams: statistics, ITU verdicts, scenario fields, and sim scenarios with exact
bounds (docs/models/media.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tcplab import api
from tcplab.analytic import media
from tcplab.errors import SpecError
from tcplab.plan import resolve
from tcplab.spec import load_spec, validate_spec

MS = 1_000_000
S = 1_000_000_000
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "geo-videoconference.toml"


def test_statistics_of_hand_made_messages() -> None:
    # Five messages 10 ms apart: delays 100, 100, 130, 100 ms and one never in.
    sent = [0, 10 * MS, 20 * MS, 30 * MS, 40 * MS]
    received = [100 * MS, 110 * MS, 150 * MS, 130 * MS, None]
    row = media.stream_statistics(sent, received, end_ns=10 * S, loss_timeout_ns=3 * S)
    assert row["messages_sent"] == 5
    assert row["messages_received"] == 4
    assert row["messages_lost"] == 1 and row["messages_pending"] == 0
    assert row["loss_ratio"] == pytest.approx(0.2)
    assert row["delay_mean_s"] == pytest.approx(0.1075)
    assert row["delay_min_s"] == pytest.approx(0.1)
    # Nearest rank over [100, 100, 100, 130] ms: p50 is the 2nd, p95 and p99 the 4th.
    assert row["delay_p50_s"] == pytest.approx(0.1)
    assert row["delay_p95_s"] == row["delay_p99_s"] == row["delay_max_s"] == pytest.approx(0.13)
    # Y.1540 IPDV: the 1 − 10⁻³ quantile of delay minus the minimum delay.
    assert row["ipdv_s"] == pytest.approx(0.03)
    # Arrivals in order 100, 110, 130, 150 ms: gaps 10, 20, 20 ms.
    assert row["interarrival_mean_s"] == pytest.approx(50 / 3 / 1000)
    assert row["interarrival_std_s"] == pytest.approx((200 / 9) ** 0.5 / 1000)


def test_a_message_later_than_t_max_is_lost_and_a_recent_one_pending() -> None:
    # Y.1540: a packet not delivered within T_max of its sending counts as lost.
    sent = [0, 1 * S, 9 * S]
    received = [int(3.5 * S), int(1.2 * S), None]
    row = media.stream_statistics(sent, received, end_ns=10 * S, loss_timeout_ns=3 * S)
    assert (row["messages_lost"], row["messages_pending"]) == (1, 1)
    assert row["loss_ratio"] == pytest.approx(0.5)
    assert row["delay_mean_s"] == pytest.approx(0.2), "only the message in time counts"
    assert row["interarrival_mean_s"] == pytest.approx(2.3), "every arrival counts"


def test_nothing_arrived_leaves_the_statistics_empty_and_fails_the_verdicts() -> None:
    row = media.stream_statistics([0, MS], [None, None], end_ns=10 * S, loss_timeout_ns=S)
    assert row["loss_ratio"] == 1.0
    assert row["delay_mean_s"] is None and row["interarrival_mean_s"] is None
    verdict = media.verdicts(row, media.PRESETS["y1541-class1"])
    assert verdict["delay_ok"] is False and verdict["passed"] is False


def test_verdicts_compare_each_statistic_with_its_limit() -> None:
    limits = media.PRESETS["y1541-class1"]
    row = {"delay_mean_s": 0.39, "ipdv_s": 0.051, "loss_ratio": 0.0}
    verdict = media.verdicts(row, limits)
    assert verdict == {
        "delay_limit_s": 0.4,
        "delay_ok": True,
        "delay_variation_limit_s": 0.05,
        "delay_variation_ok": False,
        "loss_ratio_limit": 1e-3,
        "loss_ratio_ok": True,
        "passed": False,
    }
    rows = media.verdict_rows([{"stream": "v", **row, **verdict}])
    assert [(r["objective"], r["verdict"]) for r in rows] == [
        ("delay", "pass"),
        ("delay_variation", "fail"),
        ("loss_ratio", "pass"),
    ]


def test_presets_carry_the_itu_numbers() -> None:
    # Y.1541 (12/2011) Table 1 classes 0 and 1; I.356 class 1 and the satellite column as
    # seed 000's Table 1 quotes them.
    assert media.PRESETS["y1541-class1"] == media.Objectives(400 * MS, 50 * MS, 1e-3)
    assert media.PRESETS["y1541-class0"] == media.Objectives(100 * MS, 50 * MS, 1e-3)
    assert media.PRESETS["i356-class1"] == media.Objectives(400 * MS, 3 * MS, 3e-7)
    assert media.PRESETS["satellite"] == media.Objectives(320 * MS, 4_200_000, 7.5e-8)
    assert media.DEFAULT_PRESET == "y1541-class1"


def _spec(streams: list[dict[str, Any]], **app: Any) -> dict[str, Any]:
    return {
        "duration": "10s",
        "links": [{"rate": "2Mbps", "delay": "50ms"}],
        "app": {"kind": "media", "streams": streams, **app},
    }


AUDIO = {"name": "audio", "kind": "audio", "interval": "20ms", "message_size": 160}
LINK = {"rate": "2Mbps", "delay": "50ms"}


def test_objectives_override_their_preset_field_by_field() -> None:
    spec = validate_spec(_spec([AUDIO], objectives={"preset": "satellite", "delay": "1s"}))
    limits = media.objectives(spec.app.objectives)
    assert limits == media.Objectives(S, 4_200_000, 7.5e-8, 3 * S)
    assert media.objectives(None) == media.PRESETS["y1541-class1"]


def _problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as raised:
        validate_spec(data)
    return raised.value.problems


@pytest.mark.parametrize(
    ("stream", "app", "expected"),
    [
        ({**AUDIO, "rate": 50}, {}, "app.streams.0.rate: give either interval or rate"),
        ({"name": "a", "interval": "1ms"}, {}, "app.streams.0.bit_rate: give either"),
        ({**AUDIO, "bit_rate": "64kbps"}, {}, "app.streams.0.bit_rate: give either"),
        ({**AUDIO, "max_message_size": 100}, {}, "app.streams.0.max_message_size: 100 B"),
        ({**AUDIO, "transport": "sctp"}, {}, 'app.streams.0.transport: "sctp" is not'),
        ({**AUDIO, "message_size": "64KiB"}, {}, "app.streams.0: message_size: a UDP message"),
        (AUDIO, {"objectives": {"preset": "gold"}}, 'app.objectives.preset: "gold" is not'),
        (AUDIO, {"objectives": {"loss_ratio": 2}}, "app.objectives.loss_ratio"),
        ({**AUDIO, "when_blocked": "skip"}, {}, "app.streams.0: when_blocked: only a TCP"),
    ],
)
def test_stream_problems_name_their_field(
    stream: dict[str, Any], app: dict[str, Any], expected: str
) -> None:
    problems = _problems(_spec([stream], **app))
    assert any(p.startswith(expected) for p in problems), problems


def test_streams_belong_to_media_apps_only() -> None:
    assert _problems(_spec([]))[0].startswith('app.streams: kind = "media" needs')
    problems = _problems(_spec([AUDIO, AUDIO]))
    assert problems[0].startswith("app.streams: stream name 'audio' is used twice")
    bulk = {"links": [LINK], "app": {"kind": "bulk", "streams": [AUDIO]}}
    assert _problems(bulk)[0].startswith('app.streams: only for kind = "media"')
    bulk["app"] = {"kind": "bulk", "objectives": {}}
    assert _problems(bulk)[0].startswith('app.objectives: only for kind = "media"')
    bulk["app"] = {"kind": "bulk", "connection": "shared"}
    assert _problems(bulk)[0].startswith('app.connection: only for kind = "media"')
    assert _problems(_spec([AUDIO], connection="one"))[0].startswith("app.connection: ")


def test_media_is_refused_with_flows() -> None:
    data = {
        "hosts": [{"name": "a"}, {"name": "b"}],
        "links": [{**LINK, "between": ["a", "b"]}],
        "app": {"kind": "media", "streams": [AUDIO]},
        "flows": [{"src": "a", "dst": "b"}],
    }
    assert any(p.startswith("flows.0.app.kind: media") for p in _problems(data))


def test_streams_resolve_to_the_plan() -> None:
    video = {
        "name": "video",
        "transport": "tcp",
        "rate": 15,
        "bit_rate": "384kbps",
        "direction": "downstream",
        "start": "1s",
        "when_blocked": "skip",
    }
    plan = resolve(validate_spec(_spec([AUDIO, video])))
    assert plan["app"]["streams"] == [
        {
            "name": "audio",
            "transport": "udp",
            "interval_ns": 20 * MS,
            "message_size": 160,
            "max_message_size": None,
            "start_ns": 0,
            "direction": "upstream",
            "skip_when_blocked": False,
        },
        {
            "name": "video",
            "transport": "tcp",
            "interval_ns": 66_666_667,
            # 384 kb/s × 66.67 ms / 8 = 3200.00002 bytes, rounded up.
            "message_size": 3201,
            "max_message_size": None,
            "direction": "downstream",
            "start_ns": S,
            "skip_when_blocked": True,
        },
    ]
    assert "objectives" not in plan["app"] and plan["app"]["shared_connection"] is False
    shared = resolve(validate_spec(_spec([AUDIO], connection="shared")))
    assert shared["app"]["shared_connection"] is True


def _run(streams: list[dict[str, Any]], link: dict[str, Any], **spec: Any) -> Any:
    data = {"duration": "10s", "links": [link], "app": {"kind": "media", "streams": streams}}
    return api.run({**data, **spec})


def test_a_constant_rate_udp_stream_takes_exactly_propagation_plus_serialization() -> None:
    # 160-byte audio every 20 ms over 2 Mb/s, 50 ms, PPP: 20 + 8 + 160 + 2 bytes on the wire.
    result = _run([AUDIO], {"rate": "2Mbps", "delay": "50ms"})
    row = result.media_frame().iloc[0]
    bound = 0.050 + 190 * 8 / 2e6
    assert row["delay_min_s"] == pytest.approx(bound, abs=1e-12)
    assert row["delay_max_s"] == pytest.approx(bound, abs=1e-12)
    assert row["ipdv_s"] == pytest.approx(0.0, abs=1e-12)
    assert row["interarrival_mean_s"] == pytest.approx(0.020, abs=1e-12)
    assert row["interarrival_std_s"] == pytest.approx(0.0, abs=1e-12)
    assert (row["messages_sent"], row["messages_lost"], row["loss_ratio"]) == (500, 0, 0.0)
    assert bool(row["passed"]) is True
    messages = result.messages_frame()
    assert list(messages["seq"][:3]) == [0, 1, 2]
    assert messages["delay_s"].dropna().eq(row["delay_min_s"]).all()


def test_a_lossy_path_loses_its_share_of_messages() -> None:
    result = _run([{**AUDIO, "interval": "5ms"}], {**LINK, "loss": 0.1}, duration="20s")
    row = result.media_frame().iloc[0]
    # About 4000 judged messages: the binomial standard deviation is 0.0047.
    assert row["loss_ratio"] == pytest.approx(0.1, abs=0.02)
    assert row["messages_lost"] + row["messages_received"] + row["messages_pending"] == 4000
    verdicts = result.verdicts_frame().set_index("objective")
    assert verdicts.loc["loss_ratio", "verdict"] == "fail"
    assert verdicts.loc["loss_ratio", "limit"] == 1e-3


def test_tcp_over_a_geo_hop_at_low_ebno_delays_messages_behind_losses() -> None:
    # Head-of-line blocking: every message behind a lost segment waits at least one more
    # round trip (550 ms) for its retransmission. Without losses a message waits at most
    # one round trip (Nagle holds a small segment until the last one is acknowledged).
    geo = {"rate": "2.048Mbps", "delay": "275ms", "ber_curve": "koreasat-2000"}
    video = {"name": "video", "transport": "tcp", "interval": "50ms", "message_size": 1000}
    clean = _run([video], {**geo, "ebno_db": 8.4}, duration="60s")
    good = clean.media_frame().iloc[0]
    poor = _run([video], {**geo, "ebno_db": 6.0}, duration="60s").media_frame().iloc[0]
    assert clean.summary["retransmits"] == 0
    assert good["delay_max_s"] < 0.275 + 0.550
    assert poor["delay_max_s"] >= 0.275 + 0.550
    assert poor["delay_mean_s"] > good["delay_mean_s"] + 0.010
    assert poor["delay_p99_s"] > good["delay_p99_s"]


def test_repetitions_stack_media_rows_and_the_summary_averages_them() -> None:
    result = _run([AUDIO], {**LINK, "loss": 0.05}, repetitions=2)
    assert list(result.media_frame()["repetition"]) == [0, 1]
    assert "audio" in result.summary["media"]
    assert "loss_ratio_std" in result.summary["media"]["audio"]
    assert set(result.verdicts_frame()["repetition"]) == {0, 1}
    assert '"media"' in result.to_json()


def test_the_videoconference_example_runs_and_judges_both_streams() -> None:
    result = api.run(load_spec(EXAMPLE))
    rows = result.media_frame().set_index("stream")
    assert list(rows.index) == ["video", "audio"]
    assert list(rows["transport"]) == ["tcp", "udp"]
    # 256 kb/s at 15 frames per second: 2134-byte frames (rounded up).
    assert set(result.messages_frame().query("stream == 'video'")["bytes"]) == {2134}
    assert (rows["delay_limit_s"] == 0.32).all()
    # Audio over UDP: never faster than the 275 ms hop, so its IPDV is what queueing adds.
    assert rows.loc["audio", "delay_min_s"] > 0.275


def test_the_run_report_and_the_cli_table_show_the_streams_and_their_verdicts(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from tcplab.cli import app
    from tcplab.report.run import render_report

    result = _run([AUDIO], LINK)
    html = render_report(result)
    assert "Media streams" in html and "IPDV (p99.9 − min)" in html
    assert "pass (50.8 ms, limit 400.0 ms)" in html
    scenario = tmp_path / "audio.toml"
    scenario.write_text(
        'duration = "2s"\n[[links]]\nrate = "2Mbps"\ndelay = "50ms"\n'
        '[app]\nkind = "media"\n[[app.streams]]\nname = "audio"\ninterval = "20ms"\n'
        "message_size = 160\n"
    )
    run = CliRunner().invoke(app, ["run", str(scenario), "--no-save"])
    assert run.exit_code == 0, run.output
    output = run.stdout
    assert "media streams" in output and "one-way delay mean" in output


def test_compare_sets_each_stream_s_statistics_side_by_side() -> None:
    from rich.console import Console

    from tcplab.cli.compare import comparison_table
    from tcplab.report import display

    fast = _run([AUDIO], LINK).summary
    slow = _run([AUDIO], {**LINK, "delay": "100ms"}).summary
    table = comparison_table({"a": fast, "b": slow}, display.media_summary_rows(["audio"]))
    console = Console(width=200, record=True)
    console.print(table)
    text = console.export_text()
    # 160-byte audio over 2 Mb/s: 50.76 ms at 50 ms, 100.76 ms at 100 ms.
    assert "audio: one-way delay mean" in text
    assert "50.76 ms" in text and "100.76 ms" in text and "1.985" in text
