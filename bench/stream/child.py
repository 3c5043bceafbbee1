"""The streaming process the kill test SIGKILLs: ``python -m bench.stream.child SCENARIO ENGINE ROOT MASTER``.

It streams the scenario's batches into ``ROOT/table`` from the landing folder under ``ROOT``
(checkpoint ``ROOT/checkpoint``), with the design's services beside the stream, exactly as
``layoutbench stream``'s fixed-rate run; ``LAYOUTBENCH_CRASH_AT`` (``engines.table.faults``) kills
it at a step — an engine's (``option1.before_commit``, ``clustering.after_group_written``, ...)
or the sink's ``stream.after_table_commit`` (the table holds the micro-batch, Spark's commit log
does not). :func:`resume` is the restart: recover the table, then the same stream from the same
checkpoint, to the end.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from bench.scenario import Scenario, load_scenario
from bench.stream.engine_stream import StreamRun, stream_engine, stream_manual
from engines.kinds import kind_of


def resume(spark: Any, scenario: Scenario, engine_name: str, root: str | Path) -> tuple[Any, StreamRun]:
    """Recover ``ROOT/table`` (roll back what a kill left in flight) and stream to the end; returns
    the engine (open: the caller verifies and closes it) and the run."""
    from bench.crash_child import recover_table
    from bench.engine_factory import build_engine

    root = Path(root)
    es = next(e for e in scenario.engines if e.name == engine_name)
    table_path = str((root / "table").resolve())
    if kind_of(es.kind).hudi_rs_reads:  # a Hudi timeline to roll back
        recover_table(table_path)
    engine = build_engine(es.model_copy(update={"config": stream_manual(es.config, es.kind)}), scenario, table_path)
    run = stream_engine(spark, scenario, engine, es.kind, root, "fixed", scenario.stream.rate,
                        list(range(scenario.workload.num_batches)), root / "cache")
    return engine, run


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: python -m bench.stream.child SCENARIO ENGINE ROOT MASTER", file=sys.stderr)
        return 2
    from engines.spark.session import get_spark, warm_up

    scenario_path, engine_name, root, master = argv
    spark = get_spark(master, log_path=Path(root) / "spark-child.log")
    warm_up(spark)
    engine, run = resume(spark, load_scenario(scenario_path), engine_name, root)
    engine.close()
    if run.error:
        print(run.error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
