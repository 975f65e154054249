"""Satellite presets (docs/models/schedules.md): ITU-R P.1853-1's rain attenuation
synthesis, DVB-S2 ACM's MODCOD choice, the LEO geometry and handovers, and the examples
built on them."""

from __future__ import annotations

import math
import random
import statistics
from pathlib import Path
from typing import Any

import pytest
from test_schedules import problems, scenario

import tcplab
from tcplab.errors import SpecError
from tcplab.presets import leo, modcod, rain_fade
from tcplab.spec.schedule import Leo, RainFade

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NS_PER_S = 1_000_000_000


def test_the_best_modcod_is_the_most_efficient_one_quasi_error_free_at_the_esno() -> None:
    # EN 302 307-1 Table 13: at 6.0 dB both QPSK 5/6 (5.18 dB) and 8PSK 3/5 (5.50 dB) are
    # quasi-error-free, and 8PSK 3/5 carries more (1.78 bits a symbol against 1.65); at 6.5 dB
    # QPSK 9/10 (6.42 dB, 1.79) carries more still, though its threshold is lower than the
    # 8PSK MODCODs after 3/5.
    assert modcod.best(6.0).name == "8PSK 3/5"  # type: ignore[union-attr]
    assert modcod.best(6.5).name == "QPSK 9/10"  # type: ignore[union-attr]
    assert modcod.best(16.05).name == "32APSK 9/10"  # type: ignore[union-attr]
    assert modcod.best(-2.36) is None
    # A margin asks for that much Es/No above the threshold.
    assert modcod.best(6.5, margin_db=1.0).name == "8PSK 3/5"  # type: ignore[union-attr]
    assert modcod.best(6.0, margin_db=1.0).name == "QPSK 4/5"  # type: ignore[union-attr]


def test_rain_attenuation_has_the_recommendations_statistics() -> None:
    """P.1853-1 §2: ln(A + A_offset) is N(m, σ), it rains in P_rain of the samples, and X's
    autocorrelation at lag τ is exp(−β·τ)."""
    fade = RainFade(m=-0.5, sigma=1.0, p_rain=0.05, step="10s")
    samples = rain_fade.attenuation_db(fade, 400_000, random.Random(7))
    raining = sum(1 for a in samples if a > 0) / len(samples)
    assert raining == pytest.approx(0.05, abs=0.01)
    a_offset = math.exp(-0.5 + 1.0 * statistics.NormalDist().inv_cdf(0.95))
    wet = [math.log(a + a_offset) for a in samples if a > 0]
    # The rainy samples are the upper 5 % of the lognormal: ln Y above m + 1.645 σ.
    assert min(wet) >= -0.5 + 1.6448 - 1e-9
    x = [(math.log(a + a_offset) + 0.5) for a in samples if a > 0]
    assert statistics.fmean(x) > 1.6448


def test_the_gauss_markov_process_decorrelates_at_beta() -> None:
    fade = RainFade(m=0.0, sigma=1.0, p_rain=0.5, step="100s")
    # With p_rain = 0.5 the offset is exp(m) = 1: ln(A + 1) = X wherever it rains.
    samples = rain_fade.attenuation_db(fade, 200_000, random.Random(3))
    x = [math.log(a + 1.0) for a in samples]
    lag = 50  # 5000 s: one time constant 1/β
    pairs = [(x[i], x[i + lag]) for i in range(len(x) - lag) if x[i] > 0 and x[i + lag] > 0]
    assert len(pairs) > 1000
    # The correlation of the process itself, exp(−β·τ) = e^-1; the rainy half alone (a
    # truncated normal) correlates less, so check it against the full series' estimate.
    full = rain_fade.attenuation_db(
        RainFade(m=0.0, sigma=1.0, p_rain=0.999999, step="100s"), 200_000, random.Random(3)
    )
    offset = math.exp(statistics.NormalDist().inv_cdf(1 - 0.999999))
    xs = [math.log(a + offset) for a in full]
    rho = statistics.correlation(xs[:-lag], xs[lag:])
    assert rho == pytest.approx(math.exp(-1), abs=0.03)


def test_fade_rows_follow_the_ber_curve_and_lose_everything_below_its_range() -> None:
    fade = RainFade(m=-0.5, sigma=1.0, p_rain=0.05, offset="10740s")
    rows = rain_fade.rows(fade, 6.5, "qpsk-conv-k7-r34", 600 * NS_PER_S, 12, "x")
    assert rows[0].at == 0 and rows[0].ebno_db is not None
    assert all(r.ebno_db is None or 2.0 <= r.ebno_db <= 6.5 for r in rows)
    # Rows only where the value changes, and in time order.
    assert [r.at for r in rows] == sorted({r.at for r in rows})
    # Rain all the time (p_rain ≈ 1), A ≈ exp(3) − exp(3 − 0.5·3.09) ≈ 16 dB.
    deep = RainFade(m=3.0, sigma=0.5, p_rain=0.999)
    assert rain_fade.rows(deep, 6.5, "qpsk-conv-k7-r34", 5 * NS_PER_S, 1, "x")[0].loss == 1.0


def test_acm_rows_step_the_rate_with_the_modcod_and_go_down_below_every_one() -> None:
    fade = RainFade(
        m=-0.5, sigma=1.0, p_rain=0.05, acm={"symbol_rate": 2e6, "clear_sky_esno_db": 8.3}
    )
    rows = rain_fade.rows(fade, None, None, 10 * NS_PER_S, 1, "x")
    assert rows[0].rate == round(2e6 * 2.228124)  # 8PSK 3/4 in clear sky
    lost = RainFade(
        m=-0.5, sigma=1.0, p_rain=0.05, acm={"symbol_rate": 2e6, "clear_sky_esno_db": -5.0}
    )
    assert rain_fade.rows(lost, None, None, NS_PER_S, 1, "x")[0].up is False


def test_leo_geometry_by_hand() -> None:
    # Overhead, the slant range is the altitude; ω at 550 km gives a 95.6-minute orbit.
    assert leo.slant_km(550.0, 0.0) == pytest.approx(550.0)
    assert 2 * math.pi / leo.angular_speed(550.0) / 60 == pytest.approx(95.6, abs=0.1)
    # At γ_max the elevation is the minimum: cos ε = r·sin γ / d.
    gamma = leo.max_central_angle(550.0, 25.0)
    r = leo.EARTH_RADIUS_KM + 550.0
    d = leo.slant_km(550.0, gamma)
    assert math.degrees(math.acos(r * math.sin(gamma) / d)) == pytest.approx(25.0)
    assert d == pytest.approx(1123, abs=2)  # the textbook 25° slant range at 550 km


def test_leo_rows_hand_over_with_an_outage_and_keep_the_delay_in_the_visible_range() -> None:
    preset = Leo()
    rows = leo.rows(preset, 10_000_000, 45 * NS_PER_S, 1, "links.0.leo")
    downs = [r.at for r in rows if r.up is False]
    ups = [r.at for r in rows if r.up is True]
    assert downs == [15 * NS_PER_S, 30 * NS_PER_S, 45 * NS_PER_S]
    assert ups == [t + 50_000_000 for t in downs]
    delays = [r.delay for r in rows if r.delay is not None]
    lowest = 10_000_000 + 2 * 550 / leo.LIGHT_KM_S * NS_PER_S
    highest = 10_000_000 + 2 * 1123.5 / leo.LIGHT_KM_S * NS_PER_S
    assert all(lowest <= d <= highest for d in delays)
    # One row a second, and a step at each handover.
    assert len(delays) == 46
    assert rows == leo.rows(preset, 10_000_000, 45 * NS_PER_S, 1, "links.0.leo")


@pytest.mark.parametrize(
    ("link", "message"),
    [
        ({"leo": {}, "schedule": [{"at": "1s", "delay": "1ms"}]}, "leo and schedule"),
        ({"rain_fade": {"m": 0.0, "sigma": 1.0, "p_rain": 0.1}}, "rain_fade: needs ebno_db"),
        ({"leo": {"outage": "15s"}}, "outage: must be shorter than handover_interval"),
        ({"leo": {"altitude": 550}}, "leo.altitude: unknown field, did you mean 'altitude_km'?"),
        (
            {"leo": {}, "rain_fade": {"m": 0.0, "sigma": 1.0, "p_rain": 0.1}},
            "a link takes one preset",
        ),
    ],
)
def test_bad_presets_are_refused_naming_the_field(link: dict[str, Any], message: str) -> None:
    assert message in problems(scenario(**link))


def goodputs(example: str, **changes: Any) -> list[float]:
    spec = tcplab.load_spec(EXAMPLES / example).model_copy(update=changes)
    return tcplab.run(spec, backend="sim").interval_goodputs()


def test_the_leo_example_dips_at_each_handover() -> None:
    g = goodputs("leo-handover.toml")
    typical = statistics.median(g)
    # The seconds after 15 s and 30 s (intervals 16 and 31) lose the outage and its queue.
    for second in (15, 30):
        assert g[second] < 0.97 * typical
        assert g[second - 1] > 0.99 * typical


def test_the_rain_fade_examples_fall_with_the_fade_and_acm_keeps_carrying() -> None:
    fixed, acm = goodputs("geo-rain-fade.toml"), goodputs("geo-rain-fade-acm.toml")

    def mean(g: list[float], start: int, end: int) -> float:
        return statistics.fmean(g[start:end])

    # Clear sky (minutes 1-5), the fade's peak (minutes 7-9), and after it: the fixed-coding
    # flow is still backing off its retransmission timer when the sky clears, as the kernel
    # is (examples/geo-rain-fade.toml on emu, 24 November 2026: retransmissions 25.3 and
    # 51.2 s apart, the link's goodput back only from 588 s, 0.28 Mb/s over minute 9.5-10).
    assert mean(fixed, 60, 300) > 2.5e6
    assert mean(fixed, 420, 540) < 0.05e6
    assert mean(fixed, 570, 600) < 0.5 * mean(fixed, 60, 300)
    assert mean(acm, 60, 300) > 4.2e6
    assert 3.2e6 < mean(acm, 420, 540) < 4.0e6
    assert mean(acm, 570, 600) > 3.8e6


def test_a_run_too_long_for_a_preset_is_refused_before_it_generates() -> None:
    spec = {**scenario(leo={}), "duration": "20000min"}
    with pytest.raises(SpecError, match=r"links.0.leo: the run needs 1,200,001 seconds"):
        tcplab.run(spec, backend="sim")
