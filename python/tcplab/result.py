"""The result of a run, the same for every backend (docs/internals/plan-and-result.md)."""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcplab.analytic import media
from tcplab.columns import Columns, write_parquet
from tcplab.errors import BackendError, TcplabError
from tcplab.experiments.stats import mean_std_ci95
from tcplab.extras import needed

if TYPE_CHECKING:
    import pandas as pd

    from tcplab.spec import App

RESULT_PARTS = ("summary", "flows", "hosts", "links", "media", "series", "trace", "messages")
# Parts only some runs have, absent from other results' JSON: ATM links' ports and queues
# (docs/models/atm.md), ABR VCs' allowed cell rates (docs/models/abr.md), the
# connections of flows a PEP splits (docs/models/pep.md) and the link directions' queues
# per interval (docs/models/aqm.md; the sim backend's).
OPTIONAL_PARTS = ("atm_ports", "atm_queue", "abr_acr", "segments", "queue")
# The long parts: Columns (tcplab.columns), which hold the simulator's buffers as they came.
COLUMN_PARTS = ("series", "trace", "atm_queue", "abr_acr", "queue")
RESULT_FILE = "result.json"
# A saved result keeps each long part in a Parquet file of its own beside result.json.
COLUMNS_SUFFIX = ".parquet"


@dataclass
class RunResult:
    """Scalars, per-flow, per-host and per-link rows, and time series of one run (or of
    repetitions).

    A result of several repetitions keeps each one in `runs`; its `summary` holds the mean of
    every numeric field with `<field>_std` and `<field>_ci95` beside it, and its rows and
    series are those of all repetitions with a `repetition` column added.

    `segments` has a row per TCP connection of each flow a PEP splits (docs/models/pep.md);
    it is empty without PEPs, and then left out of the JSON.

    `queue` has a row per link direction and interval: its occupancy (mean and peak IP
    bytes, peak packets) and the sojourn times of the packets that left it (mean and
    longest, and how many); empty where the backend does not measure queues.

    `series`, `trace`, `atm_queue`, `abr_acr` and `queue` are `tcplab.columns.Columns`:
    mappings from column name to a list, built on access, with `to_arrow()` and `to_pandas()`
    for long ones.

    `captures` maps each packet capture's name to its pcap file's bytes ("links.0"; with
    repetitions, "links.0.rep0", "links.0.rep1", ...). They are not part of the JSON;
    `save` writes them beside result.json as `<name>.pcap`.
    """

    summary: dict[str, Any]
    flows: list[dict[str, Any]]
    hosts: list[dict[str, Any]]
    links: list[dict[str, Any]]
    # Media streams: statistics and verdicts per stream, and every message (tcplab.analytic.media).
    media: list[dict[str, Any]]
    series: Columns
    trace: Columns
    messages: dict[str, list[Any]]
    meta: dict[str, Any]
    atm_ports: list[dict[str, Any]] = field(default_factory=list)
    atm_queue: Columns = field(default_factory=Columns)
    abr_acr: Columns = field(default_factory=Columns)
    queue: Columns = field(default_factory=Columns)
    runs: list[RunResult] = field(default_factory=list)
    segments: list[dict[str, Any]] = field(default_factory=list)
    captures: dict[str, bytes] = field(default_factory=dict, repr=False)

    @classmethod
    def from_backend(
        cls, raw: Mapping[str, Any], meta: dict[str, Any], app: App | None = None
    ) -> RunResult:
        """Wrap a backend's result dict, checking that it has every part of the contract.

        The media streams' message records become the `media` and `messages` parts, judged
        against the objectives of `app` (the scenario's [app]; None: the defaults)."""
        raw = media.finish(raw, app)
        missing = [part for part in RESULT_PARTS if part not in raw]
        if missing:
            raise BackendError(
                f"backend {meta.get('backend')!r} returned a result without {', '.join(missing)}"
            )
        parts = {
            **{part: raw[part] for part in RESULT_PARTS},
            **{part: raw[part] for part in OPTIONAL_PARTS if part in raw},
        }
        for part in COLUMN_PARTS:
            if part in parts:
                parts[part] = Columns.of(parts[part])
        return cls(
            **parts,
            meta=meta,
            captures=dict(raw.get("captures", {})),
        )

    @classmethod
    def combine(cls, runs: Sequence[RunResult], meta: dict[str, Any]) -> RunResult:
        """One result standing for several repetitions of the same scenario."""
        return cls(
            summary=_summarise([run.summary for run in runs]),
            flows=_stack_rows([run.flows for run in runs]),
            hosts=_stack_rows([run.hosts for run in runs]),
            links=_stack_rows([run.links for run in runs]),
            media=_stack_rows([run.media for run in runs]),
            series=Columns.stack([run.series for run in runs]),
            trace=Columns.stack([run.trace for run in runs]),
            messages=_stack_columns([run.messages for run in runs]),
            meta=meta,
            atm_ports=_stack_rows([run.atm_ports for run in runs]),
            atm_queue=Columns.stack([run.atm_queue for run in runs])
            if any(run.atm_queue for run in runs)
            else Columns(),
            abr_acr=Columns.stack([run.abr_acr for run in runs])
            if any(run.abr_acr for run in runs)
            else Columns(),
            queue=Columns.stack([run.queue for run in runs])
            if any(run.queue for run in runs)
            else Columns(),
            runs=list(runs),
            segments=_stack_rows([run.segments for run in runs]),
            captures={
                f"{name}.rep{repetition}": pcap
                for repetition, run in enumerate(runs)
                for name, pcap in run.captures.items()
            },
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values; repetitions appear under `runs` by their meta and summary only,
        since their rows and series are already in this result's own."""
        data = self._small_parts()
        for part in COLUMN_PARTS:
            if part in RESULT_PARTS or getattr(self, part):
                data[part] = getattr(self, part).to_dict()
        return data

    def _small_parts(self) -> dict[str, Any]:
        """What `to_dict` holds but the long parts (COLUMN_PARTS)."""
        data: dict[str, Any] = {
            part: getattr(self, part) for part in RESULT_PARTS if part not in COLUMN_PARTS
        }
        data.update(
            {
                part: getattr(self, part)
                for part in OPTIONAL_PARTS
                if part not in COLUMN_PARTS and getattr(self, part)
            }
        )
        data["meta"] = self.meta
        if self.runs:
            data["runs"] = [{"meta": run.meta, "summary": run.summary} for run in self.runs]
        return data

    def to_json(self) -> str:
        """Deterministic JSON: sorted keys and nothing that depends on when or where it ran."""
        # allow_nan=False: NaN and Infinity are not JSON, and a consumer would choke on them.
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False)

    def to_iperf3(self) -> dict[str, Any]:
        """This run as iperf3's JSON (`iperf3 -c -J`): start, intervals with a row per
        stream (bytes, bits_per_second, retransmits, snd_cwnd, snd_wnd, rtt in µs) and their
        sum, and end with each stream's sender and receiver, sum_sent and sum_received
        (tcplab.iperf3). One run only: a result of repetitions is refused."""
        from tcplab.iperf3 import to_iperf3

        return to_iperf3(self)

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write into `directory` (created if needed) result.json with everything but the
        long parts, each long part that has columns as `<part>.parquet`, and each packet
        capture as `<name>.pcap`; returns the path of result.json. `load` reads it back."""
        path = Path(directory) / RESULT_FILE
        for part in COLUMN_PARTS:
            columns: Columns = getattr(self, part)
            parquet = path.with_name(part + COLUMNS_SUFFIX)
            if columns:
                write_atomically(parquet, _parquet_bytes(columns))
            else:
                parquet.unlink(missing_ok=True)  # an earlier run's, saved in the same place
        # Last, so that a result.json always has its Parquet files beside it.
        small = json.dumps(self._small_parts(), sort_keys=True, allow_nan=False)
        write_atomically(path, small + "\n")
        for name, pcap in self.captures.items():
            write_atomically(path.with_name(f"{name}.pcap"), pcap)
        return path

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> RunResult:
        """The result `save` wrote into `directory` (its packet captures stay files). The
        repetitions of a combined result come back with their meta and summary only, as
        `to_dict` has them."""
        path = Path(directory) / RESULT_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise TcplabError(f"cannot read {path}: {getattr(error, 'strerror', error)}") from None
        for part in COLUMN_PARTS:
            parquet = path.with_name(part + COLUMNS_SUFFIX)
            if parquet.is_file():
                data[part] = _read_parquet(parquet)
            elif part in RESULT_PARTS:
                data[part] = Columns()
        runs = [cls._summary_only(run) for run in data.pop("runs", [])]
        return cls(**data, runs=runs)

    @classmethod
    def _summary_only(cls, run: Mapping[str, Any]) -> RunResult:
        return cls(
            summary=run["summary"],
            flows=[],
            hosts=[],
            links=[],
            media=[],
            series=Columns(),
            trace=Columns(),
            messages={},
            meta=run["meta"],
        )

    def to_pandas(self) -> pd.DataFrame:
        """The per-interval series with goodput_bps = 8 · interval_bytes / interval length.

        An interval's length is the gap to the previous stamp (0 for the first), so the last,
        partial interval gets its true length.
        """
        frame = self.series.to_pandas()
        frame["goodput_bps"] = self.interval_goodputs()
        return frame

    def interval_goodputs(self) -> list[float]:
        """Each interval's goodput, 8 · interval_bytes / its length (the gap to the previous
        stamp of the same repetition, from 0 for the first), in the series' order."""
        series = self.series
        repetitions = series["repetition"] if "repetition" in series else None
        goodputs, previous, last_rep = [], 0.0, None
        for row, (t_s, interval_bytes) in enumerate(
            zip(series["t_s"], series["interval_bytes"], strict=True)
        ):
            rep = repetitions[row] if repetitions is not None else None
            if rep != last_rep:
                previous, last_rep = 0.0, rep
            goodputs.append(8 * interval_bytes / (t_s - previous))
            previous = t_s
        return goodputs

    def trace_frame(self) -> pd.DataFrame:
        """Sender state (cwnd, ssthresh, srtt, flight, rwnd) sampled over time."""
        return self.trace.to_pandas()

    def flows_frame(self) -> pd.DataFrame:
        """One row per flow."""
        return _frame(self.flows)

    def segments_frame(self) -> pd.DataFrame:
        """One row per TCP connection of each flow a PEP splits; empty without PEPs."""
        return _frame(self.segments)

    def hosts_frame(self) -> pd.DataFrame:
        """One row per host: CPU utilisation, goodput per unit of CPU, NIC ring drops."""
        return _frame(self.hosts)

    def links_frame(self) -> pd.DataFrame:
        """One row per link direction."""
        return _frame(self.links)

    def media_frame(self) -> pd.DataFrame:
        """One row per media stream: message counts, loss ratio, one-way delay (mean, p50,
        p95, p99, max), IPDV, inter-arrival mean and std, and each objective's limit and
        whether it was met."""
        return _frame(self.media)

    def verdicts_frame(self) -> pd.DataFrame:
        """One row per media stream and objective: measured value, limit, pass or fail."""
        rows = media.verdict_rows(self.media)
        columns = ["stream", "objective", "measured", "limit", "verdict"]
        return _frame(rows) if rows else _frame(columns=columns)

    def messages_frame(self) -> pd.DataFrame:
        """One row per media message: stream, seq, bytes, sent_s, received_s and delay_s
        (NaN for a message that did not arrive)."""
        return _frame(self.messages)

    def atm_ports_frame(self) -> pd.DataFrame:
        """One row per ATM output port: cells sent, discarded (full, EPD, PPD), lost."""
        return _frame(self.atm_ports)

    def queue_frame(self) -> pd.DataFrame:
        """Each link direction's queue per interval (docs/models/aqm.md)."""
        return self.queue.to_pandas()

    def atm_queue_frame(self) -> pd.DataFrame:
        """Cells waiting at each ATM output port, every trace interval."""
        return self.atm_queue.to_pandas()

    def abr_acr_frame(self) -> pd.DataFrame:
        """Each ABR VC's allowed cell rate (cells/s), every trace interval."""
        return self.abr_acr.to_pandas()


def _parquet_bytes(columns: Columns) -> bytes:
    with needed("saving a result's series and trace as Parquet"):
        import pyarrow as pa

    sink = pa.BufferOutputStream()
    write_parquet(sink, columns.arrow_pieces())
    return bytes(sink.getvalue())


def _read_parquet(path: Path) -> Columns:
    try:
        return Columns.from_parquet(path)
    except (OSError, ValueError) as error:
        raise TcplabError(f"cannot read {path}: {error}") from None


def _frame(data: Any = None, columns: list[str] | None = None) -> pd.DataFrame:
    # pandas loads on the first frame asked for, not with every run.
    with needed("a DataFrame"):
        import pandas as pd

    return pd.DataFrame(data, columns=columns)


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to `path` so that a reader never sees a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Beside the target, so os.replace stays on one file system; not mkstemp, whose 0600
    # mode would make results unreadable to others where the umask allows it.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if isinstance(data, bytes):
            temporary.write_bytes(data)
        else:
            temporary.write_text(data, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _summarise(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The repetitions' summaries as one, every field a single value, never a list: a number
    is the mean over the repetitions that have one (null where none has), with `_std` and
    `_ci95` (null below two values) and, when some repetitions have none, `_n`: how many
    have it; a flag is true when it holds in every repetition; a table is combined field by
    field; text is what most repetitions say."""
    combined: dict[str, Any] = {}
    for key in dict.fromkeys(key for summary in summaries for key in summary):
        values = [summary[key] for summary in summaries if summary.get(key) is not None]
        if not values:
            combined[key] = None
        elif all(isinstance(value, bool) for value in values):
            combined[key] = all(values)  # e.g. `completed`: did every repetition complete?
        elif all(_is_number(value) for value in values):
            combined[key] = statistics.fmean(values)
            spread = mean_std_ci95(values)[1:] if len(values) > 1 else (None, None)
            combined[f"{key}_std"], combined[f"{key}_ci95"] = spread
            if len(values) < len(summaries):
                combined[f"{key}_n"] = len(values)
        elif all(isinstance(value, Mapping) for value in values):
            combined[key] = _summarise(values)
        else:
            texts = Counter(json.dumps(value, sort_keys=True) for value in values)
            combined[key] = json.loads(texts.most_common(1)[0][0])
    return combined


def _stack_rows(tables: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"repetition": rep, **row} for rep, rows in enumerate(tables) for row in rows]


def _stack_columns(tables: Sequence[dict[str, list[Any]]]) -> dict[str, list[Any]]:
    stacked: dict[str, list[Any]] = {"repetition": []}
    for rep, columns in enumerate(tables):
        length = len(next(iter(columns.values()), []))
        stacked["repetition"].extend([rep] * length)
        for name, column in columns.items():
            stacked.setdefault(name, []).extend(column)
    return stacked
