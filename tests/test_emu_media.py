"""Media streams on the real kernel over the emulator: the measurement tool's media mode
against the exact bound the simulator gives (docs/models/media.md, docs/emu.md). Needs
root (CI has it), TUN devices and network namespaces."""

from __future__ import annotations

from typing import Any

import pytest
from test_measure import RATE_BPS as MEASURE_RATE_BPS
from test_measure import measure, network

import tcplab
from tcplab.api import prepare
from tcplab.backends import capabilities, emu
from tcplab.errors import Unsupported
from tcplab.plan import resolve

RATE_BPS = 10_000_000
DELAY_S = 0.050
# IP 20 + UDP 8 + 160 bytes of audio, in a PPP frame (2 bytes).
AUDIO_WIRE_BYTES = 20 + 8 + 160 + 2
# How far a real kernel, a userspace emulator and a Python sender may stray from the bound.
TOLERANCE_S = 0.002


def scenario(backend: str, streams: list[dict[str, Any]], nagle: bool = True) -> dict:
    tcp = {"nagle": nagle}
    return {
        "name": "media",
        "backend": backend,
        "duration": "5s",
        "hosts": [{"name": "client", "tcp": tcp}, {"name": "server", "tcp": tcp}],
        "links": [{"rate": "10Mbps", "delay": "50ms"}],
        "app": {"kind": "media", "streams": streams},
    }


AUDIO = {"name": "audio", "kind": "audio", "transport": "udp", "interval": "20ms"}


@pytest.fixture(scope="module")
def measured() -> tcplab.RunResult:
    streams = [
        {**AUDIO, "message_size": 160},
        # Above the 1500-byte MTU: three IP fragments.
        {"name": "frames", "transport": "udp", "interval": "100ms", "message_size": 4000},
        {"name": "video", "transport": "tcp", "interval": "40ms", "message_size": 1000},
    ]
    spec = prepare(scenario("emu", streams, nagle=False))
    return tcplab.RunResult.from_backend(emu.run(resolve(spec)), {"backend": "emu"}, spec.app)


def test_udp_messages_take_the_bound_within_two_milliseconds(measured: tcplab.RunResult) -> None:
    rows = measured.media_frame().set_index("stream")
    bound = DELAY_S + AUDIO_WIRE_BYTES * 8 / RATE_BPS
    audio = rows.loc["audio"]
    assert audio["messages_sent"] == 250
    assert audio["messages_received"] + audio["messages_pending"] == 250
    assert bound <= audio["delay_min_s"] < bound + TOLERANCE_S
    assert audio["delay_mean_s"] == pytest.approx(bound, abs=TOLERANCE_S)
    assert audio["interarrival_mean_s"] == pytest.approx(0.020, abs=0.001)
    # 4000 + 8 bytes in fragments of 1480, 1480 and 1048 IP payload bytes, back to back.
    frames = DELAY_S + (1500 + 1500 + 1068 + 3 * 2) * 8 / RATE_BPS
    assert frames <= rows.loc["frames", "delay_min_s"] < frames + TOLERANCE_S
    assert measured.summary["emu"]["clock"] == "shared"


def test_tcp_messages_with_nagle_off_take_one_segment_s_bound(
    measured: tcplab.RunResult,
) -> None:
    # IP 20 + TCP 20 + 1000 bytes: one segment, sent as it is written.
    bound = DELAY_S + (1040 + 2) * 8 / RATE_BPS
    video = measured.media_frame().set_index("stream").loc["video"]
    assert video["transport"] == "tcp"
    assert bound <= video["delay_min_s"] < bound + TOLERANCE_S
    assert video["delay_p50_s"] == pytest.approx(bound, abs=TOLERANCE_S)
    assert video["messages_lost"] == 0


def test_sim_and_emu_agree_on_the_udp_stream(measured: tcplab.RunResult) -> None:
    sim = tcplab.run(scenario("sim", [{**AUDIO, "message_size": 160}]))
    simulated = sim.media_frame().iloc[0]
    real = measured.media_frame().set_index("stream").loc["audio"]
    assert real["delay_mean_s"] == pytest.approx(simulated["delay_mean_s"], abs=TOLERANCE_S)
    assert real["interarrival_mean_s"] == pytest.approx(simulated["interarrival_mean_s"], abs=0.001)


def test_what_the_media_mode_cannot_send_is_refused_on_its_field() -> None:
    small = [{**AUDIO, "message_size": 12}]
    with pytest.raises(
        Unsupported,
        match=r"backend cannot run this scenario: app\.streams\.0\.message_size: .*20-byte header",
    ):
        capabilities.check(resolve(prepare(scenario("emu", small))), "emu")
    down = [{**AUDIO, "message_size": 160, "direction": "downstream"}]
    with pytest.raises(
        Unsupported, match=r"backend cannot run this scenario: app\.streams\.0\.direction"
    ):
        capabilities.check(resolve(prepare(scenario("emu", down))), "emu")
    shared = scenario("emu", [{**AUDIO, "message_size": 160}])
    shared["app"]["connection"] = "shared"
    with pytest.raises(
        Unsupported, match=r"backend cannot run this scenario: app\.shared_connection"
    ):
        capabilities.check(resolve(prepare(shared)), "emu")


def test_the_measure_cli_sends_media_streams_and_reports_their_records() -> None:
    # `tcplab measure server` and `tcplab measure client --stream` between the namespaces
    # of test_measure's network: 20 Mb/s, 10 ms each way.
    with network() as net:
        out = measure(
            net,
            *("--duration", "1s", "--stream", "audio,udp,20ms,160"),
            *("--stream", "video,tcp,50ms,1000"),
        )
    assert out["clock"] == "shared"
    audio, video = out["streams"]
    assert (audio["transport"], len(audio["sent_ns"]), audio["bytes"][0]) == ("udp", 50, 160)
    assert video["transport"] == "tcp" and len(video["sent_ns"]) == 20
    bound = 0.010 + AUDIO_WIRE_BYTES * 8 / MEASURE_RATE_BPS
    delays = [
        (r - s) / 1e9
        for s, r in zip(audio["sent_ns"], audio["received_ns"], strict=True)
        if r is not None
    ]
    assert len(delays) >= 49
    # The median, since one datagram may wait behind a video segment (0.4 ms) or for a busy
    # machine to run the receiver.
    assert min(delays) >= bound
    assert sorted(delays)[len(delays) // 2] < bound + TOLERANCE_S


def test_a_skipping_sender_on_the_real_stack_drops_frames_instead_of_falling_behind() -> None:
    # 2000-byte frames every 10 ms (1.6 Mb/s) into 1 Mb/s: a frame that falls due while the
    # last one is not all in the socket is dropped, so the delay stays near the send
    # buffer's drain time (16 KiB: about 0.13 s; Linux holds somewhat more than SO_SNDBUF).
    video = {"name": "video", "transport": "tcp", "interval": "10ms", "message_size": 2000}
    data = scenario("emu", [{**video, "when_blocked": "skip"}], nagle=False)
    data["links"] = [{"rate": "1Mbps", "delay": "10ms"}]
    for host in data["hosts"]:
        host["tcp"] = {**host["tcp"], "sndbuf": "16KiB"}
    spec = prepare(data)
    result = tcplab.RunResult.from_backend(emu.run(resolve(spec)), {"backend": "emu"}, spec.app)
    row = result.media_frame().iloc[0]
    assert row["messages_sent"] + row["messages_skipped"] == 500
    assert 0.2 < row["messages_skipped"] / 500 < 0.6
    assert row["delay_max_s"] < 0.5
