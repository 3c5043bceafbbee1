"""What the runner reads from a table: the snapshot, the physical files, what an instant wrote,
and an audit of the table's metadata against a storage listing. Hudi tables are read through our
view; other formats (the Delta peer) provide their own probe with the same methods. An engine
hands out its probe through the Engine protocol (``engine.probe()``)."""

from __future__ import annotations

from typing import Protocol

from engines.table.model import FileSlice, InstantWrites, PhysicalFile
from engines.table.mor import LogOverlay, query_snapshot, snapshot_read
from engines.table.storage import Storage
from engines.table.table import HudiTable
from engines.table.timeline import METAFOLDER


class TableProbe(Protocol):
    storage: Storage

    def snapshot(self) -> list[FileSlice]: ...

    def query_snapshot(self) -> tuple[list[FileSlice], LogOverlay | None]:
        """What a query reads: the snapshot's base files and, on a MERGE_ON_READ table, the slices
        with log files to merge over them (None: none), from one reading of the table."""
        ...

    def state(self) -> tuple[list[FileSlice], list[PhysicalFile]]:
        """(snapshot, physical files), from one reading of the table where the format allows."""
        ...

    def live_logs(self) -> list[PhysicalFile]:
        """The log files of the snapshot's file slices (MERGE_ON_READ; none for other tables)."""
        ...

    def physical_files(self) -> list[PhysicalFile]: ...

    def metadata_bytes(self) -> int: ...

    def instant_writes(self, instant: str) -> InstantWrites | None: ...

    def audit(self, expected_rows: int) -> list[str]: ...


class HudiProbe:
    """The probe of a Hudi table, through :class:`engines.table.view.FileSystemView`."""

    def __init__(self, table: HudiTable) -> None:
        self.table = table
        self.storage = table.storage

    def state(self) -> tuple[list[FileSlice], list[PhysicalFile]]:
        """Snapshot and physical files from one view: every base file and, on a MERGE_ON_READ table,
        every log file listed (Hudi's file system view counts a slice's logs with its base file)."""
        view = self.table.view()
        physical = [PhysicalFile(b.partition, b.file_id, b.path, b.size) for b in view.base_files]
        return view.snapshot(), physical + [PhysicalFile(g.partition, g.name.file_id, g.path, g.size)
                                            for g in view.log_files]

    def live_logs(self) -> list[PhysicalFile]:
        """The log files of the latest slice of every visible file group, committed ones only."""
        if not self.table.merge_on_read:
            return []
        return [PhysicalFile(g.partition, g.name.file_id, g.path, g.size)
                for m in self.table.view().merge_slices() for g in m.logs]

    def snapshot(self) -> list[FileSlice]:
        return self.table.view().snapshot()

    def query_snapshot(self) -> tuple[list[FileSlice], LogOverlay | None]:
        # planned as a query engine in another process plans it: no instant file the writer read
        # is taken from the writer's cache (a query's planning requests and seconds are its own)
        return query_snapshot(self.table.reader())

    def physical_files(self) -> list[PhysicalFile]:
        return self.state()[1]

    def metadata_bytes(self) -> int:
        return sum(e.size for e in self.storage.list(METAFOLDER))

    def instant_writes(self, instant: str) -> InstantWrites | None:
        inst = self.table.refresh().get(instant)
        if inst is None or not inst.is_completed:
            return None
        meta = self.table.commit_metadata(inst)
        return InstantWrites(inst.action, meta.operation_type, meta.write_stats,
                             sum(len(v) for v in meta.replaced_file_ids.values()))

    def audit(self, expected_rows: int) -> list[str]:
        """Commit metadata vs storage listing, and snapshot rows vs ground truth."""
        failures = []
        view = self.table.view()
        # Sizes as storage reports them: the view takes committed files' sizes from these very stats.
        sizes = {e.path: e.size for e in self.storage.list("", recursive=True)
                 if not e.path.startswith(METAFOLDER + "/")}
        for inst in view.timeline.completed_data_instants():
            for stat in view.timeline.commit_metadata(inst).write_stats:
                on_disk = sizes.get(stat.path)
                if on_disk is not None and on_disk != stat.file_size:
                    failures.append(f"{stat.path} is {on_disk} bytes on storage, {stat.file_size} in commit "
                                    f"{inst.timestamp}")
        snap = view.snapshot()
        failures += [f"live file {s.path} is missing from storage" for s in snap if s.path not in sizes]
        overlay = query_snapshot(self.table, read_footers=False)[1] if self.table.merge_on_read else None
        if overlay is None:
            rows, how = sum(s.num_rows for s in snap), "by commit metadata"
        else:  # log files update and delete rows: only the merge counts them
            merged = snapshot_read(self.table)
            rows, how = merged.rows.num_rows, "merged with its log files"
            failures += [str(c) for c in merged.corrupt]
        if rows != expected_rows:
            failures.append(f"snapshot has {rows} rows {how}, ground truth {expected_rows}")
        return failures
