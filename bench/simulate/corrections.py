"""Which file groups a batch's corrections touch, on the simulator's metadata-only table (T21).

The runner feeds each batch's corrections of earlier keys (``workload.update_fraction``,
:func:`workloads.truth.corrections_of`) as one upsert commit after the batch's insert commit. A
copy-on-write design merges them through :func:`engines.cow_baseline.upsert.merge_write`: the simple
index finds every live file holding an updated key in the updates' partitions, and each such file
group is rewritten whole as a new slice (same rows: an update replaces its row). Which groups that is
depends on where the keys sit, so the simulator answers it two ways:

- **exact** (the simulator keeps each file's rows): the batch's updated keys per partition, matched
  against each live file's record keys. Touched groups, their rows and their order are the real
  merge's; the rewritten file holds the same rows (the query columns a correction keeps) sorted by the
  record key, as the merge writes it (:func:`engines.spark.rewrite.rewrite`: one output, sorted within
  by the record key).
- **estimated** (long horizons, no rows): a correction picks an earlier batch uniformly and a row of
  it uniformly (:func:`workloads.generator._picks`), and batches have equal row counts, so a
  correction lands in a live file with probability its rows over the rows of every live file written
  before this batch (the files this batch's ingest created hold none of the earlier keys; a file the
  baseline topped up this batch counts whole, a slight overestimate). Of ``U`` corrections, file
  ``f`` is touched with probability ``1 - (1 - w_f / W) ** U``; the draw is a hash of the seed, the
  batch and the file id (deterministic per seed). In a replay that starts at a later batch on an empty
  table (the production map), the corrections land among the replayed batches' files only: they
  model corrections of recent data, not of the table's whole history.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.simulate.rows import sort_rows
from engines.table.model import FileSlice
from workloads.generator import batch_num_records
from workloads.rowdef import uniform
from workloads.spec import WorkloadSpec
from workloads.truth import corrections_of

RECORD_KEY = "trace_id"
S_SIM_TOUCH = 7401  # the hash stream of the estimated mode's draws (apart from the generator's streams)


@lru_cache(maxsize=256)
def updated_keys(spec: WorkloadSpec, b: int) -> dict[str, pa.Array]:
    """Batch ``b``'s updated record keys per partition path (``<column>=<value>``), the rows of the
    runner's upsert commit (:func:`workloads.truth.corrections_of`); empty without corrections."""
    if spec.corrections_fraction <= 0 or b == 0:
        return {}
    upd = corrections_of(spec, b)
    if upd.num_rows == 0:
        return {}
    pcol = spec.partition_column
    values = upd.column(pcol).cast(pa.string())
    keys = upd.column(RECORD_KEY).combine_chunks()
    out = {}
    for v in sorted(pc.unique(values).to_pylist()):
        out[f"{pcol}={v}"] = keys.filter(pc.equal(values, v).combine_chunks())
    return out


def correction_count(spec: WorkloadSpec, b: int) -> int:
    """How many corrections batch ``b`` carries (the generator's count before duplicate picks, which
    are rare: a pick is one row of the earlier batches)."""
    if spec.corrections_fraction <= 0 or b == 0:
        return 0
    return int(round(batch_num_records(spec, b) * spec.corrections_fraction))


def touched_exact(files: dict[str, Iterable[FileSlice]], rows: dict[str, pa.Table],
                  keys: dict[str, pa.Array]) -> list[tuple[FileSlice, pa.Table]]:
    """The live files holding an updated key (``files``: partition path -> its live slices; ``rows``:
    each file's rows), each with its rows as the merge rewrites them: sorted by the record key."""
    out = []
    for partition in sorted(keys):
        wanted = keys[partition]
        for s in sorted(files.get(partition, ()), key=lambda s: s.path):
            data = rows[s.path]
            mask = pc.is_in(data.column(RECORD_KEY), value_set=wanted)
            if pc.any(mask).as_py():
                out.append((s, sort_rows(data, [RECORD_KEY])))
    return out


def touched_estimated(live: Iterable[FileSlice], fresh: set[tuple[str, str]], count: int, seed: int,
                      b: int) -> list[FileSlice]:
    """The live files ``count`` corrections touch, drawn as the module docstring says (``fresh``: the
    file groups this batch's ingest created, which hold no earlier key). At least one file when there
    is a correction and an earlier file: a real correction always finds its key."""
    candidates = sorted((s for s in live if s.file_group not in fresh and s.num_rows > 0), key=lambda s: s.path)
    if count <= 0 or not candidates:
        return []
    w = np.array([s.num_rows for s in candidates], dtype=np.float64)
    with np.errstate(divide="ignore"):  # w = W: log1p(-1) is -inf, and p is 1
        p = -np.expm1(count * np.log1p(-w / w.sum()))  # 1 - (1 - w/W)^U
    ids = np.array([zlib.crc32(s.file_id.encode()) for s in candidates], dtype=np.int64)
    hit = uniform(seed, b, ids, S_SIM_TOUCH) < p
    if not hit.any():
        hit[int(np.argmax(w))] = True
    return [s for s, h in zip(candidates, hit.tolist(), strict=True) if h]
