"""ATM switches with their feedback schemes (EFCI, ERICA) and ABR source parameters."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcplab.analytic.framing import CELL_BITS
from tcplab.shared import ABR_TM4 as TM4
from tcplab.spec import units
from tcplab.spec.fields import Duration, NonNegativeRate, PositiveDuration, Rate, StrictModel


def _bit_rate(cells_per_s: float) -> str:
    """A cell rate as the bit rate of whole cells the spec writes."""
    return units.format_rate(round(cells_per_s * CELL_BITS))


class Efci(StrictModel):
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


class EricaPlus(StrictModel):
    """ERICA+ queue control (Kalyanaraman): the target follows the queue's delay."""

    t0: PositiveDuration = Field(
        "500us", validate_default=True, description="target queueing delay"
    )
    qdlf: float = Field(0.5, gt=0.0, le=1.0, description="queue drain limit factor")
    a: float = Field(1.15, gt=1.0, description="curve above the target queue")
    b: float = Field(1.05, ge=1.0, description="curve below the target queue")


class Erica(StrictModel):
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


class Switch(StrictModel):
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


class Abr(StrictModel):
    """ABR source parameters (ATM Forum TM 4.0 section 5.10.2) of every VC over ATM links.

    Rates are bit rates of 53-byte cells (424 bits a cell): "150Mbps" is 353 773.6 cells/s.
    """

    pcr: Rate | None = Field(
        None, description="peak cell rate; default: the cell rate of the VC's first link"
    )
    mcr: NonNegativeRate = Field(
        _bit_rate(TM4["mcr_cells_s"]), validate_default=True, description="minimum cell rate"
    )
    icr: Rate | None = Field(None, description="initial cell rate; default: pcr")
    tcr: Rate = Field(
        _bit_rate(TM4["tcr_cells_s"]),
        validate_default=True,
        description=f"tagged cell rate, {TM4['tcr_cells_s']:g} cells/s (out-of-rate RM cells)",
    )
    rif: float = Field(TM4["rif"], gt=0.0, le=1.0, description="rate increase factor (x PCR)")
    rdf: float = Field(TM4["rdf"], gt=0.0, le=1.0, description="rate decrease factor (x ACR)")
    cdf: float = Field(TM4["cdf"], ge=0.0, le=1.0, description="cutoff decrease factor")
    nrm: int = Field(int(TM4["nrm"]), ge=2, le=256, description="cells per forward RM cell")
    mrm: int = Field(int(TM4["mrm"]), ge=1, description="cells between RM cells when Trm triggers")
    trm: PositiveDuration = Field(
        units.format_duration(int(TM4["trm_ns"])),
        validate_default=True,
        description="most time between forward RM cells",
    )
    adtf: PositiveDuration = Field(
        units.format_duration(int(TM4["adtf_ns"])),
        validate_default=True,
        description="idle time after which ACR returns to ICR",
    )
    tbe: int = Field(
        int(TM4["tbe_cells"]), ge=1, le=16_777_215, description="transient buffer exposure"
    )
    frtt: Duration = Field(
        units.format_duration(int(TM4["frtt_ns"])),
        validate_default=True,
        description="fixed round-trip time signalled; 0: none",
    )

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
