"""Named TCP stack profiles: the settings of a real stack, applied under a host's own
`[hosts.tcp]` fields, which override them one by one.

The default is `linux`, so that a scenario that says nothing about its stack behaves like
the machine it will be compared with. The old stacks are the ones the source papers
measured. Each entry says where its numbers come from; "assumption" marks a value no
source here states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StackProfile:
    description: str
    source: str
    settings: dict[str, Any] = field(default_factory=dict)


_LINUX = {
    # net.ipv4.tcp_congestion_control = cubic (the default since 2.6.19)
    "cc": "cubic",
    # tcp_cubic.c's CUBIC, not RFC 9438 as written (cc/cubic_linux.rs lists the
    # differences)
    "cubic_variant": "linux",
    # tcp_cong.c's Reno: whole segments, ssthresh = cwnd / 2 (cc/reno_linux.rs)
    "reno_variant": "linux",
    # initcwnd 10 (RFC 6928; Linux since 2.6.39)
    "initial_window": 10,
    # net.ipv4.tcp_window_scaling, tcp_sack and tcp_timestamps all default to 1
    "window_scaling": True,
    "sack": True,
    "timestamps": True,
    # tcp_slow_start() credits every acknowledged segment, as byte counting does (RFC 3465)
    "abc": True,
    # /sys/module/tcp_cubic/parameters/hystart = 1, hystart_detect = 3: CUBIC leaves slow
    # start on an ACK train or a delay rise (tcp_cubic.c); Reno has no HyStart
    "hystart": True,
    "hystart_variant": "linux",
    "delayed_ack": True,
    # TCP_DELACK_MIN = HZ/25: the delayed-ACK timer starts at 40 ms (it adapts up to 200 ms)
    "delack_timeout": "40ms",
    # tcp_incr_quickack(): the first 16 data segments are acknowledged one by one
    "quickack": True,
    # tcp_select_initial_window() starts the window at TCP_DEFAULT_INIT_RCVWND = 10
    # segments; tcp_grow_window() raises rcv_ssthresh by two segments per segment received,
    # quick-ACKing meanwhile
    "initial_rwnd": 10,
    # tcplab has no buffer autotuning, so the buffers sit at the ceilings autotuning grows
    # them to: tcp_wmem max 4 MiB; tcp_rmem max 6 MiB, of which Linux offers about half as
    # window (tcp_adv_win_scale = 1 reserves the rest for metadata; newer kernels measure
    # the share per flow, scaling_ratio, near half with common drivers). The window is what
    # tcplab's rcvbuf means, so 3 MiB.
    "sndbuf": "4MiB",
    "rcvbuf": "3MiB",
    # sk_setsockopt doubles SO_SNDBUF into sk_sndbuf, against which tcp_sendmsg charges
    # each skb's truesize; a blocked writer wakes at a third free (sk_stream_write_space).
    # So the emu backend's kernel holds up to about 2 x sndbuf (4 MiB sets sk_sndbuf to
    # 8 MiB, where autotuning alone, tcp_sndbuf_expand, stops at tcp_wmem's 4 MiB)
    "sndbuf_accounting": "linux",
    # tcp_nagle_check() holds a small segment only while an earlier small one is
    # unacknowledged (tcp_minshall_check, Minshall's variant)
    "nagle_variant": "minshall",
    # tcp_is_cwnd_limited(): cwnd grows only while it limits the sender (RFC 7661)
    "cwnd_validation": True,
    # net.ipv4.tcp_recovery = 1 (RACK, RFC 8985), tcp_early_retrans = 3 (tail loss probes);
    # tcp_cwnd_reduction() is PRR (RFC 6937)
    "loss_recovery": "rack",
    # net.ipv4.tcp_dsack = 1; tcp_try_undo_recovery/_partial/_dsack/_loss undo spurious
    # reductions (no sysctl: always); net.ipv4.tcp_frto = 2 (F-RTO, RFC 5682)
    "dsack": True,
    "undo": True,
    "frto": True,
    # net.ipv4.tcp_slow_start_after_idle = 1: cwnd restarts after an idle RTO
    "slow_start_after_idle": True,
    # Software GSO is on for every device (NETIF_F_GSO); tcp_tso_autosize sizes buffers to
    # sk_pacing_rate >> sk_pacing_shift (10), tcp_tso_win_divisor = 3, tcp_min_tso_segs = 2
    "gso": True,
    # TCP_RTO_MIN = HZ/5 (net.ipv4.tcp_rto_min_us = 200000), on the RTO's variance term
    # (tcp_set_rto: RTO = SRTT + max(4·RTTVAR, TCP_RTO_MIN))
    "min_rto": "200ms",
    "rto_form": "linux",
}

_WINDOWS_9X_NT = {
    "cc": "reno",
    "cubic_variant": "rfc9438",
    "reno_variant": "rfc5681",
    # RFC 2001-era slow start from one segment (assumption for these releases)
    "initial_window": 1,
    "window_scaling": False,
    "sack": False,
    "timestamps": False,
    "abc": False,
    "hystart": False,
    "delayed_ack": True,
    # Windows acknowledges at the latest after 200 ms
    "delack_timeout": "200ms",
    # quick ACKs are a Linux receiver's behaviour (assumption: none in these stacks)
    "quickack": False,
    # RFC 6298's floor on the whole RTO (assumption: no source here gives these stacks'
    # RTO formula beyond RFC 2988)
    "rto_form": "rfc6298",
    # the whole buffer offered at once (assumption: no source here describes a growing
    # window in these stacks)
    "initial_rwnd": None,
    # Nagle as RFC 896 / RFC 1122 section 4.2.3.4 state it (assumption: Minshall's variant
    # is a BSD/Linux change of 1999, and no source here says Windows adopted it)
    "nagle_variant": "rfc896",
    # These stacks predate congestion window validation (RFC 2861, 2000; RFC 7661): every
    # ACK of new data grows cwnd as RFC 2001/5681 say, whatever limits the sender
    # (assumption: no source here describes their cwnd growth beyond RFC 2001)
    "cwnd_validation": False,
    # Loss found by three duplicate ACKs (RFC 2581), or with SACK by RFC 2018/6675-style
    # recovery (assumption: no source here describes these stacks' SACK recovery)
    "loss_recovery": "classic",
    # D-SACK (RFC 2883, 2000), Eifel (RFC 3522, 2003) and F-RTO (RFC 4138, 2005) came after
    # these stacks (assumption: no source here says they had any of them)
    "dsack": False,
    "undo": False,
    "frto": False,
    # cwnd kept across idle spells (assumption: RFC 2581 only recommends the restart, and
    # no source here says these stacks did it)
    "slow_start_after_idle": False,
}

STACKS: dict[str, StackProfile] = {
    "linux": StackProfile(
        "current Linux defaults",
        "Linux sysctl defaults (net.ipv4.tcp_*), RFC 6928; see the comments in profiles.py",
        _LINUX,
    ),
    "linux-4.18": StackProfile(
        "Linux 4.18, the kernel of Lee, Lee & Joe's satellite Cubic experiments",
        "Lee, Lee & Joe, 'Initial Window-Based TCP Cubic Algorithm for Satellite "
        "Environment' (Linux 4.18.20); the defaults modelled here did not change since",
        _LINUX,
    ),
    "windows-nt4": StackProfile(
        "Windows NT 4.0, as measured over KOREASAT",
        "Kim & Song 2000, Table 2: no RFC 1323 (no window scaling or timestamps), no RFC "
        "2018 SACK, 64 KB maximum socket buffer, default buffer max(~8 kB, min(4·MSS, "
        "64 kB)) = 8760 B (6 × 1460, Windows rounds to whole segments)",
        {**_WINDOWS_9X_NT, "sndbuf": 8760, "rcvbuf": 8760},
    ),
    "windows-95": StackProfile(
        "Windows 95, the hosts of Jang, Lee, Hwang & Lee's ATM LAN testbed",
        "same stack generation as NT 4.0 (no RFC 1323/2018); 8192-byte Winsock default "
        "buffers (assumption: the value seed 003 gives for Windows 2000)",
        {**_WINDOWS_9X_NT, "sndbuf": 8192, "rcvbuf": 8192},
    ),
    "windows-2000": StackProfile(
        "Windows 2000, the wired PC of Kim, Kim & Hong's 802.11b experiments",
        "Kim, Kim & Hong 2006, Table 2: 8192-byte send and receive buffers; SACK on by "
        "default, RFC 1323 options off unless asked for; slow start from two segments "
        "(RFC 2581)",
        {**_WINDOWS_9X_NT, "initial_window": 2, "sack": True, "sndbuf": 8192, "rcvbuf": 8192},
    ),
    "windows-ce": StackProfile(
        "Windows CE, the 400 MHz PDA of Kim, Kim & Hong's 802.11b experiments",
        "Kim, Kim & Hong 2006, Table 2: 16384-byte send and 32768-byte receive buffers; "
        "Microsoft KB Q203085 (Windows CE 2.1-4.2): a 200 ms delayed-ACK timer "
        "(TcpDelAckTicks) and an initial congestion window of two segments, as the "
        "Windows CE 6.0 documentation's 'Delayed Acknowledgments' (an ACK for every "
        "second segment or after 200 ms); the rest as Windows 2000 (assumption)",
        {
            **_WINDOWS_9X_NT,
            "initial_window": 2,
            "sack": True,
            "sndbuf": 16384,
            "rcvbuf": 32768,
        },
    ),
}

DEFAULT_STACK = "linux"

# ECN (RFC 3168) where `tcp.ecn` is not given, as each stack negotiates it: Linux's
# net.ipv4.tcp_ecn = 2 accepts ECN when the peer asks and never asks itself, so
# connections between Linux hosts do not use it; the Windows stacks modelled here predate
# RFC 3168 (2001). Kept apart from the profiles' settings so that a scenario's canonical
# form (and hash) does not change with it.
ECN_BY_STACK = {"linux": "passive", "linux-4.18": "passive"}


def ecn(tcp_ecn: str | None, profile: str) -> str:
    """The ECN mode a host runs: its own, else its stack's."""
    return tcp_ecn or ECN_BY_STACK.get(profile, "off")


def apply(tcp: dict[str, Any]) -> dict[str, Any]:
    """The host's own fields over its profile's settings (the profile name is kept)."""
    name = tcp.get("profile", DEFAULT_STACK)
    if name not in STACKS:
        # Left to the `profile` field's validation, which lists the accepted names.
        return tcp
    return {**STACKS[name].settings, **tcp}
