"""A low-Earth-orbit path: the delay of each second from the geometry of the serving
satellite's pass, and a handover to another satellite at a fixed interval (Starlink's
scheduler reassigns terminals every 15 s), with a short outage and a delay step.

Geometry (spherical Earth, R = 6371 km; circular orbit of radius r = R + h): a satellite
at central angle γ from the terminal is at slant range and elevation

    d(γ) = √(R² + r² − 2·R·r·cos γ),     cos ε = r·sin γ / d,

and moves along its orbit at ω = √(μ / r³) (μ = 398 600.4418 km³/s², Earth's
gravitational parameter; the Earth's rotation is neglected). It is visible while ε ≥ ε_min,
that is |γ| ≤ γ_max = arccos(R·cos ε_min / r) − ε_min. The pass is taken through the
terminal's zenith (the shortest slant range at each γ). At each handover the new
satellite's γ is drawn uniformly from the positions that keep it visible for the whole
interval, from the named stream `links.N.leo`. The path is bent-pipe, terminal to
satellite to a gateway assumed at the same slant range, so the link's delay is its own
`delay` (the ground segment) plus 2·d / c.
"""

from __future__ import annotations

import math
import random

from tcplab.presets import check_samples
from tcplab.spec.schedule import Leo, ScheduleRow

EARTH_RADIUS_KM = 6371.0
MU_KM3_S2 = 398_600.4418
LIGHT_KM_S = 299_792.458
NS_PER_S = 1_000_000_000


def slant_km(altitude_km: float, gamma: float) -> float:
    r = EARTH_RADIUS_KM + altitude_km
    return math.sqrt(EARTH_RADIUS_KM**2 + r * r - 2 * EARTH_RADIUS_KM * r * math.cos(gamma))


def max_central_angle(altitude_km: float, min_elevation_deg: float) -> float:
    r = EARTH_RADIUS_KM + altitude_km
    eps = math.radians(min_elevation_deg)
    return math.acos(EARTH_RADIUS_KM * math.cos(eps) / r) - eps


def angular_speed(altitude_km: float) -> float:
    """ω, rad/s."""
    return math.sqrt(MU_KM3_S2 / (EARTH_RADIUS_KM + altitude_km) ** 3)


def rows(
    leo: Leo, ground_delay_ns: int, duration_ns: int, seed: int, stream: str
) -> list[ScheduleRow]:
    """Rows for the run: each second's delay; at each handover the new satellite's delay
    and an outage of `leo.outage`."""
    rng = random.Random(f"{seed}:{stream}")
    gamma_max = max_central_angle(leo.altitude_km, leo.min_elevation_deg)
    omega = angular_speed(leo.altitude_km)
    interval_s = leo.handover_interval / NS_PER_S
    sweep = omega * interval_s
    if sweep >= 2 * gamma_max:
        raise ValueError(
            f"a satellite at {leo.altitude_km:g} km is visible above"
            f" {leo.min_elevation_deg:g}° for {2 * gamma_max / omega:.0f} s, shorter than the"
            f" handover interval"
        )
    check_samples(duration_ns // NS_PER_S + 1, "seconds of LEO delay")
    out: list[ScheduleRow] = []
    for start in range(0, duration_ns + 1, leo.handover_interval):
        gamma0 = rng.uniform(-gamma_max, gamma_max - sweep)
        if start:
            out.append(ScheduleRow.model_construct(at=start, up=False))
        for second in range(math.ceil(interval_s)):
            at = start + second * NS_PER_S
            if at > duration_ns or second * NS_PER_S >= leo.handover_interval:
                break
            # The delay over this second: at its middle.
            t = min(second + 0.5, interval_s)
            delay_ns = ground_delay_ns + round(
                2 * slant_km(leo.altitude_km, gamma0 + omega * t) / LIGHT_KM_S * NS_PER_S
            )
            out.append(ScheduleRow.model_construct(at=at, delay=delay_ns))
        if start:
            out.append(ScheduleRow.model_construct(at=start + leo.outage, up=True))
    out.sort(key=lambda row: row.at)
    return out
