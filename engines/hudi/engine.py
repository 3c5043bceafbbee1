"""The ``hudi`` engine: Apache Hudi's own Spark datasource and write client on our batches.

Every write is ``df.write.format("hudi")`` with :func:`engines.hudi.config.hoodie_options`; table
services (clustering schedule / execute, clean) go through Hudi's ``SparkRDDWriteClient`` built
from the same options; a maintenance round (:mod:`engines.maintenance_round`) reaches them through
the engine protocol: ``schedule`` is ``scheduleClustering`` (nothing new while a clustering plan
is pending: the round finds that one), ``execute`` is ``cluster`` for a clustering plan and
``compact`` for a MERGE_ON_READ compaction plan, ``clean`` is ``clean``, and ``pending_plan`` reads
the earliest pending replacecommit (with clustering on) or compaction (on MERGE_ON_READ) from the
timeline.
Nothing is measured from Hudi's word: after each call the instants it
completed are read from the table's timeline and commit metadata by ``engines/table`` (the table
is written at version 6), exactly as for our engines. Work Hudi does inside a write (automatic
clean, inline clustering) is reported by :meth:`HudiEngine.after_commit`.
"""

from __future__ import annotations

import io
import threading
import time
from typing import Any

from pyspark.sql import DataFrame

from engines.async_service import AsyncService
from engines.base import MaintenanceResult, TableEngine
from engines.hudi.config import HudiConfig, hoodie_options
from engines.maintenance_round import earliest_pending
from engines.spark.session import HUDI_BUNDLE, HUDI_VERSION, get_spark
from engines.table.model import FileSlice
from engines.table.storage import hadoop_uri
from engines.table.table import HudiTable
from engines.table.timeline import MOR_COMPACTION, Instant, State
from engines.table.transaction import CommitResult, EmptyBatchError, current_commit_extra
from engines.table.view import AsOfError

CLEAN, REPLACE, COMMIT, DELTACOMMIT = "clean", "replacecommit", "commit", "deltacommit"


class HudiError(RuntimeError):
    """Apache Hudi refused or failed an operation (its own message is kept)."""


def _java_message(exc: Exception) -> str:
    java = getattr(exc, "java_exception", None)
    if java is not None:
        parts, cause = [], java
        while cause is not None and len(parts) < 4:
            parts.append(f"{cause.getClass().getName()}: {cause.getMessage()}")
            cause = cause.getCause()
        return " <- ".join(parts)
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def check_hudi_loaded(spark: Any) -> None:
    """Raise one error naming the bundle when the session was started without it."""
    try:
        spark._jvm.java.lang.Class.forName("org.apache.hudi.DefaultSource", True,
                                           spark._jvm.Thread.currentThread().getContextClassLoader())
    except Exception:
        raise HudiError(f"the Spark session has no Apache Hudi: start it with engines.spark.session.hudi_conf() "
                        f"(spark.jars.packages={HUDI_BUNDLE}) before building a hudi engine") from None


class HudiEngine(TableEngine):
    """One table written and maintained by Apache Hudi (the bundle of ``HUDI_VERSION``)."""

    writes_batches_once = False
    reads_batch_in_spark = True  # Apache Hudi's writer reads the batch from Spark's cache

    def __init__(self, table_path: str, config: HudiConfig, name: str, partition_field: str = "dt",
                 record_key: str = "trace_id") -> None:
        self.name = name
        self.config = config
        self.uri = table_path  # how engines/table reads the table (pyarrow)
        self.path = hadoop_uri(table_path)  # how Apache Hudi writes it (s3:// through s3a://)
        self.options = hoodie_options(config, name, partition_field, record_key)
        self.spark = get_spark()
        check_hudi_loaded(self.spark)
        self._table: HudiTable | None = None
        self._seen: set[tuple[str, str]] = set()
        self._pending: list[MaintenanceResult] = []
        self._lock = threading.RLock()
        self._service = (AsyncService(self.run_pending, f"async-{name}", config.async_interval_s)
                         if config.clustering and config.mode == "async" else None)

    # -- the table, as engines/table reads it -------------------------------------------------
    @property
    def table(self) -> HudiTable:
        if self._table is None:
            self._table = HudiTable.open(self.uri)  # Hudi creates it with the first write
        return self._table

    def _exists(self) -> bool:
        try:
            self.table  # noqa: B018 - opening it is the check
        except Exception:  # no table yet: Hudi creates it with the first write
            return False
        return True

    def committed_extras(self) -> list[dict[str, str]]:
        return super().committed_extras() if self._exists() else []

    def _new_instants(self) -> list[Instant]:
        timeline = self.table.refresh()
        new = [i for i in timeline.instants if i.is_completed and (i.timestamp, i.action) not in self._seen]
        self._seen.update((i.timestamp, i.action) for i in new)
        return new

    def _mtime(self, instant: Instant, state: State) -> float | None:
        timeline = self.table.timeline
        entry = self.table.storage.entry(f"{timeline.folder}/{timeline.file_name(instant, state)}")
        return entry.mtime_ns / 1e9 if entry is not None and entry.mtime_ns else None

    def _duration(self, instant: Instant) -> float:
        """Requested -> completed, from the instant files' modification times (work done inside a write)."""
        start = self._mtime(instant, State.REQUESTED)
        end = self._mtime(instant, State.COMPLETED)
        return max(0.0, end - start) if start is not None and end is not None else 0.0

    def _maintenance_of(self, instant: Instant, duration: float | None = None) -> MaintenanceResult:
        duration = self._duration(instant) if duration is None else duration
        if instant.action == CLEAN:
            import fastavro

            meta = next(iter(fastavro.reader(io.BytesIO(self.table.timeline.read(instant)))), {})
            if "timeTakenInMillis" in meta and duration == self._duration(instant):
                duration = int(meta["timeTakenInMillis"]) / 1000  # Hudi's own timing of the clean
            return MaintenanceResult(kind="clean", instant=instant.timestamp, duration_s=duration,
                                     files_deleted=int(meta.get("totalFilesDeleted") or 0),
                                     details={"earliest_commit_to_retain": meta.get("earliestCommitToRetain")})
        meta = self.table.commit_metadata(instant)
        if instant.action == MOR_COMPACTION:
            return self._compaction_of(instant, meta, duration)
        replaced = {(p, f) for p, ids in meta.replaced_file_ids.items() for f in ids}
        try:
            before = {(s.partition, s.file_id): s for s in self.table.view().snapshot(self._previous(instant))}
        except AsOfError:  # the inputs' instant was cleaned already: their sizes are unknown
            before = {}
        read = [before[k] for k in replaced if k in before]
        return MaintenanceResult(kind="clustering", instant=instant.timestamp, duration_s=duration,
                                 files_in=len(replaced), files_out=len(meta.write_stats),
                                 bytes_read=sum(s.size_bytes for s in read), bytes_written=meta.bytes_written,
                                 records=meta.records_written, details={"hudi": HUDI_VERSION})

    def _compaction_of(self, instant: Instant, meta: Any, duration: float) -> MaintenanceResult:
        """A completed compaction: its file slices (base and log files) in, one base file per group out."""
        try:
            before = {m.file_group: m for m in self.table.view(read_footers=False).merge_slices(
                self._previous(instant))}
        except AsOfError:
            before = {}
        slices = [before[(s.partition, s.file_id)] for s in meta.write_stats if (s.partition, s.file_id) in before]
        read = sum((m.base.size_bytes if m.base is not None else 0) + m.log_bytes for m in slices)
        return MaintenanceResult(kind="compaction", instant=instant.timestamp, duration_s=duration,
                                 files_in=sum((m.base is not None) + len(m.logs) for m in slices),
                                 files_out=len(meta.write_stats), bytes_read=read,
                                 bytes_written=meta.bytes_written, records=meta.records_written,
                                 details={"hudi": HUDI_VERSION, "file_groups": len(meta.write_stats),
                                          "log_files": sum(len(m.logs) for m in slices)})

    def _previous(self, instant: Instant) -> str | None:
        earlier = [i.timestamp for i in self.table.refresh().completed([COMMIT, REPLACE, DELTACOMMIT])
                   if i.timestamp < instant.timestamp]
        return earlier[-1] if earlier else None

    # -- what a writer outside the engine completed (Hudi's own streaming sink) --------------------
    def instant_time(self, instant: Instant, state: State) -> float | None:
        """Wall time (file modification time) at which ``instant`` reached ``state``; None if it has not."""
        return self._mtime(instant, state)

    def maintenance_of(self, instant: Instant) -> MaintenanceResult:
        """A completed clean or replacecommit as a maintenance result (duration: requested -> completed)."""
        return self._maintenance_of(instant)

    # -- the Engine protocol -------------------------------------------------------------------
    def ingest(self, df: DataFrame) -> CommitResult:
        return self._write(df, {})

    def upsert(self, df: DataFrame) -> CommitResult:
        """Commit ``df`` as Hudi's upsert (updates of earlier keys; on MERGE_ON_READ, to log files)."""
        return self._write(df, {"hoodie.datasource.write.operation": "upsert"})

    def _write(self, df: DataFrame, override: dict[str, str]) -> CommitResult:
        with self._lock:
            try:
                # a streaming writer's checkpoint: Hudi copies write options named "_..." (its
                # commitmeta.key.prefix) into the commit's extraMetadata
                extra = {k: v for k, v in current_commit_extra().items() if k.startswith("_")}
                options = {**self.options, **override, **extra}
                df.write.format("hudi").options(**options).mode("append").save(self.path)
            except Exception as exc:
                raise HudiError(f"{self.name}: Apache Hudi failed the commit: {_java_message(exc)}") from None
            new = self._new_instants()
            commits = [i for i in new if i.action == (DELTACOMMIT if self.config.merge_on_read else COMMIT)]
            if not commits:
                raise EmptyBatchError(f"{self.name}: Apache Hudi completed no commit for the batch")
            ingest = commits[0]
            self._pending += [self._maintenance_of(i) for i in new if i is not ingest]
            meta = self.table.commit_metadata(ingest)
            if self._service is not None:
                self._schedule_async()
            return CommitResult(ingest.timestamp, ingest.action, meta.operation_type, meta.write_stats,
                                {p: list(ids) for p, ids in meta.replaced_file_ids.items()})

    def after_commit(self) -> list[MaintenanceResult]:
        out, self._pending = self._pending, []
        return out

    def _client(self) -> Any:
        """Hudi's write client over the table, configured with the engine's options."""
        jvm = self.spark._jvm
        props = jvm.java.util.HashMap()
        for k, v in self.options.items():
            props.put(k, v)
        schema = self.table.latest_schema()
        if schema:
            props.put("hoodie.avro.schema", schema)
        cfg = jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder().withPath(self.path).withProps(props).build()
        context = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(self.spark._jsc)
        return jvm.org.apache.hudi.client.SparkRDDWriteClient(context, cfg)

    def _with_client(self, what: str, call: Any) -> Any:
        client = self._client()
        try:
            return call(client)
        except Exception as exc:
            raise HudiError(f"{self.name}: Apache Hudi failed to {what}: {_java_message(exc)}") from None
        finally:
            client.close()

    def schedule(self) -> str | None:
        if not self.config.clustering:
            return None
        with self._lock:
            # a pending plan is not a new one (schedule_inline: the write planned it): the round's
            # FIND step executes it; schedule_inline schedules nothing outside the write
            if self.config.mode == "schedule_inline" or earliest_pending(self.table, (REPLACE,)) is not None:
                return None
            empty = self.spark._jvm.org.apache.hudi.common.util.Option.empty()
            planned = self._with_client("schedule clustering", lambda c: c.scheduleClustering(empty))
            return str(planned.get()) if planned.isPresent() else None

    @property
    def _plan_actions(self) -> tuple[str, ...]:
        """The pending plans a round executes here: clustering's, and on MERGE_ON_READ compaction's."""
        return (REPLACE,) * bool(self.config.clustering) + (MOR_COMPACTION,) * bool(self.config.merge_on_read)

    def pending_plan(self) -> str | None:
        """The earliest pending clustering or compaction instant (:attr:`_plan_actions`)."""
        if not self._plan_actions or (self._table is None and not self._exists()):
            return None
        return earliest_pending(self.table, self._plan_actions)

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        with self._lock:
            return super().execute(instant)

    def execute_instant(self, instant: str) -> MaintenanceResult | None:
        """``compact`` for a pending compaction, ``cluster`` for a clustering plan (None with clustering off)."""
        with self._lock:
            found = self.table.refresh().get(instant)
            compaction = found is not None and found.action == MOR_COMPACTION
            if not compaction and not self.config.clustering:
                return None
            what = "compaction" if compaction else "clustering"
            t0 = time.perf_counter()
            self._with_client(f"execute {what} {instant}",
                              lambda c: c.compact(instant, True) if compaction else c.cluster(instant, True))
            duration = time.perf_counter() - t0
            new = self._new_instants()
            done = [i for i in new if i.timestamp == instant]
            self._pending += [self._maintenance_of(i) for i in new if i.timestamp != instant]
            if not done:
                raise HudiError(f"{self.name}: {what} {instant} did not complete")
            return self._maintenance_of(done[0], duration)

    def clean(self) -> MaintenanceResult | None:
        with self._lock:
            if self._table is None and not self._exists():
                return None
            t0 = time.perf_counter()
            meta = self._with_client("clean", lambda c: c.clean())
            duration = time.perf_counter() - t0
            new = self._new_instants()
            cleans = [i for i in new if i.action == CLEAN]
            self._pending += [self._maintenance_of(i) for i in new if i.action != CLEAN]
            if meta is None or not cleans:
                return None
            return self._maintenance_of(cleans[-1], duration)

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        return self.table.view().snapshot(as_of)

    def _schedule_async(self) -> None:
        """After a commit in async mode: Hudi schedules (its async gate), the service is woken."""
        empty = self.spark._jvm.org.apache.hudi.common.util.Option.empty()
        planned = self._with_client("schedule clustering", lambda c: c.scheduleClustering(empty))
        if planned.isPresent() and self._service is not None:
            self._service.notify()

    def wait_async(self, timeout: float | None = None) -> bool:
        """Async mode: wait until the service has executed every plan it was woken for."""
        return self._service.wait_idle(timeout) if self._service is not None else True

    def close(self) -> None:
        if self._service is not None:
            self._service.close()
