"""A link of the path ([[links]]): kind, rate, delay, queue, error models and 802.11b."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcplab.analytic import ber_curves
from tcplab.analytic.framing import (
    WLAN_BASIC_RATES_BPS,
    WLAN_MAC_OVERHEAD,
    WLAN_RATES_BPS,
    Encapsulation,
    LinkKind,
)
from tcplab.shared import WLAN_PLCP_NS
from tcplab.spec import units
from tcplab.spec.fields import (
    ERROR_MODEL_FIELDS,
    BerCurve,
    Duration,
    Name,
    Probability,
    QueueLimit,
    Rate,
    StrictModel,
)
from tcplab.spec.queue import Queue
from tcplab.spec.schedule import (
    ROW_ERROR_FIELDS,
    Interpolation,
    Leo,
    RainFade,
    ScheduleRow,
    read_mahimahi_trace,
    read_schedule_csv,
)


class GilbertElliott(StrictModel):
    """A two-state loss chain stepped once per packet."""

    p_gb: Probability = Field(description="per-packet probability of moving good → bad")
    p_bg: Probability = Field(description="per-packet probability of moving bad → good")
    loss_good: Probability = Field(0.0, description="loss probability in the good state")
    loss_bad: Probability = Field(1.0, description="loss probability in the bad state")


def _mbps(rates: tuple[int, ...]) -> str:
    return ", ".join(units.format_rate(r) for r in rates)


class Wlan(StrictModel):
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
        "long",
        description=f"PLCP preamble: long ({WLAN_PLCP_NS['long'] // 1000} µs) or short"
        f" ({WLAN_PLCP_NS['short'] // 1000} µs)",
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


class Link(StrictModel):
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
    schedule: list[ScheduleRow] | None = Field(
        None,
        description="how the forward direction changes over the run: rows, or a CSV file of"
        " them (docs/models/schedules.md)",
    )
    reverse_schedule: list[ScheduleRow] | None = Field(None, description="default: none")
    # None is "step", left out of the canonical form so that links without a schedule
    # hash as before.
    schedule_interpolation: Interpolation | None = Field(
        None,
        description="step (the default): a row's rate and delay hold until the next row's;"
        " linear: they change linearly between rows (two rows at one time make a step)",
    )
    trace: str | None = Field(
        None,
        description="a mahimahi packet-delivery trace file: the forward direction's rate",
    )
    reverse_trace: str | None = Field(None, description="default: none")
    rain_fade: RainFade | None = Field(
        None, description="the forward direction's Eb/No fades with synthesized rain"
    )
    leo: Leo | None = Field(
        None, description="a low-Earth-orbit path: per-second delay and handovers, both ways"
    )

    @field_validator("schedule", "reverse_schedule", mode="before")
    @classmethod
    def _schedule_file(cls, value: Any) -> Any:
        # load_spec reads a scenario's files relative to it; elsewhere, to the working directory.
        return read_schedule_csv(Path(value)) if isinstance(value, str) else value

    @field_validator("trace", "reverse_trace")
    @classmethod
    def _trace_readable(cls, path: str | None) -> str | None:
        if path is not None:
            read_mahimahi_trace(Path(path))
        return path

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

    @field_validator("queue")
    @classmethod
    def _station_queue_drops_tail(cls, queue: Queue, info: ValidationInfo) -> Queue:
        if info.data.get("kind") == "wlan" and queue.kind not in (None, "droptail"):
            raise ValueError(
                "kind: a wlan station's queue is drop-tail (the 802.11 medium serves it);"
                " put an AQM on a wired link"
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
    def _schedules_fit_the_link(self) -> Link:
        problems = []
        presets = [name for name in ("rain_fade", "leo") if getattr(self, name) is not None]
        if len(presets) > 1:
            problems.append("rain_fade and leo: a link takes one preset")
        if presets and self.kind in ("wlan", "atm"):
            problems.append(f"{presets[0]}: only for p2p and ethernet links")
        for name in presets:
            given = [f for f in ("schedule", "trace") if getattr(self, f) is not None]
            if name == "leo":
                given += [f for f in ("reverse_schedule", "reverse_trace") if getattr(self, f)]
            if given:
                problems.append(f"{name} and {', '.join(given)}: a direction's rows come from one")
        fade = self.rain_fade
        if (
            fade is not None
            and fade.acm is None
            and (self.ebno_db is None or self.ber_curve is None)
        ):
            problems.append(
                "rain_fade: needs ebno_db and ber_curve (the clear-sky Eb/No and its curve), or"
                " rain_fade.acm"
            )
        for prefix in ("", "reverse_"):
            rows: list[ScheduleRow] = getattr(self, prefix + "schedule") or []
            traced = getattr(self, prefix + "trace") is not None
            if (rows or traced) and self.kind in ("wlan", "atm"):
                problems.append(
                    f"{prefix}schedule, {prefix}trace: only for p2p and ethernet links; an"
                    f" {self.kind} link's line is its own model"
                )
            for i, row in enumerate(rows):
                at = f"{prefix}schedule.{i}"
                if i and row.at < rows[i - 1].at:
                    problems.append(f"{at}.at: comes before the row above; rows go in time order")
                if traced and (row.rate is not None or row.up is not None):
                    problems.append(
                        f"{at}: {prefix}trace gives this direction's rate and state; a row may"
                        f" set only {', '.join(('delay', *ROW_ERROR_FIELDS))}"
                    )
                if row.ebno_db is not None:
                    curve = getattr(self, prefix + "ber_curve")
                    if curve is None:
                        problems.append(
                            f"{at}.ebno_db: needs {prefix}ber_curve (one of"
                            f" {', '.join(get_args(BerCurve))})"
                        )
                    else:
                        try:
                            ber_curves.ber_from_ebno(curve, row.ebno_db)
                        except ValueError as error:
                            problems.append(f"{at}.ebno_db: {error}")
        if problems:
            raise ValueError("; ".join(problems))
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
