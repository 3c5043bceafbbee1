"""What the runner does after its batch loop for T17, with each phase timed in the run profile:
the gates (``gates``): isolation from the run's readers, no_loss from the same commit's crash test,
concurrent_update on a scratch table per candidate (then the runner's incremental and time-travel
gates), and after them the final checkpoint's interleaved query rounds (``query_rounds``) over the
candidates no required gate ruled out; during the batch loop, an earlier checkpoint's rounds
(``checkpoint_rounds``, when ``queries.checkpoint_rounds`` asks for them).

``ctx`` is the runner's :class:`bench.runner.RunContext` (scenario, spark, writer, failures,
run_dir, ``timed``); it is taken by duck type so that this module does not import the runner.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.gates.concurrent_update import GATE as CONCURRENT_UPDATE
from bench.gates.concurrent_update import READER as CU_READER
from bench.gates.concurrent_update import ScratchBatches, check_concurrent_update
from bench.gates.isolation import isolation_rows
from bench.gates.no_loss import latest_crashtest, no_loss_rows
from bench.queries import QueryParams, QueryRun
from bench.query_rounds import RoundSlot, run_query_rounds
from bench.store.proxy import run_columns
from engines.base import Engine
from engines.kinds import kind_of
from runresults import query_runs


def rounds_run(scenario: Any) -> bool:
    """Whether the run ends with the final checkpoint's interleaved rounds (T17's review measures
    them; ``queries.interleaved`` asks for them over every engine)."""
    return query_runs.rounds_run({"review": {"measure": scenario.review.measure},
                                  "queries": {"interleaved": scenario.queries.interleaved}})


def in_rounds(scenario: Any, kind: str) -> bool:
    """Whether an engine of ``kind`` takes part in the rounds (when they run, and it takes every batch):
    every engine under ``queries.interleaved``, else the design candidates (:func:`round_engines`).
    The rounds are then its final checkpoint's warm runs: the checkpoint itself runs its queries once,
    cold (files and row groups scanned, the result verified), and no more (the simulator counts the
    same runs: :func:`runresults.query_runs.query_runs`)."""
    return query_runs.in_rounds({"queries": {"interleaved": scenario.queries.interleaved}}, kind)


def ruled_out_before_rounds(ctx: Any) -> set[str]:
    """The candidates a required gate measured during the batch loop already failed (isolation: its
    readers raced the first maintenance runs). No figure of theirs reaches the verdict or a cell beside
    it (T17), so the interleaved rounds skip them; their final checkpoint keeps its own warm runs."""
    scenario = ctx.scenario
    if "isolation" not in scenario.review.requires:
        return set()
    rows = isolation_rows([e.name for e in scenario.engines], ctx.writer.rows["isolation"],
                          ctx.writer.rows["maintenance"], scenario.isolation.enabled)
    return {r["engine"] for r in rows if r["passed"] is False}


def ruled_out_by_gates(ctx: Any) -> set[str]:
    """The candidates whose ``gates`` rows so far fail a gate of ``review.requires`` (a gate fails when
    any of its readers' rows failed, as :func:`runresults.review.gates.gate_results` decides): no
    figure of theirs reaches the verdict or a cell beside it, so the interleaved rounds skip them."""
    requires = set(ctx.scenario.review.requires)
    return {str(r["engine"]) for r in ctx.writer.rows["gates"] if r.get("gate") in requires and r.get("passed") is False}


def round_engines(engines: Sequence[Engine], kinds: Mapping[str, str]) -> list[Engine]:
    """The engines the interleaved rounds run on: the design candidates (kinds in the verdict).
    The reference columns (the append-only control, the peers, Apache Hudi) are compared with
    nothing paired: their final-checkpoint cells come from their own warm runs, as many as the
    designs' repetitions give (:func:`bench.runner.warm_runs_of`), so the rounds skip them
    (ten rounds of the five-query suite are 50 query runs per engine)."""
    return [e for e in engines if kind_of(kinds[e.name]).in_verdict]


def final_query_rounds(ctx: Any, engines: Sequence[Engine],
                       last_checkpoint: tuple[int, QueryParams, Mapping[str, Any]] | None,
                       every_engine: bool = False, skip: set[str] | frozenset[str] = frozenset()) -> None:
    """``queries.rounds`` interleaved rounds over the design candidates of ``engines``
    (:func:`round_engines`; ``every_engine``: all of them, the control and peers included, as a scale
    run's gains over ``append_only`` need) at the final checkpoint (``last_checkpoint``: its batch,
    query parameters and expected answers; phase ``query_rounds``)."""
    if last_checkpoint is None:  # a run without a checkpoint ran no queries to interleave
        return
    checkpoint_query_rounds(ctx, engines, last_checkpoint, ctx.scenario.queries.rounds, "query_rounds",
                            every_engine, skip)


def checkpoint_query_rounds(ctx: Any, engines: Sequence[Engine], checkpoint: tuple[int, QueryParams, Mapping[str, Any]],
                            rounds: int, phase: str, every_engine: bool = False,
                            skip: set[str] | frozenset[str] = frozenset()) -> None:
    """``rounds`` interleaved rounds over the design candidates of ``engines`` (:func:`round_engines`;
    ``every_engine``: all of them) but those in ``skip`` (ruled out by a required gate already), at
    ``checkpoint`` (its batch, query parameters and expected answers), timed as ``phase``: the final
    checkpoint's (``queries.rounds``) or an earlier one's (``queries.checkpoint_rounds``). Round ``r``'s
    runs are the checkpoint's warm run ``r + 1`` in ``queries`` too."""
    batch, params, expected = checkpoint
    qs = ctx.scenario.queries
    designs = list(engines) if every_engine else round_engines(engines, {e.name: e.kind for e in ctx.scenario.engines})
    designs = [e for e in designs if e.name not in skip]

    def add_run(slot: RoundSlot, r: int, res: QueryRun, verified: bool, tally: dict[str, int] | None) -> None:
        """Round ``r``'s run is warm run ``r + 1`` of the checkpoint (its run 0, cold, ran there), with
        its read amplification on a MERGE_ON_READ snapshot (the report's medians then have every run)."""
        ctx.writer.add("queries", engine=slot.engine, repeat=0, checkpoint=batch, query=slot.query, run=r + 1,
                       latency_s=res.latency_s, files_total=res.files_total, files_scanned=res.files_scanned,
                       files_pruned=res.files_pruned, row_groups_total=None, row_groups_scanned=None,
                       rows_scanned=None, result_rows=res.result_rows, verified=verified, error=res.error,
                       planning_s=res.planning_s, execution_s=res.execution_s,
                       log_files_merged=res.log_files_merged, log_bytes_merged=res.log_bytes_merged,
                       ro_latency_s=res.ro_latency_s, **run_columns(tally))

    with ctx.timed(phase):
        ctx.failures += run_query_rounds(ctx.spark, designs, batch, qs.suite, params, expected, rounds,
                                         qs.verify, lambda **row: ctx.writer.add("query_rounds", **row), add_run,
                                         label=ctx.label)


def measure_gates(ctx: Any, sha: str | None) -> None:
    """Every gate row of every candidate (phases ``gates/<gate>`` and ``gates/concurrent_update/<engine>``)."""
    scenario, writer = ctx.scenario, ctx.writer
    names = [e.name for e in scenario.engines]
    with ctx.timed("gates/isolation"):
        for row in isolation_rows(names, writer.rows["isolation"], writer.rows["maintenance"],
                                  scenario.isolation.enabled):
            writer.add("gates", **row)
    with ctx.timed("gates/no_loss"):
        crash_dir = latest_crashtest(Path(ctx.run_dir).parent, sha)
        for row in no_loss_rows([(e.name, e.kind, e.config) for e in scenario.engines], crash_dir, sha):
            writer.add("gates", **row)
    scratch_root = Path(ctx.run_dir) / "tables" / "_gates"
    batches = ScratchBatches(ctx.spark, scenario)  # made once, by the first candidate that takes them
    try:
        for spec in scenario.engines:
            with ctx.timed(f"gates/concurrent_update/{spec.name}"):
                try:
                    row = check_concurrent_update(ctx.spark, spec, scenario, scratch_root / spec.name, batches)
                except Exception as exc:  # the gate's own failure is a failed gate, named, not a lost run
                    from bench.gates import gate_row

                    row = gate_row(spec.name, CONCURRENT_UPDATE, CU_READER, False, 1, 1, None, "",
                                   f"the check raised {type(exc).__name__}: {str(exc)[:300]}")
                    ctx.failures.append(f"{spec.name}: concurrent_update gate raised {type(exc).__name__}: {exc}")
                writer.add("gates", **row)
    finally:
        batches.close()
    shutil.rmtree(scratch_root, ignore_errors=True)
