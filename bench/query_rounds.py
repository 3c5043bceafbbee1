"""The final checkpoint's queries, interleaved across engines (round robin), warm.

Timings per engine taken one engine after another share nothing but the machine: a slow minute
(another process, a GC, the page cache) lands on one engine's samples only. Here round ``r`` runs
every engine's every query once, in an order rotated by ``r`` positions, so each engine's samples
spread over the same stretch of wall time and every engine is first, middle and last as often.
The rounds follow the final checkpoint's own runs, so the caches are warm. Each result is checked
against the checkpoint's ground truth; a wrong or failed result is recorded (``verified`` False)
and named in the run's failures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from bench.queries import SUITE, QueryParams, QueryRun, run_query
from engines.base import Engine


@dataclass(frozen=True)
class RoundSlot:
    """One (engine, query) of a round."""

    engine: str
    query: str


def round_order(engines: Sequence[str], queries: Sequence[str], r: int) -> list[RoundSlot]:
    """Round ``r``'s order: every engine's every query once, engines outermost, rotated by ``r``
    (so that over ``len(engines)`` rounds each engine takes each position once), each engine's
    queries rotated by ``r`` too."""
    if not engines or not queries:
        return []
    e_shift, q_shift = r % len(engines), r % len(queries)
    es = list(engines[e_shift:]) + list(engines[:e_shift])
    qs = list(queries[q_shift:]) + list(queries[:q_shift])
    return [RoundSlot(e, q) for e in es for q in qs]


def run_query_rounds(spark: Any, engines: Sequence[Engine], checkpoint: int, queries: Sequence[str],
                     params: QueryParams, expected: Mapping[str, Any], rounds: int, verify: bool = True,
                     add_row: Callable[..., None] | None = None,
                     add_run: Callable[[RoundSlot, int, QueryRun, bool, dict[str, int] | None], None] | None = None,
                     label: Callable[[str, str], AbstractContextManager[Any]] | None = None) -> list[str]:
    """Run ``rounds`` interleaved rounds over the engines' current snapshots (each taken once, as
    the checkpoint's own runs do); ``add_row(**row)`` receives each ``query_rounds`` row, and
    ``add_run(slot, round, run, verified, requests)`` each run itself (the runner records it as one
    of the checkpoint's warm runs; ``requests``: the run's own store requests per operation, the
    label's tally, None without a store). ``label(phase, context)`` attributes the object-store requests made
    inside it (the runner's :meth:`RunContext.label`): each run's to ``query_scan`` at
    ``query@checkpoint``, as the checkpoint's own warm runs are, so that a run's requests count
    every run its latency does; taking the snapshots again to ``harness`` (the checkpoint's
    ``query_planning`` counted them, and no run's latency includes them). Returns one failure
    message per wrong or failed result."""
    if rounds < 1:
        raise ValueError(f"queries.rounds must be at least 1, got {rounds}")
    label = label or (lambda _phase, _context: nullcontext())
    by_name = {e.name: e for e in engines}
    snaps = {}
    for e in engines:
        probe = e.probe()
        with label("harness", f"checkpoint {checkpoint}"):
            snaps[e.name] = (probe.storage, *probe.query_snapshot())
    failures: list[str] = []
    for r in range(rounds):
        for pos, slot in enumerate(round_order(list(by_name), list(queries), r)):
            storage, snap, overlay = snaps[slot.engine]
            with label("query_scan", f"{slot.query}@{checkpoint}") as tally:
                res = run_query(spark, storage, snap, SUITE[slot.query], params, count_row_groups_too=False,
                                overlay=overlay)
            ok = res.error is None and (not verify or res.result == expected[slot.query])
            if not ok:
                got = res.error or str(res.result)[:200]
                failures.append(f"{slot.engine}: query {slot.query} in interleaved round {r} at checkpoint "
                                f"{checkpoint} returned {got}, expected {str(expected[slot.query])[:200]}")
            if add_row is not None:
                add_row(engine=slot.engine, checkpoint=checkpoint, query=slot.query, round=r, position=pos,
                        latency_s=res.latency_s, result_rows=res.result_rows if res.error is None else None,
                        verified=ok, planning_s=res.planning_s, execution_s=res.execution_s)
            if add_run is not None:
                add_run(slot, r, res, ok, tally)
    return failures
