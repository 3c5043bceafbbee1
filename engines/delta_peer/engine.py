"""The Delta peer: what a team would run instead of RFC-19 — delta-rs appends, OPTIMIZE, VACUUM.

* ingest: ``write_deltalake(mode="append", partition_by=[partition column])``, one version per batch;
* maintenance: ``optimize.compact()`` (bin-packing, Option 1's closest shipped relative) or
  ``optimize.z_order(sort_columns)`` (Option 2 with sort columns), restricted to the partitions
  that hold at least ``min_files`` files below the small-file limit (as our planners are);
* cleaner: VACUUM. delta-rs retains by whole hours and a benchmark lasts minutes, so retention
  is applied by commit count, like Hudi's KEEP_LATEST_COMMITS: delta-rs's own VACUUM candidate list
  (dry run, retention 0) is filtered to files removed more than ``cleaner_commits_retained`` versions ago.
* bytes: SNAPPY and the scenario's row-group rows for appends *and* optimize (delta-rs would
  otherwise use ZSTD on optimize), so sizes compare with our engines. Delta files carry no
  ``_hoodie_*`` meta columns and no partition column, so they are smaller; the runner computes
  this engine's write amplification against its own first writes.

Metrics come from the Delta log (``engines.delta_peer.log``), audited against a listing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from deltalake import CommitProperties, DeltaTable, WriterProperties, write_deltalake
from deltalake.exceptions import TableNotFoundError
from pyspark.sql import DataFrame

from engines.base import InsertsOnlyError, MaintenanceResult
from engines.config.registry import DELTA, settings
from engines.delta_peer.log import LOG_DIR, DeltaLog, version_instant
from engines.spark.batch_stats import batch_rows
from engines.table.model import FileSlice, InstantWrites, PhysicalFile
from engines.table.storage import Storage, s3_location
from engines.table.transaction import CommitResult, EmptyBatchError, current_commit_extra


@dataclass
class DeltaPeerConfig(settings(kind=DELTA)):
    """Every key of the kind in the registry, and the workload's partition column."""

    partition_column: str = "dt"

    def __post_init__(self) -> None:
        self.check_settings()  # each value by its registry entry's parser
        if self.small_file_limit == 0:  # the entry our kinds share allows 0; OPTIMIZE would pick no file
            raise ValueError("small_file_limit=0: delta-rs OPTIMIZE picks the files below it, so 0 compacts nothing; "
                             "set it above 0")


class DeltaProbe:
    """The runner's probe of a Delta table: snapshot and writes from the log, a listing to audit it."""

    def __init__(self, engine: DeltaPeerEngine) -> None:
        self.engine = engine
        self.storage = engine.storage

    def snapshot(self) -> list[FileSlice]:
        return self.engine.snapshot()

    def query_snapshot(self) -> tuple[list[FileSlice], None]:
        """Delta has no log files to merge: the snapshot alone."""
        return self.snapshot(), None

    def state(self) -> tuple[list[FileSlice], list[PhysicalFile]]:
        return self.snapshot(), self.physical_files()

    def live_logs(self) -> list[PhysicalFile]:
        """Delta has no log files of rows: none."""
        return []

    def physical_files(self) -> list[PhysicalFile]:
        out = []
        for e in self.storage.list("", recursive=True):
            if e.path.startswith(LOG_DIR + "/") or not e.path.endswith(".parquet"):
                continue
            partition, _, name = e.path.rpartition("/")
            out.append(PhysicalFile(partition, name.rsplit(".", 1)[0], e.path, e.size))
        return out

    def metadata_bytes(self) -> int:
        return sum(e.size for e in self.storage.list(LOG_DIR, recursive=True))

    def instant_writes(self, instant: str) -> InstantWrites | None:
        version = int(instant)
        versions = self.engine.log.versions()
        if version >= len(versions):
            return None
        va = versions[version]
        return InstantWrites("commit", va.operation, va.write_stats(), len(va.removes))

    def audit(self, expected_rows: int) -> list[str]:
        failures = []
        sizes = {e.path: e.size for e in self.storage.list("", recursive=True)}
        live = self.engine.log.active()
        for path, add in sorted(live.items()):
            on_disk = sizes.get(path)
            if on_disk is None:
                failures.append(f"active file {path} is missing from storage")
            elif on_disk != add.size:
                failures.append(f"{path} is {on_disk} bytes on storage, {add.size} in version {add.version}")
        rows = sum(a.num_records for a in live.values())
        if rows != expected_rows:
            failures.append(f"snapshot has {rows} rows by the Delta log, ground truth {expected_rows}")
        return failures


class DeltaPeerEngine:
    """Same protocol as our engines (:class:`engines.base.Engine`), on a delta-rs table."""

    table_format = "delta"
    writes_batches_once = False  # its bytes are not Hudi bytes; never the run's batch-size reference
    own_batch_bytes = True  # WA against this engine's own ingest bytes (no meta columns in Delta files)
    reads_batch_in_spark = False  # write_deltalake takes the driver's rows (batch_rows)

    def __init__(self, path: str, config: DeltaPeerConfig, name: str = "delta") -> None:
        loc = s3_location(path)
        # delta-rs takes a plain s3:// URI and the store's endpoint and keys as storage options
        self.path = loc.plain_uri if loc is not None else path
        self.options = loc.delta_options() if loc is not None else None
        self.config = config
        self.name = name
        self.storage = Storage(path)
        self.log = DeltaLog(self.storage)
        self._pending: list[str] | None = None
        self.props = WriterProperties(compression=config.compression,  # type: ignore[arg-type]
                                      max_row_group_size=config.row_group_rows)
        self.table = None  # not a Hudi table; the runner uses :meth:`probe`

    def probe(self) -> DeltaProbe:
        return DeltaProbe(self)

    def pending_plan(self) -> str | None:
        """The token of a scheduled OPTIMIZE not yet executed (Delta keeps no plans in its log)."""
        return "planned" if self._pending else None

    def ingest(self, df: DataFrame) -> CommitResult:
        data = batch_rows(df)
        if data.num_rows == 0:
            raise EmptyBatchError(f"{self.name}: empty batch; nothing was written")
        extra = current_commit_extra()  # a streaming writer's checkpoint goes into the commitInfo
        write_deltalake(self.path, data, mode="append", partition_by=[self.config.partition_column],
                        target_file_size=self.config.max_file_size, writer_properties=self.props,
                        storage_options=self.options,
                        commit_properties=CommitProperties(custom_metadata=extra) if extra else None)
        return self._result(self.log.latest_version())

    def upsert(self, df: DataFrame) -> CommitResult:
        raise InsertsOnlyError(f"{self.name} takes inserts only: the Delta peer appends")

    def committed_extras(self) -> list[dict[str, str]]:
        """Each commit's custom metadata (delta-rs keeps it in the version's commitInfo), oldest first."""
        try:
            history = DeltaTable(self.path, storage_options=self.options).history()
        except TableNotFoundError:
            return []
        return [dict(h) for h in reversed(history)]

    def _result(self, version: int) -> CommitResult:
        va = self.log.versions(version)[version]
        return CommitResult(version_instant(version), "commit", va.operation, va.write_stats(), {})

    def after_commit(self) -> list[MaintenanceResult]:
        return []

    def schedule(self) -> str | None:
        """Partitions with ``min_files`` small files; a token (not a log entry: Delta has no plans)."""
        per_part: dict[str, list[str]] = {}
        for add in self.log.active().values():
            if add.size < self.config.small_file_limit:
                per_part.setdefault(add.partition, []).append(add.path)
        parts = sorted(p for p, files in per_part.items() if len(files) >= self.config.min_files)
        if not parts:
            return None
        self._pending = [p.split("=", 1)[1] for p in parts]
        return "planned"

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        if not self._pending:
            return None
        values, self._pending = self._pending, None
        before = self.log.latest_version()
        t0 = time.perf_counter()
        dt = DeltaTable(self.path, storage_options=self.options)
        filters: Any = [(self.config.partition_column, "in", values)]
        if self.config.sort_columns:
            metrics = dt.optimize.z_order(list(self.config.sort_columns), partition_filters=filters,
                                          target_size=self.config.target_file_size, writer_properties=self.props)
            kind = "z_order"
        else:
            metrics = dt.optimize.compact(partition_filters=filters, target_size=self.config.target_file_size,
                                          writer_properties=self.props)
            kind = "optimize"
        duration = time.perf_counter() - t0
        after = self.log.latest_version()
        if after == before:
            return None
        va = self.log.versions(after)[after]
        prior = self.log.active(after - 1)
        return MaintenanceResult(
            kind=kind, instant=version_instant(after), duration_s=duration, files_in=len(va.removes),
            files_out=len(va.adds), bytes_read=sum(prior[p].size for p in va.removes if p in prior),
            bytes_written=sum(a.size for a in va.adds), records=sum(a.num_records for a in va.adds),
            details={"partitions": values, "delta_metrics": {k: v for k, v in metrics.items()
                                                             if isinstance(v, int | float | str)}})

    def clean(self) -> MaintenanceResult | None:
        """delta-rs's own VACUUM, keeping the files of the latest ``cleaner_commits_retained`` + 1 data
        versions (Hudi's KEEP_LATEST_COMMITS: a file removed ``cleaner_commits_retained`` commits ago or
        earlier goes); VACUUM records itself in the log, and its own entries count as no commit."""
        t0 = time.perf_counter()
        keep = self.retained_versions()
        dt = DeltaTable(self.path, storage_options=self.options)
        options: dict[str, Any] = {"retention_hours": 0, "enforce_retention_duration": False, "keep_versions": keep}
        # delta-rs lists a tombstone again after its file is gone: count only files still there
        doomed = [rel for rel in map(self._relative, dt.vacuum(dry_run=True, **options)) if self.storage.exists(rel)]
        if not doomed:
            return None
        freed = sum(self.storage.size(rel) for rel in doomed)
        dt.vacuum(dry_run=False, **options)
        latest = self.log.latest_version()
        return MaintenanceResult(kind="clean", instant=version_instant(latest), duration_s=time.perf_counter() - t0,
                                 files_deleted=len(doomed),
                                 details={"bytes_freed": freed, "vacuum": "delta-rs vacuum(keep_versions)",
                                          "keep_versions": f"{keep[0]}-{keep[-1]}"})

    def retained_versions(self) -> list[int]:
        """The versions whose files VACUUM keeps: the latest ``cleaner_commits_retained`` + 1 that are not VACUUM's own."""
        data = [va.version for va in self.log.versions() if not va.operation.startswith("VACUUM")]
        return data[-(self.config.cleaner_commits_retained + 1):]

    def _relative(self, uri: str) -> str:
        path = uri.split("://", 1)[1] if "://" in uri else uri  # file:///root/… or s3://bucket/…
        return unquote(path.removeprefix(self.storage.root.lstrip("/") + "/").removeprefix(self.storage.root + "/"))

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        live = self.log.active(None if as_of is None else int(as_of))
        return [a.to_file_slice() for a in sorted(live.values(), key=lambda a: a.path)]

    def close(self) -> None:
        return None
