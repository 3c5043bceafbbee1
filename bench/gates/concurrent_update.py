"""The concurrent-update gate: an upsert that arrives during maintenance is either applied or
refused with an error naming the plan, and nothing is lost.

On a scratch table of the candidate (its own engine, the scenario's sizing, the scenario's first
batches up to its first maintenance), a plan is scheduled and an upsert (earlier keys, changed
latency and message: :func:`workloads.generator.batch_updates_table`) arrives twice: half of it
while the plan is pending (between schedule and execute), the other half while it is inflight
(from another thread, at the executor's ``after_inflight`` step, when the writer lock is free). The
maintenance then completes and the cleaner runs. The table must equal the ground truth with every
applied half and without every refused one: rows missing or duplicated, and applied updates whose
value is gone (an update the maintenance overwrote, Hudi's HUDI-3846 under the allow strategy),
are lost rows. A refusal must name the plan's instant. An engine that takes no upsert at all (the
append-only control, the Delta peer) is n/a with the reason: an update it cannot take is not a behaviour to invent;
so is one that schedules no plan (the COW baseline: nothing for an update to race).
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.batch_frame import batch_frame
from bench.gates import gate_row, not_applicable
from bench.scenario import EngineSpec, Scenario
from engines.base import Engine, InsertsOnlyError
from engines.maintenance_round import MaintenanceRound, Runs
from engines.table.mor import snapshot_read
from workloads.generator import batch_table, batch_updates_table

GATE = "concurrent_update"
READER = "ours"  # the snapshot's files read with pyarrow
UPDATE_FRACTION = 0.05  # of the batch the updates arrive with: keys of earlier batches
ARRIVALS = ("pending", "inflight")
_COLUMNS = ["_hoodie_record_key", "latency_ms", "message"]


@dataclass
class Arrival:
    """What happened to one half of the upsert."""

    when: str  # pending / inflight
    rows: pa.Table
    outcome: str = "not arrived"  # applied / refused / error / not arrived
    error: str = ""


class ScratchBatches:
    """What every candidate's scratch table is given, made once for all of them (as the run's batch loop
    hands every engine one frame per batch): the scenario's first batches (rows and cached frames), and
    the upsert's two halves (rows and frames). Made on first use; :meth:`close` unpersists the frames."""

    def __init__(self, spark: Any, scenario: Scenario) -> None:
        self.spark = spark
        self.workload = scenario.workload
        self.k = batches_before_maintenance(scenario)
        self._tables: list[pa.Table] | None = None
        self._frames: list[Any] = []
        self._halves: list[tuple[pa.Table, Any]] | None = None

    def tables(self) -> list[pa.Table]:
        """The first :attr:`k` batches' rows (:func:`workloads.generator.batch_table`)."""
        if self._tables is None:
            self._tables = [batch_table(self.workload, b) for b in range(self.k)]
        return self._tables

    def frame(self, b: int) -> Any:
        """Batch ``b``'s frame (:func:`bench.batch_frame.batch_frame`), cached until :meth:`close`."""
        while len(self._frames) <= b:
            i = len(self._frames)
            self._frames.append(batch_frame(self.spark, self.workload, i, self.tables()[i]))
        return self._frames[b]

    def halves(self) -> list[tuple[pa.Table, Any]]:
        """The upsert's pending and inflight halves: their rows and frames (earlier keys, changed latency
        and message: :func:`workloads.generator.batch_updates_table` of batch :attr:`k`)."""
        if self._halves is None:
            from pyspark.sql.pandas.types import from_arrow_schema

            wl = self.workload.model_copy(update={"corrections_fraction": UPDATE_FRACTION})
            updates = batch_updates_table(wl, self.k)
            half = updates.num_rows // 2
            self._halves = [(rows, self.spark.createDataFrame(rows.to_pandas(), schema=from_arrow_schema(rows.schema)))
                            for rows in (updates.slice(0, half), updates.slice(half))]
        return self._halves

    def close(self) -> None:
        for df in self._frames:
            df.unpersist()
        self._frames = []


def _upsert(engine: Engine, df: Any, arrival: Arrival, plan: str) -> None:
    """Offer ``arrival``'s rows (``df``: their frame) to the engine; record applied, refused (naming
    ``plan``) or an error."""
    try:
        engine.upsert(df)
    except InsertsOnlyError:
        raise
    except Exception as exc:  # noqa: BLE001 - a refusal is an outcome; whether it names the plan is the check
        arrival.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
        arrival.outcome = "refused" if plan in str(exc) else "error"
        return
    arrival.outcome = "applied"


def _expected(base: pa.Table, arrivals: list[Arrival]) -> dict[str, tuple[float, str]]:
    """Key -> (latency_ms, message): the base rows with every applied half's values."""
    out = dict(zip(base.column("trace_id").to_pylist(),
                   zip(base.column("latency_ms").to_pylist(), base.column("message").to_pylist(), strict=True),
                   strict=True))
    for a in arrivals:
        if a.outcome == "applied":
            out.update(zip(a.rows.column("trace_id").to_pylist(),
                           zip(a.rows.column("latency_ms").to_pylist(), a.rows.column("message").to_pylist(),
                               strict=True), strict=True))
    return out


def _snapshot_rows(engine: Engine) -> pa.Table:
    probe = engine.probe()
    table = getattr(probe, "table", None)
    if table is not None and table.merge_on_read:  # updates sit in log files: the merged read
        return snapshot_read(table).rows.select(_COLUMNS)
    parts = [pq.read_table(probe.storage.abs(s.path), columns=_COLUMNS) for s in probe.snapshot()]
    return pa.concat_tables(parts) if parts else pa.table({c: [] for c in _COLUMNS})


def compare(got: pa.Table, expected: dict[str, tuple[float, str]]) -> dict[str, int]:
    """Rows missing, duplicated, holding a stale value (an applied update that is gone) or unexpected."""
    keys = got.column("_hoodie_record_key").to_pylist()
    values = dict(zip(keys, zip(pc.round(got.column("latency_ms"), 3).to_pylist(), got.column("message").to_pylist(),
                                strict=True), strict=True))
    stale = sum(1 for k, v in expected.items() if k in values and (round(v[0], 3), v[1]) != values[k])
    return {"missing": len(expected.keys() - values.keys()), "duplicated": len(keys) - len(values),
            "stale": stale, "unexpected": len(values.keys() - expected.keys())}


def batches_before_maintenance(scenario: Scenario) -> int:
    """Batches the scratch table takes: up to the scenario's first maintenance (at least 2, so that
    the updates have earlier keys and the planner has more than one file)."""
    return max(2, min(scenario.workload.num_batches, scenario.maintenance.every_commits))


def check_concurrent_update(spark: Any, spec: EngineSpec, scenario: Scenario, scratch: Path,
                            batches: ScratchBatches | None = None) -> dict[str, Any]:
    """The gate row of candidate ``spec``, measured on a scratch table at ``scratch`` (removed after);
    ``batches``: the batches and upsert shared by every candidate of the run (made here when None)."""
    from bench.engine_factory import build_engine
    from engines.base import TableEngine
    from engines.kinds import KINDS

    if getattr(KINDS[spec.kind].load("engine"), "upsert", TableEngine.upsert) is TableEngine.upsert:
        return not_applicable(spec.name, GATE, READER, f"{spec.name} ({spec.kind}) takes inserts only: it has "
                              "no update path, so no update can arrive during its maintenance")
    shutil.rmtree(scratch, ignore_errors=True)
    own = batches is None
    shared = ScratchBatches(spark, scenario) if batches is None else batches
    engine = build_engine(spec, scenario, str(scratch.resolve()))
    try:
        return _run(engine, spec, shared)
    finally:
        engine.close()
        shutil.rmtree(scratch, ignore_errors=True)
        if own:
            shared.close()


def _run(engine: Engine, spec: EngineSpec, batches: ScratchBatches) -> dict[str, Any]:
    k = batches.k
    for b in range(k):  # as the run hands each engine its batches (no Python worker job for a small one)
        engine.ingest(batches.frame(b))
    # the round's steps one by one (the updates arrive between them): the new plan, else the one a
    # write left pending (Apache Hudi's schedule_inline plans inside the write)
    rnd = MaintenanceRound(engine, Runs.NEW_OR_EARLIEST)
    rnd.schedule()
    plan = rnd.next_plan
    if plan is None:
        return not_applicable(spec.name, GATE, READER, f"{spec.name} scheduled no maintenance plan after {k} "
                              "batches: no plan for an update to race")
    (pending, pending_df), (inflight, inflight_df) = batches.halves()
    arrivals = [Arrival("pending", pending), Arrival("inflight", inflight)]
    try:
        _upsert(engine, pending_df, arrivals[0], plan)
    except InsertsOnlyError as exc:
        return not_applicable(spec.name, GATE, READER, f"{exc} (an update during maintenance cannot arrive)")
    on_step = getattr(engine, "on_step", None)
    after_inflight = getattr(getattr(engine, "points", None), "after_inflight", None)

    def hook(name: str) -> None:  # the second half from another writer thread, while the plan is inflight
        if on_step is not None:
            on_step(name)
        if name == after_inflight and arrivals[1].outcome == "not arrived":
            writer = threading.Thread(target=_upsert, args=(engine, inflight_df, arrivals[1], plan),
                                      name=f"concurrent-update-{spec.name}")
            writer.start()
            writer.join()

    if after_inflight is not None:
        engine.on_step = hook  # type: ignore[attr-defined]
    try:
        rnd.execute()
    finally:
        if after_inflight is not None:
            engine.on_step = on_step  # type: ignore[attr-defined]
    rnd.clean()
    base = pa.concat_tables(batches.tables())
    arrived = [a for a in arrivals if a.outcome != "not arrived"]
    diff = compare(_snapshot_rows(engine), _expected(base, arrived))
    lost = diff["missing"] + diff["duplicated"] + diff["stale"] + diff["unexpected"]
    bad = [a for a in arrived if a.outcome == "error"]
    said = "; ".join(f"{a.when} ({a.rows.num_rows} rows): {a.outcome}"
                     + (f" ({a.error[:160]})" if a.error else "") for a in arrivals)
    if lost:
        verdict = (f"after the maintenance {diff['missing']} rows missing, {diff['duplicated']} duplicated, "
                   f"{diff['stale']} applied updates gone, {diff['unexpected']} unexpected")
    else:
        applied = sum(a.outcome == "applied" for a in arrived)
        verdict = f"after the maintenance the table equals the ground truth with the {applied} applied halves"
    return gate_row(spec.name, GATE, READER, bool(arrived) and not lost and not bad,
                    len(arrived), len(bad) + (1 if lost else 0), lost, "rows lost or duplicated",
                    f"plan {plan}, {k} batches; {said}; {verdict}")
