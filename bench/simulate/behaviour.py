"""What the simulator asks an engine kind: the one protocol its ``engines/<kind>/sim.py`` implements.

The simulator's core (:mod:`bench.simulate.simulator`) keeps the metadata-only table, the cleaner,
the cost model and the results rows; everything that differs between engine kinds is answered
here, by the kind's own package, next to the engine it mirrors. A kind is simulated when its
registry entry (:mod:`engines.kinds`) names a ``sim`` class; the class is built once per engine
of the scenario from its resolved planner config and its engine-level config keys. Each kind's
class builds on :class:`engines.sim.KindSim` (the shared fields and the answers most kinds give),
which lives below ``bench``: an engine package never imports the simulator.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Protocol

from engines.cow_baseline.config import CowConfig
from engines.kinds import kind_of
from engines.sim import Group, KindSim, SimTable
from engines.table.model import FileSlice

__all__ = ["Group", "KindSim", "SimBehaviour", "SimTable", "behaviour_class", "behaviour_of"]


class SimBehaviour(Protocol):
    """An engine kind's behaviour on a simulated table (built as ``Cls(planner, options)``)."""

    writes_batches_once: ClassVar[bool]  # each batch written once as new files: the runner's batch-size reference
    maintenance_kind: ClassVar[str]  # the maintenance row's kind (``compaction``, ``clustering``)
    maintenance_action: ClassVar[str]  # the timeline action its maintenance commits
    ingest_action: ClassVar[str]  # the timeline action of its ingest (commit; MERGE_ON_READ: deltacommit)
    # its APPEND ingest names files as the engine's write tasks do (one per partition value of the batch)
    task_file_ids: ClassVar[bool]
    writer_file_ids: ClassVar[bool]  # its ingest's new base files named as the table core's writer names them
    prunes_by_column_stats: ClassVar[bool]  # a query prunes its files by the commit metadata's column ranges

    def inserts(self, max_file: int) -> CowConfig | None:
        """The UpsertPartitioner config its ingest assigns inserts by (None: APPEND, files rolled at bytes)."""
        ...

    def ingest_order(self) -> list[str]:
        """The columns an APPEND ingest sorts a batch by (empty: the record key)."""
        ...

    def upserts_by_merge(self) -> bool:
        """Whether a batch's corrections are one copy-on-write upsert commit rewriting every file group
        that holds an updated key (:mod:`bench.simulate.corrections`); False: none the simulator models."""
        ...

    def cleans_after_ingest(self) -> bool:
        """Whether the cleaner runs after every commit of the writer, ingest and upsert (Hudi's automatic clean)."""
        ...

    def maintains(self) -> bool:
        """Whether a maintenance step plans anything at all (False: the control)."""
        ...

    def plan(self, candidates: list[FileSlice]) -> list[Group]:
        """The rewrites of one maintenance step over ``candidates``, from the engine's pure planner."""
        ...

    def rewrite_sort_columns(self) -> list[str]:
        """The columns a rewrite sorts its rows by (before the record key); empty: commit order."""
        ...

    def deletes_inputs_at_once(self) -> bool:
        """Whether a rewrite deletes the files it replaced at once (else they wait for the cleaner)."""
        ...

    def rewrite_file_id_prefix(self, index: int) -> str | None:
        """The fileId prefix of the ``index``-th rewrite's outputs as the engine names them (None: a counter)."""
        ...

    def cleans_after_maintenance(self) -> bool:
        """Whether the cleaner deletes files after a maintenance step (else it runs with nothing to clean)."""
        ...

    @staticmethod
    def unmodelled(options: dict[str, Any]) -> str | None:
        """What of an engine's config the simulator does not model, or None."""
        ...

    @staticmethod
    def pads_inserts(options: dict[str, Any]) -> bool:
        """Whether an engine of the kind with config ``options`` appends inserts to small file groups' logs."""
        ...

    # The hooks the core calls on every kind at its points of the replay, with itself as the table
    # (engines.sim.SimTable); engines.sim.KindSim's are what a copy-on-write kind does.
    def inserts_to_logs(self, table: SimTable, e: Any, b: int, instant: str, counts: dict[str, int],
                        written: list[FileSlice]) -> dict[str, int]:
        """The inserts of batch ``b`` an APPEND ingest writes into existing groups' log files, per partition."""
        ...

    def after_commit(self, table: SimTable, e: Any, b: int) -> None:
        """What the writer does after each ingest and upsert commit (the cleaner, a MOR compaction)."""
        ...

    def write_corrections(self, table: SimTable, e: Any, b: int) -> bool:
        """Batch ``b``'s corrections written the kind's own way (True), or False: the core's merge."""
        ...

    def recorded(self, e: Any, written: Iterable[FileSlice]) -> None:
        """A commit of the engine's was recorded with the files ``written``."""
        ...

    def rewrite_runs(self, rows: int, n_out: int) -> list[int] | None:
        """Rows per output of a rewrite, in plan order; None: near-equal runs in commit order."""
        ...

    def rewrite_file_id(self, index: int, output: int, instant: str, partition: str) -> tuple[str | None, int]:
        """The fileId (None: the simulator's counter) and write task of a rewrite's output."""
        ...


def behaviour_class(kind: str) -> Any:
    """The ``sim`` class of ``kind``'s registry entry; :class:`engines.kinds.UnknownKind` for a kind
    the registry does not name, ``ValueError`` for one it does not simulate."""
    entry = kind_of(kind)
    if not entry.simulated:
        raise ValueError(f"engine kind {kind!r} is not simulated")
    return entry.load("sim")


def behaviour_of(kind: str, planner: Any, options: dict[str, Any]) -> SimBehaviour:
    """The simulated behaviour of one engine of ``kind`` (its resolved planner config and options)."""
    return behaviour_class(kind)(planner, options)
