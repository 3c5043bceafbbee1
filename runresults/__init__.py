"""The results folder: ``results/<run-id>/run.json`` plus one Parquet file per table.

Reports, comparisons, calibration and the CI gate read results only through this module, so a
run (real or simulated) can be re-rendered or compared later. It sits below both ``bench`` (which
writes results) and ``reports`` (which reads them) and imports neither; only ``bench/cli.py``
imports both. Column sets are fixed here; a
table with no rows is still written with its schema.

Tables (one row per …):
- ``commits``: completed instant per engine — engine, seq, batch, instant, action, operation,
  kind (ingest / upsert, the batch's corrections of earlier keys under workload.update_fraction /
  compaction / clustering / merge / clean / rollback), duration_s, records_written,
  bytes_written, files_written, files_replaced, batch_bytes (the batch written once; 0 for
  maintenance), cum_bytes_written, cum_batch_bytes, wa, live_files, physical_files, live_bytes,
  physical_bytes (a MERGE_ON_READ table's log files counted among its files and bytes), space_amp,
  small_files, mean_file_bytes, metadata_bytes; for an ingest of our
  engines, where its duration went: plan_s (view, pending plans, bucket assignment), write_s (the
  files), commit_s (the timeline), from the engines' step boundaries (``bench/ingest_phases.py``).
- ``files``: file at a checkpoint — engine, checkpoint (batch index), partition, file_id, path,
  size_bytes, rows, live.
- ``maintenance``: table-service run — engine, batch, kind, instant, mode, duration_s, files_in,
  files_out, bytes_read, bytes_written, records, files_deleted, details (JSON).
- ``queries``: query execution — engine, checkpoint, query, run (0 = cold, 1.. warm), latency_s,
  files_total, files_scanned, files_pruned, row_groups_total, row_groups_scanned, rows_scanned,
  result_rows, verified, error, planning_s and execution_s (latency_s split as LHBench does: our file
  pruning, Spark's file index, analysis, optimisation and physical plan, then the jobs); on a
  MERGE_ON_READ snapshot with log files, its read amplification: log_files_merged and log_bytes_merged
  (the log files merged over their base files for the query) and ro_latency_s (the same query over the
  base files alone, Hudi's read-optimized view; null elsewhere); on the S3-protocol store, the run's own
  requests (``store_requests``, of them ``store_get``, ``store_head``, ``store_list``: those the counting
  proxy recorded during the run, so a figure per run with an interval; null on local disk).
- ``isolation``: reader query during maintenance — engine, maintenance_instant, reader, seq,
  query, started_s, ended_s, outcome (ok / failed / wrong), expected, got, error.
- ``stream`` (``layoutbench stream``): micro-batch — engine, run (``fixed`` or ``rate:<r>``),
  micro_batch (Spark's batch id), batches (generator batch indexes), files, records, started_s /
  ended_s (seconds since the stream started), duration_s, ingest_s, inline_maintenance_s,
  maintenance_running (an async table service overlapped it), freshness_s (newest landing file's
  arrival -> the commit that made it visible), oldest_freshness_s, backlog_batches (landed, not yet
  committed, at its start), late_rows (older than the retention), quarantined (landing files moved
  aside), instant, replayed (a batch the table had already committed before a restart).
- ``stream_lag``: lag sample — engine, run, t_s, arrived, committed, backlog_batches, backlog_s
  (age of the oldest landed, uncommitted file), maintenance_running.
- ``stream_rates``: rate-search step — engine, step, rate (batches/s), records_per_s, batches,
  sustained, lag_slope, final_backlog_s, processed_per_s, wall_s.
- ``requests``: object-store requests (``store.kind: s3``) per engine (None: not a table's, e.g. the
  bucket), phase (ingest, maintenance_planning, maintenance_execution, cleaner, query_planning,
  query_scan, harness, setup, other), context (batch, query@checkpoint), operation
  (bench/store/proxy.py) and object (data: a Parquet base file, timeline: under .hoodie/, other):
  count, request bytes (PUT, parts), response bytes (GET), throttled (503 answers).
- ``crash``: injected crash — engine, point, recovered, rows_lost, rows_duplicated,
  query_failures, hudi_rs_agrees, details.
- ``gates`` (T17's review): one correctness gate checked on one candidate — engine, gate (isolation,
  no_loss, incremental, time_travel, concurrent_update), reader (who read the table: apache_hudi,
  hudi_rs, ours, delta_rs), passed (None: the gate does not apply to this engine, with the reason in detail),
  checked (points checked: instants, crash points, updates, reader queries), failures (points that
  failed), figure (the deciding number, e.g. rows re-emitted or lost; ``figure_unit`` names it),
  figure_unit, detail (one sentence: what failed where, or why n/a).
- ``query_rounds``: the final checkpoint's queries run interleaved across engines (round robin),
  warm — engine, checkpoint, query, round (0..), position (order within the round), latency_s,
  result_rows, verified, planning_s, execution_s.

Repetitions (``run --repeat N``): ``commits``, ``maintenance`` and ``queries`` carry ``repeat``
(0 .. N-1); every repetition runs the engines on fresh tables from the same batches. Deterministic
figures (bytes, files, WA, rows) are the first repetition's and must equal every other's (the run
checks it); :meth:`Results.table` returns the first repetition unless asked for all of them, which
timing figures use.

``run.json`` carries ``format_version`` (:data:`FORMAT_VERSION`, as asv stores its own): a folder
written by a newer layoutbench is refused with one message; an older one (no ``repeat``) reads as one
repetition.

Beside them in the folder: ``spark.log`` (the JVM's stderr: Ivy, log4j at WARN, Python workers),
``error.log`` (the traceback of a run step that raised), and in ``run.json`` the run ``profile``:
``phases_s`` (wall seconds for spark_start, generation, ground_truth, ingest/<engine>,
maintenance/<engine> (racing isolation readers included), queries/<engine> (audits included),
query_rounds (the interleaved final rounds), gates/isolation, gates/no_loss,
gates/concurrent_update/<engine>, finish), ``overlapping_s`` (async maintenance, beside the loop),
``unaccounted_s`` and ``routes`` (per engine, write jobs per route, driver or Spark tasks, with the gate's
reason: ``engines.files.gate``; the gates' and the harness's scratch tables under ``harness``).
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

# 2: repeat column in commits, maintenance and queries (--repeat); 3: requests, stream tables; 4: gates,
# query_rounds (T17); 5: an ingest's plan_s, write_s, commit_s in commits (null in older folders); 6: a query's
# planning_s and execution_s in queries and query_rounds (T18; null in older folders); 7: a query's read
# amplification on a MERGE_ON_READ snapshot, log_files_merged, log_bytes_merged, ro_latency_s (T21; null
# in older folders and on tables without log files); 8: a query run's own store requests, store_requests,
# store_get, store_head, store_list (T18; null in older folders and on local disk)
FORMAT_VERSION = 8
REPEATED = ("commits", "maintenance", "queries", "requests")  # tables with a row per repetition

TABLES: dict[str, pa.Schema] = {
    "commits": pa.schema([
        ("engine", pa.string()), ("seq", pa.int64()), ("batch", pa.int64()), ("instant", pa.string()),
        ("action", pa.string()), ("operation", pa.string()), ("kind", pa.string()),
        ("duration_s", pa.float64()), ("records_written", pa.int64()), ("bytes_written", pa.int64()),
        ("files_written", pa.int64()), ("files_replaced", pa.int64()), ("batch_bytes", pa.int64()),
        ("cum_bytes_written", pa.int64()), ("cum_batch_bytes", pa.int64()), ("wa", pa.float64()),
        ("live_files", pa.int64()), ("physical_files", pa.int64()), ("live_bytes", pa.int64()),
        ("physical_bytes", pa.int64()), ("space_amp", pa.float64()), ("small_files", pa.int64()),
        ("mean_file_bytes", pa.float64()), ("metadata_bytes", pa.int64()), ("repeat", pa.int64()),
        ("plan_s", pa.float64()), ("write_s", pa.float64()), ("commit_s", pa.float64()),
    ]),
    "files": pa.schema([
        ("engine", pa.string()), ("checkpoint", pa.int64()), ("partition", pa.string()),
        ("file_id", pa.string()), ("path", pa.string()), ("size_bytes", pa.int64()), ("rows", pa.int64()),
        ("live", pa.bool_()),
    ]),
    "maintenance": pa.schema([
        ("engine", pa.string()), ("batch", pa.int64()), ("kind", pa.string()), ("instant", pa.string()),
        ("mode", pa.string()), ("duration_s", pa.float64()), ("files_in", pa.int64()),
        ("files_out", pa.int64()), ("bytes_read", pa.int64()), ("bytes_written", pa.int64()),
        ("records", pa.int64()), ("files_deleted", pa.int64()), ("details", pa.string()), ("repeat", pa.int64()),
    ]),
    "queries": pa.schema([
        ("engine", pa.string()), ("checkpoint", pa.int64()), ("query", pa.string()), ("run", pa.int64()),
        ("latency_s", pa.float64()), ("files_total", pa.int64()), ("files_scanned", pa.int64()),
        ("files_pruned", pa.int64()), ("row_groups_total", pa.int64()), ("row_groups_scanned", pa.int64()),
        ("rows_scanned", pa.int64()), ("result_rows", pa.int64()), ("verified", pa.bool_()),
        ("error", pa.string()), ("repeat", pa.int64()), ("planning_s", pa.float64()), ("execution_s", pa.float64()),
        ("log_files_merged", pa.int64()), ("log_bytes_merged", pa.int64()), ("ro_latency_s", pa.float64()),
        ("store_requests", pa.int64()), ("store_get", pa.int64()), ("store_head", pa.int64()),
        ("store_list", pa.int64()),
    ]),
    "isolation": pa.schema([
        ("engine", pa.string()), ("maintenance_instant", pa.string()), ("reader", pa.int64()),
        ("seq", pa.int64()), ("query", pa.string()), ("started_s", pa.float64()), ("ended_s", pa.float64()),
        ("outcome", pa.string()), ("expected", pa.string()), ("got", pa.string()), ("error", pa.string()),
    ]),
    "stream": pa.schema([
        ("engine", pa.string()), ("run", pa.string()), ("micro_batch", pa.int64()), ("batches", pa.string()),
        ("files", pa.int64()), ("records", pa.int64()), ("started_s", pa.float64()), ("ended_s", pa.float64()),
        ("duration_s", pa.float64()), ("ingest_s", pa.float64()), ("inline_maintenance_s", pa.float64()),
        ("maintenance_running", pa.bool_()), ("freshness_s", pa.float64()), ("oldest_freshness_s", pa.float64()),
        ("backlog_batches", pa.int64()), ("late_rows", pa.int64()), ("quarantined", pa.string()),
        ("instant", pa.string()), ("replayed", pa.bool_()),
    ]),
    "stream_lag": pa.schema([
        ("engine", pa.string()), ("run", pa.string()), ("t_s", pa.float64()), ("arrived", pa.int64()),
        ("committed", pa.int64()), ("backlog_batches", pa.int64()), ("backlog_s", pa.float64()),
        ("maintenance_running", pa.bool_()),
    ]),
    "stream_rates": pa.schema([
        ("engine", pa.string()), ("step", pa.int64()), ("rate", pa.float64()), ("records_per_s", pa.float64()),
        ("batches", pa.int64()), ("sustained", pa.bool_()), ("lag_slope", pa.float64()),
        ("final_backlog_s", pa.float64()), ("processed_per_s", pa.float64()), ("wall_s", pa.float64()),
    ]),
    "requests": pa.schema([
        ("engine", pa.string()), ("repeat", pa.int64()), ("phase", pa.string()), ("context", pa.string()),
        ("op", pa.string()), ("object", pa.string()), ("count", pa.int64()), ("request_bytes", pa.int64()),
        ("response_bytes", pa.int64()), ("throttled", pa.int64()),
    ]),
    "crash": pa.schema([
        ("engine", pa.string()), ("point", pa.string()), ("recovered", pa.bool_()), ("rows_lost", pa.int64()),
        ("rows_duplicated", pa.int64()), ("query_failures", pa.int64()), ("hudi_rs_agrees", pa.bool_()),
        ("details", pa.string()),
    ]),
    "gates": pa.schema([
        ("engine", pa.string()), ("gate", pa.string()), ("reader", pa.string()), ("passed", pa.bool_()),
        ("checked", pa.int64()), ("failures", pa.int64()), ("figure", pa.float64()), ("figure_unit", pa.string()),
        ("detail", pa.string()),
    ]),
    "query_rounds": pa.schema([
        ("engine", pa.string()), ("checkpoint", pa.int64()), ("query", pa.string()), ("round", pa.int64()),
        ("position", pa.int64()), ("latency_s", pa.float64()), ("result_rows", pa.int64()), ("verified", pa.bool_()),
        ("planning_s", pa.float64()), ("execution_s", pa.float64()),
    ]),
}


class ResultsError(ValueError):
    """A results folder that is missing or malformed."""


def new_run_id(scenario_name: str, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%S}-{scenario_name}"


def git_info(cwd: str | None = None) -> dict[str, Any]:
    def run(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"sha": run("rev-parse", "HEAD") or None, "dirty": bool(run("status", "--porcelain"))}


def java_version() -> str | None:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    first = (out.stderr or out.stdout).splitlines()
    return first[0] if first else None


def package_versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version()}
    # hudi-rs's Python package is named "hudi": keyed "hudi-rs" so that nobody reads its version
    # as Apache Hudi's (the bundle's version is keyed by its Maven coordinates, org.apache.hudi:...)
    for pkg, key in (("pyspark", "pyspark"), ("pyarrow", "pyarrow"), ("pandas", "pandas"), ("fastavro", "fastavro"),
                     ("hudi", "hudi-rs"), ("deltalake", "deltalake"), ("layoutbench", "layoutbench")):
        try:
            out[key] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[key] = None
    out["java"] = java_version()
    return out


def cpu_model() -> str | None:
    """The processor's model and clock as the kernel names them (``/proc/cpuinfo``; None elsewhere):
    two machines of the same kind ran ``make bench`` in 4 min 34 s and 2 min 21 s idle, so a figure
    is compared only with one from the same model."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in lines if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    model = fields.get("model name")
    return f"{model} @ {float(fields['cpu MHz']):.0f} MHz" if model and "cpu MHz" in fields else model


def machine_info() -> dict[str, Any]:
    """The machine a run ran on: cores, memory, platform, processor, hostname."""
    mem = None
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    return {"cores": os.cpu_count(), "memory_bytes": mem, "platform": platform.platform(),
            "machine": platform.machine(), "cpu": cpu_model(), "hostname": socket.gethostname()}


def rows_table(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Results table ``table`` of ``rows`` (dicts by field name; a field a row lacks is null, ``repeat`` 0)."""
    schema = TABLES[table]
    cols = {}
    for name in schema.names:  # a field's name read once: pyarrow builds a new str on every read
        try:  # every row has the field (a loop in C)
            cols[name] = list(map(itemgetter(name), rows))
        except KeyError:
            default = 0 if name == "repeat" else None
            cols[name] = [r.get(name, default) for r in rows]
    return pa.table(cols, schema=schema)


class ResultsWriter:
    """Accumulates rows per table and writes the folder."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
        self.tables: dict[str, pa.Table] = {}  # tables the caller built whole (in the table's schema), not from rows

    def add(self, table: str, **row: Any) -> None:
        if table not in TABLES:
            raise ResultsError(f"unknown results table {table!r}")
        self.rows[table].append(row)

    def write_table(self, table: str) -> Path:
        """``table``'s Parquet file from its rows, replaced whole (a cut-off write leaves the previous
        file). The rows are a snapshot: a service thread may add rows while a partial write runs
        (:mod:`bench.partial_results`)."""
        path = self.folder / f"{table}.parquet"
        tmp = path.with_suffix(".parquet.tmp")
        built = self.tables.get(table)
        if built is not None:
            if not built.schema.equals(TABLES[table]):
                raise ResultsError(f"table {table!r} built with a schema other than the results table's")
            pq.write_table(built, tmp)
            tmp.replace(path)
            return path
        pq.write_table(rows_table(table, list(self.rows[table])), tmp)
        tmp.replace(path)
        return path

    def write_run(self, run: dict[str, Any]) -> Path:
        """Every table from its rows, then ``run.json`` last."""
        run = {"format_version": FORMAT_VERSION, **run}
        for name in TABLES:
            self.write_table(name)
        path = self.folder / "run.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(run, indent=2, default=str))
        tmp.replace(path)
        return path


def commit_row(*, engine: str, seq: int, batch: int, instant: str, action: str, operation: str, kind: str,
               duration_s: float, records_written: int, bytes_written: int, files_written: int, files_replaced: int,
               live_files: int, physical_files: int, live_bytes: int, physical_bytes: int, small_files: int,
               metadata_bytes: int, repeat: int = 0, batch_bytes: int | None = None, plan_s: float | None = None,
               write_s: float | None = None, commit_s: float | None = None) -> dict[str, Any]:
    """One ``commits`` row (the one builder for real and simulated runs): what the instant wrote and
    the table state after it; space amplification and mean file size derived here. ``plan_s``,
    ``write_s``, ``commit_s``: a real ingest's phases, None otherwise."""
    return {
        "engine": engine, "repeat": repeat, "seq": seq, "batch": batch, "instant": instant, "action": action,
        "operation": operation, "kind": kind, "duration_s": duration_s, "records_written": records_written,
        "bytes_written": bytes_written, "files_written": files_written, "files_replaced": files_replaced,
        "batch_bytes": batch_bytes, "live_files": live_files, "physical_files": physical_files,
        "live_bytes": live_bytes, "physical_bytes": physical_bytes,
        "space_amp": physical_bytes / live_bytes if live_bytes else None, "small_files": small_files,
        "mean_file_bytes": live_bytes / live_files if live_files else 0.0, "metadata_bytes": metadata_bytes,
        "plan_s": plan_s, "write_s": write_s, "commit_s": commit_s,
    }


def run_record(*, run_id: str, scenario: Any, engines: dict[str, Any], simulated: bool, wall_time_s: float,
               spark_master: str | None, overhead_s: float, failures: list[str], git_cwd: str | None = None,
               versions: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """``run.json`` (the one builder for real and simulated runs): the run's identity, where it ran,
    its engines and verification, plus the caller's own blocks (``extra``: profile, simulation, ...)."""
    return {
        "run_id": run_id, "created": datetime.now(UTC).isoformat(), "scenario": scenario.model_dump(mode="json"),
        "seed": scenario.workload.seed, "git": git_info(git_cwd), "versions": versions or package_versions(),
        "machine": machine_info(), "spark_master": spark_master, "engines": engines, "simulated": simulated,
        "wall_time_s": wall_time_s, "harness_overhead_s": overhead_s,
        "harness_overhead_ratio": overhead_s / wall_time_s if wall_time_s else None,
        **extra, "verification": {"ok": not failures, "failures": failures},
    }


def derive_cumulative(writer: ResultsWriter, batch_bytes: dict[int, int], own_bytes: frozenset[str] = frozenset()) -> None:
    """WA and cumulative bytes per engine (and repetition), computed after the run from the event
    rows. Engines in ``own_bytes`` (another file format) divide by their own ingest bytes."""
    by_engine: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in writer.rows["commits"]:
        by_engine.setdefault((row["engine"], row.get("repeat", 0)), []).append(row)
    for rows in by_engine.values():
        rows.sort(key=lambda r: r["seq"])
        cum_w = cum_b = 0
        seen_batches: set[int] = set()
        for r in rows:
            cum_w += r["bytes_written"]
            if r["kind"] == "ingest" and r["batch"] not in seen_batches:
                seen_batches.add(r["batch"])
                own = r["engine"] in own_bytes
                r["batch_bytes"] = r["bytes_written"] if own else batch_bytes.get(r["batch"], 0)
                cum_b += r["batch_bytes"]
            else:
                r["batch_bytes"] = 0
            r["cum_bytes_written"], r["cum_batch_bytes"] = cum_w, cum_b
            r["wa"] = cum_w / cum_b if cum_b else None


class Results:
    """A results folder opened for reading."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        run_file = self.folder / "run.json"
        if not run_file.is_file():
            raise ResultsError(f"{self.folder} is not a results folder: run.json not found")
        try:
            self.run: dict[str, Any] = json.loads(run_file.read_text())
        except ValueError as exc:
            raise ResultsError(f"{run_file}: not valid JSON ({exc})") from None
        version = self.run.get("format_version", 1)
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ResultsError(f"{self.folder}: results format version {version!r} was written by a newer "
                               f"layoutbench; this one reads up to version {FORMAT_VERSION}")
        self._cache: dict[str, pd.DataFrame] = {}
        self._by_engine: dict[str, dict[str, pd.DataFrame]] = {}
        self._written: dict[str, pa.Table] = {}

    def keep_written(self, tables: dict[str, pa.Table]) -> Results:
        """Take the tables just written to this folder's parquet files from memory instead of reading
        the files back (a projected year is millions of rows); returns ``self``."""
        self._written.update(tables)
        return self

    @property
    def simulated(self) -> bool:
        return bool(self.run.get("simulated"))

    @property
    def incomplete(self) -> dict[str, Any] | None:
        """What a folder written as its run went holds (batches done, per engine), when the run did
        not finish (:mod:`bench.partial_results`); ``None`` for a finished run."""
        return self.run.get("incomplete")

    @property
    def engines(self) -> list[str]:
        return list(self.run.get("engines", {}))

    @property
    def repeats(self) -> int:
        """How many repetitions the run made (``--repeat``; 1 for folders written before it)."""
        return int(self.run.get("repeat", 1) or 1)

    def table(self, name: str, all_repeats: bool = False) -> pd.DataFrame:
        """One results table; for ``commits``, ``maintenance`` and ``queries`` the first repetition
        only unless ``all_repeats`` (timings pool every repetition; exact figures are the first's)."""
        if name not in TABLES:
            raise ResultsError(f"unknown results table {name!r}")
        if name not in self._cache:
            path = self.folder / f"{name}.parquet"
            if name in self._written:
                df = self._written.pop(name).to_pandas()
            elif path.is_file():
                df = pq.read_table(path).to_pandas()
            else:
                df = TABLES[name].empty_table().to_pandas()
            if "repeat" in TABLES[name].names and "repeat" not in df.columns:
                df["repeat"] = 0  # written before --repeat: one repetition
            for column in TABLES[name].names:  # a column added since the folder was written: null
                if column not in df.columns:
                    df[column] = None
            self._cache[name] = df
        df = self._cache[name]
        if all_repeats or name not in REPEATED:
            return df
        key = f"{name}/first"
        if key not in self._cache:
            self._cache[key] = df[df["repeat"].fillna(0) == 0].reset_index(drop=True)
        return self._cache[key]

    def of_engine(self, name: str, engine: str, all_repeats: bool = False) -> pd.DataFrame:
        """:meth:`table`'s rows of one engine. The table is split by engine once and kept: a review asks
        for each candidate's rows of every table, and a simulated year holds hundreds of thousands of rows,
        which a boolean mask per candidate would copy each time."""
        key = f"{name}/{'all' if all_repeats else 'first'}/by_engine"
        if key not in self._by_engine:
            df = self.table(name, all_repeats)
            self._by_engine[key] = ({str(e): g for e, g in df.groupby("engine", sort=False)}
                                    if len(df) and "engine" in df.columns else {})
        split = self._by_engine[key]
        if engine in split:
            return split[engine]
        return self.table(name, all_repeats).iloc[0:0]


# -- sweeps (`layoutbench sweep`): a folder of its own -------------------------------------------
SWEEP_TABLE = "sweep.parquet"  # one row per grid point and engine: the parameters, engine, kind, then the criteria
SWEEP_RUN = "sweep.json"  # the sweep file, its resolved values, axes, base line, timing, machine, validation
SWEEP_CRITERIA: dict[str, str] = {  # per grid point and engine; lower is better; the first is the choice's
    "usd_per_tb": "$ per TB ingested (the ledger: compute, queries, storage, requests)",
    "wa": "write amplification (final)",
    "live_files": "live files (final)",
    "space_amp_peak": "space amplification (peak)",
    "write_s": "write time: ingest + maintenance (simulated, total)",
    "query_files": "files scanned by the query suite (final checkpoint)",
    "query_s": "query suite latency (simulated, final checkpoint)",
}
