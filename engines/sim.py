"""What every engine kind's ``sim.py`` builds on: the simulator's questions
(:class:`bench.simulate.behaviour.SimBehaviour`) with the answers most kinds give.

It lives here, beside the engines, so that a kind's package never imports the simulator (an
engine's ``sim.py`` is loaded by the kinds registry, and the simulator loads it through that).
"""

from __future__ import annotations

from typing import Any, ClassVar

from engines.table.model import FileSlice

# one rewrite of a maintenance plan: (partition path, the file slices it reads, output files)
Group = tuple[str, list[FileSlice], int]


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
    merge_on_read: ClassVar[bool] = False  # deltacommits, corrections into log files, MOR compaction
    # its APPEND ingest names files as the engine's write tasks do (engines.spark.insert.insert_new_file_groups:
    # one task per partition value of the batch, by Spark's hash partitioning); False: the simulator's counter
    task_file_ids: ClassVar[bool] = False

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
