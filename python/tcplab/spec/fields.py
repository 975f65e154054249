"""The building blocks of scenario fields: quantities with units (held as integers in the
simulator's units, written back in a canonical spelling), names, probabilities, and the
strict base model every table derives from."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
)

from tcplab.spec import units


def _quantity(
    parse: Callable[[object], Any], write: Callable[[Any], str], schema: dict[str, Any]
) -> Any:
    return Annotated[
        int,
        PlainValidator(parse),
        PlainSerializer(write, return_type=str),
        WithJsonSchema(schema),
    ]


# A socket buffer the application does not set, left to the kernel's autotuning.
AUTO_BUFFER = "auto"


def _parse_buffer(value: object) -> int | str:
    if value == AUTO_BUFFER:
        return AUTO_BUFFER
    try:
        return units.parse_size(value)
    except units.UnitError as error:
        raise units.UnitError(
            f'{error}; or "{AUTO_BUFFER}", for a buffer the kernel autotunes'
        ) from None


def _format_buffer(value: int | str) -> str:
    return AUTO_BUFFER if value == AUTO_BUFFER else units.format_size(int(value))


if TYPE_CHECKING:
    # What a validated field holds: an integer in the simulator's units (a scenario may
    # write a string with a unit; the validator turns it into this).
    Buffer: TypeAlias = int | Literal["auto"]
    Rate: TypeAlias = int
    NonNegativeRate: TypeAlias = int
    Duration: TypeAlias = int
    PositiveDuration: TypeAlias = int
    Size: TypeAlias = int
else:
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
    Buffer = Annotated[
        int | str,
        PlainValidator(_parse_buffer),
        PlainSerializer(_format_buffer, return_type=str),
        WithJsonSchema(
            {
                "anyOf": [*units.SIZE_JSON_SCHEMA["anyOf"], {"enum": [AUTO_BUFFER]}],
                "description": f'{units.SIZE_JSON_SCHEMA["description"]}; or "{AUTO_BUFFER}"',
                "examples": ["64KiB", AUTO_BUFFER],
            }
        ),
    ]
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


class StrictModel(BaseModel):
    # strict: TOML already has real types, so "1460" for an integer or 1 for a bool is a
    # mistake worth reporting rather than coercing. TOML also has nan and inf, which no
    # field here can mean.
    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, allow_inf_nan=False, defer_build=True
    )
