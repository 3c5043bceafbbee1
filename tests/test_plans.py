"""Pending plans are read in one place (engines.table.plans); the timeline hands the view what a
snapshot excludes. No Spark."""

from __future__ import annotations

import pytest
from test_table_core import commit_files, make_table

from engines.append_compaction.plan import BaseFileCompactionOperation, BaseFileCompactionPlan
from engines.clustering.plan import ClusteringGroup, ClusteringPlan, RequestedReplace
from engines.table import plans
from engines.table.avro import PlanFileError
from engines.table.cleaner import plan_clean
from engines.table.metadata import CommitMetadata
from engines.table.timeline import COMPACTION, REPLACE, TimelineError


def test_pending_plans_answer_which_files_they_read(tmp_path) -> None:
    table = make_table(tmp_path)
    c1 = commit_files(table, [("dt=a", "f1-0"), ("dt=a", "f2-0"), ("dt=b", "f3-0")])
    snap = {s.file_id: s for s in table.view().snapshot()}
    clustering = ClusteringPlan([ClusteringGroup("dt=a", [snap["f1-0"], snap["f2-0"]], 1)], 100, [])
    r = commit_files(table, [], action=REPLACE, complete=False, plan=RequestedReplace(clustering).encode())
    compaction = BaseFileCompactionPlan((BaseFileCompactionOperation((snap["f3-0"].path,), "dt=b"),))
    ts = table.clock.next(table.refresh().last_timestamp())
    table.timeline.create_requested(ts, COMPACTION, compaction.encode())
    timeline = table.refresh()

    inputs = plans.pending_inputs(timeline)
    assert [(p.instant, p.action) for p in inputs] == [(r.timestamp, REPLACE), (ts, COMPACTION)]
    assert inputs[0].paths == (snap["f1-0"].path, snap["f2-0"].path)
    assert inputs[1].file_groups == (("dt=b", "f3-0"),)
    assert plans.pending_paths(timeline) == {snap["f1-0"].path: r.timestamp, snap["f2-0"].path: r.timestamp,
                                             snap["f3-0"].path: ts}
    view = table.view()
    assert view.pending_clustering_file_groups() == {("dt=a", "f1-0"): r.timestamp, ("dt=a", "f2-0"): r.timestamp}
    assert view.pending_compaction_paths() == {snap["f3-0"].path: ts}
    # the engines' plan objects come from the same record
    assert RequestedReplace.from_avro(plans.load_plan(timeline, r.timestamp, REPLACE)).plan.file_groups == \
        clustering.file_groups
    assert BaseFileCompactionPlan.from_avro(plans.load_plan(timeline, ts, COMPACTION)) == compaction
    with pytest.raises(TimelineError, match="not a base-file compaction instant"):
        plans.load_plan(timeline, r.timestamp, COMPACTION)
    with pytest.raises(TimelineError, match="not a clustering instant"):
        plans.load_plan(timeline, c1.timestamp, REPLACE)
    # the cleaner never deletes what a pending plan reads, whatever the retention
    for _ in range(3):
        commit_files(table, [("dt=a", "f1-0"), ("dt=b", "f3-0")])
    doomed = {f.path for f in plan_clean(table.view(), retained=1).files_to_delete}
    assert not doomed & set(plans.pending_paths(table.refresh()))


def test_unreadable_plan_names_its_file(tmp_path) -> None:
    table = make_table(tmp_path)
    r = commit_files(table, [], action=REPLACE, complete=False, plan=b"not avro")
    with pytest.raises(PlanFileError, match=rf"\.hoodie/{r.timestamp}\.replacecommit\.requested"):
        plans.pending_inputs(table.refresh())


def test_timeline_hands_the_view_replaced_file_groups(tmp_path) -> None:
    table = make_table(tmp_path)
    commit_files(table, [("dt=a", "f1-0"), ("dt=a", "f2-0")])
    r = commit_files(table, [("dt=a", "c1-0")], action=REPLACE, replaced={"dt=a": ["f1-0", "f2-0"]})
    timeline = table.refresh()
    assert timeline.replaced_file_groups() == {("dt=a", "f1-0"): r.timestamp, ("dt=a", "f2-0"): r.timestamp}
    assert timeline.replaced_file_groups(as_of=timeline.instants[0].timestamp) == {}
    assert isinstance(timeline.commit_metadata(timeline.get(r.timestamp)), CommitMetadata)
    assert [s.file_id for s in table.view().snapshot()] == ["c1-0"]
    view = table.view()
    assert not hasattr(view, "commit_metadata") and not hasattr(view, "replaced_file_groups")
