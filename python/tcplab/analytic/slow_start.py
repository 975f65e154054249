"""Slow start and the round-by-round fluid evolution of one transfer."""

from __future__ import annotations

import math
from dataclasses import dataclass


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
