"""The result store: every run of a scenario or sweep, as Parquet files under one directory.

The layout is docs/internals/store.md. Each run is written into a hidden folder and renamed
into place in one step, so a folder under runs/ is always a complete run and a sweep killed
at any moment resumes without losing or repeating any. Reading goes through DuckDB views
over the runs' Parquet files; the Python side gets pandas DataFrames.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import platform
import shutil
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tcplab.columns import Columns, write_parquet
from tcplab.errors import TcplabError
from tcplab.experiments.processes import is_alive
from tcplab.experiments.stats import t975
from tcplab.result import RESULT_PARTS, write_atomically
from tcplab.version import __version__

MANIFEST_FILE = "manifest.json"
META_FILE = "meta.json"
RUNS_DIR = "runs"
FAILURES_DIR = "failures"
# Held (flock(2)) by the sweep writing into the directory; it names that sweep's process.
LOCK_FILE = ".lock"
# segments: only runs with a PEP have the file.
TABLES = (*RESULT_PARTS, "segments")
# The run's identity in every table, and the rest of its metadata in the summary row.
KEY_COLUMNS = ("run_id", "point_id", "repetition")
META_COLUMNS = (*KEY_COLUMNS, "seed", "spec_hash", "backend", "tcplab_version")
_KEY_TYPES = {"run_id": pa.string(), "point_id": pa.string(), "repetition": pa.int64()}


def open_results(directory: str | os.PathLike[str]) -> Store:
    """The store in `directory`, which a sweep has written (it has a manifest.json)."""
    store = Store(directory)
    if not (store.directory / MANIFEST_FILE).is_file():
        raise TcplabError(f"{store.directory} is not a results directory (no {MANIFEST_FILE})")
    return store


class Store:
    """A results directory: write runs into it, and read them back as tables."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def __repr__(self) -> str:
        return f"Store({str(self.directory)!r})"

    # ---- writing ------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory for one writer: a second sweep into it is refused, with the
        process that holds it named, until the first ends (however it ends: the kernel
        drops the lock with the process)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(self.directory / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115
        except OSError as error:
            raise TcplabError(f"cannot write into {self.directory}: {error.strerror}") from None
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise TcplabError(
                    f"{self.directory} is in use by another sweep ({holder}); wait for it to"
                    " end, or write elsewhere (--out)"
                ) from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} on {platform.node()}\n")
            handle.flush()
            try:
                yield
            finally:
                handle.truncate(0)
                fcntl.flock(handle, fcntl.LOCK_UN)

    def write_manifest(self, content: Mapping[str, Any]) -> None:
        """Write manifest.json: `content` with the tcplab version and this machine added."""
        manifest = {
            **content,
            "tcplab_version": __version__,
            "machine": {
                "hostname": platform.node(),
                "platform": platform.platform(),
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
            },
        }
        write_atomically(self.directory / MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")

    def write_run(self, meta: Mapping[str, Any], result: Mapping[str, Any]) -> Path:
        """Store one finished run (meta as tcplab.experiments.sweeps.Run.meta(), result as a
        backend's).

        It replaces a stored run of the same id (a forced re-run) and clears a failure
        recorded for it earlier. Returns the run's folder.
        """
        runs = self.directory / RUNS_DIR
        run_id = meta["run_id"]
        final = runs / run_id
        temporary = runs / f".tmp-{run_id}-{os.getpid()}"
        shutil.rmtree(temporary, ignore_errors=True)
        temporary.mkdir(parents=True)
        (temporary / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        keys = {key: meta[key] for key in KEY_COLUMNS}
        summary_row = {
            **{column: meta[column] for column in META_COLUMNS},
            **meta["params"],
            **_flatten(result["summary"]),
        }
        tables = {
            "summary": _rows_table([summary_row]),
            "flows": _rows_table([{**keys, **row} for row in result["flows"]]),
            "hosts": _rows_table([{**keys, **row} for row in result["hosts"]]),
            "links": _rows_table([{**keys, **row} for row in result["links"]]),
            "media": _rows_table([{**keys, **row} for row in result["media"]]),
        }
        if result.get("segments"):
            tables["segments"] = _rows_table([{**keys, **row} for row in result["segments"]])
        for name, table in tables.items():
            pq.write_table(table, temporary / f"{name}.parquet")
        for name in ("series", "trace", "messages"):
            pieces = Columns.of(result[name]).arrow_pieces()
            write_parquet(temporary / f"{name}.parquet", map(partial(_keyed, keys), pieces))
        if final.exists():
            # A directory cannot be renamed over a non-empty one: move the old run aside
            # first. Killed in between, the run is missing and a re-run writes it again.
            old = runs / f".old-{run_id}-{os.getpid()}"
            os.rename(final, old)
            os.rename(temporary, final)
            shutil.rmtree(old)
        else:
            os.rename(temporary, final)
        (self.directory / FAILURES_DIR / f"{run_id}.json").unlink(missing_ok=True)
        return Path(final)

    def write_failure(self, meta: Mapping[str, Any], error: str) -> Path:
        """Record a run that raised; it stays missing, so the next sweep tries it again."""
        keys = ("run_id", "point_id", "params", "repetition", "seed")
        record = {**{key: meta[key] for key in keys}, "error": error}
        path = self.directory / FAILURES_DIR / f"{meta['run_id']}.json"
        write_atomically(path, json.dumps(record, indent=2) + "\n")
        return path

    def remove_leftovers(self) -> None:
        """Delete half-written run folders of processes that died while writing them."""
        for folder in self._hidden_runs():
            pid = folder.name.rsplit("-", 1)[-1]
            if not (pid.isdigit() and is_alive(int(pid))):
                shutil.rmtree(folder, ignore_errors=True)

    # ---- reading ------------------------------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        """manifest.json: the scenario, its sweep and points, and where it ran."""
        try:
            manifest: dict[str, Any] = json.loads((self.directory / MANIFEST_FILE).read_text())
        except FileNotFoundError:
            raise TcplabError(f"{self.directory} has no {MANIFEST_FILE}") from None
        return manifest

    def run_ids(self) -> set[str]:
        """The ids of the stored runs."""
        return {folder.name for folder in self._run_folders()}

    def has_run(self, run_id: str) -> bool:
        return (self.directory / RUNS_DIR / run_id).is_dir()

    def summary(self) -> pd.DataFrame:
        """One row per run: metadata, swept parameters and the flattened summary."""
        return self._table("summary")

    def flows(self) -> pd.DataFrame:
        """One row per flow of each run."""
        return self._table("flows")

    def segments(self) -> pd.DataFrame:
        """One row per connection of each flow a PEP split; empty when no run has a PEP."""
        if not any((folder / "segments.parquet").exists() for folder in self._run_folders()):
            return pd.DataFrame()
        return self._table("segments")

    def hosts(self) -> pd.DataFrame:
        """One row per host of each run (CPU utilisation, goodput per CPU, ring drops)."""
        return self._table("hosts")

    def links(self) -> pd.DataFrame:
        """One row per link direction of each run."""
        return self._table("links")

    def media(self) -> pd.DataFrame:
        """One row per media stream of each run (statistics and verdicts)."""
        return self._table("media")

    def messages(self) -> pd.DataFrame:
        """One row per media message of each run."""
        return self._table("messages")

    def series(self) -> pd.DataFrame:
        """The per-interval delivered bytes of each run."""
        return self._table("series")

    def trace(self) -> pd.DataFrame:
        """The sampled sender state of each run."""
        return self._table("trace")

    def failures(self) -> pd.DataFrame:
        """The runs that raised and are not stored: run_id, point_id, params, seed, error."""
        folder = self.directory / FAILURES_DIR
        records = [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]
        return pd.DataFrame(records, columns=None if records else ["run_id", "error"])

    def query(self, sql: str) -> pd.DataFrame:
        """The answer to `sql` over the views summary, flows, hosts, links, media, series,
        trace and messages."""
        return self._execute(sql).df()

    def records(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The answer to `sql` as column names and rows of plain Python values."""
        cursor = self._execute(sql)
        return [column[0] for column in cursor.description], cursor.fetchall()

    def connect(self) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with a view per table that has stored rows."""
        connection = duckdb.connect()
        folders = self._run_folders()
        for table in TABLES if folders else ():
            # Runs stored before a table existed (hosts) lack its file.
            paths = [folder / f"{table}.parquet" for folder in folders]
            files = ", ".join(_sql_string(str(path)) for path in paths if path.exists())
            if not files:
                continue
            # union_by_name: runs stored by different sweeps of one scenario may differ in
            # their parameter columns.
            source = f"read_parquet([{files}], union_by_name = true)"
            connection.execute(f"CREATE VIEW {table} AS SELECT * FROM {source}")
        return connection

    def points(self) -> pd.DataFrame:
        """The manifest's points, in its order: point_id, one column per swept path holding
        the value as written ("4KiB"), and how many of the point's runs are `expected`,
        `stored` and `failed`."""
        manifest = self.manifest()
        stored = self.run_ids()
        failures = self.failures()
        failed = set(failures["run_id"])
        rows = [
            {
                "point_id": point["point_id"],
                **point["labels"],
                "expected": len(point["run_ids"]),
                "stored": sum(run_id in stored for run_id in point["run_ids"]),
                "failed": sum(run_id in failed for run_id in point["run_ids"]),
            }
            for point in manifest["points"]
        ]
        return pd.DataFrame(rows)

    def aggregate(self) -> pd.DataFrame:
        """One row per point of the manifest, in its order, over the point's stored runs: its
        parameters, `runs` (how many), and for each numeric summary field its mean,
        `<field>_std` (sample standard deviation) and `<field>_ci95` (half-width of the
        Student-t 95 % confidence interval; NaN below two runs). A true/false field
        (`completed`) is true when it is true in every run.

        Runs that an earlier sweep left in the directory (say, repetitions since dropped) stay
        in summary() but are not aggregated.
        """
        manifest = self.manifest()
        summary = self.summary()
        if summary.empty:
            return pd.DataFrame(columns=["point_id", "runs"])
        params = [path for path in (manifest["sweep"] or {}).get("paths", []) if path in summary]
        values = [
            column
            for column in summary.columns
            if column not in META_COLUMNS
            and column not in params
            and pd.api.types.is_numeric_dtype(summary[column])
        ]
        runs_by_id = summary.set_index("run_id")
        rows = []
        for point in manifest["points"]:
            runs = runs_by_id.loc[runs_by_id.index.intersection(point["run_ids"])]
            if runs.empty:
                continue
            row: dict[str, Any] = {"point_id": point["point_id"]}
            row.update({path: runs[path].iloc[0] for path in params})
            row["runs"] = len(runs)
            for column in values:
                if pd.api.types.is_bool_dtype(runs[column]):
                    row[column] = bool(runs[column].all())  # e.g. did every run complete?
                else:
                    row.update(_mean_std_ci95(column, runs[column]))
            rows.append(row)
        return pd.DataFrame(rows)

    # ---- internals ----------------------------------------------------------------------

    def _run_folders(self) -> list[Path]:
        runs = self.directory / RUNS_DIR
        if not runs.is_dir():
            return []
        return sorted(f for f in runs.iterdir() if f.is_dir() and not f.name.startswith("."))

    def _hidden_runs(self) -> Iterator[Path]:
        runs = self.directory / RUNS_DIR
        if runs.is_dir():
            yield from (f for f in runs.iterdir() if f.is_dir() and f.name.startswith("."))

    def _table(self, table: str) -> pd.DataFrame:
        if not self._run_folders():
            return pd.DataFrame()
        # The views read the runs' files in run_id order, and DuckDB keeps that order (and
        # each file's row order) without an ORDER BY.
        return self.query(f"SELECT * FROM {table}")

    def _execute(self, sql: str) -> duckdb.DuckDBPyConnection:
        connection = self.connect()
        try:
            return connection.execute(sql)
        except duckdb.Error as error:
            # DuckDB's messages span lines (the error, a hint, the query with a caret).
            text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
            views = (
                ", ".join(TABLES) if self._run_folders() else f"none: {self.directory} has no runs"
            )
            raise TcplabError(f"query failed: {text} (views: {views})") from None


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables become prefixed columns (limited_by.rwnd → limited_by_rwnd) and lists
    JSON text, so that a summary is one row of scalars."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}_"))
        elif isinstance(value, (list, tuple)):
            flat[name] = json.dumps(value)
        else:
            flat[name] = value
    return flat


def _rows_table(rows: list[dict[str, Any]]) -> pa.Table:
    names = list(dict.fromkeys(name for row in rows for name in row)) or list(KEY_COLUMNS)
    return _with_key_types(pa.table({name: [row.get(name) for row in rows] for name in names}))


def _keyed(keys: Mapping[str, Any], table: pa.Table) -> pa.Table:
    """The table with the run's key columns first."""
    for index, (key, value) in enumerate(keys.items()):
        table = table.add_column(index, key, pa.repeat(value, table.num_rows))
    return _with_key_types(table)


def _with_key_types(table: pa.Table) -> pa.Table:
    # An empty table would otherwise have untyped (null) key columns.
    for name, kind in _KEY_TYPES.items():
        index = table.schema.get_field_index(name)
        table = table.set_column(index, name, table.column(index).cast(kind))
    return table


def _mean_std_ci95(column: str, values: pd.Series) -> dict[str, float]:
    values = values.dropna().astype(float)
    count = len(values)
    mean = values.mean() if count else math.nan
    std = values.std(ddof=1) if count > 1 else math.nan
    ci95 = t975(count - 1) * std / math.sqrt(count) if count > 1 else math.nan
    return {column: mean, f"{column}_std": std, f"{column}_ci95": ci95}


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
