"""Linux TCP_INFO: the sender's and receiver's own view of a connection.

The layout is `struct tcp_info` of <linux/tcp.h> up to `tcpi_snd_wnd` (Linux 6.2); older
kernels return a shorter struct and the missing fields read as None. Times are µs,
windows are segments except `snd_wnd` (bytes), rates are bytes/s (tcp(7), and the field
comments in the header).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from typing import Any

# 8 bytes of u8 fields, 24 u32, 4 u64, 6 u32, 4 u64, 2 u32, 2 u64, 4 u32; every field is at
# its natural alignment, so "=" (no padding) matches the C layout.
_LAYOUT = struct.Struct("=8B24I4Q6I4Q2I2Q4I")
_NAMES = (
    "state ca_state retransmits probes backoff options wscale app_limited "
    "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets last_data_sent "
    "last_ack_sent last_data_recv last_ack_recv pmtu rcv_ssthresh rtt rttvar snd_ssthresh "
    "snd_cwnd advmss reordering rcv_rtt rcv_space total_retrans "
    "pacing_rate max_pacing_rate bytes_acked bytes_received "
    "segs_out segs_in notsent_bytes min_rtt data_segs_in data_segs_out "
    "delivery_rate busy_time rwnd_limited sndbuf_limited "
    "delivered delivered_ce bytes_sent bytes_retrans "
    "dsack_dups reord_seen rcv_ooopack snd_wnd"
).split()
# Linux reports a still-unset ssthresh as TCP_INFINITE_SSTHRESH.
INFINITE_SSTHRESH = 0x7FFFFFFF


@dataclass(frozen=True)
class TcpInfo:
    """One TCP_INFO snapshot, with the fields tcplab uses named."""

    raw: dict[str, int | None]

    def __getitem__(self, name: str) -> int | None:
        return self.raw.get(name)

    @property
    def cwnd_bytes(self) -> int:
        return int(self.raw["snd_cwnd"] or 0) * int(self.raw["snd_mss"] or 0)

    @property
    def ssthresh_bytes(self) -> int | None:
        ssthresh = self.raw["snd_ssthresh"]
        if ssthresh is None or ssthresh >= INFINITE_SSTHRESH:
            return None
        return ssthresh * int(self.raw["snd_mss"] or 0)

    @property
    def flight_bytes(self) -> int:
        # Segments in flight as Linux counts them (tcp_packets_in_flight): sent and not
        # acknowledged, less those SACKed or deemed lost, plus retransmissions in flight.
        raw = self.raw
        segments = (
            (raw["unacked"] or 0)
            - (raw["sacked"] or 0)
            - (raw["lost"] or 0)
            + (raw["retrans"] or 0)
        )
        return max(segments, 0) * int(raw["snd_mss"] or 0)


def read(sock: socket.socket) -> TcpInfo:
    """The socket's TCP_INFO now."""
    data = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _LAYOUT.size)
    data = data.ljust(_LAYOUT.size, b"\0")
    values = _LAYOUT.unpack(data)
    raw: dict[str, int | None] = dict(zip(_NAMES, values, strict=True))
    return TcpInfo(raw)


def limited_by(info: TcpInfo, established_us: float) -> dict[str, float]:
    """Shares of the established time spent limited by rwnd, sndbuf, cwnd or the app.

    Linux's chrono accounting (tcp_chrono_start/stop, net/ipv4/tcp_output.c) splits the time
    with data queued into "busy" (sending), receive-window-limited and send-buffer-limited;
    `tcpi_busy_time` is their sum. Time with data queued that is neither rwnd- nor
    sndbuf-limited is counted as cwnd-limited (or pacing-limited: the line itself), and
    time with nothing queued as application-limited, so the shares add up to one.
    """
    total = max(float(established_us), 1.0)
    busy = float(info["busy_time"] or 0)
    rwnd = float(info["rwnd_limited"] or 0)
    sndbuf = float(info["sndbuf_limited"] or 0)
    busy = min(busy, total)
    shares = {
        "rwnd": min(rwnd, busy) / total,
        "sndbuf": min(sndbuf, max(busy - rwnd, 0.0)) / total,
    }
    shares["cwnd"] = max(busy - rwnd - sndbuf, 0.0) / total
    shares["app"] = max(1.0 - shares["rwnd"] - shares["sndbuf"] - shares["cwnd"], 0.0)
    return shares


def sample_row(t_s: float, info: TcpInfo) -> dict[str, Any]:
    """A trace row as the measurement JSON keeps it."""
    return {
        "t_s": t_s,
        "cwnd_bytes": info.cwnd_bytes,
        "ssthresh_bytes": info.ssthresh_bytes,
        "srtt_us": info["rtt"],
        "rttvar_us": info["rttvar"],
        "flight_bytes": info.flight_bytes,
        "snd_wnd_bytes": info["snd_wnd"],
        "total_retrans": info["total_retrans"],
        # tcpEStatsAppHCThruOctetsAcked (RFC 4898): data bytes acknowledged, a running total.
        "bytes_acked": info["bytes_acked"],
        "delivery_rate_Bps": info["delivery_rate"],
        "busy_time_us": info["busy_time"],
        "rwnd_limited_us": info["rwnd_limited"],
        "sndbuf_limited_us": info["sndbuf_limited"],
    }


__all__ = ["INFINITE_SSTHRESH", "TcpInfo", "limited_by", "read", "sample_row"]
