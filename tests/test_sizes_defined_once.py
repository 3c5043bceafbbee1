"""The byte unit and the Hudi default sizes are defined once (engines/table/sizes.py): every engine
config, the write path and the scenario's sizing take their defaults from there."""

from __future__ import annotations

import re
from pathlib import Path

from bench.scenario import SizingSpec
from engines.append_compaction.config import CompactionConfig
from engines.clustering.config import ClusteringConfig
from engines.cow_baseline.config import CowConfig
from engines.hudi.config import HudiConfig
from engines.table import sizes

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("engines", "bench", "reports", "runresults", "workloads")


def test_no_module_but_sizes_defines_the_byte_unit() -> None:
    unit = re.compile(r"^MB\s*=", re.M)
    found = [str(p.relative_to(REPO)) for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")
             if unit.search(p.read_text())]
    assert found == ["engines/table/sizes.py"], found


def test_configs_start_from_the_hudi_defaults() -> None:
    assert (CowConfig().small_file_limit, CowConfig().max_file_size, CowConfig().record_size_estimate) == (
        sizes.PARQUET_SMALL_FILE_LIMIT, sizes.PARQUET_MAX_FILE_SIZE, sizes.RECORD_SIZE_ESTIMATE)
    assert (CompactionConfig().small_file_limit, CompactionConfig().target_file_size) == (
        sizes.PARQUET_SMALL_FILE_LIMIT, sizes.PARQUET_MAX_FILE_SIZE)
    c = ClusteringConfig()
    assert (c.small_file_limit, c.target_file_size, c.max_bytes_per_group) == (
        sizes.CLUSTERING_SMALL_FILE_LIMIT, sizes.CLUSTERING_TARGET_FILE_MAX_BYTES, sizes.CLUSTERING_MAX_BYTES_PER_GROUP)
    h = HudiConfig()
    assert (h.small_file_limit, h.max_file_size, h.cleaner_commits_retained) == (
        sizes.PARQUET_SMALL_FILE_LIMIT, sizes.PARQUET_MAX_FILE_SIZE, sizes.CLEANER_COMMITS_RETAINED)
    s = SizingSpec()
    assert (s.small_file_limit_mb * sizes.MB, s.max_file_mb * sizes.MB, s.row_group_rows,
            s.cleaner_commits_retained) == (sizes.PARQUET_SMALL_FILE_LIMIT, sizes.PARQUET_MAX_FILE_SIZE,
                                            sizes.ROW_GROUP_ROWS, sizes.CLEANER_COMMITS_RETAINED)
