"""File-system view: file groups and file slices per partition, and the snapshot rules.

The snapshot as of a completed instant T is the latest committed slice (base instant <= T) of
each file group, minus file groups replaced by a completed replacecommit (or a completed
base-file compaction that recorded replaced files) at or before T, minus anything written by
pending or failed instants. Pending instants never hide anything. This mirrors Hudi's
``AbstractTableFileSystemView`` and hudi-rs (hudi-reader-contract.md §2.3–2.5).

On a local file system the listing stats no file: a base file's size is the ``fileSizeInBytes``
the completed commit that wrote it recorded (base files never change once committed), and only
files no write stat describes (pending, failed or archived writes; other files) are stat-ed.

The view reads no commit metadata: the timeline hands it the write stats
(:meth:`Timeline.written_files`) and the file groups a snapshot excludes
(:meth:`Timeline.replaced_file_groups`), as hudi-rs's table hands its file-system view the
replaced file groups (``get_file_slices_internal``); pending plans are read by
:mod:`engines.table.plans`.

MERGE_ON_READ: log files (``.<fileId>_<baseInstant>.log.<v>_<token>``, hidden names the listing
keeps apart from base files) join the slice of their file group whose base instant they name
(:meth:`FileSystemView.merge_slices`); which of their blocks a reader applies is decided by the
log reader against the timeline (:mod:`engines.table.mor`), as hudi-rs's file-group reader does.

A view may cover 100,000s of files, so it keeps them column by column per partition folder
(lists of file ids, instants, paths, sizes) and the write stats behind one path index, and
works on whole columns where it can: file names are parsed with one regular-expression pass per
folder, and :class:`BaseFile` records are built only when :attr:`FileSystemView.base_files`
or :meth:`FileSystemView.file_groups` is asked for.
"""

from __future__ import annotations

import gc
import io
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from operator import attrgetter
from typing import NamedTuple

import fastavro

from engines.table import plans
from engines.table.logfile import LogFile, LogFileName
from engines.table.metadata import MetadataError
from engines.table.model import FileSlice, file_slices, parse_base_file_name
from engines.table.parquet_stats import column_stats_from_footer
from engines.table.storage import FileEntry, Storage
from engines.table.timeline import (
    CLEAN,
    COMPACTION,
    DATA_ACTIONS,
    METAFOLDER,
    REPLACE,
    State,
    Timeline,
    TimelineError,
    WrittenFiles,
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


class MergeSlice(NamedTuple):
    """A MERGE_ON_READ file slice: its base file (None for a group of log files only) and its
    log files, oldest version first."""

    partition: str
    file_id: str
    base_instant: str
    base: FileSlice | None
    logs: tuple[LogFile, ...]

    @property
    def file_group(self) -> tuple[str, str]:
        return (self.partition, self.file_id)

    @property
    def log_bytes(self) -> int:
        return sum(log.size for log in self.logs)


class _Folder(NamedTuple):
    """The base files of one partition folder, column by column, in listing (name) order."""

    partition: str
    file_ids: list[str]
    instants: list[str]
    paths: list[str]
    sizes: list[int]
    written: list[int | None] | None  # the index of each one's write stat in WrittenFiles, if looked up


# <fileId>_<writeToken>_<instant>.parquet, or any other name; each followed by "/" (parse_base_file_names)
_BASE_NAMES = re.compile(r"(?:([^_/.][^_/]*+)_[^_/]++_(\d++)\.parquet|[^/]*+)/")
_META_PREFIX = METAFOLDER + "/"
_FILE_ID = attrgetter("partition", "file_id")
_INSTANT = attrgetter("instant")
_PARTITION = attrgetter("partition")
_PATH = attrgetter("path")
_FILE_GROUP_OF = attrgetter("partition", "file_id")


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


def parse_base_file_names(names: list[str]) -> tuple[list[str], list[str]] | None:
    """(fileIds, instants) of ``names`` if :func:`parse_base_file_name` parses them all, else None.

    One regular-expression pass over all of them (the write tokens are left unread). None also
    when the expression rejects a name that function accepts (``\\d`` is narrower than
    ``str.isdigit``): callers then parse one by one.
    """
    if not names:
        return [], []
    file_ids, instants = map(list, zip(*_BASE_NAMES.findall("/".join(names) + "/"), strict=True))
    return None if "" in file_ids else (file_ids, instants)  # no file name contains "/"


class FileSystemView:
    """A listing of a table's base files interpreted against its timeline.

    ``read_footers`` fills row counts and min/max from Parquet footers for files whose commit
    metadata carries none (tables written by Apache Hudi).
    """

    def __init__(self, storage: Storage, timeline: Timeline, read_footers: bool = True) -> None:
        self.storage = storage
        self.timeline = timeline
        self.read_footers = read_footers
        self._data_instants = {i.timestamp: i for i in timeline.completed_data_instants()}
        # Hudi's rule (containsOrBeforeTimelineStarts): a slice is committed by an archived instant
        # when older than the first *write* instant of the active timeline. Hudi 1.2 archives commits
        # but can keep older cleans active, so the first instant of any action would hide them.
        writes = [i.timestamp for i in timeline.instants if i.action in DATA_ACTIONS]
        first = writes[0] if writes else (timeline.instants[0].timestamp if timeline.instants else None)
        self._pending_ts = {i.timestamp for i in timeline.pending()}
        self._timeline_start = first
        self.other_files: list[FileEntry] = []
        self._folders: list[_Folder] = []  # sorted by partition
        with _gc_paused():
            self._load()

    def _load(self) -> None:
        """The listing, folder by folder: base files (sizes the listing lacks from write stats, else a stat)."""
        listed = self.storage.list_names("", recursive=True)
        if listed is None:  # a listing with sizes
            by_folder: dict[str, list[FileEntry]] = {}
            for e in self.storage.list("", recursive=True):
                by_folder.setdefault(e.path[: e.path.rfind("/") + 1], []).append(e)
            for prefix, entries in by_folder.items():
                self._add_folder(prefix, [e.path[len(prefix):] for e in entries], entries, None)
        else:
            written = self._recorded()
            for prefix, names in listed:
                self._add_folder(prefix, names, None, written)
        self._folders.sort(key=_PARTITION)
        self.other_files.sort(key=_PATH)

    def _add_folder(self, prefix: str, names: list[str], entries: list[FileEntry] | None,
                    written: WrittenFiles | None) -> None:
        """The files of one folder (``prefix`` ends with "/" but at the base).

        ``entries`` when the listing has sizes, else the sizes come from ``written`` (None when some
        commit metadata is unreadable) or a stat."""
        if prefix.startswith(_META_PREFIX):
            return
        if "/." in "/" + "/".join(names):  # hidden files (Hudi's .hoodie_partition_metadata) are no base files
            shown = []
            for i, name in enumerate(names):
                if not name.startswith("."):
                    shown.append(i)
                    continue
                entry = entries[i] if entries is not None else self.storage.entry(prefix + name)
                if entry is not None and entry.path != METAFOLDER:  # else deleted since it was listed
                    self.other_files.append(entry)
            names = [names[i] for i in shown]
            entries = None if entries is None else [entries[i] for i in shown]
            if not names:
                return
        paths = list(map(prefix.__add__, names))
        columns = parse_base_file_names(names)
        stat_ids = None if written is None else list(map(written.index.get, paths))
        if entries is not None:
            sizes: list[int | None] | None = [e.size for e in entries]
        else:
            sizes = None if stat_ids is None or None in stat_ids else list(map(written.sizes.__getitem__, stat_ids))
        if columns is not None and sizes is not None and None not in sizes:
            self._folders.append(_Folder(prefix[:-1], *columns, paths, sizes, stat_ids))
            return
        # other files, or base files no write stat describes: one by one
        base: list[tuple[str, str, str, int, int | None]] = []
        for i, (name, path) in enumerate(zip(names, paths, strict=True)):
            parsed = parse_base_file_name(name)
            stat_id = None if stat_ids is None else stat_ids[i]
            if entries is not None:
                size = entries[i].size
            else:
                size = None if stat_id is None else written.sizes[stat_id]
            if parsed is None or size is None:
                entry = entries[i] if entries is not None else self.storage.entry(path)
                if entry is None:
                    continue  # deleted since it was listed
                if parsed is None:
                    self.other_files.append(entry)
                    continue
                size = entry.size
            base.append((parsed[0], parsed[2], path, size, stat_id))
        if base:
            file_ids, instants, paths, sizes, kept_ids = map(list, zip(*base, strict=True))
            self._folders.append(_Folder(prefix[:-1], file_ids, instants, paths, sizes,
                                         None if stat_ids is None else kept_ids))

    def _recorded(self) -> WrittenFiles | None:
        """:meth:`_written_files`, or None when some commit metadata cannot be read.

        Then every file is stat-ed and :meth:`snapshot` reports the unreadable instant, as before.
        """
        try:
            return self._written_files()
        except (MetadataError, TimelineError):
            return None

    def _written_files(self) -> WrittenFiles:
        """The write stats of every completed data instant, as the timeline hands them over."""
        return self.timeline.written_files()

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

    @cached_property
    def base_files(self) -> list[BaseFile]:
        """Every base file listed, sorted by path."""
        out = []
        for f in self._folders:
            name_at = len(f.partition) + 1 if f.partition else 0
            for file_id, instant, path, size in zip(f.file_ids, f.instants, f.paths, f.sizes, strict=True):
                token = path[name_at + len(file_id) + 1 : -len(instant) - 9]  # <fileId>_<token>_<instant>.parquet
                out.append(BaseFile(f.partition, file_id, token, instant, path, size))
        out.sort(key=_PATH)
        return out

    def file_groups(self) -> dict[tuple[str, str], list[BaseFile]]:
        """(partition, fileId) -> its base files, oldest instant first; sorted by (partition, fileId)."""
        out: dict[tuple[str, str], list[BaseFile]] = {}
        for bf in sorted(sorted(self.base_files, key=_INSTANT), key=_FILE_ID):  # stable: ties in listing order
            out.setdefault((bf.partition, bf.file_id), []).append(bf)
        return out

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        """Latest committed slice of every visible file group, sorted by (partition, fileId)."""
        as_of = self.resolve_as_of(as_of)
        with _gc_paused():
            replaced: dict[str, set[str]] = {}
            for partition, file_id in self.timeline.replaced_file_groups(as_of):
                replaced.setdefault(partition, set()).add(file_id)
            written = self._written_files()
            committed: dict[str, bool] = {}  # instant -> committed as of as_of
            out: list[FileSlice] = []
            for folder in self._folders:
                for instant in set(folder.instants).difference(committed):
                    committed[instant] = self.is_committed(instant, as_of)
                out += self._latest_slices(folder, committed, replaced.get(folder.partition), written)
        return out

    def _latest_slices(self, folder: _Folder, committed: dict[str, bool], replaced: set[str] | None,
                       written: WrittenFiles) -> list[FileSlice]:
        """The latest committed slice of each file group of ``folder`` not ``replaced``, sorted by fileId."""
        file_ids, instants = folder.file_ids, folder.instants
        if replaced is None and len(set(file_ids)) == len(file_ids) and all(map(committed.__getitem__, instants)):
            chosen = None  # every file is the latest slice of its file group: the usual case
        else:
            latest: dict[str, int] = {}  # fileId -> index of its newest committed file; ties: the last listed
            for i, (file_id, instant) in enumerate(zip(file_ids, instants, strict=True)):
                if committed[instant] and ((j := latest.get(file_id)) is None or instant >= instants[j]):
                    latest[file_id] = i
            chosen = [i for file_id, i in latest.items() if not (replaced and file_id in replaced)]
        stat_ids = folder.written if folder.written is not None else list(map(written.index.get, folder.paths))
        columns = (file_ids, instants, folder.paths, folder.sizes, stat_ids)
        if chosen is not None or file_ids != sorted(file_ids):
            chosen = sorted(range(len(file_ids)) if chosen is None else chosen, key=file_ids.__getitem__)
            columns = tuple([column[i] for i in chosen] for column in columns)
        partition = folder.partition
        file_ids, instants, paths, sizes, stat_ids = columns
        if None not in stat_ids and all(rows := list(map(written.rows.__getitem__, stat_ids))):
            # every row count recorded: the usual case
            stats = list(map(written.column_stats.__getitem__, stat_ids))  # read-only, so shared
            return file_slices(partition, file_ids, instants, paths, sizes, rows, stats)
        return [
            FileSlice(partition, file_id, instant, path, size, written.rows[i], written.column_stats[i])
            if i is not None and written.rows[i]
            else self._slice_from_footer(partition, file_id, instant, path, size)
            for file_id, instant, path, size, i in zip(*columns, strict=True)
        ]

    def _slice_from_footer(self, partition: str, file_id: str, instant: str, path: str, size: int) -> FileSlice:
        """A slice whose commit metadata records no rows: rows and min/max from its footer when ``read_footers``."""
        rows, stats = 0, {}
        if self.read_footers:
            md = self.storage.parquet_metadata(path)
            rows, stats = md.num_rows, column_stats_from_footer(md)
        return FileSlice(partition, file_id, instant, path, size, rows, stats)

    def partitions(self) -> list[str]:
        return [f.partition for f in self._folders]

    # -- MERGE_ON_READ ----------------------------------------------------------------------
    @cached_property
    def log_files(self) -> list[LogFile]:
        """Every log file listed, sorted by path."""
        out = []
        for entry in self.other_files:
            partition, _, name = entry.path.rpartition("/")
            parsed = LogFileName.parse(name)
            if parsed is not None:
                out.append(LogFile(partition, entry.path, entry.size, parsed))
        return out

    @cached_property
    def _base_instants(self) -> dict[tuple[str, str], list[str]]:
        """(partition, fileId) -> its base files' instants, oldest first."""
        return {group: [f.instant for f in files] for group, files in self.file_groups().items()}

    def _slice_of(self, log: LogFile, as_of: str | None) -> tuple[str, str, str] | None:
        """(partition, fileId, base instant) of the slice ``log`` belongs to.

        Table version 6 names it in the log file's name. From version 8 the name carries the
        deltacommit that wrote the log instead: the log belongs to the newest slice whose base
        instant is not after it, and only once that deltacommit is committed (as of ``as_of``)."""
        group = log.file_group
        if self.timeline.layout == 1:
            return (*group, log.name.base_instant)
        if not self.is_committed(log.name.base_instant, as_of):
            return None
        bases = [b for b in self._base_instants.get(group, ()) if b <= log.name.base_instant]
        return (*group, bases[-1] if bases else log.name.base_instant)

    def merge_slices(self, as_of: str | None = None) -> list[MergeSlice]:
        """The latest committed slice of every visible file group with the log files of that slice,
        sorted by (partition, fileId). A group of log files only (no base file yet) is visible when
        the instant its logs name is committed as of ``as_of``."""
        by_slice: dict[tuple[str, str, str], list[LogFile]] = {}
        for log in self.log_files:
            if (key := self._slice_of(log, as_of)) is not None:  # None: not committed as of as_of
                by_slice.setdefault(key, []).append(log)
        out = []
        for s in self.snapshot(as_of):
            logs = sorted(by_slice.get((s.partition, s.file_id, s.instant), ()), key=attrgetter("name"))
            out.append(MergeSlice(s.partition, s.file_id, s.instant, s, tuple(logs)))
        with_base = {m.file_group for m in out}
        replaced = self.timeline.replaced_file_groups(self.resolve_as_of(as_of))
        log_only: dict[tuple[str, str], tuple[str, list[LogFile]]] = {}
        for (partition, file_id, base_instant), logs in by_slice.items():
            group = (partition, file_id)
            if group in with_base or group in replaced or not self.is_committed(base_instant, as_of):
                continue
            if group not in log_only or base_instant > log_only[group][0]:
                log_only[group] = (base_instant, logs)
        for (partition, file_id), (base_instant, logs) in log_only.items():
            out.append(MergeSlice(partition, file_id, base_instant, None, tuple(sorted(logs, key=attrgetter("name")))))
        out.sort(key=_FILE_GROUP_OF)
        return out

    # -- pending table services -------------------------------------------------------------
    def pending_clustering_file_groups(self) -> dict[tuple[str, str], str]:
        """(partition, fileId) -> instant for every file group in a pending clustering plan."""
        return plans.pending_file_groups(self.timeline, REPLACE)

    def pending_compaction_paths(self) -> dict[str, str]:
        """Base file path -> instant for every file in a pending base-file compaction plan."""
        return plans.pending_paths(self.timeline, (COMPACTION,))

    def uncommitted_files(self) -> list[BaseFile]:
        """Base files whose instant is not completed (pending or failed writes)."""
        return [b for b in self.base_files if not self.is_committed(b.instant)]
