"""Same-run ratios of our engines to the Delta peer (T9): Option 1 vs ``optimize.compact()``,
sorted Option 2 vs ``optimize.z_order()``. A ratio above 1 means ours took longer / wrote more."""

from __future__ import annotations

from typing import Any

from engines.config.registry import MB
from engines.kinds import DELTA_PEER, OPTION_1, OPTION_2
from reports.summary import EngineSummary, fmt
from runresults import Results

SELECTIVE_QUERY = "service_hours"


def _sorted(results: Results, engine: str) -> bool:
    cfg = results.run.get("engines", {}).get(engine, {}).get("config") or {}
    return bool(cfg.get("sort_columns"))


def _pick(summaries: list[EngineSummary], results: Results, family: str, sort: bool) -> EngineSummary | None:
    picks = [s for s in summaries if s.family == family and _sorted(results, s.engine) == sort]
    return picks[0] if picks else None


def seconds_per_100mb(s: EngineSummary) -> float | None:
    """Maintenance seconds per 100 MB its runs read: the rewrite's speed, whatever the plans chose to rewrite."""
    return 100 * s.maintenance_s / (s.maintenance_bytes_read / MB) if s.maintenance_bytes_read else None


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "n/a"
    return f"{a / b:.2f}x"


def peer_rows(results: Results, summaries: list[EngineSummary]) -> list[dict[str, Any]]:
    """One row per (our engine, Delta peer) pair present in the run."""
    pairs = [
        ("Option 1 vs optimize.compact()", [s for s in summaries if s.family == OPTION_1],
         _pick(summaries, results, DELTA_PEER, False)),
        ("sorted Option 2 vs optimize.z_order()",
         [s for s in summaries if s.family == OPTION_2 and _sorted(results, s.engine)],
         _pick(summaries, results, DELTA_PEER, True)),
    ]
    rows = []
    for label, ours_list, peer in pairs:
        if peer is None:
            continue
        for ours in ours_list:
            rows.append({
                "pair": label, "ours": ours.engine, "peer": peer.engine,
                "maintenance s (ours / peer)": f"{fmt(ours.maintenance_s)} / {fmt(peer.maintenance_s)}",
                "maintenance ratio": _ratio(ours.maintenance_s, peer.maintenance_s),
                "MB read (ours / peer)": f"{fmt(ours.maintenance_bytes_read / MB, 1)} / {fmt(peer.maintenance_bytes_read / MB, 1)}",
                "s per 100 MB read ratio": _ratio(seconds_per_100mb(ours), seconds_per_100mb(peer)),
                f"{SELECTIVE_QUERY} s ratio": _ratio(ours.queries_warm_median_s.get(SELECTIVE_QUERY),
                                                     peer.queries_warm_median_s.get(SELECTIVE_QUERY)),
                "WA (ours / peer)": f"{fmt(ours.wa)} / {fmt(peer.wa)}",
                "space amp peak (ours / peer)": f"{fmt(ours.space_amp_peak)} / {fmt(peer.space_amp_peak)}",
            })
    return rows


NOTE = ("Maintenance is the total of every compaction, clustering or OPTIMIZE run on the same schedule, the "
        "cleaner apart (ours: rewrites in the driver or Spark jobs; "
        "delta-rs: in-process Rust). Goal (T9): ours within 1.5x on maintenance time and at least as fast "
        f"on the selective query `{SELECTIVE_QUERY}` after sorted clustering. Delta files have no `_hoodie_*` "
        "meta columns, so each engine's WA is against its own ingest bytes. The time ratio is the product of two "
        "others: what the plans chose to read (MB read; our files also carry the meta columns and Hudi's footer "
        "bloom filter) and how fast each rewrite reads and writes it (seconds per 100 MB read).")
