"""How numbers are shown to people, shared by the terminal table and the HTML report."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

MISSING = "—"


RATE_UNITS = ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s"), (1.0, "bit/s"))


def rate_unit(bps: float) -> tuple[float, str]:
    """The largest unit in which `bps` is at least one, as (bit/s per unit, name)."""
    return next(((f, name) for f, name in RATE_UNITS if abs(bps) >= f), RATE_UNITS[-1])


def _number(value: float) -> str:
    # Whole numbers (and means large enough that a tenth is noise) without decimals.
    return f"{value:,.0f}" if float(value).is_integer() or abs(value) >= 100 else f"{value:,.1f}"


# A half-width this small against its mean is rounding in the mean and deviation of
# repetitions that agree, not spread ("56.83 ± 2.214e-14 kbit/s").
_NOISE = 1e-9


def _quantity(number: Callable[[float], str], unit: str, value: float, ci95: float | None) -> str:
    # A zero half-width (every repetition agreed) is left out rather than shown as "± 0".
    spread = f" ± {number(ci95)}" if ci95 and abs(ci95) > _NOISE * abs(value) else ""
    return f"{number(value)}{spread}{unit}"


def rate(bps: float, ci95: float | None = None) -> str:
    """A rate with four significant digits, e.g. "710.3 kbit/s" or "2.66 ± 0.48 Mbit/s"."""
    factor, unit = rate_unit(bps)
    return _quantity(lambda x: f"{x / factor:.4g}", f" {unit}", bps, ci95)


def count(value: float, ci95: float | None = None) -> str:
    """A count (or a mean of counts) with thousands separators."""
    return _quantity(_number, "", value, ci95)


def byte_count(value: float, ci95: float | None = None) -> str:
    return _quantity(_number, " B", value, ci95)


def seconds(value: float, ci95: float | None = None) -> str:
    return _quantity(lambda x: f"{x:.3f}", " s", value, ci95)


def milliseconds(value: float, ci95: float | None = None) -> str:
    return _quantity(lambda x: f"{1000 * x:,.2f}", " ms", value, ci95)


def microseconds(value: float, ci95: float | None = None) -> str:
    return _quantity(lambda x: f"{x:,.0f}", " µs", value, ci95)


def percent(share: float, ci95: float | None = None) -> str:
    return _quantity(lambda x: f"{100 * x:.1f}", " %", share, ci95)


def flag(value: bool, ci95: float | None = None) -> str:
    return "yes" if value else "no"


Formatter = Callable[[Any, Any], str]


def lookup(summary: Mapping[str, Any], path: str) -> tuple[Any, Any]:
    """The value at a dotted `path` of a summary and its 95 % half-width (None if absent)."""
    *parents, key = path.split(".")
    for parent in parents:
        summary = summary.get(parent) or {}
    return summary.get(key), summary.get(f"{key}_ci95")


def cell(summary: Mapping[str, Any], path: str, formatter: Formatter) -> str:
    """One summary value for a table, with "± half-width" for repetitions that differ."""
    value, ci95 = lookup(summary, path)
    return MISSING if value is None else formatter(value, ci95)


# The summary rows people read first, in the order they read them: (label, path, format).
SUMMARY_ROWS: tuple[tuple[str, str, Formatter], ...] = (
    ("goodput", "goodput_bps", rate),
    ("elapsed", "elapsed_s", seconds),
    ("bytes delivered", "bytes_delivered", byte_count),
    ("completed", "completed", flag),
    ("retransmits", "retransmits", count),
    ("fast retransmits", "fast_retransmits", count),
    ("timeouts", "timeouts", count),
    ("persist probes", "persist_probes", count),
    ("limited by rwnd", "limited_by.rwnd", percent),
    ("limited by sndbuf", "limited_by.sndbuf", percent),
    ("limited by cwnd", "limited_by.cwnd", percent),
    ("limited by app", "limited_by.app", percent),
    ("fairness (Jain)", "fairness", lambda v, ci: f"{v:.3f}" + (f" ± {ci:.3f}" if ci else "")),
    ("CPU (busiest host)", "cpu_utilisation", percent),
    ("goodput per CPU", "goodput_per_cpu_bps", rate),
    ("window updates", "window_updates", count),
    ("NIC ring drops", "ring_drops", count),
    ("transactions/s", "rr.transactions_per_s", count),
    ("latency p50", "rr.latency_p50_s", seconds),
    ("latency p99", "rr.latency_p99_s", seconds),
    # The cells of ATM links (docs/models/atm.md).
    ("ATM efficiency", "atm.efficiency", percent),
    ("ATM goodput bound", "atm.max_goodput_bps", rate),
    ("cell loss ratio", "atm.cell_loss_ratio", lambda v, ci: f"{v:.2e}"),
    ("cells dropped", "atm.cells_dropped", count),
    # The frames of 802.11 links (docs/models/wlan.md).
    ("802.11 frames", "wlan.frames", count),
    ("802.11 retries", "wlan.retries", count),
    ("802.11 collisions", "wlan.collisions", count),
    ("802.11 retry drops", "wlan.retry_drops", count),
    # The closed-form bounds only the model backend reports.
    ("window bound (W/RTT)", "model.window_bound_bps", rate),
    ("link bound", "model.link_bound_bps", rate),
    # What only the emu backend measures: the window the kernel really offered, and how
    # late the emulator delivered packets (docs/emu.md).
    ("window offered (TCP_INFO)", "emu.peer_window_bytes", byte_count),
    ("emulator lateness p99", "emu.timing_error_us.p99_us", microseconds),
)


def _ms(value: float | None) -> str:
    return MISSING if value is None else f"{1000 * value:.1f} ms"


def _verdict(row: Mapping[str, Any], name: str, statistic: str, limit: str) -> str:
    measured, bound = row.get(statistic), row[limit]
    if limit.endswith("_s"):
        shown = f"{_ms(measured)}, limit {_ms(bound)}"
    else:
        shown = f"{MISSING if measured is None else f'{measured:.2g}'}, limit {bound:.2g}"
    return f"{'pass' if row[f'{name}_ok'] else 'FAIL'} ({shown})"


# One line per statistic of a media stream: (label, how it is read from the stream's row).
MEDIA_LINES: tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...] = (
    ("transport", lambda r: f"{r['transport']} ({r['kind']})"),
    ("messages sent", lambda r: f"{r['messages_sent']:,}"),
    ("skipped by the sender", lambda r: f"{r['messages_skipped']:,}"),
    ("received", lambda r: f"{r['messages_received']:,}"),
    ("lost (later than T_max)", lambda r: f"{r['messages_lost']:,}"),
    ("loss ratio", lambda r: MISSING if r["loss_ratio"] is None else f"{r['loss_ratio']:.3g}"),
    ("one-way delay mean", lambda r: _ms(r["delay_mean_s"])),
    ("p95", lambda r: _ms(r["delay_p95_s"])),
    ("p99", lambda r: _ms(r["delay_p99_s"])),
    ("max", lambda r: _ms(r["delay_max_s"])),
    ("IPDV (p99.9 − min)", lambda r: _ms(r["ipdv_s"])),
    ("inter-arrival mean", lambda r: _ms(r["interarrival_mean_s"])),
    ("inter-arrival std", lambda r: _ms(r["interarrival_std_s"])),
    ("delay objective", lambda r: _verdict(r, "delay", "delay_mean_s", "delay_limit_s")),
    (
        "delay variation objective",
        lambda r: _verdict(r, "delay_variation", "ipdv_s", "delay_variation_limit_s"),
    ),
    ("loss objective", lambda r: _verdict(r, "loss_ratio", "loss_ratio", "loss_ratio_limit")),
    ("all objectives met", lambda r: flag(r["passed"])),
)


def media_summary_rows(streams: Sequence[str]) -> tuple[tuple[str, str, Formatter], ...]:
    """Rows of each stream's `summary["media"]` statistics, for side-by-side tables."""

    def ratio(value: float, ci95: float | None) -> str:
        return f"{value:.3g}" + (f" ± {ci95:.2g}" if ci95 else "")

    return tuple(
        (f"{stream}: {label}", f"media.{stream}.{key}", formatter)
        for stream in streams
        for label, key, formatter in (
            ("messages received", "messages_received", count),
            ("loss ratio", "loss_ratio", ratio),
            ("one-way delay mean", "delay_mean_s", milliseconds),
            ("one-way delay p99", "delay_p99_s", milliseconds),
            ("IPDV", "ipdv_s", milliseconds),
            ("inter-arrival mean", "interarrival_mean_s", milliseconds),
        )
    )


def media_table(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The media streams as a table with a column per stream (of each repetition) and a
    line per MEDIA_LINES entry: (header, lines)."""
    header = [""] + [
        row["stream"] + (f" (rep {row['repetition']})" if "repetition" in row else "")
        for row in rows
    ]
    return header, [[label, *(show(row) for row in rows)] for label, show in MEDIA_LINES]
