"""The one batch loop and the one reading of maintenance.mode (bench/batch_loop.py); no Spark."""

from __future__ import annotations

import pytest

from bench.batch_loop import EXECUTE, MAINTAIN, SCHEDULE, MaintenanceSchedule, run_batches


class Recorder:
    def __init__(self) -> None:
        self.log: list[str] = []

    def begin_batch(self, b: int) -> None:
        self.log.append(f"begin {b}")

    def ingest(self, t: str, b: int) -> None:
        self.log.append(f"ingest {t} {b}")

    def maintain(self, t: str, b: int, step: str) -> None:
        self.log.append(f"{step} {t} {b}")

    def end_batch(self, b: int) -> None:
        self.log.append(f"end {b}")

    def before_final(self, b: int) -> None:
        self.log.append("final")

    def checkpoint(self, b: int) -> None:
        self.log.append(f"queries {b}")


@pytest.mark.parametrize(("mode", "threads", "after", "final"), [
    ("inline", True, [(), (MAINTAIN,), (), (MAINTAIN,), ()], (MAINTAIN,)),
    ("schedule_inline", True, [(SCHEDULE,), (SCHEDULE, EXECUTE), (SCHEDULE,), (SCHEDULE, EXECUTE), (SCHEDULE,)],
     (EXECUTE,)),
    ("async", True, [()] * 5, (MAINTAIN,)),  # the runner's service thread; one last run after it stops
    ("async", False, [(), (MAINTAIN,), (), (MAINTAIN,), ()], (MAINTAIN,)),  # no wall clock: every N
    ("none", True, [()] * 5, ()),
])
def test_every_mode_is_read_one_way(mode: str, threads: bool, after: list, final: tuple) -> None:
    s = MaintenanceSchedule(mode, every=2, final=True, threads=threads)
    assert [s.after_commit(b) for b in range(5)] == after
    assert s.final_steps(5) == final
    assert MaintenanceSchedule(mode, 2, final=False, threads=threads).final_steps(5) == ()
    if mode != "async" or not threads:  # the last batch just maintained: no final run
        assert MaintenanceSchedule(mode, 5, final=True, threads=threads).final_steps(5) == ()


def test_loop_order_resume_and_checkpoints() -> None:
    rec = Recorder()
    run_batches(rec, ["a", "b"], MaintenanceSchedule("inline", 2, True), 3, checkpoints={1, 2})
    assert rec.log == ["begin 0", "ingest a 0", "ingest b 0", "end 0",
                       "begin 1", "ingest a 1", "maintain a 1", "ingest b 1", "maintain b 1", "end 1", "queries 1",
                       "begin 2", "ingest a 2", "ingest b 2", "end 2", "final", "maintain a 2", "maintain b 2",
                       "queries 2"]
    resumed = Recorder()
    run_batches(resumed, ["a"], MaintenanceSchedule("inline", 2, True), 3, start=2)
    assert resumed.log == ["begin 2", "ingest a 2", "end 2", "final", "maintain a 2"]
