"""Recovery of a clean that crashed mid-way: the pending clean is abandoned, not finished; the next
clean plans again from the view and deletes what is still due."""

from __future__ import annotations

import pytest
from test_table_core import commit_files, make_table

from engines.table.cleaner import run_clean
from engines.table.rollback import recover
from engines.table.timeline import CLEAN, REPLACE


class Crash(Exception):
    pass


def crash_after_first_delete(step: str) -> None:
    if step == "clean.after_file_deleted":
        raise Crash(step)


def test_pending_clean_is_abandoned_by_recovery_and_replanned_by_the_next_clean(tmp_path) -> None:
    table = make_table(tmp_path)
    commit_files(table, [("dt=a", "f1-0"), ("dt=a", "f2-0")])
    commit_files(table, [("dt=a", "g1-0")], action=REPLACE, replaced={"dt=a": ["f1-0", "f2-0"]})
    commit_files(table, [("dt=b", "h1-0")])
    commit_files(table, [("dt=b", "h2-0")])
    snapshot = sorted(s.path for s in table.view().snapshot())
    replaced = {e.path for e in table.storage.list("dt=a") if e.path.split("/")[-1].startswith("f")}
    assert len(replaced) == 2

    with pytest.raises(Crash):
        run_clean(table, retained=1, on_step=crash_after_first_delete)
    assert [i.action for i in table.refresh().pending()] == [CLEAN]
    left_after_crash = {p for p in replaced if table.storage.exists(p)}
    assert len(left_after_crash) == 1

    recover(table)
    timeline = table.refresh()
    assert timeline.pending() == [] and timeline.completed([CLEAN]) == []  # abandoned, not finished
    assert {p for p in replaced if table.storage.exists(p)} == left_after_crash  # recovery deletes nothing
    assert sorted(s.path for s in table.view().snapshot()) == snapshot

    res = run_clean(table, retained=1)
    assert res.instant is not None and res.files_deleted == 1
    assert not any(table.storage.exists(p) for p in replaced)
    assert len(table.refresh().completed([CLEAN])) == 1
    assert sorted(s.path for s in table.view().snapshot()) == snapshot
