"""A link direction's queue (`queue = {...}`): its limit and its discipline, drop-tail or an
AQM (docs/models/aqm.md), with each AQM's parameters defaulting to its RFC's values."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from tcplab.spec import units
from tcplab.spec.fields import Duration, Probability, QueueLimit, StrictModel

QueueKind = Literal["droptail", "red", "codel", "fq_codel", "pie"]

# Each discipline's defaults: RED's from Floyd & Jacobson 1993 §11 and Floyd's parameter
# notes (max_p 0.1, max_th = 3 min_th), CoDel's from RFC 8289 §4.3-4.4 (and Linux's
# sch_codel limit), FQ-CoDel's from RFC 8290 §5.2, PIE's from RFC 8033 §4.2 and §4.4 (and
# Linux's sch_pie limit). ECN marking is on where Linux turns it on by default (fq_codel).
# RED's thresholds under a limit in bytes default to as many typical packets' bytes.
DEFAULTS: dict[str, dict[str, Any]] = {
    "droptail": {"limit": "100p"},
    "red": {
        "limit": "100p",
        "min_th": "5p",
        "max_th": "15p",
        "max_p": 0.1,
        "w_q": 0.002,
        "gentle": False,
        "mean_packet_size": 1000,
        "ecn": False,
    },
    "codel": {"limit": "1000p", "target": "5ms", "interval": "100ms", "ecn": False},
    "fq_codel": {
        "limit": "10240p",
        "target": "5ms",
        "interval": "100ms",
        "flows": 1024,
        "quantum": 1514,
        "ecn": True,
    },
    "pie": {
        "limit": "1000p",
        "target": "15ms",
        "t_update": "15ms",
        "alpha": 0.125,
        "beta": 1.25,
        "max_burst": "150ms",
        "ecn": False,
    },
}


def _kinds_of(field: str) -> list[str]:
    return [kind for kind, fields in DEFAULTS.items() if field in fields]


def _for(field: str, text: str) -> str:
    defaults = "; ".join(
        f"{kind} {units.show_value(DEFAULTS[kind][field])}" for kind in _kinds_of(field)
    )
    return f"{text} (default: {defaults})"


class Queue(StrictModel):
    """The queue in front of a link direction; the packet being serialized has left it.
    `kind` picks the discipline; the parameters a discipline does not have are refused."""

    kind: QueueKind | None = Field(
        None,
        description="droptail (the default), red, codel, fq_codel or pie; see docs/models/aqm.md",
    )
    limit: QueueLimit = Field(
        "100p",
        validate_default=True,
        description=_for("limit", 'packets ("100p") or IP bytes the queue holds'),
    )
    ecn: bool | None = Field(
        None, description=_for("ecn", "mark ECN-capable packets (RFC 3168) instead of dropping")
    )
    target: Duration | None = Field(None, description=_for("target", "queue delay target"))
    interval: Duration | None = Field(
        None, description=_for("interval", "CoDel's interval: a worst-case round trip")
    )
    flows: int | None = Field(
        None, ge=1, le=65536, description=_for("flows", "flow queues the 5-tuple hash fills")
    )
    quantum: int | None = Field(
        None, ge=1, le=1 << 20, description=_for("quantum", "bytes per deficit round robin turn")
    )
    t_update: Duration | None = Field(
        None, description=_for("t_update", "period of the drop probability's update")
    )
    alpha: float | None = Field(None, ge=0.0, description=_for("alpha", "1/s"))
    beta: float | None = Field(None, ge=0.0, description=_for("beta", "1/s"))
    max_burst: Duration | None = Field(
        None, description=_for("max_burst", "burst let through without early drops")
    )
    min_th: QueueLimit | None = Field(
        None, description=_for("min_th", "average queue where early drops start; limit's unit")
    )
    max_th: QueueLimit | None = Field(
        None, description=_for("max_th", "average queue where every arrival is dropped")
    )
    max_p: Probability | None = Field(None, description=_for("max_p", "drop probability at max_th"))
    w_q: float | None = Field(
        None, gt=0.0, le=1.0, description=_for("w_q", "weight of the average's EWMA")
    )
    gentle: bool | None = Field(
        None, description=_for("gentle", "ramp the probability to 1 at 2·max_th (Floyd 2000)")
    )
    mean_packet_size: int | None = Field(
        None,
        ge=1,
        le=65535,
        description=_for("mean_packet_size", "IP bytes of a typical packet (idle-time decay)"),
    )

    @model_validator(mode="before")
    @classmethod
    def _kind_limit(cls, data: Any) -> Any:
        # The limit a discipline defaults to is its own (Linux's fq_codel holds 10240).
        if isinstance(data, dict) and "limit" not in data:
            kind = data.get("kind") or "droptail"
            if isinstance(kind, str) and kind in DEFAULTS:
                return {**data, "limit": DEFAULTS[kind]["limit"]}
        return data

    @model_validator(mode="after")
    def _fields_of_the_kind(self) -> Queue:
        kind = self.kind or "droptail"
        foreign = [
            name
            for name in type(self).model_fields
            if name not in ("kind", "limit")
            and getattr(self, name) is not None
            and name not in DEFAULTS[kind]
        ]
        if foreign:
            name = foreign[0]
            raise ValueError(
                f"{name}: not a parameter of kind = {units.show_value(kind)}; it is one of"
                f" {', '.join(_kinds_of(name))}"
            )
        if kind == "red":
            self._red_thresholds()
        return self

    def _red_thresholds(self) -> None:
        settings = self.settings()
        limit, low, high = self.limit, settings["min_th"], settings["max_th"]
        for name, th in (("min_th", low), ("max_th", high)):
            if th.unit != limit.unit:
                raise ValueError(
                    f"{name}: {units.format_queue_limit(th)} counts {th.unit}; the limit"
                    f" ({units.format_queue_limit(limit)}) counts {limit.unit}: give both in"
                    " one unit"
                )
        if low.value >= high.value:
            raise ValueError(
                f"max_th: {units.format_queue_limit(high)} must be above min_th"
                f" ({units.format_queue_limit(low)})"
            )

    def settings(self) -> dict[str, Any]:
        """The discipline's parameters, the kind's defaults where none is given, parsed."""
        kind = self.kind or "droptail"
        out: dict[str, Any] = {}
        for name, default in DEFAULTS[kind].items():
            if name == "limit":
                continue
            value = getattr(self, name)
            out[name] = value if value is not None else self._default(name, default)
        return out

    def _default(self, name: str, value: Any) -> Any:
        """A default as the field holds it (durations in ns, thresholds as limits)."""
        if name in ("target", "interval", "t_update", "max_burst"):
            return units.parse_duration(value)
        if name in ("min_th", "max_th"):
            packets = units.parse_queue_limit(value)
            if self.limit.unit == "packets":
                return packets
            # A limit in bytes: the thresholds in bytes of typical packets.
            size = self.mean_packet_size or DEFAULTS["red"]["mean_packet_size"]
            return units.QueueLimit("bytes", packets.value * size)
        return value
