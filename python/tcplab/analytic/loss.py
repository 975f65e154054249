"""Loss: packet error rates of error models, and TCP's loss response (Mathis, PFTK,
CUBIC) with the RTO after the first sample."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from tcplab.analytic.framing import atm_cells, direction_wire_bytes
from tcplab.errors import FieldRefused

# RFC 9438 §5.1 and §4.6: C = 0.4, β_cubic = 0.7.
CUBIC_C = 0.4
CUBIC_BETA = 0.7




def packet_error_rate(error: Mapping[str, Any], wire: int) -> float:
    """Probability that the link's error model destroys one packet of ``wire`` bytes.

    - ``none``: 0.
    - ``loss``: p per packet.
    - ``ber``: 1 - (1 - ber)^(8 wire), every bit independently in error.
    - ``gilbert_elliott``: the chain's stationary loss, pi_G loss_good + pi_B loss_bad with
      pi_B = p_gb / (p_gb + p_bg) (E. N. Gilbert, Bell Syst. Tech. J. 39, 1960;
      E. O. Elliott, ibid. 42, 1963). With p_gb = p_bg = 0 the chain never leaves its
      initial state, which is Good.
    """
    kind = error.get("kind")
    if kind == "none":
        return 0.0
    if kind == "loss":
        return float(error["p"])
    if kind == "ber":
        # -expm1(n log1p(-ber)) is 1 - (1-ber)^n without cancellation for tiny ber.
        return -math.expm1(8 * wire * math.log1p(-float(error["ber"])))
    if kind == "gilbert_elliott":
        p_gb, p_bg = float(error["p_gb"]), float(error["p_bg"])
        pi_bad = p_gb / (p_gb + p_bg) if p_gb + p_bg > 0 else 0.0
        return (1.0 - pi_bad) * float(error["loss_good"]) + pi_bad * float(error["loss_bad"])
    raise FieldRefused(
        "error.kind", f"{kind!r} unknown; accepted: none, loss, ber, gilbert_elliott"
    )


def direction_packet_error_rate(direction: Mapping[str, Any], ip_bytes: int) -> float:
    """:func:`packet_error_rate` of a datagram of ``ip_bytes`` on one plan link direction.

    On an ATM direction the error model acts on each of the frame's c cells, and one lost or
    errored cell loses the frame: ``loss`` (the CLR) gives 1 - (1 - p)^c; ``ber`` gives
    1 - [(1-b)^384 ((1-b)^40 + 40 b (1-b)^39)]^c, a clean payload and a header the HEC
    passes or corrects (models.md §4.5; the HEC's detection mode after an errored header is
    left out, which matters only when header errors come close together).
    """
    error = direction["error"]
    atm = direction.get("atm")
    if atm is None or error["kind"] == "none":
        return packet_error_rate(error, direction_wire_bytes(direction, ip_bytes))
    cells = atm_cells(ip_bytes, atm["encapsulation_bytes"])
    if error["kind"] == "loss":
        cell_ok = math.log1p(-float(error["p"]))
    else:
        b = float(error["ber"])
        header_ok = math.exp(40 * math.log1p(-b)) + 40 * b * math.exp(39 * math.log1p(-b))
        cell_ok = 384 * math.log1p(-b) + math.log(header_ok)
    return -math.expm1(cells * cell_ok)


def path_loss_probability(pers: Sequence[float]) -> float:
    """Loss probability of a packet crossing independent hops: 1 - prod(1 - PER_i)."""
    # Folded as p + per - p*per (the same product), which keeps a single hop's PER exact.
    p = 0.0
    for per in pers:
        p = p + per - p * per
    return p


def rto_after_first_sample_s(rtt_s: float, min_rto_s: float) -> float:
    """Retransmission timeout after one RTT sample R, RFC 6298 §2.2-2.4.

    SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR = 3R, then raised to the stack's
    minimum RTO (RFC 6298 asks for 1 s; Linux uses 200 ms; the plan gives min_rto_ns).
    Used as PFTK's T0: a loss-limited connection's RTO stays near this value when the
    RTT is steady.
    """
    return max(min_rto_s, rtt_s + 4.0 * (rtt_s / 2.0))


def mathis_bps(mss: int, rtt_s: float, p: float, b: int) -> float:
    """Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the TCP congestion
    avoidance algorithm", CCR 27(3), 1997: BW = MSS/RTT * sqrt(3/(2b)) / sqrt(p).

    b = segments per ACK (2 with delayed ACKs). Periodic-loss congestion avoidance only:
    no timeouts, no window limit, no slow start.
    """
    return 8.0 * mss / rtt_s * math.sqrt(3.0 / (2.0 * b)) / math.sqrt(p)


def _pow1m(p: float, n: float) -> float:
    """(1 - p)^n, accurate for tiny p."""
    return math.exp(n * math.log1p(-p))


def pftk_unconstrained_window(p: float, b: int) -> float:
    """PFTK's expected congestion-avoidance window W(p) in segments, no receiver limit.

    W(p) = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2)  (Padhye et al. 1998, eq. 13).
    """
    a = (2.0 + b) / (3.0 * b)
    return a + math.sqrt(8.0 * (1.0 - p) / (3.0 * b * p) + a * a)


def pftk_timeout_share(p: float, w: float) -> float:
    """PFTK's Q(p, w): probability that a loss in a window of w segments ends in a timeout.

    Q = min(1, (1-(1-p)^3)(1 + (1-p)^3 (1-(1-p)^(w-3))) / (1-(1-p)^w))
    (Padhye et al. 1998, eq. 24).
    """
    one_m3 = _pow1m(p, 3.0)
    num = -math.expm1(3.0 * math.log1p(-p)) * (
        1.0 + one_m3 * -math.expm1((w - 3.0) * math.log1p(-p))
    )
    den = -math.expm1(w * math.log1p(-p))
    return min(1.0, num / den)


def pftk_timeout_backoff(p: float) -> float:
    """PFTK's f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6 (exponential RTO backoff)."""
    return 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6


def pftk_bps(
    mss: int,
    rtt_s: float,
    p: float,
    b: int,
    w_max: float,
    t0_s: float,
    fast_retransmit: bool = True,
) -> float:
    """Padhye, Firoiu, Towsley, Kurose, "Modeling TCP throughput: a simple model and its
    empirical validation", SIGCOMM 1998 (full model, eq. 31), in bit/s.

    Reno with triple-duplicate-ACK recovery, timeouts with exponential backoff (T0 the
    first RTO) and a receiver window of w_max segments; b segments per ACK; p the
    loss-event probability per segment. With ``fast_retransmit`` off every loss waits for
    the RTO, i.e. Q = 1. Returns 0 for p >= 1.
    """
    if p <= 0.0:
        raise ValueError("pftk_bps needs a loss probability p > 0")
    if p >= 1.0:
        return 0.0
    f = pftk_timeout_backoff(p)
    w_p = pftk_unconstrained_window(p, b)
    if w_p < w_max:
        q = 1.0 if not fast_retransmit else pftk_timeout_share(p, w_p)
        num = (1.0 - p) / p + w_p / 2.0 + q
        den = rtt_s * (b / 2.0 * w_p + 1.0) + q * f * t0_s / (1.0 - p)
    else:
        q = 1.0 if not fast_retransmit else pftk_timeout_share(p, w_max)
        num = (1.0 - p) / p + w_max / 2.0 + q
        den = rtt_s * (b / 8.0 * w_max + (1.0 - p) / (p * w_max) + 2.0) + q * f * t0_s / (1.0 - p)
    return 8.0 * mss * num / den


def cubic_response_bps(mss: int, rtt_s: float, p: float, w_max: float) -> float:
    """CUBIC's average rate at loss-event rate p, capped by the window limit.

    RFC 9438 §5.1 (after Ha, Rhee & Xu, SIGOPS OSR 42(5), 2008): in its cubic region the
    average window is (C·(3+β)/(4·(1−β)))^(1/4) · RTT^(3/4) / p^(3/4) segments. CUBIC also
    keeps at least the Reno-friendly window, which the caller takes from PFTK.
    """
    window = (CUBIC_C * (3 + CUBIC_BETA) / (4 * (1 - CUBIC_BETA))) ** 0.25
    window *= rtt_s**0.75 / p**0.75
    return float(8.0 * mss * min(window, w_max) / rtt_s)


def pftk_approx_bps(mss: int, rtt_s: float, p: float, b: int, w_max: float, t0_s: float) -> float:
    """PFTK's closed-form approximation (Padhye et al. 1998, eq. 32), in bit/s:

    B = min(W_max/RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2))).
    """
    if p <= 0.0:
        raise ValueError("pftk_approx_bps needs a loss probability p > 0")
    loss_term = rtt_s * math.sqrt(2.0 * b * p / 3.0) + t0_s * min(
        1.0, 3.0 * math.sqrt(3.0 * b * p / 8.0)
    ) * p * (1.0 + 32.0 * p * p)
    return 8.0 * mss * min(w_max / rtt_s, 1.0 / loss_term)
