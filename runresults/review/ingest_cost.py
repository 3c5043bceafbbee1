"""Why two candidates' ingest timings differ, phase by phase (T17: the cost a design implies).

Each ingest of our engines is split into planning, writing its files and committing
(``commits.plan_s`` / ``write_s`` / ``commit_s``, :mod:`bench.ingest_phases`). When the ingest
criterion is decided, this says whether the two wrote the same files (count and bytes per batch)
and which phase holds the difference, each as the median of the per-batch differences, paired by
batch and repetition:
- planning: the view, the pending plans each design must keep its writes away from, the size
  estimate and bucket assignment. A difference here is what the design implies (Option 2 checks
  for pending clustering plans on every write, Option 1 for pending compactions);
- writing, with the same files: not implied by either design (same rows, same files), so it is
  overhead of ours, named as such;
- committing: the timeline and commit metadata.
"""

from __future__ import annotations

import pandas as pd

from runresults import Results

PHASES = {"plan_s": "planning (view, pending plans, bucket assignment)", "write_s": "writing the files",
          "commit_s": "committing (timeline, metadata)"}
SAME_BYTES = 0.01  # files count as the same when their count matches and their bytes within 1%


def per_batch(results: Results, engine: str) -> pd.DataFrame:
    """An engine's ingest commits summed per (repetition, batch): duration, files, bytes and phases."""
    c = results.table("commits", all_repeats=True)
    c = c[(c.engine == engine) & (c.kind == "ingest")]
    return c.groupby(["repeat", "batch"])[["duration_s", "files_written", "bytes_written", *PHASES]].sum(min_count=1)


def explain(results: Results, a: str, b: str) -> str:
    """One sentence on where ``b``'s ingest time differs from ``a``'s ('' without phases)."""
    ia, ib = per_batch(results, a), per_batch(results, b)
    both = ia.index.intersection(ib.index)
    if not len(both):
        return ""
    ia, ib = ia.loc[both], ib.loc[both]
    same = bool((ia.files_written == ib.files_written).all()
                and ((ib.bytes_written - ia.bytes_written).abs() <= SAME_BYTES * ia.bytes_written).all())
    files = (f"both wrote the same files ({ia.files_written.mean():.3g} per batch, bytes within "
             f"{SAME_BYTES:.0%})" if same else
             f"they wrote different files ({a}: {ia.files_written.mean():.3g} per batch, "
             f"{ia.bytes_written.sum() / max(1, len(ia)):.4g} bytes; {b}: {ib.files_written.mean():.3g}, "
             f"{ib.bytes_written.sum() / max(1, len(ib)):.4g} bytes), so the difference is partly the design's own write")
    total = (ib.duration_s - ia.duration_s).median() * 1000
    if ia[list(PHASES)].isna().any().any() or ib[list(PHASES)].isna().any().any():
        return f"{b} against {a}: {total:+.1f} ms per batch (median of paired differences); {files}."
    parts = {p: (ib[p] - ia[p]).median() * 1000 for p in PHASES}
    largest = max(parts, key=lambda p: abs(parts[p]))
    split = ", ".join(f"{PHASES[p]} {v:+.1f} ms" for p, v in parts.items())
    if largest == "plan_s":
        cause = "most of it is planning, the check the design implies"
    elif largest == "write_s" and same:
        cause = "most of it is writing the same files: overhead of ours that neither design implies"
    elif largest == "write_s":
        cause = "most of it is writing, where the files differ"
    else:
        cause = "most of it is committing"
    return (f"{b} against {a}: {total:+.1f} ms per batch (median of paired differences, n={len(both)}); {files}; "
            f"by phase: {split}; {cause}.")
