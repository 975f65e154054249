"""A host's tables: its TCP configuration ([hosts.tcp], a stack profile overridden field
by field) and its CPU ([hosts.cpu])."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from tcplab import profiles, shared
from tcplab.spec import cpu_profiles, units
from tcplab.spec.fields import (
    AUTO_BUFFER,
    Buffer,
    Duration,
    Name,
    PositiveDuration,
    StrictModel,
)

# The RTO stays within [min_rto, 60 s] (RFC 6298 §2.5's upper bound, as Linux's
# TCP_RTO_MAX would be at 60 s); the simulator checks the same bound
# (crates/sim/src/plan.rs MAX_MIN_RTO_NS).
MAX_MIN_RTO_NS = 60 * units.DURATION_UNITS["s"]
# The largest socket buffer: Linux caps SO_SNDBUF/SO_RCVBUF at INT_MAX / 2 (socket(7));
# the simulator refuses more too (crates/sim/src/plan.rs MAX_BUFFER_BYTES), where a bulk
# writer filling a larger one never returned.
MAX_BUFFER_BYTES = 1 << 30


class Tcp(StrictModel):
    """The TCP configuration of one host: a stack profile, overridden field by field."""

    profile: Literal[tuple(profiles.STACKS)] = Field(  # type: ignore[valid-type]
        profiles.DEFAULT_STACK, description="stack profile whose settings the fields override"
    )
    cc: Literal[shared.CONGESTION_CONTROLS] = Field(  # type: ignore[valid-type]
        "newreno", description="congestion control algorithm"
    )
    cubic_variant: Literal["rfc9438", "linux"] = Field(
        "rfc9438",
        description="which CUBIC cc = 'cubic' runs: rfc9438 as written, or linux, "
        "tcp_cubic.c's (per-ACK counter, 5 % growth floor before the first loss, time "
        "from the minimum RTT)",
    )
    reno_variant: Literal["rfc5681", "linux"] = Field(
        "rfc5681",
        description="which window arithmetic cc = 'reno' and 'newreno' run: rfc5681 as "
        "written, in bytes, or linux, tcp_cong.c's (whole segments, ssthresh half of cwnd)",
    )
    sndbuf: Buffer = Field(
        "64KiB",
        validate_default=True,
        description='socket send buffer (SO_SNDBUF); "auto": the application leaves it to '
        "Linux's autotuning, tcp_wmem 4KiB 16KiB 4MiB grown with cwnd (tcp_sndbuf_expand; "
        'needs sndbuf_accounting = "linux")',
    )
    sndbuf_accounting: Literal["payload", "linux"] = Field(
        "payload",
        description="what sndbuf limits: payload, the data written and not acknowledged; "
        "linux, SO_SNDBUF as Linux takes it: skb memory (payload and a head per skb) "
        "against twice sndbuf, a writer woken once a third of it is free",
    )
    rcvbuf: Buffer = Field(
        "64KiB",
        validate_default=True,
        description="socket receive buffer, offered whole as the largest window; \"auto\": "
        "the application leaves it to Linux's autotuning, tcp_rmem 4KiB 128KiB 32MiB grown "
        "each round trip to twice what the application read (tcp_rcv_space_adjust)",
    )
    mss: int = Field(1460, ge=64, le=65495, description="maximum segment size, bytes")
    initial_window: int = Field(10, ge=1, le=100_000, description="initial cwnd, segments")
    window_scaling: bool = Field(True, description="RFC 7323 window scaling; off caps at 65535")
    sack: bool = Field(
        False, description="SACK option (RFC 2018) and SACK loss recovery (RFC 6675)"
    )
    timestamps: bool = Field(
        False, description="timestamps option (RFC 7323): RTT samples for resent data, 12 B"
    )
    abc: bool = Field(False, description="appropriate byte counting (RFC 3465, L = 2 SMSS)")
    hystart: bool = Field(
        False, description="HyStart ends the initial slow start early (see hystart_variant)"
    )
    hystart_variant: Literal["rfc9406", "linux"] = Field(
        "rfc9406",
        description="which HyStart: rfc9406, HyStart++ on a delay rise (every cc but bbr); "
        "linux, Linux's CUBIC HyStart on an ACK train or a delay rise (cubic only)",
    )
    delayed_ack: bool = Field(True, description="delay ACKs (RFC 1122/5681)")
    delack_timeout: PositiveDuration = Field(
        "200ms", validate_default=True, description="delayed-ACK timer"
    )
    quickack: bool = Field(
        False,
        description="Linux's quick-ACK mode: the first segments of a connection (up to 16, "
        "at most half the window) and those after a duplicate are acknowledged one by one",
    )
    initial_rwnd: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="Linux's receive-window growth (tcp_grow_window) from this many "
        "segments: the window offered starts there (Linux: 10, TCP_DEFAULT_INIT_RCVWND; "
        "ip-route initrwnd sets it) and grows by two segments per segment received up to "
        "rcvbuf, acknowledging every segment while it grows; none offers all of rcvbuf at "
        "once",
    )
    nagle: bool = Field(True, description="Nagle's algorithm (RFC 896)")
    nagle_variant: Literal["rfc896", "minshall"] = Field(
        "minshall",
        description="which small segments Nagle holds: rfc896, while any data is "
        "unacknowledged; minshall (Linux), while an earlier small segment is",
    )
    fast_retransmit: bool = Field(True, description="fast retransmit and recovery (RFC 5681)")
    min_rto: PositiveDuration = Field(
        "1s",
        validate_default=True,
        description="lower bound of the whole RTO, as RFC 6298 section 2.4 (1 s) and ns-3",
    )
    rto_form: Literal["rfc6298", "linux"] = Field(
        "rfc6298",
        description="where min_rto applies: rfc6298, to the whole RTO (max(min_rto, SRTT + "
        "4·RTTVAR)); linux, to the variance term (SRTT + max(4·RTTVAR, min_rto), "
        "tcp_set_rto)",
    )
    cwnd_validation: bool = Field(
        True,
        description="grow cwnd only while it limits the sender (RFC 7661, as Linux); "
        "off for stacks before RFC 2861",
    )
    loss_recovery: Literal["classic", "rack"] = Field(
        "classic",
        description="how a connection finds and repairs losses: classic, by duplicate "
        "ACKs (RFC 6675; RFC 5681/6582 without SACK); rack, as Linux: RACK-TLP (RFC 8985) "
        "with proportional rate reduction (RFC 6937) in Linux's congestion states, and "
        "without SACK the same states with duplicate ACKs counted as SACKed segments",
    )
    dsack: bool = Field(
        False,
        description="D-SACK (RFC 2883, Linux's net.ipv4.tcp_dsack): with SACK, the receiver "
        "reports a segment it already had in the first SACK block of its next ACK",
    )
    undo: bool = Field(
        False,
        description="undo a window reduction that proves spurious, as Linux does "
        "(tcp_try_undo_*): when an ACK echoes a timestamp older than the first "
        "retransmission (RFC 3522) or D-SACKs report every retransmission (RFC 3708), cwnd "
        "and ssthresh return to what they were; with loss_recovery = 'rack'",
    )
    slow_start_after_idle: bool = Field(
        False,
        description="restart cwnd after an idle spell longer than the RTO, halving it per "
        "RTO idle down to the initial window (RFC 5681 section 4.1 as Linux's "
        "net.ipv4.tcp_slow_start_after_idle); not for BBR, which restarts its own way",
    )
    frto: bool = Field(
        False,
        description="F-RTO (RFC 5682 section 3.1, Linux's net.ipv4.tcp_frto): after a "
        "timeout, send new data before retransmitting more; if the next ACK covers data "
        "never retransmitted, the timeout was spurious and the reduction is undone; with "
        "loss_recovery = 'rack'",
    )
    gso: bool = Field(
        False,
        description="Linux's GSO buffers: an unpaced sender sends about a millisecond of "
        "its pacing rate at once and, outside recovery, holds data back for up to 1 ms "
        "while the window has room for less (tcp_tso_autosize, tcp_tso_should_defer)",
    )
    ecn: Literal["off", "on", "passive"] | None = Field(
        None,
        description="ECN (RFC 3168), as Linux's net.ipv4.tcp_ecn: on asks for it on"
        " connections this host opens and accepts it on others, passive only accepts, off"
        " never; default: the profile's (linux: passive, tcp_ecn = 2, so a connection a"
        " Linux host opens does not use ECN unless it says on; the Windows profiles: off)",
    )
    handshake: bool = Field(
        True,
        description="open connections with the three-way handshake; false starts a "
        "connection this host opens already established, its options agreed from both "
        "hosts' settings, as YATS and ns-2's one-way TCP agents do (simulator only)",
    )

    @field_validator("sndbuf", "rcvbuf")
    @classmethod
    def _buffer_within_bounds(cls, size: int | str) -> int | str:
        if size != AUTO_BUFFER and not 1 <= int(size) <= MAX_BUFFER_BYTES:
            raise ValueError(
                f"{units.format_size(int(size))} is not accepted; accepted: 1B to"
                f' {units.format_size(MAX_BUFFER_BYTES)}, or "{AUTO_BUFFER}"'
            )
        return size

    @model_validator(mode="after")
    def _autotuned_sndbuf_is_linux_memory(self) -> Tcp:
        # Autotuning sizes Linux's skb memory (crates/sim/src/tcp/sender/sndbuf.rs).
        if self.sndbuf == AUTO_BUFFER and self.sndbuf_accounting != "linux":
            raise ValueError(
                f'sndbuf: "{AUTO_BUFFER}" is Linux\'s send-buffer autotuning, which needs'
                f' sndbuf_accounting = "linux" (it is "{self.sndbuf_accounting}")'
            )
        return self

    @field_validator("min_rto")
    @classmethod
    def _min_rto_below_the_largest_rto(cls, min_rto: int) -> int:
        if min_rto > MAX_MIN_RTO_NS:
            raise ValueError(
                f"{units.format_duration(min_rto)} is above the largest RTO; accepted: "
                f"1ns to {units.format_duration(MAX_MIN_RTO_NS)}"
            )
        return min_rto

    @model_validator(mode="before")
    @classmethod
    def _apply_profile(cls, data: Any) -> Any:
        # A profile that is not a name (`profile = [1, 2]`) is left to the field's own
        # check, which lists the names.
        if isinstance(data, dict) and isinstance(data.get("profile", ""), str):
            return profiles.apply(data)
        return data


class Cpu(StrictModel):
    """A host's processing costs: a named profile, overridden cost by cost."""

    profile: Literal[tuple(cpu_profiles.PROFILES)] = Field(  # type: ignore[valid-type]
        cpu_profiles.DEFAULT_CPU, description="CPU profile whose costs the fields override"
    )
    per_packet: Duration | None = Field(
        None, description="protocol work per packet sent or received"
    )
    per_byte: Duration | None = Field(None, description="copy per byte in read() and write()")
    per_call: Duration | None = Field(None, description="per system call")
    storage_per_byte: Duration | None = Field(
        None, description="per byte a receiving file or message app writes to storage"
    )
    ring: int | None = Field(None, ge=1, description="NIC receive ring, packets")

    def resolved(self) -> cpu_profiles.CpuProfile:
        """The profile with this table's overrides applied."""
        base = cpu_profiles.PROFILES[self.profile]
        return cpu_profiles.CpuProfile(
            base.description,
            base.source,
            per_packet_ns=_given(self.per_packet, base.per_packet_ns),
            per_byte_ns=_given(self.per_byte, base.per_byte_ns),
            per_call_ns=_given(self.per_call, base.per_call_ns),
            storage_per_byte_ns=_given(self.storage_per_byte, base.storage_per_byte_ns),
            ring_packets=_given(self.ring, base.ring_packets),
        )


def _given(value: int | None, default: int) -> int:
    return default if value is None else value


def _cpu_name_or_table(schema: dict[str, Any]) -> None:
    # The schema of `cpu = "pda-400mhz"`, which the validator turns into a table.
    schema["anyOf"].insert(0, {"enum": list(cpu_profiles.PROFILES)})


class Host(StrictModel):
    """A TCP endpoint. Without [[flows]], the first host sends and the last one receives."""

    name: Name
    tcp: Tcp = Field(default_factory=Tcp)
    cpu: Cpu | None = Field(
        None,
        description='a CPU profile name, or a table: {profile = "..."}',
        json_schema_extra=_cpu_name_or_table,
    )

    @field_validator("cpu", mode="before")
    @classmethod
    def _profile_name(cls, cpu: Any) -> Any:
        # `cpu = "pentium-133"` is short for `cpu = { profile = "pentium-133" }`.
        return {"profile": cpu} if isinstance(cpu, str) else cpu
