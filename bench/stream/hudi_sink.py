"""Apache Hudi's own streaming sink (``writeStream.format("hudi")``) as a stream run's writer, for a
``hudi`` engine with ``stream_sink: hudi``.

Hudi's ``HoodieStreamingSink`` writes each micro-batch itself: one commit carrying the micro-batch
id in its extraMetadata (``_hudi_streaming_sink_checkpoint``, under our writer id); after the
commit it schedules a clustering plan once ``hoodie.clustering.async.max.commits`` commits have
passed and hands it to its ``SparkStreamingAsyncClusteringService``, which executes it on a thread
of the same JVM while the next micro-batches write. Nothing of ours runs inside the write, so every
figure is derived from what is observable, the same way as for the other engines:

* the table's timeline (read by ``engines/table``): a commit's micro-batch id from its commit
  metadata, its completion time from its completed instant file — the first snapshot holding the
  micro-batch's landing files (freshness = that time minus the newest file's arrival); a
  replacecommit's execution from its ``.inflight`` to its completed file;
* Spark's checkpoint (which landing files each micro-batch read, whether Spark committed it) and
  the query's progress (``recentProgress``: each micro-batch's start, trigger duration and
  ``addBatch`` time).

Bad input: the stream keeps only rows with a record key and a partition value (a file in a
foreign schema, read with the generator's, is all nulls); once Spark has committed the
micro-batch that read it, the file is moved to the quarantine folder and named, as the
``foreachBatch`` writer does inside the micro-batch.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.stream.landing import Landing
from bench.stream.services import Recorder
from bench.stream.sink import (
    STREAM_CHECKPOINT_KEY,
    WRITER_ID,
    LandingSink,
    late_rows,
    micro_batch_files,
)
from engines.hudi.config import streaming_sink_options
from engines.maintenance_round import execute_pending
from engines.table.timeline import Instant, State

MODE = "hudi_async_clustering"


def start_hudi_sink(spark: Any, engine: Any, schema: Any, folder: Path, checkpoint: Path, files_per_trigger: int,
                    trigger_s: float, name: str, async_max_commits: int, async_clustering: bool) -> Any:
    """Start the streaming query: the landing folder's Parquet files into ``engine``'s table through
    Hudi's own sink (:func:`engines.hudi.config.streaming_sink_options`)."""
    key = engine.options["hoodie.datasource.write.recordkey.field"]
    part = engine.options["hoodie.datasource.write.partitionpath.field"]
    options = streaming_sink_options(engine.config, engine.options, async_max_commits, async_clustering)
    return (spark.readStream.schema(schema).option("maxFilesPerTrigger", files_per_trigger).parquet(str(folder))
            .where(f"`{key}` IS NOT NULL AND `{part}` IS NOT NULL")
            .writeStream.format("hudi").options(**options).option("checkpointLocation", str(checkpoint))
            .outputMode("append").trigger(processingTime=f"{int(trigger_s * 1000)} milliseconds")
            .queryName(name).start(engine.path))


def _epoch(iso: str) -> float:
    return datetime.strptime(iso.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


class HudiSinkServices:
    """Hudi's async clustering inside its sink, as layoutbench stream sees it: every replacecommit's
    execution interval (``.inflight`` -> completed file) from the timeline. Nothing is started
    here: Hudi's sink runs the service."""

    mode = MODE

    def __init__(self, engine: Any, enabled: bool, record: Recorder | None = None, wait_s: float = 300.0) -> None:
        self.engine = engine
        self.enabled = enabled
        self.record = record or (lambda res, mode: None)
        self.wait_s = wait_s
        self.errors: list[str] = []
        self.runs = 0
        self.intervals: dict[str, list[float | None]] = {}  # replacecommit -> [inflight, completed or None]
        self.mutex = threading.RLock()
        self.poll: Any = lambda query=None: None  # set by the observer: one look at the timeline
        self.seen: set[tuple[str, str]] = set()  # completed instants the observer took into account

    def start(self) -> None:
        """Nothing to start: Hudi's sink starts its service with its first clustering plan."""

    def stop(self) -> None:
        """Nothing to stop here: Hudi's service outlives the query until its queue is done (see :meth:`finish`)."""

    def running_between(self, t0: float, t1: float) -> bool:
        """Whether any clustering execution overlapped the wall interval ``[t0, t1]``."""
        return any(s is not None and s <= t1 and (e is None or e >= t0) for s, e in list(self.intervals.values()))

    @property
    def busy(self) -> bool:
        return any(s is not None and e is None for s, e in list(self.intervals.values()))

    def _pending(self) -> list[Instant]:
        self.poll()
        return self.engine.table.timeline.pending(["replacecommit"]) if self.engine_has_table() else []

    def drain(self) -> None:
        """Before the query stops (every landed file committed): wait until Hudi's service has
        executed every plan it was given. Stopping the query first would cancel a running
        execution: Hudi's service thread runs its Spark jobs in the query's job group."""
        deadline = time.time() + self.wait_s
        while self._pending() and time.time() < deadline:
            time.sleep(0.25)

    def finish(self) -> list[Any]:
        """After the query stopped: a plan Hudi's service did not finish (the stop cancelled it, or
        :meth:`drain` timed out) is executed by Hudi's write client (rolling back what was in flight),
        earliest first (:func:`engines.maintenance_round.execute_pending`); a failure is named in the
        run's errors and ends the round."""
        self.poll()
        if not self.engine_has_table():
            return []

        def executed(res: Any) -> None:
            done = self.engine.table.refresh().get(res.instant)  # a replacecommit, or a compaction on MOR
            self.seen.add((res.instant, done.action if done is not None else "replacecommit"))
            self.runs += 1
            self.record(res, "final")

        def failed(instant: str, exc: Exception) -> None:
            self.errors.append(f"{type(exc).__name__}: {exc}")

        out = execute_pending(self.engine, on_executed=executed, on_error=failed)
        self.poll()
        return out

    def engine_has_table(self) -> bool:
        try:
            self.engine.table  # noqa: B018 - opening it is the check
        except Exception:  # noqa: BLE001 - no commit yet: Hudi creates the table with the first
            return False
        return True


class HudiSinkObserver(LandingSink):
    """The stream run's sink record for Hudi's own sink (see the module docstring): the same
    ``state`` (micro-batch rows, committed files and their commit times, quarantined files,
    ingest commits, late rows) and ``lag`` as the ``foreachBatch`` writer's."""

    def __init__(self, engine: Any, services: HudiSinkServices, landing: Landing, label: str, t0: float,
                 retention_hours: float, checkpoint: str | Path) -> None:
        super().__init__(engine, landing, label, t0, retention_hours, checkpoint)
        self.services = services
        self.progress: dict[int, dict[str, Any]] = {}  # micro-batch id -> its progress (with addBatch)
        self.batch_commit: dict[int, dict[str, Any]] = {}  # micro-batch id -> its ingest commit
        self.batch_files: dict[int, list[Path]] = {}
        self.checked: set[int] = set()  # micro-batches whose files were schema-checked
        self.seen = services.seen
        self.failures: dict[tuple[str, str], int] = {}  # instant -> failed reads (retried on the next look)
        services.poll = self.poll

    # -- observing -------------------------------------------------------------------------------
    def poll(self, query: Any = None) -> None:
        """One look at the query's progress, Spark's checkpoint and the table's timeline."""
        if query is not None:
            for p in query.recentProgress:
                if "addBatch" in (p.get("durationMs") or {}):
                    self.progress[int(p["batchId"])] = p
        self._quarantine()
        if not self.services.engine_has_table():
            return
        timeline = self.engine.table.refresh()
        for inst in timeline.completed(["commit", "replacecommit", "clean"]):
            if (inst.timestamp, inst.action) not in self.seen:
                self._completed(inst)
        for inst in timeline.completed(["replacecommit"]) + timeline.pending(["replacecommit"]):
            self.services.intervals[inst.timestamp] = [
                self.engine.instant_time(inst, State.INFLIGHT),
                self.engine.instant_time(inst, State.COMPLETED) if inst.is_completed else None]
        self._publish()

    def _completed(self, inst: Instant) -> None:
        key = (inst.timestamp, inst.action)
        try:
            if inst.action == "commit":
                self._commit(inst)
            elif inst.action == "replacecommit":
                self.services.record(self.engine.maintenance_of(inst), "async")
                self.services.runs += 1
            else:
                self.services.record(self.engine.maintenance_of(inst), "inline")
        except Exception as exc:  # noqa: BLE001 - Hudi may still be writing the file: the next look retries
            self.failures[key] = self.failures.get(key, 0) + 1
            if self.failures[key] < 4:
                return
            self.state.errors.append(f"{inst.action} {inst.timestamp} unreadable: {type(exc).__name__}: {exc}")
        self.seen.add(key)

    def _files(self, batch_id: int) -> list[Path]:
        if batch_id not in self.batch_files:
            self.batch_files[batch_id] = micro_batch_files(self.checkpoint, batch_id)
        return self.batch_files[batch_id]

    def _quarantine(self) -> None:
        """Spark-committed micro-batches' landing files in a foreign schema: moved aside and named."""
        done = self.checkpoint / "commits"
        if not done.is_dir():
            return
        for entry in sorted(done.iterdir(), key=lambda p: p.name):
            if not entry.name.isdigit() or int(entry.name) in self.checked:
                continue
            batch_id = int(entry.name)
            for p in self._files(batch_id):
                problem = self.landing.schema_problem(p) if p.exists() else None
                if problem is not None:
                    self.landing.move_to_quarantine(p, problem)
                    with self.lock:
                        self.state.quarantined[p.name] = problem
            self.checked.add(batch_id)

    def _commit(self, inst: Instant) -> None:
        meta = self.engine.table.commit_metadata(inst)
        raw = meta.extra.get(STREAM_CHECKPOINT_KEY)
        if not raw:
            self.state.errors.append(f"commit {inst.timestamp} carries no streaming checkpoint")
            return
        batch_id = int(json.loads(raw)[WRITER_ID])
        requested = self.engine.instant_time(inst, State.REQUESTED)
        completed = self.engine.instant_time(inst, State.COMPLETED) or time.time()
        self.batch_commit[batch_id] = {"instant": inst.timestamp, "completed": completed, "meta": meta}
        self.state.commits.append({
            "batch": batch_id, "instant": inst.timestamp, "action": inst.action, "operation": meta.operation_type,
            "duration_s": completed - requested if requested else 0.0, "stats": meta.write_stats,
            "replaced": sum(len(v) for v in meta.replaced_file_ids.values())})

    def _publish(self) -> None:
        """Files of micro-batches Hudi committed and Spark reported become committed (at the
        commit's completion time): the driver's end and lag read them."""
        with self.lock:
            for batch_id, c in self.batch_commit.items():
                if batch_id in self.progress:
                    for p in self._files(batch_id):
                        if p.name not in self.state.quarantined:
                            self.state.committed.setdefault(p.name, c["completed"])

    # -- after the stream --------------------------------------------------------------------------
    def finish(self) -> None:
        """The micro-batch rows (once the query stopped and Hudi's service finished)."""
        self._publish()
        for batch_id in sorted(self.progress):
            p = self.progress[batch_id]
            start = _epoch(p["timestamp"])
            dur = p["durationMs"]
            end = start + float(dur.get("triggerExecution", dur["addBatch"])) / 1000
            files = self._files(batch_id)
            bad = [f.name for f in files if f.name in self.state.quarantined]
            good = [f for f in files if f.name not in self.state.quarantined]
            row: dict[str, Any] = {
                "engine": self.engine.name, "run": self.label, "micro_batch": batch_id,
                "batches": ",".join(f.name for f in good), "files": len(good), "started_s": start - self.t0,
                "ended_s": end - self.t0, "duration_s": end - start, "ingest_s": float(dur["addBatch"]) / 1000,
                "inline_maintenance_s": 0.0, "backlog_batches": self._backlog_at(start),
                "quarantined": ",".join(bad) or None, "replayed": False, "records": 0, "late_rows": 0,
                "maintenance_running": self.services.running_between(start, end)}
            c = self.batch_commit.get(batch_id)
            if c is not None and good:
                late, self.newest_ts_us = late_rows(good, self.newest_ts_us,
                                                    self.retention_us)
                self.state.late_rows += late
                arrivals = [self.landing.arrival(f.name) or start for f in good]
                row.update(records=c["meta"].records_written, late_rows=late, instant=c["instant"],
                           freshness_s=c["completed"] - max(arrivals), oldest_freshness_s=c["completed"] - min(arrivals))
            elif c is not None:  # only foreign rows, filtered out: Hudi's empty commit still carries the checkpoint
                row["instant"] = c["instant"]
            elif good:
                self.state.errors.append(f"micro-batch {batch_id}: Spark reported it, but no Hudi commit holds it")
            self.state.rows.append(row)

    def _backlog_at(self, t: float) -> int:
        landed = self.landing.landed()
        with self.lock:
            return sum(1 for n, a in landed.items() if a <= t and n not in self.state.quarantined
                       and self.state.committed.get(n, float("inf")) > t)

