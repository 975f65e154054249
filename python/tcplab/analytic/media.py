"""Media streams: the statistics of their messages and the verdicts against ITU objectives.

Every backend reports each stream's messages the same way (sequence number = index, send
and arrival time in ns, None for a message that did not arrive); this module turns them into
the result's `media` rows, `messages` columns and `summary["media"]`, so the sim and emu
backends are judged by one piece of code. docs/models/media.md describes the definitions.

Objective presets (each a mean transfer delay limit, a delay variation limit and a loss
ratio limit):

- ``y1541-class1`` (the default): ITU-T Y.1541 (12/2011) Table 1, QoS class 1 (real-time,
  jitter-sensitive, interactive: VoIP, videoconferencing): IPTD 400 ms (upper bound on the
  mean), IPDV 50 ms (upper bound on the 1 − 10⁻³ quantile of IPTD minus its minimum), IPLR
  1 × 10⁻³.
- ``y1541-class0``: the same table, class 0: IPTD 100 ms, IPDV 50 ms, IPLR 1 × 10⁻³.
- ``i356-class1``: ITU-T I.356 (03/2000) QoS class 1 (stringent), end to end, as seed 000's
  Table 1 quotes it: CTD 400 ms, 2-point CDV 3 ms, CLR 3 × 10⁻⁷.
- ``satellite``: seed 000's Table 1, satellite column, which the paper takes from the
  ITU-R WP 4B draft on B-ISDN ATM via satellite (its reference [3], Doc. 4/29-E, 1998):
  CTD 320 ms, CDV 4.2 ms, CLR 7.5 × 10⁻⁸. It is the 320 ms the paper judges its
  videoconference by (§4.4).

The ATM objectives are defined per cell; applied to messages they are stricter than their
definition (a message spans many cells), which docs/models/media.md points out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from tcplab.spec import App, MediaObjectives

NS_PER_S = 1_000_000_000
MS = 1_000_000
# The largest UDP payload: IPv4's 16-bit total length less the IP and UDP headers (RFC 768).
MAX_UDP_MESSAGE = 65_535 - 20 - 8


@dataclass(frozen=True)
class Objectives:
    """Limits one stream is judged against; times in ns."""

    delay_ns: int
    delay_variation_ns: int
    loss_ratio: float
    # Y.1540 counts a packet that has not arrived T_max after it was sent as lost; Y.1541
    # evaluates IPLR with T_max = 3 s.
    loss_timeout_ns: int = 3 * NS_PER_S


PRESETS: dict[str, Objectives] = {
    "y1541-class1": Objectives(400 * MS, 50 * MS, 1e-3),
    "y1541-class0": Objectives(100 * MS, 50 * MS, 1e-3),
    "i356-class1": Objectives(400 * MS, 3 * MS, 3e-7),
    "satellite": Objectives(320 * MS, 4_200_000, 7.5e-8),
}
DEFAULT_PRESET = "y1541-class1"
# The objectives each verdict column judges, and the statistic it compares with the limit.
OBJECTIVES = (
    ("delay", "delay_mean_s", "delay_ns"),
    ("delay_variation", "ipdv_s", "delay_variation_ns"),
    ("loss_ratio", "loss_ratio", "loss_ratio"),
)
# The statistics the run's summary repeats per stream (so that sweeps aggregate them).
SUMMARY_FIELDS = (
    "messages_sent",
    "messages_skipped",
    "messages_received",
    "loss_ratio",
    "delay_mean_s",
    "delay_p99_s",
    "delay_max_s",
    "ipdv_s",
    "interarrival_mean_s",
    "interarrival_std_s",
    "delay_ok",
    "delay_variation_ok",
    "loss_ratio_ok",
    "passed",
)


def objectives(settings: MediaObjectives | None) -> Objectives:
    """The objectives a scenario's [app.objectives] table gives: its preset, then each
    field it sets."""
    if settings is None:
        return PRESETS[DEFAULT_PRESET]
    base = PRESETS[settings.preset]
    given: dict[str, Any] = {
        "delay_ns": settings.delay,
        "delay_variation_ns": settings.delay_variation,
        "loss_ratio": settings.loss_ratio,
        "loss_timeout_ns": settings.loss_timeout,
    }
    return Objectives(
        **{name: getattr(base, name) if value is None else value for name, value in given.items()}
    )


def _quantile(sorted_values: np.ndarray, q: float) -> float:
    """The nearest-rank quantile (Hyndman & Fan definition 1), as the simulator's rr
    latencies use: the smallest value with at least a share q of the samples at or below."""
    rank = max(1, math.ceil(q * len(sorted_values) - 1e-9))
    return float(sorted_values[rank - 1])


def stream_statistics(
    sent_ns: Sequence[int],
    received_ns: Sequence[int | None],
    end_ns: int,
    loss_timeout_ns: int,
    one_clock: bool = True,
) -> dict[str, Any]:
    """Counts, one-way delay, inter-arrival and loss of one stream's messages.

    A message counts as lost when it has not arrived `loss_timeout_ns` after it was sent
    (Y.1540's T_max), whether it arrived later or never; one sent less than that before
    `end_ns` that has not arrived is pending and left out of the loss ratio. Delay
    statistics cover the messages that arrived in time; inter-arrival times are the gaps
    between consecutive arrivals, in arrival order, of every message that arrived.

    Without `one_clock` (send and arrival times from unsynchronised clocks) there are no
    delays: every arrival counts as in time, and only inter-arrival and loss are given.
    """
    # numpy loads with the first media stream, not with every scenario's spec.
    import numpy as np

    sent = np.asarray(sent_ns, dtype=np.int64)
    arrived = np.array([r is not None for r in received_ns], dtype=bool)
    received = np.array([r if r is not None else -1 for r in received_ns], dtype=np.int64)
    delay = received - sent
    in_time = arrived & ((delay <= loss_timeout_ns) | (not one_clock))
    pending = ~arrived & (sent > end_ns - loss_timeout_ns)
    lost = ~in_time & ~pending
    judged = int(in_time.sum() + lost.sum())
    row: dict[str, Any] = {
        "messages_sent": len(sent),
        "messages_received": int(arrived.sum()),
        "messages_lost": int(lost.sum()),
        "messages_pending": int(pending.sum()),
        "loss_ratio": float(lost.sum() / judged) if judged else None,
    }
    delays = np.sort(delay[in_time]) / NS_PER_S
    if len(delays) and one_clock:
        minimum = float(delays[0])
        row.update(
            delay_mean_s=float(delays.mean()),
            delay_min_s=minimum,
            delay_p50_s=_quantile(delays, 0.50),
            delay_p95_s=_quantile(delays, 0.95),
            delay_p99_s=_quantile(delays, 0.99),
            delay_max_s=float(delays[-1]),
            # Y.1540 IPDV: each packet's delay variation is its delay minus a reference delay,
            # here the minimum; Y.1541 bounds the 1 − 10⁻³ quantile of it.
            ipdv_s=_quantile(delays, 0.999) - minimum,
        )
    else:
        row.update(
            {
                name: None
                for name in ("delay_mean_s", "delay_min_s", "delay_p50_s", "delay_p95_s")
                + ("delay_p99_s", "delay_max_s", "ipdv_s")
            }
        )
    arrivals = np.sort(received[arrived]) / NS_PER_S
    gaps = np.diff(arrivals)
    row["interarrival_mean_s"] = float(gaps.mean()) if len(gaps) else None
    row["interarrival_std_s"] = float(gaps.std()) if len(gaps) else None
    return row


def verdicts(row: Mapping[str, Any], limits: Objectives) -> dict[str, Any]:
    """Per objective: its limit and whether the stream met it (a statistic that could not be
    measured, because nothing arrived, fails); `passed` when every one was met."""
    out: dict[str, Any] = {}
    for name, statistic, limit_field in OBJECTIVES:
        limit = getattr(limits, limit_field)
        if limit_field.endswith("_ns"):
            limit = limit / NS_PER_S
        measured = row.get(statistic)
        out[f"{name}_limit{'_s' if limit_field.endswith('_ns') else ''}"] = limit
        out[f"{name}_ok"] = measured is not None and measured <= limit
    out["passed"] = all(out[f"{name}_ok"] for name, _, _ in OBJECTIVES)
    return out


def verdict_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Long form of the verdicts: one row per stream and objective with the measured value,
    the limit and pass/fail."""
    out = []
    for row in rows:
        for name, statistic, limit_field in OBJECTIVES:
            suffix = "_s" if limit_field.endswith("_ns") else ""
            out.append(
                {
                    **({"repetition": row["repetition"]} if "repetition" in row else {}),
                    "stream": row["stream"],
                    "objective": name,
                    "measured": row.get(statistic),
                    "limit": row[f"{name}_limit{suffix}"],
                    "verdict": "pass" if row[f"{name}_ok"] else "fail",
                }
            )
    return out


def finish(raw: Mapping[str, Any], app: App | None) -> dict[str, Any]:
    """A backend's result with its per-message records (`raw["streams"]`) turned into the
    RunResult parts: `media` rows (statistics and verdicts per stream), `messages` columns
    and `summary["media"]`. `app` is the scenario's [app], for the streams' kinds and the
    objectives (None: kinds unknown, default objectives). A result without records gets
    empty parts."""
    rest = {key: value for key, value in raw.items() if key != "streams"}
    records = raw.get("streams") or []
    kinds = {stream.name: stream.kind for stream in (app.streams or [])} if app else {}
    limits = objectives(app.objectives if app else None)
    rows = []
    messages: dict[str, list[Any]] = {
        "stream": [],
        "seq": [],
        "bytes": [],
        "sent_s": [],
        "received_s": [],
        "delay_s": [],
    }
    for record in records:
        end_ns = round(raw["summary"]["elapsed_s"] * NS_PER_S)
        name = record["stream"]
        # Emu between two machines whose clocks are not synchronised has no one-way delays.
        one_clock = record.get("clock", "shared") != "unsynced"
        stats = stream_statistics(
            record["sent_ns"], record["received_ns"], end_ns, limits.loss_timeout_ns, one_clock
        )
        row = {
            "stream": name,
            "kind": kinds.get(name, "data"),
            "transport": record["transport"],
            "src": record["src"],
            "dst": record["dst"],
            "interval_s": record["interval_ns"] / NS_PER_S,
            # Dropped by a sender that skips while blocked: never sent, so never lost.
            "messages_skipped": record.get("skipped", 0),
            **stats,
        }
        row.update(verdicts(row, limits))
        rows.append(row)
        for seq, (size, sent, received) in enumerate(
            zip(record["bytes"], record["sent_ns"], record["received_ns"], strict=True)
        ):
            messages["stream"].append(name)
            messages["seq"].append(seq)
            messages["bytes"].append(size)
            messages["sent_s"].append(sent / NS_PER_S)
            messages["received_s"].append(None if received is None else received / NS_PER_S)
            messages["delay_s"].append(None if received is None else (received - sent) / NS_PER_S)
    if rows:
        rest["summary"] = {
            **raw["summary"],
            "media": {row["stream"]: {name: row[name] for name in SUMMARY_FIELDS} for row in rows},
        }
    return {**rest, "media": rows, "messages": messages}
