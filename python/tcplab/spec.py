"""The scenario a user writes (TOML), validated with pydantic.

Quantities are held as integers in the simulator's units (ns, bit/s, bytes) and written back
in a canonical spelling ("275ms", "2.048Mbps", "64KiB"), so a dumped spec validates again to
the same spec and two spellings of one experiment hash alike.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from tcplab import ber_curves, cpu_profiles, media, profiles, units

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib
from tcplab.errors import SpecError
from tcplab.links import (
    ENCAPSULATIONS,
    WLAN_BASIC_RATES_BPS,
    WLAN_MAC_OVERHEAD,
    WLAN_RATES_BPS,
    Encapsulation,
    LinkKind,
)

__all__ = [
    "Abr",
    "App",
    "Efci",
    "Erica",
    "EricaPlus",
    "Cpu",
    "Flow",
    "GilbertElliott",
    "Host",
    "Link",
    "MediaObjectives",
    "Pep",
    "Queue",
    "Router",
    "Spec",
    "Switch",
    "SpecError",
    "Stream",
    "Sweep",
    "Tcp",
    "Trace",
    "Wlan",
    "canonical_dict",
    "json_schema",
    "load_spec",
    "spec_hash",
    "validate_spec",
]


def _quantity(
    parse: Callable[[object], Any], write: Callable[[Any], str], schema: dict[str, Any]
) -> Any:
    return Annotated[
        int,
        PlainValidator(parse),
        PlainSerializer(write, return_type=str),
        WithJsonSchema(schema),
    ]


Rate = _quantity(units.parse_rate, units.format_rate, units.RATE_JSON_SCHEMA)
NonNegativeRate = _quantity(
    partial(units.parse_rate, positive=False), units.format_rate, units.RATE_JSON_SCHEMA
)
Duration = _quantity(units.parse_duration, units.format_duration, units.DURATION_JSON_SCHEMA)
PositiveDuration = _quantity(
    partial(units.parse_duration, positive=True),
    units.format_duration,
    units.DURATION_JSON_SCHEMA,
)
Size = _quantity(units.parse_size, units.format_size, units.SIZE_JSON_SCHEMA)
QueueLimit = Annotated[
    units.QueueLimit,
    PlainValidator(units.parse_queue_limit),
    PlainSerializer(units.format_queue_limit, return_type=str),
    WithJsonSchema(units.QUEUE_LIMIT_JSON_SCHEMA),
]
# Names end up in result paths (results/<name>) and tables, so keep them to a safe alphabet.
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)]
Probability = Annotated[float, Field(ge=0.0, le=1.0)]
BerCurve = Literal["qpsk", "qpsk-conv-k7-r34", "koreasat-2000"]

ERROR_MODEL_FIELDS = ("ber", "loss", "gilbert_elliott", "ebno_db")


class _Model(BaseModel):
    # strict: TOML already has real types, so "1460" for an integer or 1 for a bool is a
    # mistake worth reporting rather than coercing. TOML also has nan and inf, which no
    # field here can mean.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


class Tcp(_Model):
    """The TCP configuration of one host: a stack profile, overridden field by field."""

    profile: Literal[tuple(profiles.STACKS)] = Field(  # type: ignore[valid-type]
        profiles.DEFAULT_STACK, description="stack profile whose settings the fields override"
    )
    cc: Literal["tahoe", "reno", "newreno", "cubic", "hybla", "bbr"] = Field(
        "newreno", description="congestion control algorithm"
    )
    sndbuf: Size = Field("64KiB", validate_default=True, description="socket send buffer")
    rcvbuf: Size = Field("64KiB", validate_default=True, description="socket receive buffer")
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
        False, description="HyStart++ (RFC 9406) ends the initial slow start on a delay rise"
    )
    delayed_ack: bool = Field(True, description="delay ACKs (RFC 1122/5681)")
    delack_timeout: PositiveDuration = Field(
        "200ms", validate_default=True, description="delayed-ACK timer"
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
    cwnd_validation: bool = Field(
        True,
        description="grow cwnd only while it limits the sender (RFC 7661, as Linux); "
        "off for stacks before RFC 2861",
    )
    handshake: bool = Field(
        True,
        description="open connections with the three-way handshake; false starts a "
        "connection this host opens already established, its options agreed from both "
        "hosts' settings, as YATS and ns-2's one-way TCP agents do (simulator only)",
    )

    @model_validator(mode="before")
    @classmethod
    def _apply_profile(cls, data: Any) -> Any:
        return profiles.apply(data) if isinstance(data, dict) else data


class Cpu(_Model):
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


class Host(_Model):
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


class Queue(_Model):
    """A drop-tail queue in front of a link direction; the packet being serialized has left it."""

    limit: QueueLimit = Field("100p", validate_default=True)


class GilbertElliott(_Model):
    """A two-state loss chain stepped once per packet."""

    p_gb: Probability = Field(description="per-packet probability of moving good → bad")
    p_bg: Probability = Field(description="per-packet probability of moving bad → good")
    loss_good: Probability = Field(0.0, description="loss probability in the good state")
    loss_bad: Probability = Field(1.0, description="loss probability in the bad state")


def _mbps(rates: tuple[int, ...]) -> str:
    return ", ".join(units.format_rate(r) for r in rates)


class Wlan(_Model):
    """802.11b settings of a wlan link (docs/models/wlan.md). The link joins an access point
    to one station; links on one medium share its channel."""

    ap: Literal["first", "second"] = Field(
        "first",
        description="which node is the access point: first (between[0], or in a path the"
        " end nearer the sender) or second",
    )
    medium: Name | None = Field(
        None,
        description="links naming the same medium share one channel; default: one medium"
        " per access point",
    )
    ack_rate: Rate = Field(
        "2Mbps", validate_default=True, description="link-layer ACK rate: 1Mbps or 2Mbps"
    )
    preamble: Literal["long", "short"] = Field(
        "long", description="PLCP preamble: long (192 µs) or short (96 µs)"
    )
    mac_overhead: int = Field(
        WLAN_MAC_OVERHEAD,
        ge=WLAN_MAC_OVERHEAD,
        le=64,
        description="MAC header + FCS bytes: 28 with three addresses, 34 with four",
    )
    retry_limit: int = Field(
        7, ge=1, le=255, description="attempts per frame before it is discarded"
    )
    ap_queue: QueueLimit = Field(
        "50p", validate_default=True, description="the AP's one transmit queue, all stations"
    )

    @field_validator("ack_rate")
    @classmethod
    def _basic_rate(cls, rate: int) -> int:
        if rate not in WLAN_BASIC_RATES_BPS:
            raise ValueError(
                f"{units.format_rate(rate)} is not a basic rate; accepted: "
                f"{_mbps(WLAN_BASIC_RATES_BPS)}"
            )
        return rate


class Link(_Model):
    """One hop of the path; forward is the direction from the sender towards the receiver.
    With [[flows]], `between` names its two nodes and forward leaves the first."""

    between: Annotated[list[Name], Field(min_length=2, max_length=2)] | None = Field(
        None, description="with [[flows]]: the two hosts or routers it joins"
    )
    kind: LinkKind = Field(
        "p2p",
        description="p2p (PPP), ethernet, wlan (an 802.11b shared medium), or atm (AAL5"
        " cells; docs/models/atm.md)",
    )
    rate: Rate
    delay: Duration = Field(description="one-way propagation delay")
    queue: Queue = Field(default_factory=Queue)
    ber: Probability | None = Field(None, description="bit error rate")
    loss: Probability | None = Field(None, description="per-packet loss probability")
    gilbert_elliott: GilbertElliott | None = None
    # ber_curve comes before ebno_db so that ebno_db's validator can read it.
    ber_curve: BerCurve | None = Field(None, description="Eb/No → BER curve for ebno_db")
    ebno_db: float | None = Field(None, validate_default=True, description="Eb/No in dB")
    reverse_rate: Rate | None = Field(None, description="default: rate")
    reverse_delay: Duration | None = Field(None, description="default: delay")
    reverse_queue: Queue | None = Field(None, description="default: queue")
    reverse_ber: Probability | None = None
    reverse_loss: Probability | None = None
    reverse_gilbert_elliott: GilbertElliott | None = None
    reverse_ber_curve: BerCurve | None = None
    reverse_ebno_db: float | None = Field(None, validate_default=True)
    wlan: Wlan | None = Field(None, description='with kind = "wlan": its 802.11b settings')
    encapsulation: Encapsulation | None = Field(
        None, description="atm: llc-snap (default), vc-mux, lane or clip"
    )
    cell_overhead: int | None = Field(
        None, ge=0, le=16, description="atm: octets each cell slot adds to the 53 (ATM25: 1)"
    )
    clr: Probability | None = Field(None, description="atm: cell loss ratio")
    reverse_clr: Probability | None = None

    @field_validator("ebno_db", "reverse_ebno_db")
    @classmethod
    def _ebno_on_its_curve(cls, ebno_db: float | None, info: ValidationInfo) -> float | None:
        curve_field = "reverse_ber_curve" if info.field_name == "reverse_ebno_db" else "ber_curve"
        if curve_field not in info.data:
            return ebno_db  # the curve itself was invalid and is reported on its own
        curve = info.data[curve_field]
        if ebno_db is None:
            if curve is not None:
                raise ValueError(f"required when {curve_field} is given")
            return ebno_db
        if curve is None:
            raise ValueError(f"needs {curve_field} (one of {', '.join(get_args(BerCurve))})")
        ber_curves.ber_from_ebno(curve, ebno_db)
        return ebno_db

    @field_validator("rate", "reverse_rate")
    @classmethod
    def _wlan_rate(cls, rate: int | None, info: ValidationInfo) -> int | None:
        if info.data.get("kind") == "wlan" and rate is not None and rate not in WLAN_RATES_BPS:
            raise ValueError(
                f"{units.format_rate(rate)} is not an 802.11b data rate; accepted:"
                f" {_mbps(WLAN_RATES_BPS)}"
            )
        return rate

    @field_validator("reverse_queue")
    @classmethod
    def _one_station_queue(cls, queue: Queue | None, info: ValidationInfo) -> Queue | None:
        if info.data.get("kind") == "wlan" and queue is not None:
            raise ValueError(
                "a wlan link's `queue` is its station's; the access point's is wlan.ap_queue"
            )
        return queue

    @field_validator("wlan")
    @classmethod
    def _wlan_kind(cls, wlan: Wlan | None, info: ValidationInfo) -> Wlan | None:
        if wlan is not None and info.data.get("kind") != "wlan":
            raise ValueError('only for kind = "wlan"')
        return wlan

    def wlan_settings(self) -> Wlan:
        """A wlan link's 802.11b settings (the defaults where it gives none)."""
        return self.wlan or Wlan()

    @model_validator(mode="after")
    def _atm_fields_on_atm_links(self) -> Link:
        atm_only = ("encapsulation", "cell_overhead", "clr", "reverse_clr")
        if self.kind != "atm":
            given = [name for name in atm_only if getattr(self, name) is not None]
            if given:
                raise ValueError(f'{", ".join(given)}: only for kind = "atm"')
            return self
        packet_only = ("loss", "reverse_loss", "gilbert_elliott", "reverse_gilbert_elliott")
        given = [name for name in packet_only if getattr(self, name) is not None]
        if given:
            raise ValueError(
                f"{', '.join(given)}: an ATM link loses cells, not packets; give clr (the"
                " cell loss ratio) or a bit error rate (ber, ebno_db)"
            )
        # The default queue is left alone, so that the canonical form validates again.
        queues = [
            name
            for name in ("queue", "reverse_queue")
            if getattr(self, name) not in (None, Queue())
        ]
        if queues:
            raise ValueError(
                f"{', '.join(queues)}: an ATM link buffers cells in its switches; set"
                " buffer_cells in the switch table of a router ([routers.switch])"
            )
        return self

    @model_validator(mode="after")
    def _one_error_model_per_direction(self) -> Link:
        for prefix in ("", "reverse_"):
            names = [prefix + name for name in (*ERROR_MODEL_FIELDS, "clr")]
            given = [name for name in names if getattr(self, name) is not None]
            if len(given) > 1:
                raise ValueError(
                    f"{' and '.join(given)} are both given; a direction takes at most one error"
                    f" model ({', '.join(names)})"
                )
        return self


class Stream(_Model):
    """One media stream: a message every `interval` (or `rate` per second) of `message_size`
    bytes (or `bit_rate` worth), over TCP or UDP (docs/models/media.md)."""

    name: Name
    kind: Literal["video", "audio", "data"] = Field("data", description="a label for tables")
    transport: Literal["tcp", "udp"] = Field(
        "udp", description="tcp: its own connection; udp: one datagram per message"
    )
    interval: PositiveDuration | None = Field(None, description="time between messages")
    rate: float | None = Field(
        None, gt=0, validate_default=True, description="messages per second (or interval)"
    )
    message_size: Size | None = Field(None, description="bytes per message")
    bit_rate: Rate | None = Field(
        None, validate_default=True, description="or: message size = bit_rate × interval"
    )
    max_message_size: Size | None = Field(
        None, description="sizes uniform from message_size to this"
    )
    direction: Literal["upstream", "downstream"] = Field(
        "upstream", description="upstream: the first host sends; downstream: the second"
    )
    start: Duration | None = Field(
        None, description="first message this long after the stream can send"
    )
    when_blocked: Literal["queue", "skip"] = Field(
        "queue",
        description="tcp: a message due while the last is not all in the send buffer waits"
        " (queue) or is dropped by the application (skip)",
    )

    @field_validator("rate")
    @classmethod
    def _interval_or_rate(cls, rate: float | None, info: ValidationInfo) -> float | None:
        if "interval" not in info.data:
            return rate  # interval was invalid and is reported on its own
        if (info.data["interval"] is None) == (rate is None):
            raise ValueError("give either interval or rate (messages per second), not both")
        if rate is not None and round(1e9 / rate) < 1:
            raise ValueError(f"{rate} per second is more than one message per nanosecond")
        return rate

    @field_validator("bit_rate")
    @classmethod
    def _size_or_bit_rate(cls, bit_rate: int | None, info: ValidationInfo) -> int | None:
        if "message_size" not in info.data:
            return bit_rate
        if (info.data["message_size"] is None) == (bit_rate is None):
            raise ValueError("give either message_size or bit_rate, not both")
        return bit_rate

    @field_validator("max_message_size")
    @classmethod
    def _range_above_size(cls, largest: int | None, info: ValidationInfo) -> int | None:
        smallest = info.data.get("message_size")
        if largest is not None and smallest is None:
            raise ValueError("only with message_size, the smallest size")
        if largest is not None and smallest is not None and largest < smallest:
            raise ValueError(f"{largest} B is below message_size, {smallest} B")
        return largest

    @model_validator(mode="after")
    def _skip_over_tcp(self) -> Stream:
        if self.when_blocked == "skip" and self.transport != "tcp":
            raise ValueError('when_blocked: only a TCP stream\'s writes block; "skip" needs tcp')
        return self

    @model_validator(mode="after")
    def _udp_datagram_fits(self) -> Stream:
        largest = self.max_message_size or self.message_bytes()
        if self.transport == "udp" and largest > media.MAX_UDP_MESSAGE:
            raise ValueError(
                f"message_size: a UDP message is one datagram of at most"
                f' {media.MAX_UDP_MESSAGE} bytes; {largest} given (use transport = "tcp")'
            )
        return self

    def interval_ns(self) -> int:
        if self.interval is not None:
            return self.interval
        assert self.rate is not None  # validation requires one of the two
        return round(1e9 / self.rate)

    def message_bytes(self) -> int:
        """The message size, or the bytes `bit_rate` fills in one interval (rounded up)."""
        if self.message_size is not None:
            return self.message_size
        assert self.bit_rate is not None  # validation requires one of the two
        return max(1, -(-self.bit_rate * self.interval_ns() // (8 * 10**9)))


class MediaObjectives(_Model):
    """The limits each media stream is judged against: a preset of ITU objectives, overridden
    field by field (docs/models/media.md cites each preset's source)."""

    preset: Literal[tuple(media.PRESETS)] = Field(  # type: ignore[valid-type]
        media.DEFAULT_PRESET, description="the ITU class whose limits the fields override"
    )
    delay: PositiveDuration | None = Field(None, description="limit on the mean one-way delay")
    delay_variation: Duration | None = Field(
        None, description="limit on IPDV: the 99.9th percentile of delay minus its minimum"
    )
    loss_ratio: Probability | None = Field(None, description="limit on the message loss ratio")
    loss_timeout: PositiveDuration | None = Field(
        None, description="a message later than this is lost (Y.1540 T_max; default 3 s)"
    )


class App(_Model):
    """The application: what it writes, how it reads, and when it is done."""

    kind: Literal["bulk", "file", "message", "rr", "media"] = Field(
        "bulk",
        description="bulk: write for the whole duration; file: write `bytes`, then stop;"
        " message: one message, done when received; rr: request/response transactions;"
        " media: timestamped message streams (`streams`)",
    )
    message_size: Size = Field(
        "64KiB", validate_default=True, description="bytes per write (netperf -m)"
    )
    # The fields below are validated after kind (and bytes after recording and codec_rate),
    # so that their validators can read them.
    recording: PositiveDuration | None = Field(
        None, description="message: a recording of this length, at codec_rate"
    )
    codec_rate: Rate | None = Field(
        None, validate_default=True, description="message: the codec's bit rate"
    )
    bytes: Size | None = Field(None, validate_default=True, description="file or message size")
    direction: Literal["upstream", "downstream", "both"] | None = Field(
        None,
        validate_default=True,
        description="message: client to server, server to client, or both in turn",
    )
    write_delay: Duration | None = Field(None, description="sleep after each write call")
    read_size: Size | None = Field(
        None, description="bytes per read call; default: all the socket holds"
    )
    read_delay: Duration | None = Field(
        None, description="sleep after each read call (and its storage write)"
    )
    request_size: Size | None = Field(None, validate_default=True, description="rr: default 1 B")
    response_size: Size | None = Field(None, validate_default=True, description="rr: default 1 B")
    streams: list[Stream] | None = Field(
        None, validate_default=True, description="media: the streams, each its own flow"
    )
    objectives: MediaObjectives | None = Field(
        None, validate_default=True, description="media: the limits each stream is judged by"
    )
    connection: Literal["separate", "shared"] | None = Field(
        None,
        validate_default=True,
        description="media: each TCP stream its own connection, or those of one direction one",
    )
    # None (unset) means tcplab's own tool; a default value would enter every scenario's
    # canonical form and change the hash of all of them.
    tool: Literal["tcplab", "iperf3"] | None = Field(
        None,
        description="the program the emu backend runs: tcplab (default, tcplab measure) or iperf3",
    )

    @field_validator("recording")
    @classmethod
    def _recording_for_messages(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("kind") != "message":
            raise ValueError('only for kind = "message"')
        return value

    @field_validator("codec_rate")
    @classmethod
    def _codec_with_recording(cls, rate: int | None, info: ValidationInfo) -> int | None:
        if "recording" not in info.data:
            return rate  # recording was invalid and is reported on its own
        recording = info.data["recording"]
        if recording is not None and rate is None:
            raise ValueError("required with recording")
        if recording is None and rate is not None:
            raise ValueError("only with recording")
        return rate

    @field_validator("bytes")
    @classmethod
    def _bytes_when_sized(cls, size: int | None, info: ValidationInfo) -> int | None:
        kind = info.data.get("kind")
        recorded = info.data.get("recording") is not None
        if kind == "file" and size is None:
            raise ValueError('required when kind = "file"')
        if kind == "message" and (size is None) == (not recorded):
            raise ValueError("give the message's size either here or as recording and codec_rate")
        if kind in ("bulk", "rr", "media") and size is not None:
            raise ValueError(f'only for kind = "file" or "message"; {kind} runs for the duration')
        return size

    @field_validator("direction")
    @classmethod
    def _direction_for_messages(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("kind") != "message":
            raise ValueError('only for kind = "message"')
        return value

    @field_validator("request_size", "response_size")
    @classmethod
    def _sizes_for_rr(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("kind") != "rr":
            raise ValueError('only for kind = "rr"')
        return value

    @field_validator("read_delay")
    @classmethod
    def _read_delay_for_readers(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value and info.data.get("kind") in ("rr", "media"):
            raise ValueError('only for kind = "bulk", "file" or "message"')
        return value

    @field_validator("streams")
    @classmethod
    def _streams_for_media(cls, streams: list[Stream] | None, info: ValidationInfo) -> Any:
        media_app = info.data.get("kind") == "media"
        if media_app and not streams:
            raise ValueError('kind = "media" needs at least one [[app.streams]]')
        if not media_app and streams is not None:
            raise ValueError('only for kind = "media"')
        names = [stream.name for stream in streams or []]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise ValueError(f"stream name {name!r} is used twice (streams.{index}.name)")
        return streams

    @field_validator("objectives", "connection")
    @classmethod
    def _media_only(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and info.data.get("kind") != "media":
            raise ValueError('only for kind = "media"')
        return value

    def message_bytes(self) -> int | None:
        """The file or message size; a recording is its length times the codec rate."""
        if self.recording is not None and self.codec_rate is not None:
            # ns · bit/s / 8e9 bytes, rounded up to whole bytes.
            return -(-self.recording * self.codec_rate // (8 * 10**9))
        return self.bytes


def _at_least_one_value(values: list[Any]) -> list[Any]:
    if not values:
        raise ValueError("an empty list; give at least one value")
    return values


SweepValues = Annotated[
    list[Any],
    AfterValidator(_at_least_one_value),
    WithJsonSchema({"type": "array", "minItems": 1}),
]


class Sweep(_Model):
    """Field paths (e.g. "hosts.0.tcp.sndbuf") mapped to the lists of values they take."""

    # The paths are the table's own keys, as people write them, so they are pydantic extras.
    # Whether a path and its values fit the scenario is checked when the sweep is expanded
    # (tcplab.sweeps.expand), since that needs the rest of the scenario.
    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, SweepValues] = Field(init=False)

    mode: Literal["grid", "zip"] = Field(
        "grid", description="grid: every combination of the lists; zip: the i-th values together"
    )

    @property
    def parameters(self) -> dict[str, list[Any]]:
        """The swept paths and their values, in the order they were written."""
        return dict(self.__pydantic_extra__ or {})

    @model_validator(mode="after")
    def _lists_fit_the_mode(self) -> Sweep:
        parameters = self.parameters
        if not parameters:
            raise ValueError('no field paths to sweep; add e.g. "links.0.delay" = ["10ms", "20ms"]')
        lengths = {len(values) for values in parameters.values()}
        if self.mode == "zip" and len(lengths) > 1:
            counts = ", ".join(f'"{path}" has {len(values)}' for path, values in parameters.items())
            raise ValueError(
                f'mode = "zip" pairs the i-th values, so the lists need equal lengths: {counts}'
            )
        return self


# A link direction to capture: "links.N" (both directions) or "links.N.forward|reverse".
_LINK_PATH = re.compile(r"links\.(0|[1-9][0-9]*)(\.(forward|reverse))?")
# tcpdump's largest snapshot length (MAXIMUM_SNAPLEN); Wireshark reads no larger records.
MAX_SNAPLEN = 262_144


def _link_path(path: str) -> str:
    if not _LINK_PATH.fullmatch(path):
        raise ValueError(
            f"{path!r} is not a link path; write links.N for both directions of link N, or"
            " links.N.forward or links.N.reverse for one"
        )
    return path


LinkPath = Annotated[str, AfterValidator(_link_path)]


class Trace(_Model):
    """Packet captures of link directions, as pcap files (docs/pcap.md)."""

    pcap: list[LinkPath] = Field(
        default_factory=list,
        description='link directions to capture: "links.N", "links.N.forward", "links.N.reverse"',
    )
    snaplen: int = Field(
        128, ge=1, le=MAX_SNAPLEN, description="bytes kept of each packet (tcpdump -s)"
    )


class Efci(_Model):
    """A binary-feedback switch's thresholds (docs/models/abr.md): marking starts when an
    output port holds more than `high` cells and stops once it holds `low` or fewer."""

    mark: Literal["efci", "relative-rate"] = Field(
        "efci",
        description="efci: the EFCI bit of data cells (the destination returns it as CI);"
        " relative-rate: CI in the RM cells passing the port",
    )
    high: int | None = Field(None, ge=0, description="default: 0.8 x the switch's buffer_cells")
    low: int | None = Field(None, ge=0, description="default: 0.6 x buffer_cells (hysteresis)")
    no_increase: int | None = Field(
        None, ge=0, description="relative-rate: NI in RM cells above this many cells"
    )

    @model_validator(mode="after")
    def _ni_in_rm_cells(self) -> Efci:
        if self.no_increase is not None and self.mark != "relative-rate":
            raise ValueError('no_increase: NI is set in RM cells, only with mark = "relative-rate"')
        return self


class EricaPlus(_Model):
    """ERICA+ queue control (Kalyanaraman): the target follows the queue's delay."""

    t0: PositiveDuration = Field(
        "500us", validate_default=True, description="target queueing delay"
    )
    qdlf: float = Field(0.5, gt=0.0, le=1.0, description="queue drain limit factor")
    a: float = Field(1.15, gt=1.0, description="curve above the target queue")
    b: float = Field(1.05, ge=1.0, description="curve below the target queue")


class Erica(_Model):
    """An ERICA switch's parameters (Jain et al. 1996; docs/models/abr.md)."""

    target_utilization: float = Field(
        0.9, gt=0.0, le=1.0, description="share of the link the ABR input rate aims at"
    )
    delta: float = Field(0.1, ge=0.0, description="overload is a load factor above 1 + delta")
    interval: PositiveDuration = Field(
        "1ms", validate_default=True, description="averaging interval"
    )
    interval_cells: int | None = Field(
        None, ge=1, description="end the interval after this many ABR cells if sooner"
    )
    plus: EricaPlus | None = Field(None, description="ERICA+ queue control")
    fair_share: Literal["active", "established"] = Field(
        "active",
        description="FairShare divides the target among the VCs active in the interval"
        " (Jain et al.) or among all VCs set up through the port (YATS's default)",
    )
    measure_ccr: bool = Field(
        False,
        description="VCShare from each VC's cell rate measured at the port rather than the"
        " CCR of its RM cells (ERICA's per-VC CCR measurement option)",
    )


class Switch(_Model):
    """An ATM switch: a cell buffer per output port, and how it discards (docs/models/atm.md)."""

    buffer_cells: int = Field(4096, ge=1, description="cells each output port holds")
    discard: Literal["drop-tail", "ppd", "epd"] = Field(
        "drop-tail",
        description="drop-tail (plain UBR), ppd (partial packet discard), or epd (early packet"
        " discard, with ppd once the buffer is full)",
    )
    epd_threshold: int | None = Field(
        None,
        ge=0,
        validate_default=True,
        description="epd: refuse a frame whose first cell finds this many cells queued;"
        " default 0.8 × buffer_cells",
    )
    feedback: Literal["none", "efci", "erica"] | None = Field(
        None,
        description="ABR feedback (docs/models/abr.md): efci (binary) or erica (explicit"
        " rate); default none. Connections crossing a switch with feedback run on ABR VCs",
    )
    efci: Efci | None = Field(None, description="the efci feedback's thresholds")
    erica: Erica | None = Field(None, description="the erica feedback's parameters")

    @field_validator("epd_threshold")
    @classmethod
    def _threshold_within_the_buffer(cls, value: int | None, info: ValidationInfo) -> int | None:
        buffer = info.data.get("buffer_cells")
        if value is not None and info.data.get("discard") != "epd":
            raise ValueError('only for discard = "epd"')
        if value is not None and buffer is not None and value > buffer:
            raise ValueError(f"must not exceed buffer_cells ({buffer})")
        return value

    @field_validator("feedback")
    @classmethod
    def _none_is_unset(cls, value: str | None) -> str | None:
        # One spelling for no feedback, so that it hashes like a switch that names none.
        return None if value == "none" else value

    @model_validator(mode="after")
    def _efci_thresholds_within_the_buffer(self) -> Switch:
        efci = self.efci or Efci()
        for name in ("high", "low", "no_increase"):
            value = getattr(efci, name)
            if value is not None and value > self.buffer_cells:
                raise ValueError(
                    f"efci.{name}: {value} cells exceed buffer_cells ({self.buffer_cells})"
                )
        low, high = self.efci_thresholds()
        if low > high:
            raise ValueError(f"efci.low ({low}) must not exceed efci.high ({high})")
        return self

    def efci_thresholds(self) -> tuple[int, int]:
        """(low, high): marking stops at or below low and starts above high, by default
        0.6 and 0.8 of the buffer (models.md §3.5, an assumption)."""
        efci = self.efci or Efci()
        high = self.buffer_cells * 4 // 5 if efci.high is None else efci.high
        low = self.buffer_cells * 3 // 5 if efci.low is None else efci.low
        return low, high

    def threshold(self) -> int:
        """The EPD threshold in cells (0.8 × the buffer unless given, models.md §2)."""
        return self.buffer_cells * 4 // 5 if self.epd_threshold is None else self.epd_threshold


class Router(_Model):
    """A store-and-forward node between links (with [[flows]])."""

    name: Name
    switch: Switch | None = Field(
        None, description="an ATM switch: cells cross it one by one; all its links are atm"
    )


class Pep(_Model):
    """A split-connection Performance Enhancing Proxy (RFC 3135 §2.4; docs/models/pep.md):
    it terminates each TCP connection that crosses it and relays the bytes onto a second
    connection of its own."""

    name: Name
    after_link: int | None = Field(
        None,
        ge=0,
        description="path form: the PEP sits between links after_link and after_link + 1",
    )
    buffer: Size = Field(
        "4MiB", validate_default=True, description="the relay's buffer between the connections"
    )
    tcp_client_side: Tcp = Field(
        default_factory=Tcp, description="TCP of the connection the PEP accepts from a flow's src"
    )
    tcp_server_side: Tcp = Field(
        default_factory=Tcp, description="TCP of the connection the PEP opens to the flow's dst"
    )


class Flow(_Model):
    """One TCP connection: `src` opens it to `dst`, and the app runs over it."""

    src: Name
    dst: Name
    app: App | None = Field(None, description="default: the scenario's [app]")
    start: Duration | None = Field(None, description="when src opens the connection")
    start_jitter: Duration | None = Field(
        None,
        description="open at a time drawn uniformly from [start, start + start_jitter), "
        "from the random stream flows.<k>.start_jitter: desynchronises sources that would "
        "start together, and makes repetitions with different seeds differ",
    )
    after: int | None = Field(
        None, ge=0, description="open once this earlier file or message flow is received"
    )


class Abr(_Model):
    """ABR source parameters (ATM Forum TM 4.0 section 5.10.2) of every VC over ATM links.

    Rates are bit rates of 53-byte cells (424 bits a cell): "150Mbps" is 353 773.6 cells/s.
    """

    pcr: Rate | None = Field(
        None, description="peak cell rate; default: the cell rate of the VC's first link"
    )
    mcr: NonNegativeRate = Field(0, description="minimum cell rate")
    icr: Rate | None = Field(None, description="initial cell rate; default: pcr")
    tcr: Rate = Field(4240, description="tagged cell rate, 10 cells/s (out-of-rate RM cells)")
    rif: float = Field(1 / 16, gt=0.0, le=1.0, description="rate increase factor (x PCR)")
    rdf: float = Field(1 / 16, gt=0.0, le=1.0, description="rate decrease factor (x ACR)")
    cdf: float = Field(1 / 16, ge=0.0, le=1.0, description="cutoff decrease factor")
    nrm: int = Field(32, ge=2, le=256, description="cells per forward RM cell")
    mrm: int = Field(2, ge=1, description="cells between RM cells when Trm triggers")
    trm: PositiveDuration = Field(
        "100ms", validate_default=True, description="most time between forward RM cells"
    )
    adtf: PositiveDuration = Field(
        "500ms", validate_default=True, description="idle time after which ACR returns to ICR"
    )
    tbe: int = Field(16_777_215, ge=1, le=16_777_215, description="transient buffer exposure")
    frtt: Duration = Field(0, description="fixed round-trip time signalled; 0: none")

    @model_validator(mode="after")
    def _rates_in_order(self) -> Abr:
        if self.mrm >= self.nrm:
            raise ValueError(f"mrm ({self.mrm}) must be below nrm ({self.nrm})")
        if self.pcr is not None and self.mcr > self.pcr:
            raise ValueError("mcr must not exceed pcr")
        if self.icr is not None and self.pcr is not None and self.icr > self.pcr:
            raise ValueError("icr must not exceed pcr")
        if self.icr is not None and self.icr < self.mcr:
            raise ValueError("icr must not be below mcr")
        return self


def _default_hosts() -> list[Host]:
    return [Host(name="client"), Host(name="server")]


class Spec(_Model):
    """A whole scenario: who talks, over which path, for how long."""

    name: Name = Field("scenario", description="default: the scenario file's name")
    backend: Literal["sim", "model", "emu"] = "sim"
    duration: PositiveDuration = Field("60s", validate_default=True)
    seed: int = Field(1, ge=0, le=2**63 - 1)
    repetitions: int = Field(1, ge=1)
    interval: PositiveDuration = Field(
        "1s", validate_default=True, description="period of the per-interval series"
    )
    trace_interval: PositiveDuration = Field(
        "10ms", validate_default=True, description="period of cwnd/srtt samples"
    )
    hosts: list[Host] = Field(
        default_factory=_default_hosts,
        description="without [[flows]], exactly two: sender first, receiver last",
    )
    routers: list[Router] = Field(
        default_factory=list, description="with [[flows]]: the nodes between links"
    )
    links: list[Link] = Field(
        default_factory=list,
        validate_default=True,
        description="the path, sender to receiver; with [[flows]], each names its nodes",
    )
    app: App = Field(default_factory=App)
    flows: list[Flow] | None = Field(
        None, description="several connections, each between two hosts, over the links"
    )
    trace: Trace | None = Field(None, description="packet captures (sim backend)")
    # None rather than an empty list, so that scenarios without PEPs hash as before.
    peps: list[Pep] | None = Field(
        None, description="split-connection proxies between links (sim and emu backends)"
    )
    abr: Abr | None = Field(
        None, description="ABR source parameters of VCs crossing a switch with feedback"
    )
    sweep: Sweep | None = Field(None, description="run the scenario over a grid of field values")

    @field_validator("hosts")
    @classmethod
    def _distinct_hosts(cls, hosts: list[Host]) -> list[Host]:
        if len(hosts) < 2:
            raise ValueError(
                f"exactly 2 hosts without [[flows]] (the first sends, the last receives),"
                f" at least 2 with them; {len(hosts)} given"
            )
        first: dict[str, int] = {}
        for index, host in enumerate(hosts):
            if host.name in first:
                raise ValueError(
                    f"host name {host.name!r} is used twice "
                    f"(hosts.{first[host.name]}.name and hosts.{index}.name)"
                )
            first[host.name] = index
        return hosts

    @model_validator(mode="after")
    def _real_kernel_only(self) -> Spec:
        if self.app.tool == "iperf3" and self.backend != "emu":
            raise ValueError(
                f'app.tool: "iperf3" runs only on the emu backend; the {self.backend} backend '
                'models the application itself (use tool = "tcplab", the default)'
            )
        return self

    @field_validator("trace")
    @classmethod
    def _captured_links_exist(cls, trace: Trace | None, info: ValidationInfo) -> Trace | None:
        links = info.data.get("links")
        if trace is None or links is None:
            return trace  # invalid links are reported on their own
        problems = []
        for index, path in enumerate(trace.pcap):
            link = int(path.split(".")[1])
            if link >= len(links):
                problems.append(
                    (index, path, f"there is no link {link}; the path has {len(links)}")
                )
            elif path in trace.pcap[:index]:
                problems.append((index, path, f"{path} is listed twice"))
        if problems:
            # Raised as a ValidationError so that each problem is located on its own entry,
            # trace.pcap.N, like a problem found by the entry's own validator.
            raise ValidationError.from_exception_data(
                "Trace",
                [
                    InitErrorDetails(
                        type=PydanticCustomError("value_error", "{error}", {"error": message}),
                        loc=("pcap", index),
                        input=path,
                    )
                    for index, path, message in problems
                ],
            )
        return trace

    @model_validator(mode="after")
    def _captures_on_the_simulator_only(self) -> Spec:
        if self.trace is not None and self.trace.pcap and self.backend != "sim":
            raise ValueError(
                f"trace.pcap: packet captures come from the sim backend; the {self.backend}"
                " backend has no simulated packets to capture"
            )
        return self

    @model_validator(mode="after")
    def _abr_over_atm(self) -> Spec:
        if self.abr is not None and not any(link.kind == "atm" for link in self.links):
            raise ValueError('abr: ABR VCs run over ATM links (kind = "atm"), and no link is one')
        return self

    @field_validator("links")
    @classmethod
    def _at_least_one_link(cls, links: list[Link]) -> list[Link]:
        if not links:
            raise ValueError("at least one link is required")
        return links

    @model_validator(mode="after")
    def _who_talks_to_whom(self) -> Spec:
        # Problems that involve several fields name their field in the message itself.
        problems = _topology_problems(self) + _wlan_problems(self) + _pep_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def flow_apps(self) -> list[App]:
        """Each flow's app (the scenario's [app] where a flow gives none)."""
        return [flow.app or self.app for flow in self.flows or []]


def _topology_problems(spec: Spec) -> list[str]:
    """Cross-field checks: hosts, routers, links and flows agree."""
    hosts = [h.name for h in spec.hosts]
    problems = _mtu_problems(spec)
    if not spec.flows:
        if len(hosts) != 2:
            problems.append(
                f"hosts: exactly 2 hosts without [[flows]] (the first sends, the last"
                f" receives); {len(hosts)} given: add [[flows]] to say who talks to whom"
            )
        if spec.routers:
            problems.append("routers: only with [[flows]]; a path's routers sit between links")
        problems += [
            f"links.{i}.between: only with [[flows]]"
            for i, link in enumerate(spec.links)
            if link.between is not None
        ]
        return problems
    # A PEP is a node that links name too (its own problems are _pep_problems').
    nodes = set(hosts) | {pep.name for pep in spec.peps or ()}
    atm_switches = {r.name for r in spec.routers if r.switch is not None}
    for i, router in enumerate(spec.routers):
        if router.name in nodes:
            problems.append(f"routers.{i}.name: {router.name!r} is already a host or router")
        nodes.add(router.name)
    if spec.app.direction not in (None, "upstream"):
        problems.append(
            "app.direction: with [[flows]], a message goes from src to dst; give each leg"
            " its own flow and start the second with `after`"
        )
    for i, link in enumerate(spec.links):
        if link.between is None:
            problems.append(f"links.{i}.between: required with [[flows]]")
            continue
        for j, name in enumerate(link.between):
            if name not in nodes:
                problems.append(f"links.{i}.between.{j}: {name!r} is not a host or router")
        if link.between[0] == link.between[1]:
            problems.append(f"links.{i}.between: a link joins two different nodes")
        switches = [name for name in link.between if name in atm_switches]
        if switches and link.kind != "atm":
            problems.append(f'links.{i}.kind: joins ATM switch {switches[0]!r}, so "atm"')
    sized = ("file", "message")
    apps = spec.flow_apps()
    for i, flow in enumerate(spec.flows):
        for field in ("src", "dst"):
            if getattr(flow, field) not in hosts:
                problems.append(f"flows.{i}.{field}: {getattr(flow, field)!r} is not a host")
        if flow.src == flow.dst:
            problems.append(f"flows.{i}.dst: a flow joins two different hosts")
        if flow.app is not None and flow.app.direction not in (None, "upstream"):
            problems.append(
                f"flows.{i}.app.direction: a message goes from src to dst; give each leg its"
                " own flow and start the second with `after`"
            )
        if apps[i].kind == "media":
            problems.append(
                f"flows.{i}.app.kind: media streams run on the path form (no [[flows]]),"
                " where each stream is its own flow"
            )
        if flow.after is not None and flow.start_jitter:
            problems.append(
                f"flows.{i}.start_jitter: a flow that opens `after` another has no start "
                "time to jitter"
            )
        if flow.after is not None and (flow.after >= i or apps[flow.after].kind not in sized):
            problems.append(
                f"flows.{i}.after: must be the index of an earlier file or message flow"
            )
    return problems


def _wlan_problems(spec: Spec) -> list[str]:
    """Links on one medium share one access point and the medium's own settings, and join
    it to different stations."""
    problems = []
    # Per medium: the first link on it, its AP node and its station node.
    first: dict[tuple[str, str | int], tuple[int, str | int, str | int]] = {}
    for i, link in enumerate(spec.links):
        if link.kind != "wlan":
            continue
        wlan = link.wlan_settings()
        # Nodes by name with [[flows]], else by position along the path.
        ends: tuple[str | int, str | int] = (
            (link.between[0], link.between[1]) if link.between else (i, i + 1)
        )
        ap, station = ends if wlan.ap == "first" else ends[::-1]
        key = ("named", wlan.medium) if wlan.medium is not None else ("ap", ap)
        if key not in first:
            first[key] = (i, ap, station)
            continue
        j, other_ap, other_station = first[key]
        other = spec.links[j].wlan_settings()
        if other_ap != ap:
            problems.append(
                f"links.{i}.wlan.medium: medium {wlan.medium!r} already has the access point"
                f" of links.{j}; a medium has one"
            )
        elif other_station == station:
            problems.append(
                f"links.{i}: the station is already associated with this access point by links.{j}"
            )
        for name in _MEDIUM_SETTINGS:
            if getattr(wlan, name) != getattr(other, name):
                problems.append(
                    f"links.{i}.wlan.{name}: the medium's setting, which must equal that of"
                    f" links.{j} on the same medium"
                )
    return problems


def _mtu_problems(spec: Spec) -> list[str]:
    """A host's segments must fit the encapsulation of each ATM link it sends on: every link
    of a path, or a host's own links with [[flows]] (the simulator checks whole routes)."""
    problems = []
    for i, link in enumerate(spec.links):
        if link.kind != "atm":
            continue
        mtu = ENCAPSULATIONS[link.encapsulation or "llc-snap"].mtu
        ends = (
            spec.hosts
            if not spec.flows
            else [h for h in spec.hosts if h.name in (link.between or ())]
        )
        for host in ends:
            if host.tcp.mss + 40 > mtu:
                index = spec.hosts.index(host)
                problems.append(
                    f"hosts.{index}.tcp.mss: {host.tcp.mss} + 40 bytes of TCP/IP headers exceed"
                    f" the {mtu}-byte MTU of links.{i} ({link.encapsulation or 'llc-snap'});"
                    f" at most {mtu - 40}"
                )
    return problems


_MEDIUM_SETTINGS = ("ack_rate", "preamble", "retry_limit", "ap_queue")


def _pep_problems(spec: Spec) -> list[str]:
    """PEPs sit between two links: at a position of the path, or at a node links name."""
    problems = []
    taken = {h.name for h in spec.hosts} | {r.name for r in spec.routers}
    positions: dict[int, int] = {}
    for i, pep in enumerate(spec.peps or ()):
        if pep.name in taken:
            problems.append(f"peps.{i}.name: {pep.name!r} is already a host, router or PEP")
        taken.add(pep.name)
        if spec.flows:
            if pep.after_link is not None:
                problems.append(
                    f"peps.{i}.after_link: only without [[flows]]; with them, name the PEP in"
                    " the `between` of the links it joins"
                )
            elif not any(pep.name in (link.between or ()) for link in spec.links):
                problems.append(f"peps.{i}.name: no link's `between` names {pep.name!r}")
            continue
        last = len(spec.links) - 2
        if pep.after_link is None:
            problems.append(
                f"peps.{i}.after_link: required without [[flows]]: the PEP sits between links"
                " after_link and after_link + 1"
            )
        elif pep.after_link > last:
            problems.append(
                f"peps.{i}.after_link: {pep.after_link} has no link after it; the path's"
                f" links are 0 to {len(spec.links) - 1}, so 0 to {last}"
                if last >= 0
                else f"peps.{i}.after_link: a PEP needs a link on each side; the path has one"
            )
        elif pep.after_link in positions:
            problems.append(
                f"peps.{i}.after_link: peps.{positions[pep.after_link]} already sits after"
                f" link {pep.after_link}"
            )
        else:
            positions[pep.after_link] = i
    # An rr flow carries data both ways, and a media stream's messages are timed at its
    # destination's receiver; the topology form's flows are checked on their routes by the
    # simulator.
    if spec.peps and not spec.flows and spec.app.kind in ("rr", "media"):
        problems.append(
            f"app.kind: a PEP relays one-way transfers (bulk, file, message), not {spec.app.kind!r}"
        )
    return problems


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required"
    if kind == "value_error":
        return str(error["ctx"]["error"])
    given = units.show_value(error["input"])
    if kind == "literal_error":
        return f"{given} is not accepted; accepted values: {error['ctx']['expected']}"
    if kind == "string_pattern_mismatch":
        return f"{given} is not a valid name; use letters, digits, '.', '_' and '-'"
    return f"{error['msg']}; given: {given}"


def _location(parts: tuple[str | int, ...]) -> str:
    # A sweep path is one key with dots in it: quote it, so that `sweep."links.0.delay"`
    # does not read as four nested fields.
    return ".".join(f'"{part}"' if "." in str(part) else str(part) for part in parts)


def located_problems(error: ValidationError) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each problem of a validation error as (location, message), the location as a tuple."""
    for detail in error.errors(include_url=False):
        yield tuple(detail["loc"]), _message(detail)


def format_problem(location: tuple[str | int, ...], message: str) -> str:
    """`field.path: message`, or the message alone for a problem of the whole scenario."""
    return f"{_location(location)}: {message}" if location else message


def _problems(error: ValidationError) -> Iterator[str]:
    for location, message in located_problems(error):
        yield format_problem(location, message)


def validate_spec(data: Mapping[str, Any], source: str | PathLike[str] | None = None) -> Spec:
    """Validate a scenario given as a mapping; problems are raised as one SpecError."""
    try:
        return Spec.model_validate(data)
    except ValidationError as error:
        raise SpecError(list(_problems(error)), source) from None


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's tables; a missing, unreadable or malformed file is a SpecError."""
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except FileNotFoundError:
        raise SpecError(["no such file"], path) from None
    except OSError as error:
        raise SpecError([error.strerror or str(error)], path) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise SpecError([f"invalid TOML: {error}"], path) from None


def load_spec(path: str | PathLike[str]) -> Spec:
    """Read and validate a scenario file; `name` defaults to the file's stem."""
    path = Path(path)
    data = read_toml(path)
    data.setdefault("name", path.stem)
    return validate_spec(data, path)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file, for editors and `tcplab schema`."""
    schema = Spec.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def canonical_dict(spec: Spec) -> dict[str, Any]:
    """The spec as plain JSON values in canonical spelling; validates back to the same spec."""
    # Unset optional fields are left out so that adding one to the schema later does not
    # change the hash of every existing scenario.
    return spec.model_dump(mode="json", exclude_none=True)


def spec_hash(spec: Spec) -> str:
    """sha256 of the spec's canonical JSON: the same experiment, however spelled, hashes alike."""
    canonical = json.dumps(canonical_dict(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
