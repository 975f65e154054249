"""The window limit: socket buffers, window scaling and Nagle."""

from __future__ import annotations

from tcplab.analytic.path import MAX_UNSCALED_WINDOW_BYTES


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
