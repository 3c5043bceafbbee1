"""Option 2 on MERGE_ON_READ on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`).

What differs from copy-on-write Option 2 (:mod:`engines.clustering.sim`), as
:class:`engines.clustering_mor.engine.MorClusteringEngine` does it:

- every write is a ``deltacommit``; a batch's inserts go to new base files rolled at the max file size
  (:func:`engines.files.writer.write_partition_rows`, fileIds minted as that writer mints them);
- a batch's corrections go to one new log file per file group holding an updated key
  (:func:`engines.files.deltacommit.write_deltacommit`), sized by the real log format
  (:mod:`bench.simulate.logsize`, asked through the simulator's table);
- after every deltacommit, MOR compaction when due (every ``compact_max_delta_commits`` deltacommits,
  the shared pure planner :func:`engines.mor_compaction.planner.plan_compaction`), then the cleaner;
- clustering as Option 2's, its groups' logs merged into parquet outputs of ``ceil(rows / outputs)`` rows;
- with ``insert_small_file_limit`` > 0 (Hudi's MOR small-file handling, option2_mor_logs), a batch's
  inserts first fill the small base-only file groups' new log files: which groups, and how many
  records each takes, by the engine's own pure functions (:meth:`MorClusteringSim.log_insert_targets`:
  :func:`engines.clustering_mor.small_files.small_file_targets` over the simulated slices, the average
  record size by :func:`engines.clustering_mor.small_files.average_record_bytes` over the simulated
  writes' base files, the rows split by :func:`engines.files.deltacommit.fill_groups`).

All of it is here, behind the hooks of :class:`engines.sim.KindSim` that the simulator's core calls on every
kind (:meth:`~MorClusteringSim.inserts_to_logs`, :meth:`~MorClusteringSim.write_corrections`,
:meth:`~MorClusteringSim.after_commit`, :meth:`~MorClusteringSim.rewrite_runs`, ...); the core keeps only
the table's bookkeeping of log files, which it does for any kind that adds one.

Where the simulator can part from the engine in the inserts appended to logs: the room is
``(max_file_size - base bytes) // average record bytes``, and both come from estimated base-file sizes
(rows x bytes per record): a base file's estimate off by ``d`` bytes moves its room by ``d / average``
records, one record where the real floor falls within ``d`` of a multiple of the average. A padded group's
slice keeps its base file (path, bytes: the small-file test and the clustering planner read base bytes only)
while its rows count the log's inserts, so corrections find those keys in its group (exact mode), and
compaction and clustering write them (the table's ``inserted_rows`` says how many are in logs).

Not modelled: the engine's own inline clustering (``mode: inline``) and compaction scheduled by the
maintenance round (``compaction_inline: false``): :meth:`MorClusteringSim.unmodelled` names them and
the simulator refuses such an engine.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from engines.clustering.sim import ClusteringSim
from engines.clustering_mor.small_files import average_record_bytes, small_file_targets
from engines.config.registry import O2M, default
from engines.cow_baseline.config import CowConfig
from engines.files.deltacommit import SmallFileTarget, fill_groups
from engines.mor_compaction.planner import (
    MAX_DELTA_COMMITS,
    CompactionConfig,
    SliceLogs,
    due,
    plan_compaction,
)
from engines.sim import SimTable
from engines.table.model import FileSlice, new_file_id

RECORD_KEY = "trace_id"


class MorClusteringSim(ClusteringSim):
    """Option 2 on MERGE_ON_READ: deltacommits, log files, compaction and clustering."""

    writes_batches_once = False  # as the engine: its updates are log blocks, not a batch's Parquet bytes
    ingest_action: ClassVar[str] = "deltacommit"
    writer_file_ids: ClassVar[bool] = True
    prunes_by_column_stats: ClassVar[bool] = False  # the table core's MOR writes record no column ranges

    def __init__(self, planner: Any, options: dict[str, Any]) -> None:
        reason = self.unmodelled(options)
        if reason:
            raise ValueError(f"the simulator has no model of {reason}")
        super().__init__(planner, options)
        self.compaction = CompactionConfig(max_delta_commits=int(options.get("compact_max_delta_commits",
                                                                             MAX_DELTA_COMMITS)))
        self.compaction_inline = bool(options.get("compaction_inline", True))
        self.insert_small_file_limit = int(options.get("insert_small_file_limit", 0) or 0)
        self.small_file_group_candidates = int(options.get("small_file_group_candidates",
                                                           default("small_file_group_candidates", O2M)))
        self.deltas = 0  # deltacommits since the last compaction
        self.base_writes: list[tuple[int, int]] = []  # each completed write's (base-file bytes, records)

    @staticmethod
    def pads_inserts(options: dict[str, Any]) -> bool:
        """Whether this engine's config appends inserts to small file groups' logs (its ingest commits
        then write Avro log blocks, not Parquet bytes per record)."""
        return int(options.get("insert_small_file_limit", 0) or 0) > 0

    @staticmethod
    def unmodelled(options: dict[str, Any]) -> str | None:
        """What of this engine's config the simulator does not model, or None."""
        if options.get("mode", "manual") != "manual":
            return "MERGE_ON_READ clustering run by the engine itself (mode inline)"
        if not options.get("compaction_inline", True):
            return "MERGE_ON_READ compaction scheduled by the maintenance round (compaction_inline false)"
        return None

    def inserts(self, max_file: int) -> CowConfig | None:
        return None  # new base files rolled at the max file size (the table core's writer, no UpsertPartitioner)

    def max_file_size(self, max_file: int) -> int:
        return int(self.options.get("max_file_size", max_file))

    def log_insert_targets(self, slices: Iterable[SliceLogs], writes: Iterable[tuple[int, int]],
                           max_file: int) -> list[SmallFileTarget]:
        """The file groups that take a deltacommit's inserts into their logs, with the records each may
        take, as the engine chooses them (:meth:`engines.clustering_mor.engine.MorClusteringEngine._small_files`):
        ``slices`` the latest slices (no pending plan holds one: the simulator executes each plan as it
        schedules it), ``writes`` each completed write's (base-file bytes, records), newest first. Empty
        with ``insert_small_file_limit`` 0."""
        limit = self.insert_small_file_limit
        if limit <= 0:
            return []
        return small_file_targets(slices, limit, self.small_file_group_candidates, self.max_file_size(max_file),
                                  average_record_bytes(writes, limit), {})

    def upserts_by_merge(self) -> bool:
        return False

    def cleans_after_ingest(self) -> bool:
        return True  # the engine's after_commit: compaction when due, then the cleaner

    # -- the hooks the simulator's core calls ---------------------------------------------------------
    def recorded(self, e: Any, written: Iterable[FileSlice]) -> None:
        """Hudi's average record size of MOR inserts reads the writes' base files: keep each write's."""
        bases = [s for s in written if s.path.endswith(".parquet")]
        self.base_writes.append((sum([s.size_bytes for s in bases]), sum([s.num_rows for s in bases])))

    def inserts_to_logs(self, table: SimTable, e: Any, b: int, instant: str, counts: dict[str, int],
                        written: list[FileSlice]) -> dict[str, int]:
        """With ``insert_small_file_limit`` > 0, each partition's inserts first fill the chosen small
        file groups' new log files (the engine's choice, :meth:`log_insert_targets`)."""
        if not self.pads_inserts(self.options):
            return {}
        chosen = self._insert_targets(table, e, counts)
        if not chosen:
            return {}
        return {partition: self._pad(table, e, b, instant, partition, rows, chosen, written)
                for partition, rows in counts.items()}

    def _insert_targets(self, table: SimTable, e: Any, partitions: Iterable[str]) -> list[SmallFileTarget]:
        """The groups of ``partitions`` that take this deltacommit's inserts, as the engine chooses them."""
        slices = []
        for p in partitions:
            for fid, s in e.by_part.get(p, {}).items():
                logs = e.logs.get(s.path, ())
                slices.append(SliceLogs(p, fid, s.instant, s.file_name, s.size_bytes,
                                        tuple(path.rsplit("/", 1)[-1] for path, _, _ in logs),
                                        sum([size for _, size, _ in logs])))
        return self.log_insert_targets(slices, reversed(self.base_writes), table.max_file)

    @staticmethod
    def _pad(table: SimTable, e: Any, b: int, instant: str, partition: str, inserts: int,
             chosen: list[SmallFileTarget], written: list[FileSlice]) -> int:
        """``partition``'s share of batch ``b``'s inserts that the chosen groups take into new log files
        (each appended to ``written``); the rows taken."""
        start = 0
        for target, n in fill_groups(chosen, partition, inserts):
            s = e.by_part[partition][target.file_id]
            if table.with_rows:
                size = table.log_block_bytes(table.inserted_rows_of_batch(b, partition, start, n), instant,
                                             partition, s.file_id)
                data: pa.Table | None = pa.concat_tables([e.rows[s.path], table.query_rows_of_batch(partition, start, n)])
                stats = table.stats_of(data, partition)
            else:
                size = table.insert_log_bytes(n)
                data = None
                stats = table.merge_two(s.column_stats, table.estimated_stats(partition))
            grown = table.grow_slice(e, s, n, stats, data)
            written.append(table.add_log(e, grown, instant, n, size))
            start += n
        return start

    def write_corrections(self, table: SimTable, e: Any, b: int) -> bool:
        """Batch ``b``'s corrections: one deltacommit writing a new log file to each file group holding an
        updated key (:func:`engines.files.deltacommit.write_deltacommit`), sized by the real log format
        (exact with rows; else the group's expected share of the corrections, at least one), then
        compaction when due and the cleaner."""
        instant = table.new_instant(e)
        logs: list[tuple[FileSlice, int, int]] = []  # (slice, records, bytes)
        if table.with_rows:
            by_partition = table.corrections_by_partition(b)
            for partition in sorted(by_partition):
                upd = by_partition[partition]
                keys = upd.column(RECORD_KEY)
                for fid in sorted(e.by_part.get(partition, {})):
                    s = e.by_part[partition][fid]
                    mask = pc.is_in(keys, value_set=e.rows[s.path].column(RECORD_KEY))
                    if pc.any(mask).as_py():
                        rows = upd.filter(mask)
                        logs.append((s, rows.num_rows, table.log_block_bytes(rows, instant, partition, fid)))
        else:
            old = table.touched_estimated(e, b)
            total = sum([s.num_rows for s in e.live.values() if s.file_group not in e.fresh]) or 1
            for s in sorted(old, key=lambda s: s.file_group):
                n = max(1, round(table.update_count * s.num_rows / total))
                logs.append((s, n, table.correction_log_bytes(n)))
        written = [table.add_log(e, s, instant, n, size) for s, n, size in logs]
        e.gets += sum([len(e.by_part.get(p, ())) for p in {s.partition for s, _, _ in logs}])  # the key index
        wbytes = sum([s.size_bytes for s in written])
        dur = table.model.ingest_s(wbytes, len(written))
        table.record_commit(e, b, "upsert", "deltacommit", instant, written, dur, 0, 0, wbytes)
        table.ingest_event(e, b, len(written), 0, 0, 0)
        self.after_commit(table, e, b)
        return True

    def after_commit(self, table: SimTable, e: Any, b: int) -> None:
        """The MOR engine's after-commit: the inline compaction when due, then the cleaner."""
        self.deltas += 1
        record = None
        if self.compaction_inline and due(self.deltas, self.compaction):
            record = self._compact(table, e, b)
        if record is None:
            table.maybe_clean(e, b)
            return
        # the runner records what after_commit returned once it returned: the compaction's commit row
        # (and its maintenance row before the clean's) carries the table as the clean left it
        deleted = table.clean(e)
        record()
        table.log_clean(e, b, deleted)

    def _compact(self, table: SimTable, e: Any, b: int) -> Callable[[], None] | None:
        """One MERGE_ON_READ compaction (:func:`engines.mor_compaction.executor.execute`): every live
        slice with log files planned by the shared pure planner, each merged into a new base file of
        its file group (a new slice at the compaction's instant; the same rows, as the updates replace
        theirs); no instant when no slice has logs."""
        slices = [SliceLogs(s.partition, s.file_id, s.instant, s.path.rsplit("/", 1)[-1], s.size_bytes,
                            tuple(p.rsplit("/", 1)[-1] for p, _, _ in logs), sum([size for _, size, _ in logs]))
                  for s in e.live.values() if (logs := e.logs.get(s.path))]
        plan = plan_compaction(slices, self.compaction)
        if plan is None:
            return None
        instant = table.new_instant(e)
        self.deltas = 0
        written: list[FileSlice] = []
        merged_logs = bytes_read = 0
        for op in plan.operations:
            s = e.live[op.file_group]
            merged_logs += len(op.log_files)
            bytes_read += s.size_bytes + sum([size for _, size, _ in e.logs[s.path]])
            e.gets += 1 + len(op.log_files)
            data = e.rows.get(s.path)
            written.append(table.add_file(e, s.partition, s.file_id, instant, s.num_rows,
                                          self._compacted_size(table, e, s),
                                          s.column_stats if data is None else None, data))
        files_in = len(plan.operations) + merged_logs
        wbytes = sum([s.size_bytes for s in written])
        dur = table.model.maintenance_s(bytes_read, wbytes, files_in, len(written))
        # as the engine's row: bytes_read is not counted by the compaction (engines.mor_compaction.service)
        table.writer.add("maintenance", engine=e.name, batch=b, kind="compaction", instant=instant, mode="simulated",
                         duration_s=dur, files_in=files_in, files_out=len(written), bytes_read=0,
                         bytes_written=wbytes, records=sum([s.num_rows for s in written]), files_deleted=0,
                         details=json.dumps({"log_files_merged": merged_logs}))

        def record() -> None:
            table.record_commit(e, b, "compaction", "compaction", instant, written, dur, files_in, 0, wbytes)
            table.execution_event(e, b, files_in, len(written), table.row_groups_of(written))
        return record

    @staticmethod
    def _compacted_size(table: SimTable, e: Any, s: FileSlice) -> int:
        """The bytes of ``s`` compacted: its base file's, plus the rows its logs inserted (updates
        replace rows) at the bytes per record, the footer counting every row."""
        inserted = table.inserted_rows(e, s)
        if not inserted:
            return s.size_bytes
        base = s.num_rows - inserted
        return s.size_bytes - table.footer(e, base) + int(inserted * table.bpr) + table.footer(e, s.num_rows)

    def rewrite_runs(self, rows: int, n_out: int) -> list[int] | None:
        """Clustering (engines.clustering.mor): each slice's logs merged over its base, in plan order, written
        as outputs of ``ceil(rows / outputs)`` rows (``max_rows_per_file``,
        :func:`engines.clustering.mor.cluster_merged_group`); no empty output."""
        per = max(1, math.ceil(rows / max(1, n_out)))
        out = []
        while rows > 0:
            out.append(min(per, rows))
            rows -= out[-1]
        return out

    def rewrite_file_id(self, index: int, output: int, instant: str, partition: str) -> tuple[str | None, int]:
        """Clustering outputs named by the table core's writer, all written by the group's task."""
        return new_file_id(f"group-{index}", instant, partition, index, 0, output), index
