"""The incremental and time-travel gates on every candidate of a run, after its last checkpoint
(the tables as the run left them): rows for the results' ``gates`` table, each engine's phases timed.

Which readers apply: Hudi-format tables (our designs, the control and Apache Hudi's own engines)
get ours, hudi-rs and Apache Hudi (when the session holds its bundle: :func:`needs_apache_hudi`);
Delta tables get delta-rs for time travel (versions), and the incremental gate is n/a for them:
the peer does not enable Delta's change data feed, so Delta offers no incremental read of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

import pyarrow as pa

from bench.gates import incremental, time_travel
from bench.gates.history import EngineHistory, HistoryError
from bench.gates.readers import APACHE_HUDI, DELTA_RS, HUDI_RS, OURS
from bench.gates.truth import HistoryTruth
from engines.kinds import kind_of

DELTA_NO_CDF = ("the Delta peer's tables are written without Delta's change data feed "
                "(delta.enableChangeDataFeed), so Delta offers no incremental read of them")


def needs_apache_hudi(kinds: Iterable[str]) -> bool:
    """Whether a run of engines of these kinds reads a Hudi-format table (Apache Hudi is then a reader
    of the gates, so the session loads its bundle)."""
    return any(kind_of(k).table_format == "hudi" for k in kinds)


def has_apache_hudi(spark: Any) -> bool:
    """Whether the session loaded Apache Hudi's Spark bundle."""
    from engines.spark.session import HUDI_BUNDLE

    packages = spark.sparkContext.getConf().get("spark.jars.packages", "") or ""
    return HUDI_BUNDLE in packages.split(",")


def history_gate_rows(engines: Iterable[Any], commits: list[Mapping[str, Any]], truth_parts: list[pa.Table],
                      retained: int, spark: Any | None,
                      timed: Callable[[str], AbstractContextManager[Any]],
                      updates: list[pa.Table] | None = None) -> list[dict[str, Any]]:
    """Both gates on each engine of the first repetition (``engines``: objects with ``name``,
    ``table_format`` and ``table``, or a Delta peer's ``path``). ``updates``: each batch's corrections
    (the upsert commits' rows), when the workload has them. ``timed(phase)`` times a block:
    ``gates/truth``, then ``gates/history``, both gates' readers in two lanes side by side: Apache
    Hudi's Spark reads in this thread (the session's), the readers without Spark (ours, hudi-rs,
    delta-rs) in a second one, each lane's own seconds as ``lanes/gates_apache_hudi`` and
    ``lanes/gates_readers``. A Spark read waits mostly on the JVM, so the other lane's Python, Rust
    and Arrow work fills the gaps; the rows are those of one lane after the other, in the same order."""
    with timed("gates/truth"):
        truth = HistoryTruth.of_batches(truth_parts, updates=updates)
    reference = spark if spark is not None and has_apache_hudi(spark) else None
    plans: list[tuple[Any, EngineHistory | None, list[str], list[dict[str, Any]]]] = []
    for engine in engines:  # what both lanes need, read here once: the history, the pulls' instants
        try:
            history = EngineHistory.of_commits(engine.name, truth, commits)
        except HistoryError as exc:
            plans.append((engine, None, [], [{"engine": engine.name, "gate": gate.GATE, "reader": "ground_truth",
                                              "passed": False, "checked": 0, "failures": 1, "figure": None,
                                              "figure_unit": gate.UNIT,
                                              "detail": f"the run's commits cannot be checked: {exc}"}
                                             for gate in (incremental, time_travel)]))
            continue
        history.prepare()  # its shared sums computed before two threads read them
        begins = incremental.pull_begins(engine.table, history) if engine.table_format != "delta" else []
        plans.append((engine, history, begins, []))

    def readers_lane() -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
        """Per engine: the incremental and time-travel rows of the readers without Spark."""
        out = {}
        with timed("lanes/gates_readers"):
            for engine, history, begins, _ in plans:
                if history is None:
                    continue
                if engine.table_format == "delta":
                    out[engine.name] = ([incremental.not_applicable(engine.name, DELTA_RS, DELTA_NO_CDF)],
                                        time_travel.delta_gate_rows(engine.name, engine.path, history, retained,
                                                                    "trace_id", engine.options))
                    continue
                local = engine.table.storage.is_local
                out[engine.name] = ([incremental.snapshot_row(engine.name, engine.table, history, begins, local)],
                                    time_travel.gate_rows(engine.name, engine.table, history, retained, None,
                                                          (OURS, HUDI_RS) if local else (OURS,)))
        return out

    apache: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    with timed("gates/history"), ThreadPoolExecutor(1, thread_name_prefix="gates-readers") as lane:
        others = lane.submit(readers_lane)
        with timed("lanes/gates_apache_hudi"):
            for engine, history, begins, _ in plans:
                if history is None or engine.table_format == "delta":
                    continue
                pulls = incremental.apache_hudi_row(engine.name, engine.table.base_uri, history, begins, reference)
                apache[engine.name] = ([pulls] if pulls is not None else [],
                                       time_travel.gate_rows(engine.name, engine.table, history, retained, reference,
                                                             (APACHE_HUDI,)))
        theirs = others.result()
    rows: list[dict[str, Any]] = []
    for engine, history, _, failed in plans:
        if history is None:
            rows += failed
            continue
        mine_inc, mine_tt = theirs[engine.name]
        spark_inc, spark_tt = apache.get(engine.name, ([], []))
        rows += mine_inc + spark_inc + mine_tt + spark_tt
    return rows
