"""File-system view: file groups and file slices per partition, and the snapshot rules.

The snapshot as of a completed instant T is the latest committed slice (base instant <= T) of
each file group, minus file groups replaced by a completed replacecommit (or a completed
base-file compaction that recorded replaced files) at or before T, minus anything written by
pending or failed instants. Pending instants never hide anything. This mirrors Hudi's
``AbstractTableFileSystemView`` and hudi-rs (hudi-reader-contract.md §2.3–2.5).

On a local file system the listing stats no file: a base file's size is the ``fileSizeInBytes``
the completed commit that wrote it recorded (base files never change once committed), and only
files no write stat describes (pending, failed or archived writes; other files) are stat-ed.
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
from engines.table.metadata import CommitMetadata, MetadataError
from engines.table.model import ColumnStats, FileSlice, file_slice, parse_base_file_name
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
_INSTANT = attrgetter("instant")
_UNKNOWN: tuple[int, ColumnStats, None] = (0, {}, None)  # a file no write stat describes


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
        self._data_instants = {i.timestamp: i for i in timeline.completed_data_instants()}
        first = timeline.instants[0].timestamp if timeline.instants else None
        self._pending_ts = {i.timestamp for i in timeline.pending()}
        self._timeline_start = first
        self._files_written: dict[str, tuple[int, ColumnStats, int | None]] | None = None
        self.base_files: list[BaseFile] = []
        self.other_files: list[FileEntry] = []
        # partition -> fileId -> its base file, or its base files oldest instant first (ties in listing order)
        self._groups: dict[str, dict[str, BaseFile | list[BaseFile]]] = {}
        with _gc_paused():
            self._load(storage.list("", recursive=True, sizes=False))

    def _load(self, entries: list[FileEntry]) -> None:
        """Base files and file groups from a listing; sizes it lacks from write stats, else a stat."""
        written = self._recorded() if any(e.size is None for e in entries) else {}
        base_files, other_files, groups = self.base_files, self.other_files, self._groups
        unsorted: list[list[BaseFile]] = []
        new_base_file = tuple.__new__  # BaseFile(...) without the namedtuple's Python-level __new__
        by_fid: dict[str, BaseFile | list[BaseFile]] = {}
        last_partition = None
        for path, size, mtime_ns in entries:
            if path.startswith(_META_PREFIX) or path == METAFOLDER:
                continue
            partition, _, name = path.rpartition("/")
            parsed = parse_base_file_name(name)
            if parsed is None:
                entry = self.storage.entry(path) if size is None else FileEntry(path, size, mtime_ns)
                if entry is not None:  # else deleted since it was listed
                    other_files.append(entry)
                continue
            if size is None:
                size = rec[2] if (rec := written.get(path)) is not None else None
                if size is None:
                    if (found := self.storage.entry(path)) is None:
                        continue
                    size = found.size
            file_id, token, instant = parsed
            bf = new_base_file(BaseFile, (partition, file_id, token, instant, path, size))
            base_files.append(bf)
            if partition != last_partition:
                by_fid = groups.setdefault(partition, {})
                last_partition = partition
            # a group of one file is the file itself: most groups, and no list each
            files = by_fid.get(file_id)
            if files is None:
                by_fid[file_id] = bf
            elif type(files) is list:
                files.append(bf)
                if instant < files[-2][3]:
                    unsorted.append(files)  # maybe more than once: sorting a sorted list is cheap
            else:
                by_fid[file_id] = files = [files, bf]
                if instant < files[0][3]:
                    unsorted.append(files)
        for files in unsorted:
            files.sort(key=_INSTANT)  # stable: ties stay in listing order

    def _recorded(self) -> dict[str, tuple[int, ColumnStats, int | None]]:
        """:meth:`_written_files`, or nothing when some commit metadata cannot be read.

        Then every file is stat-ed and :meth:`snapshot` reports the unreadable instant, as before.
        """
        try:
            return self._written_files()
        except (MetadataError, TimelineError):
            return {}

    # -- commit metadata --------------------------------------------------------------------
    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        if instant.timestamp not in self._metadata:
            name = self.timeline.file_name(instant, State.COMPLETED)
            data = self.timeline.read(instant, State.COMPLETED)
            self._metadata[instant.timestamp] = CommitMetadata.from_json(
                data, source=f"{self.timeline.folder}/{name}"
            )
        return self._metadata[instant.timestamp]

    def _written_files(self) -> dict[str, tuple[int, ColumnStats, int | None]]:
        """Path -> (rows written, column stats, file size) from the commit metadata of every completed data instant."""
        if self._files_written is None:
            out: dict[str, tuple[int, ColumnStats, int | None]] = {}
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
        """(partition, fileId) -> its base files, oldest instant first; sorted by (partition, fileId)."""
        out: dict[tuple[str, str], list[BaseFile]] = {}
        for partition, by_fid in sorted(self._groups.items()):
            for file_id in sorted(by_fid):
                files = by_fid[file_id]
                out[(partition, file_id)] = files[:] if type(files) is list else [files]
        return out

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        """Latest committed slice of every visible file group, sorted by (partition, fileId)."""
        as_of = self.resolve_as_of(as_of)
        with _gc_paused():
            replaced = self.replaced_file_groups(as_of)
            written = self._written_files()
            visible: dict[str, bool] = {}  # instant -> committed as of as_of
            out = []
            for partition, by_fid in sorted(self._groups.items()):
                for file_id in sorted(by_fid):
                    if replaced and (partition, file_id) in replaced:
                        continue
                    files = by_fid[file_id]
                    for bf in reversed(files) if type(files) is list else (files,):  # newest first
                        instant = bf[3]
                        committed = visible.get(instant)
                        if committed is None:
                            committed = visible[instant] = self.is_committed(instant, as_of)
                        if committed:
                            path = bf[4]
                            rows, stats, _ = written.get(path, _UNKNOWN)
                            if rows:
                                out.append(file_slice(partition, file_id, instant, path, bf[5], rows, dict(stats)))
                            else:
                                out.append(self._slice_from_footer(bf))
                            break
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
