"""The isolation gate: reader queries racing maintenance (:mod:`bench.isolation`) all return the
ground truth. Figures come from the run's ``isolation`` table; an engine whose maintenance never
ran (the append-only control) has nothing for readers to race: n/a."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bench.gates import gate_row, not_applicable

GATE = "isolation"
READER = "ours"  # the probe reads each snapshot it takes with our Spark reader (bench.queries.run_query)


def isolation_rows(engines: Iterable[str], isolation: Iterable[Mapping[str, Any]],
                   maintenance: Iterable[Mapping[str, Any]], enabled: bool) -> list[dict[str, Any]]:
    """One gate row per engine: checked = reader queries, failures = failed + wrong, figure = failures."""
    probes: dict[str, list[Mapping[str, Any]]] = {}
    for row in isolation:
        probes.setdefault(row["engine"], []).append(row)
    maintained = {row["engine"] for row in maintenance if row.get("instant")}
    out = []
    for engine in engines:
        if not enabled:
            out.append(not_applicable(engine, GATE, READER, "the scenario disables the isolation readers "
                                      "(isolation.enabled: false)"))
            continue
        if engine not in maintained:
            out.append(not_applicable(engine, GATE, READER, f"{engine} ran no maintenance (no compaction, "
                                      "clustering or clean): nothing for readers to race"))
            continue
        rows = probes.get(engine, [])
        if not rows:
            out.append(not_applicable(engine, GATE, READER, f"no reader query raced {engine}'s maintenance"))
            continue
        failed = sum(r["outcome"] == "failed" for r in rows)
        wrong = sum(r["outcome"] == "wrong" for r in rows)
        instants = sorted({str(r.get("maintenance_instant")) for r in rows})
        if failed or wrong:
            first = next(r for r in rows if r["outcome"] != "ok")
            why = first.get("error") or f"expected {first.get('expected')}, got {first.get('got')}"
            detail = (f"{failed} failed and {wrong} wrong of {len(rows)} reader queries during maintenance "
                      f"{', '.join(instants)}; first: {first['query']}: {str(why)[:200]}")
        else:
            detail = f"{len(rows)} reader queries during maintenance {', '.join(instants)} all returned the ground truth"
        out.append(gate_row(engine, GATE, READER, not (failed or wrong), len(rows), failed + wrong,
                            failed + wrong, "reader queries failed or wrong", detail))
    return out
