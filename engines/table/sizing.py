"""Output sizing shared by every rewrite (baseline merge, Option 1 compaction, Option 2 clustering).

Outputs are evenly sized: 489 MB with a 300 MB target gives two ~245 MB files, not 300 + 189.
"""

from __future__ import annotations

import math


def output_file_count(total_bytes: int, target_bytes: int) -> int:
    """ceil(total / target), at least 1 (Hudi's numOutputGroups)."""
    if target_bytes <= 0:
        raise ValueError(f"target file size must be positive, got {target_bytes}")
    return max(1, math.ceil(total_bytes / target_bytes))


def split_evenly(n: int, k: int) -> list[int]:
    """``n`` items in ``k`` parts whose sizes differ by at most one."""
    if k <= 0:
        raise ValueError(f"number of parts must be positive, got {k}")
    base, extra = divmod(n, k)
    return [base + (1 if i < extra else 0) for i in range(k)]
