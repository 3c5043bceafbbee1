"""The closed-form write amplification of each design (the RFC's arithmetic), shared by the disk
estimate before a run (:mod:`bench.disk_estimate`) and the scale report after it (:mod:`reports.scale`).

A file that takes every insert until it reaches the small-file limit ``L`` is rewritten once per
batch, at half the limit on average: the copy-on-write baseline's WA approaches ``L / (2 x batch)``.
A table service every ``k`` commits rewrites the growing file once per ``k`` batches:
``1 + L / (2 x k x batch)`` (Option 1's compaction, Option 2's clustering, delta-rs OPTIMIZE).
``append_only`` writes each batch once.
"""

from __future__ import annotations

from engines.kinds import KINDS


def _merges_at_ingest(kind: str) -> bool:
    entry = KINDS.get(kind)
    return entry is not None and entry.merges_at_ingest


def _never_rewrites(kind: str) -> bool:
    entry = KINDS.get(kind)
    return entry is not None and not entry.maintains


def closed_form_wa(kind: str, limit: float, batch: float, every: int) -> float:
    """The design's closed-form WA for small-file limit ``limit`` and batch ``batch`` (same unit)."""
    if _never_rewrites(kind) or limit <= 0 or batch <= 0:
        return 1.0
    if _merges_at_ingest(kind):
        return max(1.0, limit / (2 * batch))
    return 1.0 + limit / (2 * every * batch)


def closed_form_text(kind: str) -> str:
    """The formula :func:`closed_form_wa` uses for ``kind``, as the report prints it."""
    if _never_rewrites(kind):
        return "1 (no rewrite)"
    return "limit / (2 x batch)" if _merges_at_ingest(kind) else "1 + limit / (2 x every x batch)"
