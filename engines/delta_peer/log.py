"""A read-only replay of a Delta table's JSON log: the active files of a version, what each
version added and removed, with the statistics delta-rs wrote. No delta-rs here, so the
harness audits the log that delta-rs wrote with code that did not write it.

Checkpoints (Parquet, every 100 versions by default) are not needed: delta-rs keeps every JSON
commit until log retention (30 days) expires, far beyond a benchmark run.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import unquote

from engines.table.model import ColumnStats, FileSlice, WriteStat
from engines.table.storage import Storage

LOG_DIR = "_delta_log"


class DeltaLogError(ValueError):
    """A Delta log file that cannot be parsed."""


@dataclass(frozen=True)
class AddAction:
    path: str
    partition: str
    size: int
    num_records: int
    version: int
    column_stats: ColumnStats = field(default_factory=dict, compare=False, hash=False)

    def to_file_slice(self) -> FileSlice:
        name = self.path.rsplit("/", 1)[-1]
        return FileSlice(self.partition, name.rsplit(".", 1)[0], version_instant(self.version), self.path,
                         self.size, self.num_records, self.column_stats)


@dataclass
class VersionActions:
    version: int
    operation: str
    adds: list[AddAction]
    removes: list[str]

    def write_stats(self) -> list[WriteStat]:
        """The version's added files as write stats (file id = file name without extension)."""
        return [WriteStat(a.to_file_slice().file_id, a.partition, a.path, a.num_records, a.size) for a in self.adds]


def version_instant(version: int) -> str:
    """A Delta version as the 17-character instant string the results tables carry (sortable)."""
    return f"{version:017d}"


def _value(raw: Any, is_max: bool) -> Any:
    if isinstance(raw, str) and len(raw) >= 20 and raw[4] == "-" and raw[10] == "T":
        try:
            ts = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            return raw
        # Delta truncates timestamp statistics to milliseconds: a max must be rounded up to stay an upper bound.
        return ts + timedelta(milliseconds=1) if is_max else ts
    return raw


def _parse_add(add: dict[str, Any], version: int) -> AddAction:
    path = unquote(add["path"])
    parts = add.get("partitionValues") or {}
    partition = "/".join(f"{k}={v}" for k, v in parts.items())
    stats_raw = add.get("stats")
    stats = json.loads(stats_raw) if stats_raw else {}
    mins, maxs = stats.get("minValues", {}), stats.get("maxValues", {})
    col: ColumnStats = {c: (_value(mins[c], False), _value(maxs[c], True)) for c in mins if c in maxs}
    col.update({k: (v, v) for k, v in parts.items()})
    return AddAction(path, partition, int(add["size"]), int(stats.get("numRecords", -1)), version, col)


class DeltaLog:
    """Incremental replay of ``_delta_log/*.json``; thread-safe (readers race maintenance)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._versions: dict[int, VersionActions] = {}
        self._lock = threading.Lock()
        self._live: dict[str, AddAction] = {}  # active files as of version ``_live_version``
        self._live_version = -1

    def _read_version(self, version: int) -> VersionActions:
        rel = f"{LOG_DIR}/{version:020d}.json"
        try:
            text = self.storage.read_bytes(rel).decode()
            actions = [json.loads(line) for line in text.splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DeltaLogError(f"Delta log file {rel} is unreadable: {exc}") from exc
        adds, removes, operation = [], [], ""
        for a in actions:
            if "add" in a:
                adds.append(_parse_add(a["add"], version))
            elif "remove" in a:
                removes.append(unquote(a["remove"]["path"]))
            elif "commitInfo" in a:
                operation = str(a["commitInfo"].get("operation", ""))
        return VersionActions(version, operation, adds, removes)

    def latest_version(self) -> int:
        names = [e.path.rsplit("/", 1)[-1] for e in self.storage.list(LOG_DIR, sizes=False)]
        versions = [int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit()]
        return max(versions) if versions else -1

    def versions(self, upto: int | None = None) -> list[VersionActions]:
        """Every version up to ``upto`` (the latest when None), in order."""
        last = self.latest_version() if upto is None else upto
        with self._lock:
            for v in range(last + 1):
                if v not in self._versions:
                    self._versions[v] = self._read_version(v)
            return [self._versions[v] for v in range(last + 1)]

    def active(self, upto: int | None = None) -> dict[str, AddAction]:
        """Active files (path → add action) as of version ``upto``; the latest state is kept and extended."""
        versions = self.versions(upto)
        with self._lock:
            start, live = (self._live_version + 1, dict(self._live)) if len(versions) > self._live_version else (0, {})
            for va in versions[start:]:
                for p in va.removes:
                    live.pop(p, None)
                for add in va.adds:
                    live[add.path] = add
            if len(versions) - 1 >= self._live_version:
                self._live, self._live_version = dict(live), len(versions) - 1
            return live

    def removed_at(self) -> dict[str, int]:
        """Path → version that removed it, for files no longer active."""
        out: dict[str, int] = {}
        for va in self.versions():
            for p in va.removes:
                out[p] = va.version
            for add in va.adds:
                out.pop(add.path, None)
        return out
