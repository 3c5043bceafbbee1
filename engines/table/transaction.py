"""Table transactions without Spark: the result of a commit, leftover reconciliation and the
commit point, shared by every engine (DESIGN.md §2).

A write runs as: lock → ``<t>.commit.requested`` → ``<t>.inflight`` → files written → files of
``t`` not in the write stats removed (a retried task's leftovers; Hudi does the same from its
markers) → ``<t>.commit`` written atomically. Nothing is visible before the last step.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from engines.table.metadata import CommitMetadata
from engines.table.model import WriteStat, parse_base_file_name
from engines.table.table import HudiTable
from engines.table.timeline import REPLACE, Instant

_COMMIT_EXTRA: ContextVar[dict[str, str] | None] = ContextVar("commit_extra", default=None)


@contextmanager
def commit_extra_metadata(extra: dict[str, str]) -> Iterator[None]:
    """Every commit this thread completes inside the block carries ``extra`` in its
    ``extraMetadata`` (a streaming writer's checkpoint, as Hudi's streaming sink records its batch
    id there); commits of other threads (async table services) do not."""
    token = _COMMIT_EXTRA.set({**(_COMMIT_EXTRA.get() or {}), **extra})
    try:
        yield
    finally:
        _COMMIT_EXTRA.reset(token)


def current_commit_extra() -> dict[str, str]:
    """The ``extraMetadata`` :func:`commit_extra_metadata` set for this thread (empty outside it)."""
    return dict(_COMMIT_EXTRA.get() or {})


class EmptyBatchError(ValueError):
    """A batch with no rows."""


@dataclass
class CommitResult:
    instant: str
    action: str
    operation: str
    stats: list[WriteStat]
    replaced: dict[str, list[str]]

    @property
    def bytes_written(self) -> int:
        return sum(s.file_size for s in self.stats)

    @property
    def records_written(self) -> int:
        return sum(s.num_writes for s in self.stats)


def remove_uncommitted_leftovers(table: HudiTable, instant: str, stats: list[WriteStat]) -> int:
    """Delete files named with ``instant`` in the touched partitions that the stats do not list,
    and the instant's temporary directory (sorted runs of a rewrite)."""
    table.storage.delete_dir(f".hoodie/.temp/{instant}")
    keep = {s.path for s in stats}
    removed = 0
    for partition in sorted({s.partition for s in stats}):
        for entry in table.storage.list(partition, sizes=False):  # names only
            parsed = parse_base_file_name(entry.path.rsplit("/", 1)[-1])
            if parsed and parsed[2] == instant and entry.path not in keep:
                table.storage.delete(entry.path, missing_ok=True)
                removed += 1
    return removed


def commit_write(table: HudiTable, instant: Instant, stats: list[WriteStat], operation: str,
                 schema: str | None, replaced: dict[str, list[str]] | None = None,
                 extra: dict[str, str] | None = None) -> CommitResult:
    """Reconcile leftovers and write the completed instant (the commit point)."""
    remove_uncommitted_leftovers(table, instant.timestamp, stats)
    meta = CommitMetadata(operation_type=operation, write_stats=stats, schema=schema,
                          replaced_file_ids=replaced or {}, extra={**(_COMMIT_EXTRA.get() or {}), **(extra or {})})
    table.complete(instant, meta, replace=instant.action == REPLACE or bool(replaced))
    return CommitResult(instant.timestamp, instant.action, operation, stats, replaced or {})
