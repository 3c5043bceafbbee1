"""Micro-benchmarks of the hot paths (``make bench-micro``; reported, never asserted):
planners on 100,000 slices, the file-system view over 100,000 base files (write stats with and
without per-column min/max; and with every slice's min/max then read), and replace metadata
with 300,000 replaced file ids, serialise and parse timed apart and reported against the RFC's Java
figures (103 ms + 130 ms) in ``extra_info`` (``vs_rfc`` = our median / the RFC's)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.planner import plan_base_file_compaction
from engines.clustering.config import ClusteringConfig
from engines.clustering.planner import plan_clustering
from engines.config.registry import MB
from engines.cow_baseline.assign import assign_inserts
from engines.cow_baseline.config import CowConfig
from engines.table.metadata import CommitMetadata, WriteStat
from engines.table.model import FileSlice, base_file_name
from engines.table.storage import Storage
from engines.table.timeline import Timeline
from engines.table.view import FileSystemView

N = 100_000


def slices(n: int = N) -> list[FileSlice]:
    return [FileSlice(f"dt=p{i % 1000:04d}", f"f{i:08d}-0", "20260101000000000",
                      f"dt=p{i % 1000:04d}/f{i:08d}-0_0-0-0_20260101000000000.parquet", (i % 97 + 1) * MB // 4, 1000,
                      {"ts": (i, i + 50)}) for i in range(n)]


@pytest.mark.benchmark(group="planners")
def test_plan_clustering_100k(benchmark) -> None:
    data = slices()
    plan = benchmark(plan_clustering, data, ClusteringConfig(small_file_limit=20 * MB, target_file_size=30 * MB,
                                                             max_num_groups=100_000))
    assert plan is not None


@pytest.mark.benchmark(group="planners")
def test_plan_sort_overlap_100k(benchmark) -> None:
    data = slices()
    benchmark(plan_clustering, data, ClusteringConfig(small_file_limit=20 * MB, target_file_size=30 * MB,
                                                      sort_columns=("ts",), max_num_groups=100_000))


@pytest.mark.benchmark(group="planners")
def test_plan_compaction_100k(benchmark) -> None:
    data = slices()
    assert benchmark(plan_base_file_compaction, data, CompactionConfig(small_file_limit=20 * MB)) is not None


@pytest.mark.benchmark(group="planners")
def test_assign_inserts_100k(benchmark) -> None:
    by_part: dict[str, list[FileSlice]] = {}
    for s in slices():
        by_part.setdefault(s.partition, []).append(s)
    benchmark(assign_inserts, by_part, {p: 5000 for p in by_part}, 100, CowConfig())


_T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Min/max of every column of a generated row, as our write path records them in each write stat.
_ROW_STATS = {"ts": (_T0, _T0 + timedelta(minutes=10)), "service": ("svc-000", "svc-019"),
              "host": ("host-0000", "host-0999"), "level": ("DEBUG", "WARN"),
              "trace_id": ("0003f2a9c4d1e8b7-000001-00000000", "fffa41c2d9e0b3a8-000001-00009999"),
              "latency_ms": (1.274, 2381.5), "message": ("DEBUG [svc-000] /api/v1/orders", "WARN [svc-019] /internal")}


def _table_of_100k(root: Path, column_stats: bool) -> Storage:
    """100,000 empty base files in 100 partitions under one completed commit, its write stats with
    the files' column min/max (as our tables record them) or without (as Apache Hudi's)."""
    ts = "20260101000000000"
    stats = []
    for p in range(100):
        part = f"dt=p{p:03d}"
        (root / part).mkdir()
        for i in range(1000):
            name = base_file_name(f"f{p:03d}{i:05d}-0", "0-0-0", ts)
            (root / part / name).touch()
            cs = {**_ROW_STATS, "dt": (part, part)} if column_stats else {}
            stats.append(WriteStat(f"f{p:03d}{i:05d}-0", part, f"{part}/{name}", 10, 0, column_stats=cs))
    (root / ".hoodie").mkdir()
    (root / ".hoodie" / f"{ts}.commit").write_bytes(CommitMetadata("INSERT", stats).to_json())
    return Storage(str(root))


@pytest.fixture(scope="module")
def big_table(tmp_path_factory) -> Storage:
    return _table_of_100k(tmp_path_factory.mktemp("view100k"), column_stats=False)


@pytest.fixture(scope="module")
def big_table_with_stats(tmp_path_factory) -> Storage:
    return _table_of_100k(tmp_path_factory.mktemp("view100k_stats"), column_stats=True)


def _view_size(storage: Storage) -> int:
    return len(FileSystemView(storage, Timeline.load(storage), read_footers=False).snapshot())


@pytest.mark.benchmark(group="view")
def test_view_over_100k_files(benchmark, big_table) -> None:
    assert benchmark.pedantic(_view_size, args=(big_table,), rounds=3, iterations=1) == 100_000


@pytest.mark.benchmark(group="view")
def test_view_over_100k_files_with_column_stats(benchmark, big_table_with_stats) -> None:
    """The same view when every write stat carries the min/max of 8 columns, as on our own tables:
    the commit file is about twice the size and each slice gets its column statistics."""
    assert benchmark.pedantic(_view_size, args=(big_table_with_stats,), rounds=3, iterations=1) == 100_000


def _view_and_every_stat(storage: Storage) -> int:
    slices = FileSystemView(storage, Timeline.load(storage), read_footers=False).snapshot()
    return sum(len(s.column_stats) for s in slices)


@pytest.mark.benchmark(group="view")
def test_view_over_100k_files_then_every_column_stat_read(benchmark, big_table_with_stats) -> None:
    """The view with column statistics, then every slice's statistics read, as a planner over the
    whole table does: views decode them only when first read, so this is the cost they defer."""
    assert benchmark.pedantic(_view_and_every_stat, args=(big_table_with_stats,), rounds=3, iterations=1) == 800_000


RFC_JAVA_MS = {"serialise": 103, "deserialise": 130}  # RFC-19: 300k replaced file ids, Java


def _replace_300k() -> CommitMetadata:
    return CommitMetadata("CLUSTER", [], replaced_file_ids={"dt=a": [f"{i:036d}-0" for i in range(300_000)]})


@pytest.mark.benchmark(group="metadata")
def test_replace_metadata_300k_serialise(benchmark) -> None:
    meta = _replace_300k()
    data = benchmark.pedantic(meta.to_json, kwargs={"replace": True}, rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(rfc_java_ms=RFC_JAVA_MS["serialise"], bytes=len(data),
                                vs_rfc=benchmark.stats.stats.median * 1000 / RFC_JAVA_MS["serialise"])


@pytest.mark.benchmark(group="metadata")
def test_replace_metadata_300k_deserialise(benchmark) -> None:
    data = _replace_300k().to_json(replace=True)
    meta = benchmark.pedantic(CommitMetadata.from_json, args=(data,), rounds=5, iterations=1, warmup_rounds=1)
    assert sum(len(v) for v in meta.replaced_file_ids.values()) == 300_000
    benchmark.extra_info.update(rfc_java_ms=RFC_JAVA_MS["deserialise"],
                                vs_rfc=benchmark.stats.stats.median * 1000 / RFC_JAVA_MS["deserialise"])
