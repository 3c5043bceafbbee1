"""The incremental and time-travel gates on every candidate of a run, after its last checkpoint
(the tables as the run left them): rows for the results' ``gates`` table, each engine's phases timed.

Which readers apply: Hudi-format tables (our designs, the control and Apache Hudi's own engines)
get ours, hudi-rs and Apache Hudi (when the session holds its bundle: :func:`needs_apache_hudi`);
Delta tables get delta-rs for time travel (versions), and the incremental gate is n/a for them:
the peer does not enable Delta's change data feed, so Delta offers no incremental read of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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
    return any(kind_of(k).hudi_rs_reads for k in kinds)


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
    (the upsert commits' rows), when the workload has them. ``timed(phase)`` times a block
    (``gates/incremental/<engine>``, ``gates/time_travel/<engine>``, ``gates/truth``)."""
    with timed("gates/truth"):
        truth = HistoryTruth.of_batches(truth_parts, updates=updates)
    reference = spark if spark is not None and has_apache_hudi(spark) else None
    rows: list[dict[str, Any]] = []
    for engine in engines:
        name = engine.name
        try:
            history = EngineHistory.of_commits(name, truth, commits)
        except HistoryError as exc:
            for gate in (incremental, time_travel):
                rows.append({"engine": name, "gate": gate.GATE, "reader": "ground_truth", "passed": False,
                             "checked": 0, "failures": 1, "figure": None, "figure_unit": gate.UNIT,
                             "detail": f"the run's commits cannot be checked: {exc}"})
            continue
        if engine.table_format == "delta":
            rows.append(incremental.not_applicable(name, DELTA_RS, DELTA_NO_CDF))
            with timed(f"gates/time_travel/{name}"):
                rows += time_travel.delta_gate_rows(name, engine.path, history, retained,
                                                    "trace_id", engine.options)
            continue
        table = engine.table
        local = table.storage.is_local
        with timed(f"gates/incremental/{name}"):
            rows += incremental.gate_rows(name, table, history, reference, hudi_rs=local)
        readers = (OURS, HUDI_RS, APACHE_HUDI) if local else (OURS, APACHE_HUDI)
        with timed(f"gates/time_travel/{name}"):
            rows += time_travel.gate_rows(name, table, history, retained, reference, readers)
    return rows
