"""What every engine kind's ``sim.py`` builds on: the simulator's questions
(:class:`bench.simulate.behaviour.SimBehaviour`) with the answers most kinds give.

It lives here, beside the engines, so that a kind's package never imports the simulator (an
engine's ``sim.py`` is loaded by the kinds registry, and the simulator loads it through that).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Protocol

from engines.table.model import FileSlice, new_file_id

# one rewrite of a maintenance plan: (partition path, the file slices it reads, output files)
Group = tuple[str, list[FileSlice], int]


class SimTable(Protocol):
    """What a kind's hooks may do on the simulator's metadata-only table (the simulator,
    :class:`bench.simulate.simulator.Simulator`, passes itself): take an instant, add a base or a log
    file, record a commit, run the cleaner, and ask the workload's rows and the log format's bytes."""

    writer: Any  # the results' rows (``writer.add(table, **row)``)
    model: Any  # the cost model (``ingest_s``, ``maintenance_s``)
    spec: Any  # the workload
    bpr: float  # bytes per record of a base file
    max_file: int  # the scenario's max file size (bytes)
    with_rows: bool  # exact mode: files keep their rows' query columns
    update_count: int  # this batch's corrections

    def new_instant(self, e: Any) -> str: ...
    def add_file(self, e: Any, partition: str, file_id: str, instant: str, rows: int, size: int,
                 stats: dict | None = None, data: Any = None, task: int = 0) -> FileSlice: ...
    def add_log(self, e: Any, s: FileSlice, instant: str, records: int, size: int) -> FileSlice: ...
    def grow_slice(self, e: Any, s: FileSlice, inserted: int, stats: dict, data: Any) -> FileSlice: ...
    def inserted_rows(self, e: Any, s: FileSlice) -> int: ...
    def record_commit(self, e: Any, batch: int, kind: str, action: str, instant: str, written: list[FileSlice],
                      duration: float, replaced: int, batch_bytes: int, wbytes: int | None = None) -> None: ...
    def ingest_event(self, e: Any, b: int, written: int, merged: int, row_groups_merged: int,
                     partitions_new: int) -> None: ...
    def execution_event(self, e: Any, b: int, files_in: int, files_out: int, row_groups_in: int) -> None: ...
    def clean(self, e: Any) -> int: ...
    def log_clean(self, e: Any, b: int, deleted: int) -> None: ...
    def maybe_clean(self, e: Any, b: int) -> None: ...
    def footer(self, e: Any, rows: int) -> int: ...
    def row_groups_of(self, slices: list[FileSlice]) -> int: ...
    def estimated_stats(self, partition: str) -> dict: ...
    def stats_of(self, data: Any, partition: str) -> dict: ...
    def merge_two(self, a: Any, b: Any) -> dict: ...
    def inserted_rows_of_batch(self, b: int, partition: str, start: int, n: int) -> Any: ...
    def query_rows_of_batch(self, partition: str, start: int, n: int) -> Any: ...
    def corrections_by_partition(self, b: int) -> dict[str, Any]: ...
    def touched_estimated(self, e: Any, b: int) -> list[FileSlice]: ...
    def log_block_bytes(self, rows: Any, instant: str, partition: str, file_id: str) -> int: ...
    def correction_log_bytes(self, records: int) -> int: ...
    def insert_log_bytes(self, records: int) -> int: ...


class KindSim:
    """What every kind's ``sim.py`` shares: built from its planner config and options, and the
    answers most kinds give (a subclass overrides only where its kind differs). By default a kind
    writes each batch once as new files (APPEND, rolled at bytes) in record-key order; a maintenance
    step plans nothing, is a ``compaction`` committed as a ``commit``, rewrites rows by the
    engine's ``sort_columns``, leaves the replaced files to the cleaner and cleans after it; the
    cleaner does not run after an ingest. A batch's corrections (``workload.update_fraction``) are one
    copy-on-write upsert commit that rewrites every file group holding an updated key
    (:func:`engines.cow_baseline.upsert.merge_write`, which every copy-on-write kind upserts through)."""

    writes_batches_once: ClassVar[bool] = True
    maintenance_kind: ClassVar[str] = "compaction"
    maintenance_action: ClassVar[str] = "commit"
    ingest_action: ClassVar[str] = "commit"  # the timeline action of its ingest (MERGE_ON_READ: deltacommit)
    # its APPEND ingest names files as the engine's write tasks do (engines.spark.insert.insert_new_file_groups:
    # one task per partition value of the batch, by Spark's hash partitioning); False: the simulator's counter
    task_file_ids: ClassVar[bool] = False
    # its ingest's new base files are named as the table core's writer names them (task 0)
    writer_file_ids: ClassVar[bool] = False
    # a query prunes its files by the commit metadata's column ranges (False: every file kept, as the
    # MERGE_ON_READ reader's, whose writes record none; row groups are still pruned by the footers)
    prunes_by_column_stats: ClassVar[bool] = True

    def __init__(self, planner: Any, options: dict[str, Any]) -> None:
        self.planner = planner
        self.options = options

    def inserts(self, max_file: int) -> Any:  # noqa: ANN401 - a kind's insert sizing; the base imports no kind
        """The UpsertPartitioner sizing (``engines.cow_baseline.config.CowConfig``) the kind's inserts
        go through, or None: APPEND, rolled at bytes."""
        return None

    def ingest_order(self) -> list[str]:
        return []

    def upserts_by_merge(self) -> bool:
        """Whether its upsert is the copy-on-write merge (each file group holding an updated key
        rewritten whole as a new slice); False: it has no upsert the simulator models."""
        return True

    def cleans_after_ingest(self) -> bool:
        return False

    def maintains(self) -> bool:
        return True

    def plan(self, candidates: list[FileSlice]) -> list[Group]:
        return []

    def rewrite_sort_columns(self) -> list[str]:
        return list(self.options.get("sort_columns", ()))

    def deletes_inputs_at_once(self) -> bool:
        return False

    def rewrite_file_id_prefix(self, index: int) -> str | None:
        """The fileId prefix the engine's ``index``-th rewrite of a maintenance step gives its outputs
        (output ``o`` written by task ``o``, its first file), or None: the simulator's counter names them."""
        return None

    def cleans_after_maintenance(self) -> bool:
        return True

    @staticmethod
    def unmodelled(options: dict[str, Any]) -> str | None:
        """What of an engine's config ``options`` the simulator does not model (it then refuses the
        engine, naming it), or None."""
        return None

    @staticmethod
    def pads_inserts(options: dict[str, Any]) -> bool:
        """Whether an engine of the kind with config ``options`` appends inserts to small file groups'
        log files (its ingest commits then write log blocks, not Parquet bytes per record)."""
        return False

    # -- hooks the simulator's core calls on every kind (here: what a copy-on-write kind does) --------
    def inserts_to_logs(self, table: SimTable, e: Any, b: int, instant: str, counts: dict[str, int],
                        written: list[FileSlice]) -> dict[str, int]:
        """Before an APPEND ingest writes batch ``b``'s new base files: the inserts it writes into
        existing file groups' log files instead (each log appended to ``written``), as rows taken per
        partition; the rest go to new base files. None here."""
        return {}

    def after_commit(self, table: SimTable, e: Any, b: int) -> None:
        """What the writer does after each of its ingest and upsert commits: the cleaner when the kind
        cleans after every commit (Hudi's automatic clean)."""
        if self.cleans_after_ingest():
            table.maybe_clean(e, b)

    def write_corrections(self, table: SimTable, e: Any, b: int) -> bool:
        """Batch ``b``'s corrections written the kind's own way (True), or False: the core's copy-on-write
        merge when :meth:`upserts_by_merge`, else the simulator refuses the engine."""
        return False

    def recorded(self, e: Any, written: Iterable[FileSlice]) -> None:
        """A commit of the engine's was recorded with the files ``written`` (nothing to keep here)."""
        return None

    def rewrite_runs(self, rows: int, n_out: int) -> list[int] | None:
        """The rows of each output of a rewrite of ``rows`` rows into ``n_out`` files, in the plan's slice
        order; None: near-equal runs of the inputs in commit order (every copy-on-write rewrite)."""
        return None

    def rewrite_file_id(self, index: int, output: int, instant: str, partition: str) -> tuple[str | None, int]:
        """The fileId and write task of output ``output`` of the ``index``-th rewrite of a maintenance
        step (fileId None: the simulator's counter names it): :meth:`rewrite_file_id_prefix`'s name,
        written by task ``output``."""
        prefix = self.rewrite_file_id_prefix(index)
        return (new_file_id(prefix, instant, partition, output, 0, 0) if prefix is not None else None), output
