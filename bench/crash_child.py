"""The processes ``layoutbench crashtest`` kills, and the scenario loop it shares with them.

``python -m bench.crash_child run SCENARIO ENGINE TABLE MASTER [JAVA_OPTS]`` runs (or resumes) one
engine's batches through the one batch loop (:mod:`bench.batch_loop`) with the scenario's maintenance
schedule; with ``LAYOUTBENCH_CRASH_AT``
set it SIGKILLs itself at that point. ``python -m bench.crash_child recover TABLE`` only recovers
the table (rollback of failed instants, stale lock release) — no Spark — so a crash can be injected
into the rollback itself. :func:`run_to_end` is the loop; the crashtest parent calls it in-process,
on its warm Spark session, to finish a scenario after a crash.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from bench.batch_loop import ROUND_RUNS, SCHEDULE, MaintenanceSchedule, run_batches
from bench.scenario import Scenario, load_scenario
from engines.base import Engine
from engines.maintenance_round import MaintenanceRound, schedule_if_idle
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT, DELTACOMMIT


def completed_ingest_commits(table: HudiTable) -> int:
    """Batches committed so far: every engine commits exactly one ``commit`` (a MERGE_ON_READ engine
    one ``deltacommit``) per batch; a MERGE_ON_READ compaction also completes as a ``commit``, not counted."""
    timeline = table.refresh()
    return sum(1 for i in timeline.completed([COMMIT, DELTACOMMIT])
               if i.action == DELTACOMMIT or table.commit_metadata(i).operation_type != "COMPACT")


def recover_table(table_path: str) -> list[Any]:
    """Roll back what a crash left behind; a no-op on a table that was never created."""
    from engines.table.rollback import recover
    from engines.table.storage import Storage

    if not Storage(table_path).exists(".hoodie/hoodie.properties"):
        return []
    return recover(HudiTable.open(table_path))


class _ChildSteps:
    """The crash child's part of the batch loop (:func:`bench.batch_loop.run_batches`): one engine,
    ``on_boundary`` marked before every step, when no action is in flight."""

    def __init__(self, spark: Any, scenario: Scenario, mark: Callable[[str], None]) -> None:
        self.spark, self.scenario, self.mark = spark, scenario, mark

    def begin_batch(self, b: int) -> None:
        return None

    def ingest(self, engine: Engine, b: int) -> None:
        from workloads.generator import batch_df

        self.mark(f"ingest:{b}")
        engine.ingest(batch_df(self.spark, self.scenario.workload, b))
        engine.after_commit()

    def maintain(self, engine: Engine, b: int, step: str) -> None:
        if step != SCHEDULE:  # a schedule alone is part of the ingest boundary, as Hudi's writer does it
            self.mark(f"maintain:{b}")
        maintain(engine, step)

    def end_batch(self, b: int) -> None:
        return None

    def before_final(self, b: int) -> None:
        return None

    def checkpoint(self, b: int) -> None:
        return None


def maintain(engine: Engine, step: str) -> None:
    """One maintenance step of :mod:`bench.batch_loop`, without recording (the crash child's): the
    runner's rounds (:func:`bench.runner.maintain`), from :mod:`engines.maintenance_round`."""
    if step == SCHEDULE:
        schedule_if_idle(engine)
        return
    MaintenanceRound(engine, ROUND_RUNS[step]).run()


def run_to_end(scenario: Scenario, engine_name: str, table_path: str,
               on_boundary: Callable[[str], None] | None = None) -> int:
    """Recover the table, then run the engine's batches from the first uncommitted one to the end.

    ``on_boundary`` is called before every step (``ingest:<b>``, ``maintain:<b>``) and at the
    end (``end``), when no action is in flight. Returns the number of batches already committed
    when it started. The schedule is :class:`bench.batch_loop.MaintenanceSchedule` without threads (a
    crash child has no wall clock: async maintenance runs every N commits).
    """
    mark = on_boundary or (lambda label: None)
    from bench.engine_factory import build_engine
    from engines.spark.session import get_spark

    spec = next(e for e in scenario.engines if e.name == engine_name)
    spark = get_spark()
    recover_table(table_path)
    engine = build_engine(spec, scenario, table_path)
    schedule = MaintenanceSchedule.of(scenario, threads=False)
    try:
        start = completed_ingest_commits(engine.table)
        due = schedule.after_commit(start - 1) if start > 0 else ()
        if [s for s in due if s != SCHEDULE] and _maintenance_missing(engine.table):
            mark(f"maintain:{start - 1}")  # the crash hit the maintenance after the last committed batch
            for step in due:
                maintain(engine, step)
        n = scenario.workload.num_batches
        if start < n:
            run_batches(_ChildSteps(spark, scenario, mark), [engine], schedule, n, start)
        elif schedule.final_steps(n):  # every batch committed: the crash hit the final maintenance
            mark(f"maintain:{n - 1}")
            for step in schedule.final_steps(n):
                maintain(engine, step)
        mark("end")
    finally:
        engine.close()
    return start


def _maintenance_missing(table: HudiTable) -> bool:
    """True when the last instant is an ingest commit or pending (the crash hit the maintenance)."""
    instants = table.refresh().instants
    return bool(instants) and (instants[-1].action in (COMMIT, DELTACOMMIT) or not instants[-1].is_completed)


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "recover":
        recover_table(argv[1])
        return 0
    if len(argv) >= 5 and argv[0] in ("run", "warmup"):
        from engines.spark.session import get_spark, s3a_conf, stop_spark
        from engines.table.storage import s3_location

        scenario_path, engine_name, table_path, master = argv[1:5]
        java_opts = argv[5] if len(argv) > 5 else ""
        conf = {"spark.driver.extraJavaOptions": java_opts} if java_opts else {}
        loc = s3_location(table_path)
        if loc is not None:  # a table on an object store: Spark reads its files through s3a
            conf |= s3a_conf(loc)
        get_spark(master, conf=conf or None)
        run_to_end(load_scenario(scenario_path), engine_name, table_path)
        if argv[0] == "warmup":
            stop_spark()  # a clean JVM exit writes the class-data archive
        return 0
    print("usage: python -m bench.crash_child run|warmup SCENARIO ENGINE TABLE MASTER [JAVA_OPTS]\n"
          "       python -m bench.crash_child recover TABLE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
