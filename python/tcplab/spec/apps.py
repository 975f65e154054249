"""What runs over a connection ([app]): bulk, file, request/response, media and message
streams, and the objectives media streams are judged against."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcplab.analytic import media
from tcplab.spec.fields import (
    Duration,
    Name,
    PositiveDuration,
    Probability,
    Rate,
    Size,
    StrictModel,
)

# The slowest stream a `rate` may give: one message a year (per second).
MIN_RATE = 1 / (365 * 24 * 3600)
# Connections of one parallel app: the emu backend runs a client process for each, and the
# measurement server serves at most 32 tests at once (tcplab.measure.server.MAX_TESTS).
MAX_PARALLEL = 32


class Stream(StrictModel):
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
        if rate is not None and not MIN_RATE <= rate:
            # Below it the interval (1e9 / rate ns) leaves the range of an integer clock.
            raise ValueError(f"{rate} per second is below one message a year ({MIN_RATE:.2g})")
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


class MediaObjectives(StrictModel):
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


class App(StrictModel):
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
    parallel: int | None = Field(
        None,
        ge=1,
        le=MAX_PARALLEL,
        description="bulk or file: this many connections at once from the first host to the "
        "last, each running the app over the same path (iperf3 -P); default 1",
    )
    start_jitter: Duration | None = Field(
        None,
        description="with parallel: each connection opens at a time drawn uniformly from "
        "[0, start_jitter), from the random stream flows.<k>.start_jitter, rather than all "
        "at once",
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

    @field_validator("parallel")
    @classmethod
    def _parallel_for_transfers(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("kind") not in ("bulk", "file"):
            raise ValueError('only for kind = "bulk" or "file"')
        return value

    @field_validator("start_jitter")
    @classmethod
    def _jitter_between_connections(cls, value: int | None, info: ValidationInfo) -> int | None:
        parallel = info.data.get("parallel")
        if value and (parallel is None or parallel < 2):
            raise ValueError(
                "only with parallel > 1: it spreads the openings of an app's connections"
                " (a [[flows]] entry has its own start_jitter)"
            )
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
