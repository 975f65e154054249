"""Rain fades of a satellite link: ITU-R P.1853-1 §2's time-series synthesis of rain
attenuation (Recommendation ITU-R P.1853-1, "Tropospheric attenuation time series
synthesis", 02/2012), which is the Maseng-Bakken model (T. Maseng, P. M. Bakken, "A
stochastic dynamic model of rain attenuation", IEEE Trans. Commun. 29(5), 1981): the
attenuation is a lognormal variable whose logarithm is a first-order Gauss-Markov process.

With white Gaussian noise n(k) (unit variance), a sample every Ts seconds:

    X(k)   = ρ·X(k-1) + √(1 − ρ²)·n(k),      ρ = exp(−β·Ts),  β = 2·10⁻⁴ s⁻¹  (Step B, D2-D3)
    A_off  = exp(m + σ·Q⁻¹(P_rain))                                         (Step C)
    A(k)   = max(exp(m + σ·X(k)) − A_off, 0)   dB                           (Steps D4-D5)

m and σ are the mean and standard deviation of ln A (A in dB) and P_rain the probability
of rain (Step A: from a lognormal fit of the site's attenuation distribution, ITU-R P.618,
or measured). Q⁻¹ is the inverse complementary normal distribution, so it rains (A > 0)
in P_rain of the samples. Where the Recommendation discards the first 200 000 samples so
that X forgets its start at 0, X(0) is drawn from X's stationary distribution, N(0, 1),
which is the same process without the wait.

The link sees Eb/No(t) = clear-sky Eb/No − A(t) (the fade lowers the carrier; the sky
noise a rain cell adds is left out), through its BER curve; with adaptive coding and
modulation, Es/No(t) = clear-sky Es/No − A(t) picks the DVB-S2 MODCOD (presets.modcod).
"""

from __future__ import annotations

import math
import random
from statistics import NormalDist
from typing import Any

from tcplab.analytic import ber_curves
from tcplab.presets import check_samples, modcod
from tcplab.spec.schedule import RainFade, ScheduleRow

BETA_PER_S = 2e-4
NS_PER_S = 1_000_000_000


def attenuation_db(fade: RainFade, count: int, rng: random.Random) -> list[float]:
    """`count` samples of A (dB), one every `fade.step`, from `fade.offset` into the series."""
    step_s = fade.step / NS_PER_S
    rho = math.exp(-BETA_PER_S * step_s)
    spread = math.sqrt(1 - rho * rho)
    a_offset = math.exp(fade.m + fade.sigma * NormalDist().inv_cdf(1 - fade.p_rain))
    skip = fade.offset // fade.step
    check_samples(skip + count, "attenuation samples (offset and run, one per step)")
    x = rng.gauss(0.0, 1.0)
    samples = []
    for k in range(skip + count):
        if k:
            x = rho * x + spread * rng.gauss(0.0, 1.0)
        if k >= skip:
            samples.append(max(math.exp(fade.m + fade.sigma * x) - a_offset, 0.0))
    return samples


def rows(
    fade: RainFade,
    clear_ebno_db: float | None,
    curve: str | None,
    duration_ns: int,
    seed: int,
    stream: str,
) -> list[ScheduleRow]:
    """The schedule rows of a faded link over `duration_ns`: a row wherever what the link
    does changes (its BER, or with ACM its rate and state). The samples come from the named
    stream `stream` of the run's seed."""
    count = duration_ns // fade.step + 1
    samples = attenuation_db(fade, count, random.Random(f"{seed}:{stream}"))
    out: list[ScheduleRow] = []
    last: dict[str, Any] = {}
    for k, a_db in enumerate(samples):
        values = _acm(fade, a_db) if fade.acm is not None else _fixed(clear_ebno_db, curve, a_db)
        changed = {name: v for name, v in values.items() if last.get(name) != v}
        if changed:
            out.append(ScheduleRow.model_construct(at=k * fade.step, **changed))
            last.update(changed)
    return out


def _fixed(clear_ebno_db: float | None, curve: str | None, a_db: float) -> dict[str, Any]:
    assert clear_ebno_db is not None and curve is not None  # the spec requires both
    ebno_db = round(clear_ebno_db - a_db, 2)
    try:
        ber_curves.ber_from_ebno(curve, ebno_db)
    except ValueError:
        # Below the curve's range the demodulator has lost the carrier: nothing gets through.
        return {"loss": 1.0}
    return {"ebno_db": ebno_db}


def _acm(fade: RainFade, a_db: float) -> dict[str, Any]:
    acm = fade.acm
    assert acm is not None
    chosen = modcod.best(acm.clear_sky_esno_db - a_db, acm.margin_db)
    if chosen is None:
        return {"up": False}
    return {"up": True, "rate": round(acm.symbol_rate * chosen.bits_per_symbol)}
