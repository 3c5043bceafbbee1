"""The table timeline (Hudi timeline layout 1, table version 6): instants and their state files.

| action              | requested                          | inflight                          | completed            |
| ------------------- | ---------------------------------- | --------------------------------- | -------------------- |
| commit              | ``<t>.commit.requested``           | ``<t>.inflight``                  | ``<t>.commit``       |
| replacecommit       | ``<t>.replacecommit.requested``    | ``<t>.replacecommit.inflight``    | ``<t>.replacecommit``|
| basefilecompaction  | ``<t>.basefilecompaction.requested``| ``<t>.basefilecompaction.inflight``| ``<t>.commit``      |
| deltacommit (MOR)   | ``<t>.deltacommit.requested``      | ``<t>.deltacommit.inflight``      | ``<t>.deltacommit``  |
| compaction (MOR)    | ``<t>.compaction.requested`` (plan)| ``<t>.compaction.inflight``       | ``<t>.commit``       |
| clean / rollback    | ``<t>.clean.requested`` …          | ``<t>.clean.inflight`` …          | ``<t>.clean`` …      |

The completed file is the commit point and is written atomically (temp + rename). Hudi readers
only load completed commit/deltacommit/replacecommit files, so an Option 1 compaction completes
as ``<t>.commit`` (as Hudi's own compaction does) and its ``basefilecompaction`` state files are
ignored by them. A MERGE_ON_READ compaction does the same as Apache Hudi's (0.x and 1.x alike:
``HoodieTimeline.COMPACTION_ACTION`` pending, completed as a ``commit`` with the compaction's own
instant time): the timeline shows one completed ``compaction`` instant for the pair.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from typing import NamedTuple

from engines.table.instants import completion_mtime_ns
from engines.table.metadata import CommitMetadata
from engines.table.model import ColumnStats
from engines.table.storage import Storage

METAFOLDER = ".hoodie"

COMMIT = "commit"
REPLACE = "replacecommit"
COMPACTION = "basefilecompaction"
CLEAN = "clean"
ROLLBACK = "rollback"
DELTACOMMIT = "deltacommit"  # MERGE_ON_READ writes (log blocks, and new base files)
MOR_COMPACTION = "compaction"  # MERGE_ON_READ compaction (Hudi's HoodieCompactionPlan), completes as a commit
OUR_ACTIONS = (COMMIT, REPLACE, COMPACTION, CLEAN, ROLLBACK, DELTACOMMIT, MOR_COMPACTION)
# Actions found in tables written by Apache Hudi that we recognise (read-only).
FOREIGN_ACTIONS = ("clustering", "savepoint", "restore", "indexing")
DATA_ACTIONS = (COMMIT, REPLACE, COMPACTION, DELTACOMMIT, MOR_COMPACTION)
_COMMITS_AS_COMMIT = (COMPACTION, MOR_COMPACTION)  # pending under their own action, completed as commit

_NAME = re.compile(r"^(\d{14}|\d{17})(?:_(\d{14}|\d{17}))?(?:\.([a-z]+))?(?:\.(requested|inflight))?$")
LAYOUT2_FOLDER = f"{METAFOLDER}/timeline"  # Hudi 1.x (table versions 8/9), read-only


class WrittenFiles(NamedTuple):
    """The write stats of every completed data instant, column by column, behind one path index."""

    index: dict[str, int]  # path -> position in the columns
    rows: list[int]
    column_stats: list[ColumnStats]
    sizes: list[int | None]


class TimelineError(RuntimeError):
    """An illegal timeline transition or an unreadable instant file."""


class State(IntEnum):
    REQUESTED = 1
    INFLIGHT = 2
    COMPLETED = 3


@dataclass(frozen=True, order=True)
class Instant:
    timestamp: str
    action: str
    state: State

    @property
    def is_completed(self) -> bool:
        return self.state == State.COMPLETED

    def __str__(self) -> str:
        return f"{self.timestamp}.{self.action}[{self.state.name.lower()}]"


def state_file(timestamp: str, action: str, state: State, completed_action: str | None = None) -> str:
    """The file name (inside ``.hoodie``) of an instant in a given state.

    A base-file compaction completes as ``<t>.commit``, or as ``<t>.replacecommit`` when it
    records replaced file groups (commit-before-delete), so that Hudi readers hide them."""
    if state == State.REQUESTED:
        return f"{timestamp}.{action}.requested"
    if state == State.INFLIGHT:
        return f"{timestamp}.inflight" if action == COMMIT else f"{timestamp}.{action}.inflight"
    if action in _COMMITS_AS_COMMIT:
        return f"{timestamp}.{completed_action or COMMIT}"
    return f"{timestamp}.{action}"


@lru_cache(maxsize=64)
def _parsed_listing(names: tuple[str, ...]) -> tuple[tuple[Instant, ...], tuple[tuple[tuple[str, str], str], ...]]:
    """:func:`_parse_listing` of one listing, remembered: a writer reloads its timeline several times
    per commit, mostly to an unchanged listing (names are immutable, so equal listings parse equally)."""
    completed: dict[tuple[str, str], str] = {}
    return tuple(_parse_listing(names, completed)), tuple(completed.items())


def _parse_listing(names: Iterable[str], completed_files: dict[tuple[str, str], str]) -> list[Instant]:
    seen: dict[str, dict[str, State]] = {}
    for name in names:
        m = _NAME.match(name)
        if not m:
            continue
        ts, completion, action, suffix = m.group(1), m.group(2), m.group(3), m.group(4)
        if action in ("inflight", "requested") and suffix is None:
            action, suffix = None, action
        if completion is not None and (action is None or suffix is not None):
            continue
        if action is None:
            if suffix != "inflight":
                continue
            action = COMMIT  # "<t>.inflight" is the commit action's inflight file
        if action not in OUR_ACTIONS and action not in FOREIGN_ACTIONS:
            continue
        state = {"requested": State.REQUESTED, "inflight": State.INFLIGHT, None: State.COMPLETED}[suffix]
        if state == State.COMPLETED:
            completed_files[(ts, action)] = name
        by_action = seen.setdefault(ts, {})
        by_action[action] = max(by_action.get(action, State.REQUESTED), state)
    out = []
    for ts, by_action in seen.items():
        if COMPACTION in by_action:
            # A base-file compaction completes as "<t>.commit" (or "<t>.replacecommit").
            done = State.COMPLETED in (by_action.get(COMMIT), by_action.get(REPLACE))
            out.append(Instant(ts, COMPACTION, State.COMPLETED if done else by_action[COMPACTION]))
            by_action = {a: s for a, s in by_action.items() if a not in (COMPACTION, COMMIT, REPLACE)}
        if MOR_COMPACTION in by_action:
            done = by_action.get(COMMIT) == State.COMPLETED
            out.append(Instant(ts, MOR_COMPACTION, State.COMPLETED if done else by_action[MOR_COMPACTION]))
            by_action = {a: s for a, s in by_action.items() if a not in (MOR_COMPACTION, COMMIT)}
        if "clustering" in by_action and REPLACE in by_action:
            by_action.pop("clustering")  # Hudi 1.x pending clustering completing as replacecommit
        for action, state in by_action.items():
            out.append(Instant(ts, action, state))
    return sorted(out)


class Timeline:
    """An immutable snapshot of a table's timeline, plus the writes that move instants along it."""

    def __init__(self, storage: Storage, instants: list[Instant], folder: str = METAFOLDER,
                 completed_files: dict[tuple[str, str], str] | None = None,
                 completed_bytes: dict[str, bytes] | None = None) -> None:
        self.storage = storage
        self.instants = instants
        self.folder = folder
        self.completed_files = completed_files or {}
        self._by_ts = {i.timestamp: i for i in instants}
        self._metadata: dict[str, CommitMetadata] = {}
        self._written: WrittenFiles | None = None
        # Completed instant files' bytes by path, shared by the timelines one table loads (see read()).
        self._completed_bytes = completed_bytes

    @property
    def layout(self) -> int:
        return 2 if self.folder == LAYOUT2_FOLDER else 1

    @classmethod
    def load(cls, storage: Storage, completed_bytes: dict[str, bytes] | None = None) -> Timeline:
        """Load layout 1 (``.hoodie/``) or, when present, layout 2 (``.hoodie/timeline/``, read-only).
        ``completed_bytes``: a cache of completed instant files' bytes to read through and fill
        (:meth:`read`), kept by the caller across loads."""
        entries, dirs = storage.list_with_dirs(METAFOLDER, sizes=False)
        folder = METAFOLDER
        if LAYOUT2_FOLDER.rsplit("/", 1)[-1] in dirs:
            folder = LAYOUT2_FOLDER
            entries = storage.list(folder)
        instants, completed = _parsed_listing(tuple(e.path.rsplit("/", 1)[-1] for e in entries))
        return cls(storage, list(instants), folder, dict(completed), completed_bytes)

    def file_name(self, instant: Instant, state: State | None = None) -> str:
        """Name (inside the timeline folder) of an instant's state file."""
        state = state or instant.state
        if state == State.COMPLETED:
            actions = {COMPACTION: (COMMIT, REPLACE), MOR_COMPACTION: (COMMIT,)}.get(instant.action, (instant.action,))
            for action in actions:
                known = self.completed_files.get((instant.timestamp, action))
                if known:
                    return known
        return state_file(instant.timestamp, instant.action, state)

    # -- queries ----------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    def get(self, timestamp: str) -> Instant | None:
        return self._by_ts.get(timestamp)

    def completed(self, actions: Iterable[str] | None = None) -> list[Instant]:
        acts = set(actions) if actions is not None else None
        return [i for i in self.instants if i.is_completed and (acts is None or i.action in acts)]

    def pending(self, actions: Iterable[str] | None = None) -> list[Instant]:
        acts = set(actions) if actions is not None else None
        return [i for i in self.instants if not i.is_completed and (acts is None or i.action in acts)]

    def completed_data_instants(self) -> list[Instant]:
        """Completed instants that make data visible (commit, replacecommit, compaction, deltacommit)."""
        return self.completed(DATA_ACTIONS)

    def last_timestamp(self) -> str | None:
        return self.instants[-1].timestamp if self.instants else None

    def read(self, instant: Instant, state: State | None = None) -> bytes:
        """Bytes of an instant's state file (its current state unless given).

        A completed instant's file is written once, atomically, and never changed: a rollback removes
        pending files only, archiving takes the file off the listing this timeline was built from, and
        the clock never issues a completed instant's time again. So with a ``completed_bytes`` cache
        it is read from the store once per table, as Apache Hudi's writers keep the active timeline's
        instant details: each new view reads every
        completed commit's metadata, which was one GET (and a HEAD) per instant per view on S3."""
        name = self.file_name(instant, state)
        path = f"{self.folder}/{name}"
        completed = (state or instant.state) == State.COMPLETED and self._completed_bytes is not None
        if completed and (cached := self._completed_bytes.get(path)) is not None:
            return cached
        try:
            data = self.storage.read_bytes(path)
        except OSError as exc:
            raise TimelineError(f"cannot read instant file {self.folder}/{name}: {exc}") from exc
        if completed:
            self._completed_bytes[path] = data
        return data

    # -- commit metadata (what the view is handed: it reads no commit metadata itself) ----------
    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """The completed instant's metadata, parsed once per timeline."""
        if instant.timestamp not in self._metadata:
            self._metadata[instant.timestamp] = self._read_metadata(instant)
        return self._metadata[instant.timestamp]

    def _read_metadata(self, instant: Instant) -> CommitMetadata:
        return CommitMetadata.from_json(self.read(instant, State.COMPLETED),
                                        source=f"{self.folder}/{self.file_name(instant, State.COMPLETED)}")

    def written_files(self) -> WrittenFiles:
        """The write stats of every completed data instant, by path (the latest instant's when several)."""
        if self._written is None:
            paths: list[str] = []
            rows: list[int] = []
            column_stats: list[ColumnStats] = []
            sizes: list[int | None] = []
            for inst in self.completed_data_instants():
                # A commit's parsed JSON is dropped once read (unless a replace's ids need it again):
                # kept, its objects would stay for every garbage-collection pass to walk.
                meta = self._metadata.get(inst.timestamp)
                if meta is None:
                    meta = self._read_metadata(inst)
                    if inst.action in (REPLACE, COMPACTION):
                        self._metadata[inst.timestamp] = meta
                p, r, c, s = meta.written_columns()
                paths += p
                rows += r
                column_stats += c
                sizes += s
            self._written = WrittenFiles(dict(zip(paths, range(len(paths)), strict=True)), rows, column_stats, sizes)
        return self._written

    def replaced_file_groups(self, as_of: str | None = None) -> dict[tuple[str, str], str]:
        """(partition, fileId) -> replacing instant, for completed replaces (replacecommits, and
        base-file compactions that recorded replaced file groups) at or before ``as_of``: the file
        groups a snapshot excludes (hudi-rs ``Timeline::get_replaced_file_groups_as_of``)."""
        out: dict[tuple[str, str], str] = {}
        for inst in self.completed_data_instants():
            if inst.action not in (REPLACE, COMPACTION):
                continue
            if as_of is not None and inst.timestamp > as_of:
                continue
            for partition, ids in self.commit_metadata(inst).replaced_file_ids.items():
                for fid in ids:
                    out[(partition, fid)] = inst.timestamp
        return out

    # -- transitions ------------------------------------------------------------------------
    def _path(self, ts: str, action: str, state: State) -> str:
        if self.layout != 1:
            raise TimelineError("layoutbench writes only timeline layout 1 (Hudi table version 6)")
        return f"{METAFOLDER}/{state_file(ts, action, state)}"

    def _current_state(self, ts: str, action: str) -> State | None:
        if action == COMPACTION and self.storage.exists(f"{METAFOLDER}/{ts}.{REPLACE}"):
            return State.COMPLETED
        for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
            if self.storage.exists(self._path(ts, action, state)):
                return state
        return None

    def create_requested(self, timestamp: str, action: str, content: bytes = b"") -> Instant:
        if action not in OUR_ACTIONS:
            raise TimelineError(f"unknown action {action!r}; expected one of {OUR_ACTIONS}")
        last = Timeline.load(self.storage).last_timestamp()
        if last is not None and timestamp <= last:
            raise TimelineError(
                f"instant {timestamp} is not after the latest instant {last}; instants must increase"
            )
        if not self.storage.create_exclusive(self._path(timestamp, action, State.REQUESTED), content):
            raise TimelineError(f"instant {timestamp}.{action} already requested")
        return Instant(timestamp, action, State.REQUESTED)

    def transition_to_inflight(self, instant: Instant, content: bytes = b"") -> Instant:
        current = self._current_state(instant.timestamp, instant.action)
        if current != State.REQUESTED:
            raise TimelineError(
                f"cannot move {instant.timestamp}.{instant.action} to inflight: it is "
                f"{current.name.lower() if current else 'absent'}, not requested"
            )
        self.storage.write_atomic(self._path(instant.timestamp, instant.action, State.INFLIGHT), content)
        return Instant(instant.timestamp, instant.action, State.INFLIGHT)

    def complete(self, instant: Instant, content: bytes, completed_action: str | None = None) -> Instant:
        """Write the completed file atomically: the commit point."""
        current = self._current_state(instant.timestamp, instant.action)
        if current != State.INFLIGHT:
            raise TimelineError(
                f"cannot complete {instant.timestamp}.{instant.action}: it is "
                f"{current.name.lower() if current else 'absent'}, not inflight"
            )
        if not content:
            raise TimelineError("completed instant content must not be empty (Hudi readers reject it)")
        name = state_file(instant.timestamp, instant.action, State.COMPLETED, completed_action)
        # its modification time is its completion time to Apache Hudi 1.x (instants.completion_mtime_ns)
        self.storage.write_atomic(f"{METAFOLDER}/{name}", content, overwrite=False,
                                  mtime_ns=completion_mtime_ns(instant.timestamp))
        return Instant(instant.timestamp, instant.action, State.COMPLETED)

    def revert_to_requested(self, instant: Instant) -> Instant:
        """Drop the inflight file of a pending instant (rollback of a clustering keeps the plan)."""
        current = self._current_state(instant.timestamp, instant.action)
        if current == State.COMPLETED:
            raise TimelineError(f"cannot revert completed instant {instant.timestamp}.{instant.action}")
        self.storage.delete(self._path(instant.timestamp, instant.action, State.INFLIGHT), missing_ok=True)
        return Instant(instant.timestamp, instant.action, State.REQUESTED)

    def delete_pending(self, instant: Instant) -> None:
        """Remove every state file of a pending instant (a rolled-back ingest commit)."""
        current = self._current_state(instant.timestamp, instant.action)
        if current == State.COMPLETED:
            raise TimelineError(f"cannot delete completed instant {instant.timestamp}.{instant.action}")
        for state in (State.INFLIGHT, State.REQUESTED):
            self.storage.delete(self._path(instant.timestamp, instant.action, state), missing_ok=True)
