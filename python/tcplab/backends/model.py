"""The ``model`` backend: closed-form bounds and models of one TCP transfer on a plan's path.

``run(plan)`` takes a *resolved* plan (see ``docs/internals/plan-and-result.md``: integer
ns, bit/s and bytes; framing and error models per link direction) and returns a result
dict with the simulator's schema. What a closed-form model cannot know (retransmissions,
timeouts, packet counts, queue peaks) is ``None``; every intermediate bound is reported
under ``summary["model"]`` so a user can see *why* the number is what it is.

Each model is a small pure function below, with its source; the page
``docs/models/analytic-tcp.md`` describes them, their limits and their tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcplab.backends import SSTHRESH_INFINITE_BYTES, empty_trace
from tcplab.errors import FieldRefused
from tcplab.links import atm_cells, atm_wire_bytes

# IPv4 + TCP headers without options (RFC 791, RFC 9293): the per-segment header cost.
TCP_IP_HEADER_BYTES = 40
# RFC 7323 §3: the timestamps option, padded with two NOPs.
TIMESTAMP_OPTION_BYTES = 12
# A pure ACK is a header-only segment.
# Largest window a 16-bit window field can offer without window scaling (RFC 7323 §2).
MAX_UNSCALED_WINDOW_BYTES = 65535
NS_PER_S = 1_000_000_000

# Congestion controls with a closed-form loss response here: Reno's (PFTK, Mathis), and
# CUBIC's (RFC 9438 §5.1). Loss-free, CUBIC is standard slow start up to the window limit
# (RFC 9438 §4.10) and fits the fluid model; Hybla's ρ-scaled growth does not.
_ACCEPTED_CC = frozenset({"tahoe", "reno", "newreno", "cubic"})
# RFC 9438 §5.1 and §4.6: C = 0.4, β_cubic = 0.7.
CUBIC_C = 0.4
CUBIC_BETA = 0.7

Plan = Mapping[str, Any]


# --------------------------------------------------------------------------------------
# Links: framing, serialization, path bounds
# --------------------------------------------------------------------------------------


def wire_bytes(ip_bytes: int, overhead_bytes: int, min_payload_bytes: int) -> int:
    """Bytes an IP packet occupies on a link: max(ip, min_payload) + overhead.

    The frame pads a short packet to the link's minimum payload (Ethernet: 46 bytes,
    IEEE 802.3 §3.2.7) and adds its header/trailer (PPP/HDLC, Ethernet, ...).
    """
    return max(ip_bytes, min_payload_bytes) + overhead_bytes


def direction_wire_bytes(direction: Mapping[str, Any], ip_bytes: int) -> int:
    """:func:`wire_bytes` with the framing of one plan link direction; on an ATM direction
    the octets of the cell slots its AAL5 frame takes (the cell tax)."""
    if "atm" in direction:
        return atm_wire_bytes(ip_bytes, direction["atm"])
    framing = direction["framing"]
    return wire_bytes(ip_bytes, framing["overhead_bytes"], framing["min_payload_bytes"])


def serialization_s(wire: int, rate_bps: float) -> float:
    """Time to clock ``wire`` bytes onto a link of ``rate_bps``: 8 * wire / rate."""
    return 8.0 * wire / rate_bps


def link_goodput_bps(
    direction: Mapping[str, Any], mss: int, header: int = TCP_IP_HEADER_BYTES
) -> float:
    """Application goodput of a saturated link carrying full segments.

    rate * MSS / wire(MSS + header): each MSS of data costs the TCP/IP header (40 bytes, 52
    with timestamps) and the link's framing (the "cell tax" generalised; cf. the ATM form
    in Kalyanaraman et al., IEEE Commun. Mag. 36(6), 1998).
    """
    return direction["rate_bps"] * mss / direction_wire_bytes(direction, mss + header)


def link_goodput_bound_bps(
    forward: Sequence[Mapping[str, Any]], mss: int, header: int = TCP_IP_HEADER_BYTES
) -> float:
    """Smallest :func:`link_goodput_bps` over the forward directions of the path."""
    return min(link_goodput_bps(d, mss, header) for d in forward)


def ack_path_goodput_bps(
    direction: Mapping[str, Any], mss: int, b: int, header: int = TCP_IP_HEADER_BYTES
) -> float:
    """Goodput a reverse direction's ACK capacity allows: one ACK per b segments.

    The link can carry rate / (8 wire(40)) ACKs per second; each acknowledges b MSS.
    This is the asymmetric-path limit of RFC 3449 §3.1 (normalized bandwidth ratio).
    """
    acks_per_s = direction["rate_bps"] / (8.0 * direction_wire_bytes(direction, header))
    return acks_per_s * b * mss * 8.0


def effective_rtt_s(
    links: Sequence[Mapping[str, Any]], mss: int, header: int = TCP_IP_HEADER_BYTES
) -> float:
    """Store-and-forward round trip of one full segment and its ACK, no queueing.

    Sum over links of (forward delay + time to send an MSS+40 packet forward) plus sum of
    (reverse delay + time to send a 40-byte ACK back): every router receives a whole packet
    before forwarding it. Sending takes the serialization at the direction's rate, or on a
    wlan link a whole DCF exchange (:func:`wlan_exchange_s`).
    """
    total = 0.0
    for link in links:
        total += link["forward"]["delay_ns"] / NS_PER_S + send_s(link, "forward", mss + header)
        total += link["reverse"]["delay_ns"] / NS_PER_S + send_s(link, "reverse", header)
    return total


def header_rtt_s(links: Sequence[Mapping[str, Any]]) -> float:
    """Round trip of header-only segments both ways (SYN -> SYN-ACK), no queueing."""
    total = 0.0
    for link in links:
        for name in ("forward", "reverse"):
            total += link[name]["delay_ns"] / NS_PER_S + send_s(link, name, TCP_IP_HEADER_BYTES)
    return total


def send_s(link: Mapping[str, Any], name: str, ip_bytes: int) -> float:
    """Time one packet of ``ip_bytes`` takes to cross direction ``name`` of ``link``."""
    d = link[name]
    wire = direction_wire_bytes(d, ip_bytes)
    if "wlan" in link:
        return wlan_exchange_s(wire, d["rate_bps"], link["wlan"])
    return serialization_s(wire, d["rate_bps"])


# --------------------------------------------------------------------------------------
# 802.11b DCF airtime (docs/models/wlan.md; IEEE 802.11-1999 §9.2, 802.11b §18)
# --------------------------------------------------------------------------------------

WLAN_SLOT_S = 20e-6
WLAN_SIFS_S = 10e-6
WLAN_DIFS_S = WLAN_SIFS_S + 2 * WLAN_SLOT_S
WLAN_CW_MIN = 31
WLAN_ACK_BYTES = 14
WLAN_PLCP_S = {"long": 192e-6, "short": 96e-6}


def wlan_frame_s(mpdu_bytes: int, rate_bps: float, preamble: str) -> float:
    """Airtime of one 802.11b frame: the PLCP preamble and header, then the MPDU's bits."""
    return WLAN_PLCP_S[preamble] + 8.0 * mpdu_bytes / rate_bps


def wlan_exchange_s(
    mpdu_bytes: int,
    rate_bps: float,
    wlan: Mapping[str, Any],
    backoff_slots: float = WLAN_CW_MIN / 2,
) -> float:
    """Medium time of one frame sent by a lone station, with no collision or error:
    DIFS + mean backoff (CWmin/2 slots) + the frame + SIFS + the link-layer ACK, which goes
    at the ACK rate but never faster than the frame it answers."""
    ack_rate = min(wlan["ack_rate_bps"], rate_bps)
    return (
        WLAN_DIFS_S
        + backoff_slots * WLAN_SLOT_S
        + wlan_frame_s(mpdu_bytes, rate_bps, wlan["preamble"])
        + WLAN_SIFS_S
        + wlan_frame_s(WLAN_ACK_BYTES, ack_rate, wlan["preamble"])
    )


def wlan_goodput_bps(
    link: Mapping[str, Any],
    mss: int,
    b: int,
    header: int = TCP_IP_HEADER_BYTES,
    ack_backoff_slots: float = WLAN_CW_MIN / 2,
) -> float:
    """One TCP flow's goodput over a wlan link whose data and ACKs share the medium.

    Every b segments of MSS cost b data exchanges forward and one TCP ACK exchange back,
    one after another: b·MSS·8 / (b·T(data) + T(ACK)). With the ACK's backoff at its mean
    this is the saturation bound of a lone sender; with ``ack_backoff_slots = 0`` the ACK's
    backoff is taken as spent inside the data sender's, which bounds it from above.
    """
    fwd, rev = link["forward"], link["reverse"]
    wlan = link["wlan"]
    data = wlan_exchange_s(direction_wire_bytes(fwd, mss + header), fwd["rate_bps"], wlan)
    ack = wlan_exchange_s(
        direction_wire_bytes(rev, header), rev["rate_bps"], wlan, ack_backoff_slots
    )
    return b * mss * 8.0 / (b * data + ack)


# --------------------------------------------------------------------------------------
# Window limit
# --------------------------------------------------------------------------------------


def window_limit_bytes(sndbuf: int, rcvbuf: int, window_scaling: bool) -> tuple[int, str]:
    """Largest amount of data the sender may have unacknowledged, and what sets it.

    W = min(sndbuf, rcvbuf, 65535 without window scaling): the sender keeps unacked data
    in its send buffer, the receiver never offers more than its buffer, and an unscaled
    16-bit window field stops at 65535 (RFC 7323 §2.2). Returns (W, "sndbuf" | "rwnd");
    on a tie the receive window is named, since the receiver's offer is what the sender
    observes.
    """
    rwnd = rcvbuf if window_scaling else min(rcvbuf, MAX_UNSCALED_WINDOW_BYTES)
    if sndbuf < rwnd:
        return sndbuf, "sndbuf"
    return rwnd, "rwnd"


def window_in_flight_bytes(window: int, mss: int, nagle: bool) -> int:
    """Data actually in flight per round trip under a window of ``window`` bytes.

    With Nagle on, the sender's silly-window-syndrome avoidance (RFC 1122 §4.2.3.4, with
    the Nagle algorithm of RFC 896) does not send a sub-MSS segment while data is
    outstanding, so the tail of a window that is not a multiple of the MSS is never used:
    floor(W / MSS) * MSS. A window smaller than one MSS is sent whole when nothing is
    outstanding, so W < MSS is returned unchanged. With Nagle off the whole W is used.
    """
    if nagle and window >= mss:
        return (window // mss) * mss
    return window


def window_bound_bps(window: float, rtt_s: float) -> float:
    """Window-limited throughput W / RTT in bit/s (one window per round trip)."""
    return 8.0 * window / rtt_s


# --------------------------------------------------------------------------------------
# Loss
# --------------------------------------------------------------------------------------


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
    return 8.0 * mss * min(window, w_max) / rtt_s


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


# --------------------------------------------------------------------------------------
# Slow start and the fluid window evolution
# --------------------------------------------------------------------------------------


def slow_start_gamma(delayed_ack: bool) -> float:
    """Per-RTT window growth in slow start: 1 + 1/b.

    RFC 5681 §3.1 grows cwnd by one SMSS per ACK (no Appropriate Byte Counting): an ACK
    per segment doubles the window each round trip, an ACK per two segments (delayed ACK,
    RFC 1122 §4.2.3.2) multiplies it by 1.5.
    """
    return 1.5 if delayed_ack else 2.0


def slow_start_rounds(segments: float, initial_window: float, gamma: float) -> int:
    """Round trips slow start needs to deliver ``segments`` from an initial window.

    Smallest k with IW (gamma^k - 1)/(gamma - 1) >= d, i.e.
    ceil(log_gamma(d (gamma-1)/IW + 1)) (Cardwell, Savage, Anderson, INFOCOM 2000, eq. 11
    with the ceiling of whole rounds). Counted by summation so exact powers do not fall
    to floating-point rounding.
    """
    k, sent, w = 0, 0.0, float(initial_window)
    while sent < segments:
        sent += w
        w *= gamma
        k += 1
    return k


def rounds_to_window(window: float, initial_window: float, gamma: float) -> int:
    """Round trips until a slow-start window IW gamma^k first reaches ``window``:
    ceil(log_gamma(W / IW)), 0 if IW already reaches it."""
    k, w = 0, float(initial_window)
    while w < window:
        w *= gamma
        k += 1
    return k


@dataclass(frozen=True)
class FluidTransfer:
    """Round-by-round fluid evolution of one connection's delivery.

    Data starts to flow at ``start_s`` (the handshake). In round j (from start_s + j RTT,
    one RTT long) the window is IW gamma^j bytes and its bytes reach the receiver spread
    evenly over the round, until the window reaches ``cap_bytes`` (the steady goodput
    times the RTT); from then on bytes arrive at ``rate_bytes_per_s``. ``total_bytes``
    (a file) stops delivery when reached; None for a bulk stream.
    """

    start_s: float
    rtt_s: float
    iw_bytes: float
    gamma: float
    cap_bytes: float
    rate_bytes_per_s: float
    total_bytes: float | None = None

    @property
    def ss_rounds(self) -> int:
        """Rounds whose window is still below the cap."""
        return rounds_to_window(self.cap_bytes, self.iw_bytes, self.gamma)

    def _round_window(self, j: int) -> float:
        return self.iw_bytes * self.gamma**j

    def _sent_before_round(self, j: int) -> float:
        # Geometric sum IW (gamma^j - 1) / (gamma - 1).
        return self.iw_bytes * (self.gamma**j - 1.0) / (self.gamma - 1.0)

    @property
    def ss_bytes(self) -> float:
        """Bytes delivered by the slow-start rounds."""
        return self._sent_before_round(self.ss_rounds)

    @property
    def ss_end_s(self) -> float:
        """When the window reaches the cap."""
        return self.start_s + self.ss_rounds * self.rtt_s

    def delivered(self, t_s: float) -> float:
        """Bytes delivered by time ``t_s``."""
        if t_s <= self.start_s:
            return 0.0
        tau = t_s - self.start_s
        k = self.ss_rounds
        j = math.floor(tau / self.rtt_s)
        if j < k:
            got = self._sent_before_round(j) + (tau - j * self.rtt_s) / self.rtt_s * (
                self._round_window(j)
            )
        else:
            got = self.ss_bytes + (tau - k * self.rtt_s) * self.rate_bytes_per_s
        return got if self.total_bytes is None else min(got, self.total_bytes)

    def time_to_deliver(self, nbytes: float) -> float | None:
        """When the ``nbytes``-th byte arrives; None if it never does (zero goodput)."""
        if nbytes <= 0:
            return self.start_s
        if nbytes <= self.ss_bytes:
            j = 0
            while self._sent_before_round(j + 1) < nbytes:
                j += 1
            frac = (nbytes - self._sent_before_round(j)) / self._round_window(j)
            return self.start_s + (j + frac) * self.rtt_s
        if self.rate_bytes_per_s <= 0:
            return None
        return self.ss_end_s + (nbytes - self.ss_bytes) / self.rate_bytes_per_s

    def cwnd(self, t_s: float) -> float:
        """Window of the round in progress at ``t_s`` (IW before data flows)."""
        if t_s < self.start_s:
            return self.iw_bytes
        j = math.floor((t_s - self.start_s) / self.rtt_s)
        return self._round_window(j) if j < self.ss_rounds else self.cap_bytes


# --------------------------------------------------------------------------------------
# Plan reading
# --------------------------------------------------------------------------------------


def _check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise FieldRefused(field, message)


def _validate(plan: Plan) -> None:
    """Refuse what the model cannot honour, naming the plan field."""
    _check(
        not plan.get("flows"),
        "flows",
        "the model backend models a single connection; run several flows on the sim backend",
    )
    _check(
        not plan.get("peps"),
        "peps",
        "the model backend models one end-to-end connection; run a PEP on the sim or emu backend",
    )
    hosts = plan.get("hosts")
    _check(isinstance(hosts, list) and len(hosts) == 2, "hosts", "exactly two hosts expected")
    links = plan.get("links")
    _check(isinstance(links, list) and len(links) >= 1, "links", "at least one link expected")
    for i, host in enumerate(hosts):
        _check(
            "cpu" not in host,
            f"hosts.{i}.cpu",
            'the model backend assumes hosts whose work costs nothing (cpu = "modern");'
            " run CPU profiles on the sim backend",
        )
        tcp = host["tcp"]
        _check(tcp["mss"] > 0, f"hosts.{i}.tcp.mss", "must be > 0")
        _check(tcp["initial_window"] > 0, f"hosts.{i}.tcp.initial_window", "must be > 0")
        _check(tcp["sndbuf"] > 0, f"hosts.{i}.tcp.sndbuf", "must be > 0")
        _check(tcp["rcvbuf"] > 0, f"hosts.{i}.tcp.rcvbuf", "must be > 0")
    cc = hosts[0]["tcp"]["cc"]
    _check(
        cc in _ACCEPTED_CC,
        "hosts.0.tcp.cc",
        f"the model backend has no model of {cc!r}; accepted: {', '.join(sorted(_ACCEPTED_CC))}",
    )
    for i, link in enumerate(links):
        for name in ("forward", "reverse"):
            d = link[name]
            where = f"links.{i}.{name}"
            _check(d["rate_bps"] > 0, f"{where}.rate_bps", "must be > 0")
            _check(d["delay_ns"] >= 0, f"{where}.delay_ns", "must be >= 0")
            kind = d["error"].get("kind")
            _check(
                kind in ("none", "loss", "ber", "gilbert_elliott"),
                f"{where}.error.kind",
                f"{kind!r} unknown; accepted: none, loss, ber, gilbert_elliott",
            )
    app = plan["app"]
    _check(app["kind"] in ("bulk", "file"), "app.kind", f"{app['kind']!r}; accepted: bulk, file")
    _check(
        not app.get("write_delay_ns"),
        "app.write_delay_ns",
        "the model backend has no model of an application that sleeps between writes",
    )
    _check(
        not app.get("read_delay_ns"),
        "app.read_delay_ns",
        "the model backend has no model of an application that sleeps between reads",
    )
    if app["kind"] == "file":
        _check(
            isinstance(app.get("bytes"), int) and app["bytes"] > 0,
            "app.bytes",
            "a file transfer needs a byte count > 0",
        )
    for key in ("duration_ns", "interval_ns", "trace_interval_ns"):
        _check(plan[key] > 0, key, "must be > 0")


def _queue_payload_bytes(queue: Mapping[str, Any], mss: int, data_wire: int) -> int:
    """Payload a drop-tail queue of full segments holds."""
    if "packets" in queue:
        return int(queue["packets"]) * mss
    return (int(queue["bytes"]) // data_wire) * mss


# --------------------------------------------------------------------------------------
# The backend
# --------------------------------------------------------------------------------------


def run(plan: Plan) -> dict[str, Any]:
    """Evaluate the closed-form models for ``plan``; result in the simulator's schema."""
    _validate(plan)
    sender, receiver = plan["hosts"][0], plan["hosts"][-1]
    stcp, rtcp = sender["tcp"], receiver["tcp"]
    links = plan["links"]
    forward = [link["forward"] for link in links]
    reverse = [link["reverse"] for link in links]
    app = plan["app"]
    notes: list[str] = []

    # Each side announces its MSS in the SYN and the sender uses the smaller (RFC 9293 §3.7.1).
    # With timestamps every segment carries 12 option bytes, taken out of the payload
    # (RFC 6691 §2), so the datagram size stays MSS + 40.
    timestamps = bool(stcp.get("timestamps")) and bool(rtcp.get("timestamps"))
    options = TIMESTAMP_OPTION_BYTES if timestamps else 0
    header = TCP_IP_HEADER_BYTES + options
    mss = min(stcp["mss"], rtcp["mss"]) - options
    b = 2 if rtcp["delayed_ack"] else 1
    data_ip = mss + header

    # --- path ---
    rtt = effective_rtt_s(links, mss, header)
    # A connection opened without a handshake (tcp.handshake = false) sends at once.
    handshake = header_rtt_s(links) if stcp.get("handshake", True) else 0.0
    # A wlan link's data and ACKs share its medium: its bound counts both.
    per_link_goodput = [
        wlan_goodput_bps(link, mss, b, header)
        if "wlan" in link
        else link_goodput_bps(link["forward"], mss, header)
        for link in links
    ]
    link_bound = min(per_link_goodput)
    bottleneck = per_link_goodput.index(link_bound)
    ack_bound = min(
        (
            ack_path_goodput_bps(link["reverse"], mss, b, header)
            for link in links
            if "wlan" not in link
        ),
        default=math.inf,
    )
    path_bound = min(link_bound, ack_bound)

    # --- window ---
    scaling = bool(stcp["window_scaling"]) and bool(rtcp["window_scaling"])
    window, window_term = window_limit_bytes(stcp["sndbuf"], rtcp["rcvbuf"], scaling)
    w_eff = window_in_flight_bytes(window, mss, bool(stcp["nagle"]))
    w_bound = window_bound_bps(w_eff, rtt)

    # --- loss ---
    data_pers = [direction_packet_error_rate(d, data_ip) for d in forward]
    ack_pers = [direction_packet_error_rate(d, header) for d in reverse]
    p = path_loss_probability(data_pers)
    p_ack = path_loss_probability(ack_pers)
    t0 = rto_after_first_sample_s(rtt, stcp["min_rto_ns"] / NS_PER_S)
    w_max = max(1, w_eff // mss)
    mathis = pftk = pftk_approx = cubic = loss_bps = None
    pftk_window_limited = None
    if p > 0:
        mathis = mathis_bps(mss, rtt, p, b)
        pftk = pftk_bps(mss, rtt, p, b, w_max, t0, bool(stcp["fast_retransmit"]))
        pftk_approx = pftk_approx_bps(mss, rtt, p, b, w_max, t0)
        pftk_window_limited = pftk_unconstrained_window(p, b) >= w_max
        loss_bps = pftk
        if stcp["cc"] == "cubic":
            cubic = cubic_response_bps(mss, rtt, p, w_max)
            loss_bps = max(pftk, cubic)
        if any(d["error"]["kind"] == "gilbert_elliott" for d in forward):
            notes.append(
                "Gilbert-Elliott losses come in bursts; PFTK takes the mean per-packet loss "
                "as the loss-event rate, which is pessimistic for bursts"
            )
    if p_ack > 0:
        notes.append("ACK losses are not modelled (cumulative ACKs cover them)")

    # --- the binding bound ---
    if p == 0:
        steady, binding = (w_bound, "window") if w_bound <= path_bound else (path_bound, "path")
    else:
        steady, binding = (loss_bps, "loss") if loss_bps <= path_bound else (path_bound, "path")
    if binding == "path":
        binding = "link" if link_bound <= ack_bound else "ack_path"

    # Which sender limit a simulator would see blocking it.
    if binding == "window" or (binding == "loss" and pftk_window_limited):
        limiter = window_term
    elif binding == "loss":
        limiter = "cwnd"
    else:
        # The window exceeds the pipe; the excess waits in the bottleneck queue. If the
        # queue cannot hold it, drop-tail losses make congestion control the limit.
        fwd_b = forward[bottleneck]
        holds = link_bound * rtt / 8.0 + _queue_payload_bytes(
            fwd_b["queue"], mss, direction_wire_bytes(fwd_b, data_ip)
        )
        # An ATM path has no switch: its cells wait in the sender's segmentation queue,
        # which holds whatever the window lets TCP send.
        if binding == "link" and "atm" not in fwd_b and w_eff > holds:
            limiter = "cwnd"
            notes.append(
                f"window {w_eff} B exceeds pipe + queue of link {bottleneck} "
                f"({holds:.0f} B): drop-tail losses expected, loss-free numbers are optimistic"
            )
        else:
            limiter = window_term
    limited_by = {k: 0.0 for k in ("rwnd", "sndbuf", "cwnd", "app")}
    limited_by[limiter] = 1.0

    # --- time evolution ---
    # Byte counting (RFC 3465) credits both segments of a delayed ACK: doubling again.
    gamma = slow_start_gamma(bool(rtcp["delayed_ack"]) and not bool(stcp.get("abc")))
    iw_bytes = float(stcp["initial_window"] * mss)
    total = float(app["bytes"]) if app["kind"] == "file" else None
    fluid = FluidTransfer(
        start_s=handshake,
        rtt_s=rtt,
        iw_bytes=iw_bytes,
        gamma=gamma,
        cap_bytes=steady * rtt / 8.0,
        rate_bytes_per_s=steady / 8.0,
        total_bytes=total,
    )
    duration = plan["duration_ns"] / NS_PER_S
    done_at = fluid.time_to_deliver(total) if total is not None else None
    completed = total is None or (done_at is not None and done_at <= duration)
    elapsed = done_at if total is not None and completed else duration
    if total is not None and completed:
        delivered_total = int(total)
    else:
        delivered_total = math.floor(fluid.delivered(elapsed))

    series = _series(fluid, elapsed, plan["interval_ns"], delivered_total)
    trace = _trace(fluid, elapsed, plan["trace_interval_ns"], rtt, rtcp, scaling)
    goodput = 8.0 * delivered_total / elapsed if elapsed > 0 else 0.0

    file_segments = math.ceil(total / mss) if total is not None else None
    model = {
        "mss_bytes": mss,
        "segments_per_ack": b,
        "rtt_eff_s": rtt,
        "handshake_s": handshake,
        "window_bytes": window,
        "window_limited_by": window_term,
        "window_in_flight_bytes": w_eff,
        "window_bound_bps": w_bound,
        "link_goodput_bps": per_link_goodput,
        "link_bound_bps": link_bound,
        "bottleneck_link": bottleneck,
        "ack_path_bound_bps": ack_bound,
        "data_loss_per_link": data_pers,
        "loss_probability": p,
        "ack_loss_probability": p_ack,
        "rto_s": t0,
        "w_max_segments": w_max,
        "mathis_bps": mathis,
        "pftk_bps": pftk,
        "pftk_approx_bps": pftk_approx,
        "cubic_bps": cubic,
        "pftk_window_limited": pftk_window_limited,
        "steady_goodput_bps": steady,
        "binding": binding,
        "slow_start_gamma": gamma,
        "initial_window_bytes": int(iw_bytes),
        "slow_start_rounds": fluid.ss_rounds,
        "slow_start_bytes": fluid.ss_bytes,
        "slow_start_end_s": fluid.ss_end_s,
        "file_segments": file_segments,
        # Whole slow-start rounds for the file, when it ends before the window is capped.
        "file_slow_start_rounds": (
            slow_start_rounds(file_segments, stcp["initial_window"], gamma)
            if total is not None and total <= fluid.ss_bytes
            else None
        ),
        "notes": notes,
    }

    return {
        "summary": {
            "goodput_bps": goodput,
            "elapsed_s": elapsed,
            "bytes_delivered": delivered_total,
            "bytes_written": int(total) if total is not None and completed else None,
            "segments_sent": None,
            "retransmits": None,
            "fast_retransmits": None,
            "timeouts": None,
            "persist_probes": None,
            "completed": completed,
            "events": 0,
            "limited_by": limited_by,
            "fairness": 1.0,
            "cpu_utilisation": 0.0,
            "goodput_per_cpu_bps": None,
            "window_updates": None,
            "ring_drops": 0,
            "model": model,
        },
        "flows": [
            {
                "flow": 0,
                "src": sender["name"],
                "dst": receiver["name"],
                "goodput_bps": goodput,
                "bytes_delivered": delivered_total,
                "retransmits": None,
                "timeouts": None,
                "persist_probes": None,
                "srtt_s": rtt,
                "min_rtt_s": rtt,
                "final_cwnd_bytes": int(fluid.cwnd(elapsed)),
                "window_updates": None,
                "completed_s": elapsed if total is not None and completed else None,
            }
        ],
        # Hosts whose work costs nothing (the only kind accepted): no CPU time, no ring drops.
        "hosts": [
            {
                "host": host["name"],
                "cpu_utilisation": 0.0,
                "goodput_per_cpu_bps": None,
                "packets": None,
                "calls": None,
                "ring_drops": 0,
            }
            for host in (sender, receiver)
        ],
        "links": _link_rows(links, delivered_total, mss, header, b, elapsed),
        "series": series,
        "trace": trace,
    }


def _link_rows(
    links: Sequence[Mapping[str, Any]],
    delivered: int,
    mss: int,
    header: int,
    b: int,
    elapsed_s: float,
) -> list[dict[str, Any]]:
    """Per link direction: only the utilisation is modelled.

    Forward: the data segments that carried the delivered bytes; reverse: one ACK per b
    of them. Retransmissions, handshake segments and queue behaviour are not counted, so
    counts, drops and queue peaks are None.
    """
    segments = math.ceil(delivered / mss)
    rows = []
    for i, link in enumerate(links):
        for name, count, ip in (
            ("forward", segments, mss + header),
            ("reverse", math.ceil(segments / b), header),
        ):
            busy = count * send_s(link, name, ip)
            rows.append(
                {
                    "link": i,
                    "direction": name,
                    "packets": None,
                    "bytes": None,
                    "drops_queue": None,
                    "drops_error": None,
                    "max_queue_bytes": None,
                    "utilisation": busy / elapsed_s if elapsed_s > 0 else 0.0,
                }
            )
    return rows


def _series(fluid: FluidTransfer, elapsed_s: float, interval_ns: int, final_bytes: int) -> dict:
    """Bytes delivered per interval, stamped with each interval's end; last partial kept.

    Cumulative counts are floored to whole bytes and differenced, so the intervals add up
    to exactly ``final_bytes``.
    """
    ends: list[float] = []
    i = 1
    while i * interval_ns < elapsed_s * NS_PER_S:
        ends.append(i * interval_ns / NS_PER_S)
        i += 1
    ends.append(elapsed_s)
    cumulative = [math.floor(fluid.delivered(t)) for t in ends[:-1]] + [final_bytes]
    per_interval = [c - prev for c, prev in zip(cumulative, [0, *cumulative[:-1]], strict=True)]
    return {"t_s": ends, "interval_bytes": per_interval}


def _trace(
    fluid: FluidTransfer,
    elapsed_s: float,
    trace_interval_ns: int,
    rtt_s: float,
    rtcp: Mapping[str, Any],
    scaling: bool,
) -> dict:
    """Sender state every trace interval up to the end, from the fluid evolution."""
    rwnd = rtcp["rcvbuf"] if scaling else min(rtcp["rcvbuf"], MAX_UNSCALED_WINDOW_BYTES)
    out = empty_trace()
    i = 1
    while i * trace_interval_ns <= elapsed_s * NS_PER_S:
        t = i * trace_interval_ns / NS_PER_S
        cwnd = int(fluid.cwnd(t))
        remaining = (
            math.inf if fluid.total_bytes is None else fluid.total_bytes - fluid.delivered(t)
        )
        flowing = fluid.start_s <= t and remaining > 0
        out["flow"].append(0)
        out["t_s"].append(t)
        out["cwnd_bytes"].append(cwnd)
        # The loss-free evolution never leaves slow start by a loss.
        out["ssthresh_bytes"].append(SSTHRESH_INFINITE_BYTES)
        # srtt is 0 until the handshake gives the first sample (result contract).
        out["srtt_s"].append(rtt_s if t >= fluid.start_s else 0.0)
        out["flight_bytes"].append(int(min(cwnd, remaining)) if flowing else 0)
        out["rwnd_bytes"].append(rwnd)
        i += 1
    return out
