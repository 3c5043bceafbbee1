"""``HudiTable``: one table's storage, properties, timeline, view and writer lock in one handle."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from engines.table import faults
from engines.table.bloom import BloomConfig
from engines.table.instants import InstantClock
from engines.table.lock import WriterLock
from engines.table.metadata import CommitMetadata
from engines.table.properties import (
    COPY_ON_WRITE,
    MERGE_ON_READ,
    UnsupportedTableError,
    default_properties,
    read_properties,
    table_type,
    write_properties,
)
from engines.table.storage import Storage
from engines.table.timeline import COMPACTION, METAFOLDER, REPLACE, Instant, State, Timeline, TimelineError
from engines.table.view import FileSystemView

PARTITION_METAFILE = ".hoodie_partition_metadata"  # how Hudi (without its metadata table) finds partitions
READABLE_VERSIONS = {"6": "1", "8": "2", "9": "2"}


@dataclass(frozen=True)
class TableConfig:
    name: str
    partition_field: str
    record_key: str
    hive_style: bool = True
    table_type: str = COPY_ON_WRITE
    ordering_field: str | None = None  # required by MERGE_ON_READ (its logs merge by it)


class HudiTable:
    """A Hudi table at ``base`` (local path or URI): COPY_ON_WRITE, or MERGE_ON_READ (:mod:`engines.table.mor`)."""

    def __init__(self, storage: Storage, properties: dict[str, str], clock: InstantClock | None = None) -> None:
        self.storage = storage
        self.properties = properties
        self.clock = clock or InstantClock()
        self.lock = WriterLock(storage)
        self._timeline: Timeline | None = None
        self._completed_bytes: dict[str, bytes] = {}  # completed instant files, read once (Timeline.read)
        self._marked_partitions: set[str] = set()
        # the footer bloom filter of every base file written to this table (a writer setting, as in
        # Hudi; engines set it from their config); Hudi's defaults until then
        self.bloom = BloomConfig()

    # -- creation ---------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        base: str,
        config: TableConfig,
        clock: InstantClock | None = None,
        exist_ok: bool = False,
    ) -> HudiTable:
        storage = Storage(base)
        if storage.exists(".hoodie/hoodie.properties"):
            if not exist_ok:
                raise FileExistsError(f"a Hudi table already exists at {storage.uri}")
            return cls.open(base, clock=clock)
        storage.mkdirs(METAFOLDER)
        storage.mkdirs(f"{METAFOLDER}/archived")
        props = default_properties(config.name, [config.partition_field], config.record_key, config.hive_style,
                                   config.table_type, config.ordering_field)
        write_properties(storage, props)
        return cls(storage, props, clock)

    @classmethod
    def open(cls, base: str, clock: InstantClock | None = None, check_supported: bool = True) -> HudiTable:
        """Open an existing table of either type; an unknown table type or version raises a clear error
        unless ``check_supported`` is False (the properties are then taken as they are)."""
        storage = Storage(base)
        props = read_properties(storage)
        table = cls(storage, props, clock)
        if check_supported:
            table.check_supported()
        return table

    def check_supported(self) -> None:
        ttype = table_type(self.properties)
        if ttype not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise UnsupportedTableError(
                f"{self.storage.uri} is a {ttype} table; expected COPY_ON_WRITE or MERGE_ON_READ"
            )
        version = self.properties.get("hoodie.table.version", "6")
        if version not in READABLE_VERSIONS:
            raise UnsupportedTableError(f"{self.storage.uri}: Hudi table version {version} is not supported")

    @property
    def writable(self) -> bool:
        return self.properties.get("hoodie.table.version") == "6"

    @property
    def table_type(self) -> str:
        return table_type(self.properties)

    @property
    def merge_on_read(self) -> bool:
        return self.table_type == MERGE_ON_READ

    @property
    def ordering_field(self) -> str | None:
        """The field a MERGE_ON_READ read merges by: ``hoodie.table.precombine.field`` (ours, and
        Hudi 0.x), else the first of ``hoodie.table.ordering.fields`` (Apache Hudi 1.x)."""
        fields = self.properties.get("hoodie.table.precombine.field") or self.properties.get(
            "hoodie.table.ordering.fields", "")
        return fields.split(",")[0].strip() or None

    def check_writable(self, merge_on_read: bool = False) -> None:
        """Refuse a table this writer cannot write: another version, or another table type (a
        COPY_ON_WRITE writer on a MERGE_ON_READ table would leave its logs unmerged)."""
        self.check_supported()
        if self.merge_on_read != merge_on_read:
            raise UnsupportedTableError(
                f"{self.storage.uri} is a {self.table_type} table; this writer writes only "
                f"{MERGE_ON_READ if merge_on_read else COPY_ON_WRITE} tables"
            )
        if not self.writable:
            raise UnsupportedTableError(
                f"{self.storage.uri}: only table version 6 (timeline layout 1) is written by layoutbench"
            )

    # -- properties -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.properties.get("hoodie.table.name", "")

    @property
    def base_uri(self) -> str:
        return self.storage.uri

    @property
    def partition_fields(self) -> list[str]:
        raw = self.properties.get("hoodie.table.partition.fields", "")
        return [f for f in raw.split(",") if f]

    @property
    def record_key(self) -> str:
        return self.properties.get("hoodie.table.recordkey.fields", "")

    @property
    def hive_style(self) -> bool:
        return self.properties.get("hoodie.datasource.write.hive_style_partitioning", "false") == "true"

    def partition_path(self, value: str) -> str:
        field = self.partition_fields[0] if self.partition_fields else ""
        if not field:
            return ""
        return f"{field}={value}" if self.hive_style else value

    # -- timeline / view --------------------------------------------------------------------
    @property
    def timeline(self) -> Timeline:
        if self._timeline is None:
            self._timeline = Timeline.load(self.storage, self._completed_bytes)
        return self._timeline

    def refresh(self) -> Timeline:
        self._timeline = Timeline.load(self.storage, self._completed_bytes)
        return self._timeline

    def view(self, read_footers: bool = True) -> FileSystemView:
        return FileSystemView(self.storage, self.refresh(), read_footers=read_footers)

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """The completed instant's metadata (read through the timeline)."""
        return self.timeline.commit_metadata(instant)

    def latest_schema(self) -> str | None:
        for inst in reversed(self.refresh().completed_data_instants()):
            meta = self.commit_metadata(inst)
            if meta.schema:
                return meta.schema
        return None

    # -- transactions -----------------------------------------------------------------------
    def start(self, action: str, content: bytes = b"", inflight_content: bytes = b"") -> Instant:
        """Create ``<t>.<action>.requested`` and move it to inflight; returns the inflight instant."""
        timeline = self.refresh()
        ts = self.clock.next(timeline.last_timestamp())
        requested = timeline.create_requested(ts, action, content)
        faults.point(f"timeline.{action}.after_requested")
        return timeline.transition_to_inflight(requested, inflight_content)

    def _mark_partitions(self, partitions: Iterable[str], instant: str) -> None:
        """``<partition>/.hoodie_partition_metadata`` in every partition a commit writes, before the
        commit point: Apache Hudi finds a table's partitions by these files (without them, and
        without its metadata table, it reads no rows at all)."""
        for partition in partitions:
            if partition and partition not in self._marked_partitions:
                self.storage.create_exclusive(f"{partition}/{PARTITION_METAFILE}",
                                              _partition_metafile(instant, partition.count("/") + 1))
                self._marked_partitions.add(partition)

    def complete(self, instant: Instant, metadata: CommitMetadata, replace: bool = False) -> Instant:
        if instant.state != State.INFLIGHT:
            raise TimelineError(f"instant {instant} is not inflight")
        completed_action = REPLACE if instant.action == COMPACTION and replace else None
        self._mark_partitions(metadata.partition_to_write_stats, instant.timestamp)
        done = self.refresh().complete(instant, metadata.to_json(replace=replace), completed_action)
        self._timeline = None
        return done


def _partition_metafile(instant: str, depth: int) -> bytes:
    return f"#partition metadata\ncommitTime={instant}\npartitionDepth={depth}\n".encode()


def logical_clock(start: datetime) -> InstantClock:
    """Deterministic instants (start + n ms) for reproducible benchmark runs."""
    return InstantClock(logical_start=start)
