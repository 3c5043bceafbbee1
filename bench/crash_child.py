"""The processes ``layoutbench crashtest`` kills, and the scenario loop it shares with them.

``python -m bench.crash_child run SCENARIO ENGINE TABLE MASTER [JAVA_OPTS]`` runs (or resumes) one
engine's batches with the scenario's inline maintenance schedule; with ``LAYOUTBENCH_CRASH_AT``
set it SIGKILLs itself at that point. ``python -m bench.crash_child recover TABLE`` only recovers
the table (rollback of failed instants, stale lock release) — no Spark — so a crash can be injected
into the rollback itself. :func:`run_to_end` is the loop; the crashtest parent calls it in-process,
on its warm Spark session, to finish a scenario after a crash.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from bench.scenario import Scenario, load_scenario
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT


def completed_ingest_commits(table: HudiTable) -> int:
    """Batches committed so far: every engine commits exactly one ``commit`` per batch."""
    return len(table.refresh().completed([COMMIT]))


def recover_table(table_path: str) -> list[Any]:
    """Roll back what a crash left behind; a no-op on a table that was never created."""
    from engines.table.rollback import recover
    from engines.table.storage import Storage

    if not Storage(table_path).exists(".hoodie/hoodie.properties"):
        return []
    return recover(HudiTable.open(table_path))


def run_to_end(scenario: Scenario, engine_name: str, table_path: str,
               on_boundary: Callable[[str], None] | None = None) -> int:
    """Recover the table, then run the engine's batches from the first uncommitted one to the end.

    ``on_boundary`` is called before every step (``ingest:<b>``, ``maintain:<b>``) and at the
    end (``end``), when no action is in flight. Returns the number of batches already committed
    when it started.
    """
    mark = on_boundary or (lambda label: None)
    from bench.engine_factory import build_engine
    from engines.spark.session import get_spark
    from workloads.generator import batch_df

    spec = next(e for e in scenario.engines if e.name == engine_name)
    spark = get_spark()
    recover_table(table_path)
    engine = build_engine(spec, scenario, table_path)
    try:
        start = completed_ingest_commits(engine.table)
        every = scenario.maintenance.every_commits
        if start > 0 and start % every == 0 and _maintenance_missing(engine.table):
            mark(f"maintain:{start - 1}")
            _maintain(engine)
        n = scenario.workload.num_batches
        for b in range(start, n):
            mark(f"ingest:{b}")
            engine.ingest(batch_df(spark, scenario.workload, b))
            engine.after_commit()
            if scenario.maintenance.mode != "none" and (b + 1) % every == 0:
                mark(f"maintain:{b}")
                _maintain(engine)
        if scenario.maintenance.final and n % every != 0:
            mark(f"maintain:{n - 1}")
            _maintain(engine)
        mark("end")
    finally:
        engine.close()
    return start


def _maintenance_missing(table: HudiTable) -> bool:
    """True when the last instant is an ingest commit or pending (the crash hit the maintenance)."""
    instants = table.refresh().instants
    return bool(instants) and (instants[-1].action == COMMIT or not instants[-1].is_completed)


def _maintain(engine: Any) -> None:
    instant = engine.schedule()
    if instant is None:
        pending = getattr(engine, "pending_plan", None)
        instant = pending() if callable(pending) else None
    if instant is not None:
        engine.execute(instant)
    engine.clean()


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
