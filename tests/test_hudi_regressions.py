"""Known Apache Hudi failure modes as regression tests (hudi-semantics.md §9): #6938 archived
replacecommits resurrecting replaced files, #4163 a long-pending plan across archival, #6212 a
clustering job run twice, #9257 a plan whose input was cleaned; plus time travel past the cleaner."""

from __future__ import annotations

import pytest
from engine_helpers import hudi_keys, ingest, keys, new_table, spec, truth_keys

from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import ClusteringEngine, Option2Config
from engines.table.archiver import ArchiveConfigError, plan_archive, run_archive
from engines.table.timeline import REPLACE, State, TimelineError
from engines.table.view import AsOfError

ARCHIVE = {"keep_min": 3, "keep_max": 4, "cleaner_commits_retained": 2}


def engine(path, target: int = 1 << 30) -> ClusteringEngine:
    return ClusteringEngine(new_table(path), Option2Config(
        clustering=ClusteringConfig(small_file_limit=1 << 30, target_file_size=target), row_group_rows=500,
        cleaner_commits_retained=2, bloom_filter=False))  # sub-MB targets: data bytes only


def test_6938_replacecommit_is_not_archived_before_its_files_are_cleaned(spark, tmp_path) -> None:
    ws = spec(num_batches=8, batch_records=500)
    e = engine(tmp_path / "t")
    ingest(spark, e, ws, range(3))
    replace = e.execute(e.schedule()).instant
    ingest(spark, e, ws, range(3, 8))  # 9 data instants: far past keep_max, no clean has run
    guarded = run_archive(e.table, **ARCHIVE)
    assert guarded.boundary == replace and guarded.reason == "first replacecommit not yet cleaned"
    assert e.table.refresh().get(replace) is not None
    assert keys(e.table) == truth_keys(ws, 7) == hudi_keys(e.table)

    unsafe = tmp_path / "unsafe"  # the same table under pre-HUDI-5054 archival: the hazard is real
    import shutil

    shutil.copytree(e.table.storage.local_path(), unsafe)
    from engines.table.table import HudiTable

    old = HudiTable.open(str(unsafe))
    assert replace in {i.timestamp for i in run_archive(old, **ARCHIVE, respect_clean=False).instants}
    dup = keys(old)
    assert len(dup) > len(set(dup)) == len(truth_keys(ws, 7))

    cleaned = e.clean()  # the cleaner removes the replaced groups; now the replacecommit may go
    assert cleaned is not None and cleaned.files_deleted > 0
    done = run_archive(e.table, **ARCHIVE)
    assert replace in {i.timestamp for i in done.instants} and e.table.refresh().get(replace) is None
    assert keys(e.table) == truth_keys(ws, 7) == hudi_keys(e.table)


def test_4163_long_pending_plan_survives_archival_and_completes_correctly(spark, tmp_path) -> None:
    ws = spec(num_batches=9, batch_records=500)
    e = engine(tmp_path / "t")
    ingest(spark, e, ws, range(3))
    before_plan = e.table.refresh().completed()[-1].timestamp
    pending = e.schedule()
    ingest(spark, e, ws, range(3, 9))
    plan = run_archive(e.table, **ARCHIVE)
    assert plan.reason == "earliest pending instant" and plan.boundary == before_plan  # HUDI-5728
    timeline = e.table.refresh()
    assert timeline.get(pending).state == State.REQUESTED and timeline.get(before_plan) is not None
    assert keys(e.table) == truth_keys(ws, 8) == hudi_keys(e.table)
    e.execute(pending)
    assert keys(e.table) == truth_keys(ws, 8) == hudi_keys(e.table)


def test_6212_clustering_run_twice_writes_each_output_once(spark, tmp_path) -> None:
    ws = spec(num_batches=4, batch_records=500)
    e = engine(tmp_path / "t", target=120_000)
    ingest(spark, e, ws, range(4))
    instant = e.schedule()
    planned = sum(g.num_output_files for g in e.load_plan(instant).groups)
    res = e.execute(instant)
    with pytest.raises(TimelineError, match="not pending"):
        e.execute(instant)
    written = [b for b in e.table.view().base_files if b.instant == instant]
    assert res.files_out == len(written) == planned > 1
    assert keys(e.table) == truth_keys(ws, 3) == hudi_keys(e.table)


def test_9257_plan_whose_input_was_cleaned_fails_clearly_and_stays_pending(spark, tmp_path) -> None:
    ws = spec(num_batches=3, batch_records=500)
    e = engine(tmp_path / "t")
    ingest(spark, e, ws, range(3))
    instant = e.schedule()
    victim = e.load_plan(instant).groups[0].slices[0].path
    e.table.storage.delete(victim)  # what a faulty external clean job did in #9257
    listing = sorted(x.path for x in e.table.storage.list("", recursive=True))
    with pytest.raises(TimelineError, match="no longer exist") as err:
        e.execute(instant)
    assert victim in str(err.value)
    assert e.table.refresh().get(instant).state == State.REQUESTED
    assert sorted(x.path for x in e.table.storage.list("", recursive=True)) == listing


def test_time_travel_past_the_cleaner_is_refused_not_silently_short(spark, tmp_path) -> None:
    ws = spec(num_batches=6, batch_records=500)
    e = engine(tmp_path / "t")
    ingest(spark, e, ws, range(3))
    first = e.table.refresh().completed()[0].timestamp
    e.execute(e.schedule())
    ingest(spark, e, ws, range(3, 6))
    res = e.clean()
    assert res is not None and res.files_deleted > 0
    with pytest.raises(AsOfError, match="earliest commit the last clean"):
        e.table.view().snapshot(as_of=first)
    retained = e.table.view().earliest_retained_by_cleaner()[0]
    n = [c.timestamp for c in e.table.refresh().completed_data_instants() if c.action != REPLACE].index(retained)
    assert keys(e.table, e.table.view().snapshot(as_of=retained)) == truth_keys(ws, n)


def test_archive_config_follows_hudi_validation(tmp_path) -> None:
    view = new_table(tmp_path / "t").view()
    with pytest.raises(ArchiveConfigError, match="keep_max"):
        plan_archive(view, keep_min=5, keep_max=5)
    with pytest.raises(ArchiveConfigError, match="cleaner_commits_retained"):
        plan_archive(view, keep_min=3, keep_max=6, cleaner_commits_retained=3)
