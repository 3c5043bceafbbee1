"""The ``foreachBatch`` writer: one Structured Streaming micro-batch into one engine commit.

For each micro-batch: the landing files it holds are checked against the generator's schema (a
foreign file is moved to the quarantine folder and named in the results; the rest of the
micro-batch goes on); rows older than the retention window (newest event seen minus
``retention_hours``) are counted, and ingested like any other; the engine commits the rows with
the micro-batch id in the commit's ``extraMetadata`` (``STREAM_CHECKPOINT_KEY``, as Hudi's
streaming sink does). Exactly-once: after a restart Spark replays the micro-batch its commit log
lacks; if the table already holds that batch id, the replay is skipped — the checkpoint plus the
table's idempotent commit.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.stream.landing import Landing, update_of
from bench.stream.services import Services
from engines.base import InsertsOnlyError
from engines.clustering.writer import ClusteringUpdateConflictError
from engines.hudi.config import STREAM_WRITER_ID
from engines.table import faults
from engines.table.transaction import commit_extra_metadata

STREAM_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"  # Hudi's own key: {writer identifier: batch id}
STREAM_FILES_KEY = "_layoutbench_stream_files"  # "_": Apache Hudi keeps write options so named in extraMetadata
CONFLICT_RETRIES = 3  # Hudi's streaming sink's default retry count
CONFLICT_WAIT_S = 120.0  # for the pending plans' execution before a retry
WRITER_ID = STREAM_WRITER_ID  # both writers' (foreachBatch's and Hudi's own sink's) checkpoint identifier


def _local_path(uri: str) -> Path:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme in ("file", "") else Path(uri)


def committed_stream_state(engine: Any) -> tuple[int, set[str]]:
    """(the newest micro-batch id the table committed, -1 if none; landing files committed)."""
    entries = engine.committed_extras()
    newest, files = -1, set()
    for extra in entries:
        raw = extra.get(STREAM_CHECKPOINT_KEY)
        if raw:
            newest = max(newest, int(json.loads(raw).get(WRITER_ID, -1)))
            files |= set(json.loads(extra.get(STREAM_FILES_KEY, "[]")))
    return newest, files


def _log_offset(checkpoint: Path, batch_id: int) -> int:
    """The file source's log offset micro-batch ``batch_id`` read up to (-1 before the first)."""
    if batch_id < 0:
        return -1
    lines = (checkpoint / "offsets" / str(batch_id)).read_text().strip().splitlines()
    return int(json.loads(lines[-1])["logOffset"])


def micro_batch_files(checkpoint: str | Path, batch_id: int) -> list[Path]:
    """The landing files of micro-batch ``batch_id``, from the query's checkpoint: its offset log
    gives the file source's log range, the source log (``sources/0``, compacted every ten entries
    into ``<n>.compact``) names the files. A micro-batch DataFrame of the file source does not list
    its input files itself."""
    checkpoint = Path(checkpoint)
    lo, hi = _log_offset(checkpoint, batch_id - 1), _log_offset(checkpoint, batch_id)
    log = checkpoint / "sources" / "0"
    out: list[str] = []
    for n in range(lo + 1, hi + 1):
        plain, compact = log / str(n), next(iter(sorted(log.glob("*.compact"), key=lambda p: int(p.stem))), None)
        source = plain if plain.is_file() else None
        if source is None:  # compacted: the first compact file at or after n holds it
            later = [p for p in log.glob("*.compact") if int(p.stem) >= n]
            source = min(later, key=lambda p: int(p.stem)) if later else compact
        if source is None:
            raise FileNotFoundError(f"no source log entry for file-source batch {n} under {log}")
        for line in source.read_text().splitlines()[1:]:
            entry = json.loads(line)
            if int(entry["batchId"]) == n:
                out.append(entry["path"])
    return sorted({_local_path(u) for u in out})


def late_rows(paths: list[Path], newest_ts_us: int | None, retention_us: int) -> tuple[int, int]:
    """(rows of these files older than the retention window, the newest event seen so far): the
    window ends at the newest event seen, these files included."""
    tables = [pq.read_table(p, columns=["ts"]).column(0) for p in paths]
    newest = max([int(pc.max(t).cast("int64").as_py() or 0) for t in tables if len(t)] + [newest_ts_us or 0])
    horizon = newest - retention_us
    return sum(int(pc.sum(pc.less(t.cast("int64"), horizon)).as_py() or 0) for t in tables), newest


@dataclass
class SinkState:
    rows: list[dict[str, Any]] = field(default_factory=list)
    committed: dict[str, float] = field(default_factory=dict)  # landing file -> commit wall time
    quarantined: dict[str, str] = field(default_factory=dict)  # landing file -> reason
    commits: list[dict[str, Any]] = field(default_factory=list)  # ingest commits, for the commits table
    late_rows: int = 0
    errors: list[str] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)  # upserts rejected under a pending plan


class LandingSink:
    """What every sink of a landing folder keeps (the ``foreachBatch`` writer and the record of
    Hudi's own sink): the engine, the landing folder, the run's ``state`` under ``lock``, and the lag."""

    def __init__(self, engine: Any, landing: Landing, label: str, t0: float, retention_hours: float,
                 checkpoint: str | Path) -> None:
        self.engine = engine
        self.landing = landing
        self.label = label
        self.t0 = t0
        self.retention_us = int(retention_hours * 3600 * 1e6)
        self.checkpoint = Path(checkpoint)
        self.state = SinkState()
        self.lock = threading.Lock()
        self.newest_ts_us: int | None = None

    def lag(self, now: float) -> tuple[int, int, int, float]:
        """(landed, committed, backlog in files, backlog in seconds: age of the oldest landed,
        uncommitted file); quarantined files are not waiting."""
        landed = self.landing.landed()
        with self.lock:
            waiting = [t for n, t in landed.items() if n not in self.state.committed and n not in self.state.quarantined]
            committed = sum(1 for n in landed if n in self.state.committed)
        return len(landed), committed, len(waiting), (now - min(waiting)) if waiting else 0.0


class StreamSink(LandingSink):
    """The ``foreachBatch`` function of one engine's stream (see the module docstring)."""

    def __init__(self, spark: Any, engine: Any, services: Services, landing: Landing, label: str, t0: float,
                 retention_hours: float, schema: Any, checkpoint: str | Path) -> None:
        super().__init__(engine, landing, label, t0, retention_hours, checkpoint)
        self.spark = spark
        self.services = services
        self.schema = schema
        self.last_batch_id, done = committed_stream_state(engine)
        now = time.time()
        self.state.committed.update({name: now for name in done})

    def __call__(self, df: Any, batch_id: int) -> None:
        try:
            self._micro_batch(df, batch_id)
        except Exception as exc:
            self.state.errors.append(f"micro-batch {batch_id}: {type(exc).__name__}: {exc}")
            raise

    def _late(self, paths: list[Path]) -> int:
        """Rows of these files older than the retention window; advances the newest event seen."""
        late, self.newest_ts_us = late_rows(paths, self.newest_ts_us, self.retention_us)
        return late

    def poll(self, query: Any) -> None:
        """Nothing to observe: the ``foreachBatch`` writer records each micro-batch as it writes it."""

    def finish(self) -> None:
        """Nothing left to record after the stream (see :meth:`poll`)."""

    def _micro_batch(self, df: Any, batch_id: int) -> None:
        t_start = time.time()
        paths = micro_batch_files(self.checkpoint, batch_id)
        backlog = self._backlog()
        good, bad = [], []
        for p in paths:
            if not p.exists() and (self.landing.quarantine / p.name).exists():
                bad.append(p.name)  # quarantined before a restart: the replay sees it again
                continue
            problem = self.landing.schema_problem(p)
            if problem is None:
                good.append(p)
            else:
                self.landing.move_to_quarantine(p, problem)
                self.state.quarantined[p.name] = problem
                bad.append(p.name)
        row: dict[str, Any] = {
            "engine": self.engine.name, "run": self.label, "micro_batch": batch_id,
            "batches": ",".join(p.name for p in good), "files": len(good), "started_s": t_start - self.t0,
            "backlog_batches": backlog, "quarantined": ",".join(bad) or None, "replayed": False,
            "records": 0, "late_rows": 0, "ingest_s": 0.0, "inline_maintenance_s": 0.0,
        }
        if batch_id <= self.last_batch_id:  # committed before a restart; Spark's log lacked it
            row["replayed"] = True
            self._finish(row, t_start)
            return
        if good:
            late = self._late(good)
            data = df if not bad else self.spark.read.schema(self.schema).parquet(*[str(p) for p in good])
            names = [p.name for p in good]
            marker = {STREAM_CHECKPOINT_KEY: json.dumps({WRITER_ID: str(batch_id)}),
                      STREAM_FILES_KEY: json.dumps(names)}
            t_ingest = time.time()
            res = self._write(data, batch_id, marker, [n for n in names if update_of(n) is not None])
            t_commit = time.time()
            faults.point("stream.after_table_commit")
            arrivals = [self.landing.arrival(n) or t_ingest for n in names]
            with self.lock:
                for n in names:
                    self.state.committed[n] = t_commit
            self.state.late_rows += late
            self.state.commits.append({"batch": batch_id, "instant": res.instant, "action": res.action,
                                       "operation": res.operation, "duration_s": t_commit - t_ingest,
                                       "stats": res.stats, "replaced": sum(len(v) for v in res.replaced.values())})
            t_m = time.time()
            self.services.after_ingest()
            row.update(records=res.records_written, ingest_s=t_commit - t_ingest, inline_maintenance_s=time.time() - t_m,
                       freshness_s=t_commit - max(arrivals), oldest_freshness_s=t_commit - min(arrivals),
                       late_rows=late, instant=res.instant)
        self.last_batch_id = batch_id
        self._finish(row, t_start)

    def _write(self, data: Any, batch_id: int, marker: dict[str, str], updates: list[str]) -> Any:
        """One commit of the micro-batch: an insert, or an upsert when it holds update files. An
        upsert rejected on file groups of a pending clustering plan (Option 2's reject strategy)
        is retried once the plans were executed, as Hudi's streaming sink retries a failed
        micro-batch (``hoodie.datasource.write.streaming.retry.count``) while its async service
        clusters; each rejection is kept in ``state.conflicts``."""
        write = self.engine.upsert if updates else self.engine.ingest
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                with self.services.mutex, commit_extra_metadata(marker):
                    return write(data)
            except InsertsOnlyError as exc:
                raise InsertsOnlyError(f"landing files {updates} carry updates; {exc}") from exc
            except ClusteringUpdateConflictError as exc:
                self.state.conflicts.append({"micro_batch": batch_id, "plans": exc.plans,
                                             "file_groups": len(exc.conflicts), "t": time.time()})
                if attempt == CONFLICT_RETRIES:
                    raise
                self.services.await_plans(CONFLICT_WAIT_S)
        raise AssertionError("unreachable")

    def _finish(self, row: dict[str, Any], t_start: float) -> None:
        t_end = time.time()
        row.update(ended_s=t_end - self.t0, duration_s=t_end - t_start,
                   maintenance_running=self.services.running_between(t_start, t_end))
        self.state.rows.append(row)

    def _backlog(self) -> int:
        landed = self.landing.landed()
        with self.lock:
            return sum(1 for n in landed if n not in self.state.committed and n not in self.state.quarantined)

