"""Where each record key lives: (partition path, record key) -> fileId, kept in step with the timeline.

The MERGE_ON_READ writer needs, for every incoming row, the file group holding its key (an update
goes to that group's log) or none (an insert). Reading every latest slice at every write (what
:func:`engines.files.deltacommit.write_deltacommit` does without a locator) costs the whole table
per batch; this index reads the table once and then only what each completed instant wrote:

| completed instant                      | what the index does                                            |
| -------------------------------------- | -------------------------------------------------------------- |
| deltacommit / commit (a write)         | a base file's record keys (one Parquet column) join its group; a log file with inserts or deletes is read: its data keys join its group, its deleted keys leave it |
| commit with operationType ``COMPACT``  | nothing: a compaction keeps every key in its file group        |
| replacecommit (clustering)             | the replaced groups' keys leave; the output base files' keys join their new groups |
| clean, rollback, others                | nothing: they remove only files no completed slice reads       |

It replays instants it has not seen, in timestamp order, whoever wrote them (so a crash-recovered
writer or another writer's commits are picked up). Non-global, as Hudi's default index: a key is
looked up in the partition its row names. A key that the ordering field made a base row win over a
log write stays in its group either way, so only the group, never the winning row, is indexed.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow.parquet as pq

from engines.table.logfile import LogFileName, read_log_bytes
from engines.table.mor import committed_instants, merge_slice
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT, DELTACOMMIT, REPLACE, Instant

_KEY = "_hoodie_record_key"
_WRITES = (DELTACOMMIT, COMMIT, REPLACE)


class KeyIndex:
    """(partition path, record key) -> fileId of one table; see the module docstring."""

    def __init__(self, table: HudiTable) -> None:
        self.table = table
        self._groups: dict[str, dict[str, str]] = {}  # partition path -> {record key: fileId}
        self._seen: set[str] | None = None  # completed write instants applied; None: not built yet

    def __len__(self) -> int:
        return sum(len(keys) for keys in self._groups.values())

    def locate(self, partitions: Sequence[str], keys: Sequence[str]) -> list[str | None]:
        """The fileId holding each (partition path, key) pair, None for a key the table does not hold."""
        self.sync()
        groups = self._groups
        return [groups.get(p, {}).get(k) for p, k in zip(partitions, keys, strict=True)]

    def sync(self) -> None:
        """Apply every completed write instant not applied yet (the first call reads the latest slices)."""
        timeline = self.table.refresh()
        completed = timeline.completed(list(_WRITES))
        if self._seen is None:
            self._build()
            self._seen = {i.timestamp for i in completed}
            return
        for inst in completed:
            if inst.timestamp not in self._seen:
                self._apply(inst)
                self._seen.add(inst.timestamp)

    def _build(self) -> None:
        table = self.table
        committed = committed_instants(table, None)
        for s in table.view(read_footers=False).merge_slices():
            keys = self._groups.setdefault(s.partition, {})
            if not s.logs and s.base is not None:
                for key in self._base_keys(s.base.path):
                    keys[key] = s.file_id
                continue
            base, records, _ = merge_slice(table, s, committed, [])
            alive = ([] if base is None else base.column(_KEY).to_pylist()) + [r[_KEY] for r in records]
            for key in alive:
                keys[key] = s.file_id

    def _base_keys(self, path: str) -> list[str]:
        return pq.read_table(self.table.storage.abs(path), columns=[_KEY]).column(_KEY).to_pylist()

    def _apply(self, inst: Instant) -> None:
        meta = self.table.commit_metadata(inst)
        if inst.action == COMMIT and meta.operation_type == "COMPACT":
            return
        for partition, ids in meta.replaced_file_ids.items():
            gone = set(ids)
            keys = self._groups.get(partition, {})
            for key in [k for k, fid in keys.items() if fid in gone]:
                del keys[key]
        for stat in meta.write_stats:
            keys = self._groups.setdefault(stat.partition, {})
            name = stat.path.rsplit("/", 1)[-1]
            if LogFileName.parse(name) is None:
                if stat.num_writes:
                    for key in self._base_keys(stat.path):
                        keys[key] = stat.file_id
                continue
            if not stat.num_inserts and not stat.num_deletes:
                continue  # updates only: every key is already in this group
            for block in read_log_bytes(self.table.storage.read_bytes(stat.path), stat.path).blocks:
                if block.instant != inst.timestamp:
                    continue
                for record in block.records:
                    keys[record[_KEY]] = stat.file_id
                for key, _partition in block.deleted_keys:
                    if keys.get(key) == stat.file_id:
                        del keys[key]
