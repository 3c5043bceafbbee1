"""File-system view: file groups and file slices per partition, and the snapshot rules.

The snapshot as of a completed instant T is the latest committed slice (base instant <= T) of
each file group, minus file groups replaced by a completed replacecommit (or a completed
base-file compaction that recorded replaced files) at or before T, minus anything written by
pending or failed instants. Pending instants never hide anything. This mirrors Hudi's
``AbstractTableFileSystemView`` and hudi-rs (hudi-reader-contract.md §2.3–2.5).
"""

from __future__ import annotations

import gc
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from operator import attrgetter
from typing import NamedTuple

import fastavro

from engines.table.avro import (
    BASE_FILE_COMPACTION_PLAN,
    REQUESTED_REPLACE,
    decode_plan,
)
from engines.table.metadata import CommitMetadata
from engines.table.model import ColumnStats, FileSlice, parse_base_file_name
from engines.table.parquet_stats import column_stats_from_footer
from engines.table.storage import FileEntry, Storage
from engines.table.timeline import (
    CLEAN,
    COMPACTION,
    METAFOLDER,
    REPLACE,
    Instant,
    State,
    Timeline,
    TimelineError,
    state_file,
)


class AsOfError(ValueError):
    """An as-of instant that is not a completed instant of the table."""


class BaseFile(NamedTuple):
    """A base file found by the listing (a tuple: a view may hold 100,000s of them)."""

    partition: str
    file_id: str
    write_token: str
    instant: str
    path: str
    size: int


_META_PREFIX = METAFOLDER + "/"
_GROUP_ORDER = attrgetter("partition", "file_id", "instant")
_UNKNOWN: tuple[int, ColumnStats] = (0, {})  # a file no write stat describes


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a view builds its records.

    They hold no reference cycles, but the collection passes triggered while they are built keep
    walking the records built so far: 10-20% of the time of a view over 100,000 files."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class FileSystemView:
    """A listing of a table's base files interpreted against its timeline.

    ``read_footers`` fills row counts and min/max from Parquet footers for files whose commit
    metadata carries none (tables written by Apache Hudi).
    """

    def __init__(self, storage: Storage, timeline: Timeline, read_footers: bool = True) -> None:
        self.storage = storage
        self.timeline = timeline
        self.read_footers = read_footers
        self._metadata: dict[str, CommitMetadata] = {}
        self.base_files: list[BaseFile] = []
        self.other_files: list[FileEntry] = []
        with _gc_paused():
            for entry in storage.list("", recursive=True):
                path = entry.path
                if path.startswith(_META_PREFIX) or path == METAFOLDER:
                    continue
                partition, _, name = path.rpartition("/")
                parsed = parse_base_file_name(name)
                if parsed is None:
                    self.other_files.append(entry)
                    continue
                fid, token, instant = parsed
                self.base_files.append(BaseFile(partition, fid, token, instant, path, entry.size))
            # Every file group's files together, oldest instant first (ties in listing order).
            self._by_group = sorted(self.base_files, key=_GROUP_ORDER)
        self._data_instants = {i.timestamp: i for i in timeline.completed_data_instants()}
        first = timeline.instants[0].timestamp if timeline.instants else None
        self._pending_ts = {i.timestamp for i in timeline.pending()}
        self._timeline_start = first
        self._files_written: dict[str, tuple[int, ColumnStats]] | None = None

    # -- commit metadata --------------------------------------------------------------------
    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        if instant.timestamp not in self._metadata:
            name = self.timeline.file_name(instant, State.COMPLETED)
            data = self.timeline.read(instant, State.COMPLETED)
            self._metadata[instant.timestamp] = CommitMetadata.from_json(
                data, source=f"{self.timeline.folder}/{name}"
            )
        return self._metadata[instant.timestamp]

    def _written_files(self) -> dict[str, tuple[int, ColumnStats]]:
        """Path -> (rows written, column stats) from the commit metadata of every completed data instant."""
        if self._files_written is None:
            out: dict[str, tuple[int, ColumnStats]] = {}
            for inst in self._data_instants.values():
                out.update(self.commit_metadata(inst).written_files())
            self._files_written = out
        return self._files_written

    # -- visibility -------------------------------------------------------------------------
    def is_committed(self, instant: str, as_of: str | None = None) -> bool:
        if as_of is not None and instant > as_of:
            return False
        if instant in self._data_instants:
            return True
        # Slices older than the active timeline were committed by archived instants.
        return (
            instant not in self._pending_ts
            and self._timeline_start is not None
            and instant < self._timeline_start
        )

    def replaced_file_groups(self, as_of: str | None = None) -> dict[tuple[str, str], str]:
        """(partition, fileId) -> replacing instant, for completed replaces at or before ``as_of``."""
        out: dict[tuple[str, str], str] = {}
        for inst in self._data_instants.values():
            if inst.action not in (REPLACE, COMPACTION):
                continue
            if as_of is not None and inst.timestamp > as_of:
                continue
            for partition, ids in self.commit_metadata(inst).replaced_file_ids.items():
                for fid in ids:
                    out[(partition, fid)] = inst.timestamp
        return out

    def resolve_as_of(self, as_of: str | None) -> str | None:
        """``as_of`` if a reader can be served at it; :class:`AsOfError` naming why not otherwise."""
        if as_of is None:
            return None
        if as_of not in self._data_instants:
            known = ", ".join(sorted(self._data_instants)[-5:]) or "none"
            raise AsOfError(
                f"as-of instant {as_of} is not a completed commit of this table (latest: {known})"
            )
        retained = self.earliest_retained_by_cleaner()
        if retained is not None and as_of < retained[0]:
            raise AsOfError(
                f"as-of instant {as_of} is older than {retained[0]}, the earliest commit the last clean "
                f"({retained[1]}) retained: files it needs may have been cleaned (Hudi: 'Cleaner cleaned up "
                "the timestamp of interest'); retain more commits (hoodie.cleaner.commits.retained)"
            )
        return as_of

    def earliest_retained_by_cleaner(self) -> tuple[str, str] | None:
        """(earliestCommitToRetain, clean instant) of the last completed clean, when one is known.

        Our clean metadata is JSON; Apache Hudi's is an Avro container file (``HoodieCleanMetadata``).
        """
        cleans = self.timeline.completed([CLEAN])
        if not cleans:
            return None
        data = self.timeline.read(cleans[-1], State.COMPLETED)
        try:
            earliest = json.loads(data).get("earliestCommitToRetain")
        except (ValueError, AttributeError):
            try:
                earliest = next(fastavro.reader(io.BytesIO(data)), {}).get("earliestCommitToRetain")
            except Exception:  # noqa: BLE001 - unreadable clean metadata: no guard rather than a wrong one
                earliest = None
        return (earliest, cleans[-1].timestamp) if earliest else None

    def file_groups(self) -> dict[tuple[str, str], list[BaseFile]]:
        """(partition, fileId) -> its base files, oldest instant first."""
        groups: dict[tuple[str, str], list[BaseFile]] = {}
        for bf in self._by_group:
            groups.setdefault((bf.partition, bf.file_id), []).append(bf)
        return groups

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        """Latest committed slice of every visible file group, sorted by (partition, fileId)."""
        as_of = self.resolve_as_of(as_of)
        with _gc_paused():
            replaced = self.replaced_file_groups(as_of)
            written = self._written_files()
            visible: dict[str, bool] = {}  # instant -> committed as of as_of
            out = []
            partition = file_id = None
            done = False  # the current file group has its slice, or is replaced
            for bf in reversed(self._by_group):  # each group newest first
                if bf.file_id != file_id or bf.partition != partition:
                    partition, file_id = bf.partition, bf.file_id
                    done = bool(replaced) and (partition, file_id) in replaced
                if done:
                    continue
                instant = bf.instant
                committed = visible.get(instant)
                if committed is None:
                    committed = visible[instant] = self.is_committed(instant, as_of)
                if committed:
                    done = True
                    rows, stats = written.get(bf.path, _UNKNOWN)
                    if rows:
                        out.append(FileSlice(partition, file_id, instant, bf.path, bf.size, rows, dict(stats)))
                    else:
                        out.append(self._slice_from_footer(bf))
            out.reverse()
        return out

    def _slice_from_footer(self, bf: BaseFile) -> FileSlice:
        """A slice whose commit metadata records no rows: rows and min/max from its footer when ``read_footers``."""
        rows, stats = 0, {}
        if self.read_footers:
            md = self.storage.parquet_metadata(bf.path)
            rows, stats = md.num_rows, column_stats_from_footer(md)
        return FileSlice(bf.partition, bf.file_id, bf.instant, bf.path, bf.size, rows, stats)

    def partitions(self) -> list[str]:
        return sorted({b.partition for b in self.base_files})

    # -- pending table services -------------------------------------------------------------
    def pending_clustering_file_groups(self) -> dict[tuple[str, str], str]:
        """(partition, fileId) -> instant for every file group in a pending clustering plan."""
        out: dict[tuple[str, str], str] = {}
        for inst in self.timeline.pending([REPLACE]):
            record = decode_plan(
                REQUESTED_REPLACE,
                self.timeline.read(inst, State.REQUESTED),
                f".hoodie/{state_file(inst.timestamp, inst.action, State.REQUESTED)}",
            )
            plan = record.get("clusteringPlan") or {}
            for group in plan.get("clusteringGroups") or []:
                for fid in group.get("fileIds") or []:
                    key = (group.get("partitionPath") or "", fid)
                    if key in out:
                        raise TimelineError(
                            f"file group {key} is in two pending clustering plans: {out[key]} and {inst.timestamp}"
                        )
                    out[key] = inst.timestamp
        return out

    def pending_compaction_paths(self) -> dict[str, str]:
        """Base file path -> instant for every file in a pending base-file compaction plan."""
        out: dict[str, str] = {}
        for inst in self.timeline.pending([COMPACTION]):
            record = decode_plan(
                BASE_FILE_COMPACTION_PLAN,
                self.timeline.read(inst, State.REQUESTED),
                f".hoodie/{state_file(inst.timestamp, inst.action, State.REQUESTED)}",
            )
            for op in record.get("operations") or []:
                for path in op.get("baseFilePaths") or []:
                    out[path] = inst.timestamp
        return out

    def uncommitted_files(self) -> list[BaseFile]:
        """Base files whose instant is not completed (pending or failed writes)."""
        return [b for b in self.base_files if not self.is_committed(b.instant)]
