"""Bad input gets one clear error naming the problem, and the table is left as it was."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from engines.spark.insert import insert_new_file_groups
from engines.table.metadata import MetadataError
from engines.table.schema import SchemaMismatchError
from engines.table.table import HudiTable, TableConfig, logical_clock
from engines.table.transaction import EmptyBatchError


def listing(table: HudiTable) -> list[tuple[str, int]]:
    return [(e.path, e.size) for e in table.storage.list("", recursive=True)]


@pytest.fixture()
def table(tmp_path, spark):
    t = HudiTable.create(str(tmp_path / "t"), TableConfig("t", "dt", "trace_id"),
                         clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))
    df = spark.createDataFrame([(datetime(2026, 1, 1, tzinfo=UTC), "2026-01-01", "k1", 1.0)],
                               "ts timestamp, dt string, trace_id string, latency_ms double")
    insert_new_file_groups(t, df)
    return t


def test_schema_mismatch_names_columns_and_changes_nothing(spark, table) -> None:
    before = listing(table)
    bad = spark.createDataFrame([(datetime(2026, 1, 1, tzinfo=UTC), "2026-01-01", "k2", "slow")],
                                "ts timestamp, dt string, trace_id string, latency_ms string")
    with pytest.raises(SchemaMismatchError, match="latency_ms"):
        insert_new_file_groups(table, bad)
    extra = spark.createDataFrame([(datetime(2026, 1, 1, tzinfo=UTC), "2026-01-01", "k2", 1.0, 3)],
                                  "ts timestamp, dt string, trace_id string, latency_ms double, extra int")
    with pytest.raises(SchemaMismatchError, match="unexpected column 'extra'"):
        insert_new_file_groups(table, extra)
    assert listing(table) == before


def test_empty_batch_is_refused_and_leaves_no_instant(spark, table) -> None:
    before = [i for i in table.refresh()]
    empty = spark.createDataFrame([], "ts timestamp, dt string, trace_id string, latency_ms double")
    with pytest.raises(EmptyBatchError, match="empty"):
        insert_new_file_groups(table, empty)
    assert [i for i in table.refresh()] == before
    assert not table.storage.exists(".hoodie/.layoutbench.lock")


def test_unreadable_completed_instant_is_named(table) -> None:
    inst = table.refresh().completed()[-1]
    table.storage.write_atomic(f".hoodie/{inst.timestamp}.commit", b"{not json")
    with pytest.raises(MetadataError, match=f"{inst.timestamp}.commit"):
        table.view().snapshot()


def test_merge_on_read_table_is_refused_by_every_cow_engine(hudi_fixtures, tmp_path) -> None:
    from test_table_fixtures import MOR, extract

    from bench.engine_factory import build_engine
    from bench.scenario import load_scenario
    from engines.table.properties import UnsupportedTableError

    root = extract(hudi_fixtures, MOR[0], tmp_path)
    before = sorted((p.relative_to(root), p.stat().st_size) for p in root.rglob("*"))
    scenario = load_scenario(str(Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "crash.yaml"))
    for spec in scenario.engines:
        with pytest.raises(UnsupportedTableError, match="is a MERGE_ON_READ table; this engine writes COPY_ON_WRITE tables"):
            build_engine(spec, scenario, str(root))
    assert sorted((p.relative_to(root), p.stat().st_size) for p in root.rglob("*")) == before
