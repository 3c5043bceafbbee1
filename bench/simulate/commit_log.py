"""The replay's ``commits`` rows kept as one tuple each, turned into the table's columns at the end.

A simulated year commits some 300,000 instants; building a ``commit_row`` dict for each, then
reading every field back out of every dict to write the table, cost more than a tenth of the run.
Here a commit is one tuple of the figures the simulator knows at commit time; the table's derived
columns (space amplification, mean file size, cumulative bytes and write amplification) are
computed over whole columns by the rules of :func:`runresults.commit_row` and
:func:`runresults.derive_cumulative`, and :meth:`CommitLog.rows` gives the very dicts those two
would have built, for the callers that read rows (sweeps, projections, the production map).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from runresults import TABLES, commit_row

# the figures of one simulated commit, in the order :meth:`CommitLog.add` takes them
FIELDS = ("engine", "seq", "batch", "instant", "action", "operation", "kind", "duration_s", "records_written",
          "bytes_written", "files_written", "files_replaced", "batch_bytes", "live_files", "physical_files",
          "live_bytes", "physical_bytes", "small_files")
_CONSTANT = {"metadata_bytes": 0, "repeat": 0, "plan_s": None, "write_s": None, "commit_s": None}


class CommitLog:
    """The replay's commits in the order it made them, across its engines."""

    def __init__(self) -> None:
        self.commits: list[tuple[Any, ...]] = []
        self.append = self.commits.append  # one commit: a tuple of :data:`FIELDS`' values

    def __len__(self) -> int:
        return len(self.commits)

    def rows(self) -> list[dict[str, Any]]:
        """Each commit as :func:`runresults.commit_row` builds it (``derive_cumulative`` not applied)."""
        return [commit_row(**dict(zip(FIELDS, c, strict=True)), metadata_bytes=0) for c in self.commits]

    def batch_bytes(self) -> dict[int, int]:
        """The batch written once, per batch: the first ingest commit's ``batch_bytes`` (any engine's)."""
        out: dict[int, int] = {}
        kind, batch, bb = FIELDS.index("kind"), FIELDS.index("batch"), FIELDS.index("batch_bytes")
        for c in self.commits:
            if c[kind] == "ingest" and c[batch] not in out:
                out[c[batch]] = c[bb]
        return out

    def table(self) -> pa.Table:
        """The ``commits`` table, its cumulative columns derived as
        ``derive_cumulative(writer, self.batch_bytes())`` derives them from :meth:`rows`."""
        cols: dict[str, list[Any]] = dict(zip(FIELDS, map(list, zip(*self.commits, strict=True)), strict=True)) \
            if self.commits else {f: [] for f in FIELDS}
        n = len(self.commits)
        live_b, live_n, phys_b = cols["live_bytes"], cols["live_files"], cols["physical_bytes"]
        cols["space_amp"] = [p / b if b else None for p, b in zip(phys_b, live_b, strict=True)]
        cols["mean_file_bytes"] = [b / f if f else 0.0 for b, f in zip(live_b, live_n, strict=True)]
        cols.update(_cumulative(cols, self.batch_bytes()))
        for name, value in _CONSTANT.items():
            cols[name] = [value] * n
        schema = TABLES["commits"]
        return pa.table({name: cols[name] for name in schema.names}, schema=schema)


def _cumulative(cols: dict[str, list[Any]], batch_bytes: dict[int, int]) -> dict[str, list[Any]]:
    """``batch_bytes``, ``cum_bytes_written``, ``cum_batch_bytes`` and ``wa`` of every commit: per
    engine in ``seq`` order, the batch's bytes on its first ingest commit of the batch (0 on every
    other commit), both running sums, and their ratio (None before any batch)."""
    n = len(cols["seq"])
    engines = np.array(cols["engine"], dtype=object)
    written = np.array(cols["bytes_written"], dtype=np.int64)
    batch = np.array(cols["batch"], dtype=np.int64)
    ingest = np.array([k == "ingest" for k in cols["kind"]], dtype=bool)
    bb = np.zeros(n, dtype=np.int64)
    cum_w = np.zeros(n, dtype=np.int64)
    cum_b = np.zeros(n, dtype=np.int64)
    seq = np.array(cols["seq"], dtype=np.int64)
    for name in dict.fromkeys(cols["engine"]):
        idx = np.flatnonzero(engines == name)
        idx = idx[np.argsort(seq[idx], kind="stable")]
        first = np.zeros(len(idx), dtype=bool)
        ing = idx[ingest[idx]]
        _, at = np.unique(batch[ing], return_index=True)  # each batch's first ingest commit, in seq order
        first[np.flatnonzero(ingest[idx])[at]] = True
        bb[idx] = [batch_bytes.get(b, 0) if f else 0 for b, f in zip(batch[idx].tolist(), first.tolist(), strict=True)]
        cum_w[idx] = np.cumsum(written[idx])
        cum_b[idx] = np.cumsum(bb[idx])
    cw, cb = cum_w.tolist(), cum_b.tolist()
    return {"batch_bytes": bb.tolist(), "cum_bytes_written": cw, "cum_batch_bytes": cb,
            "wa": [w / b if b else None for w, b in zip(cw, cb, strict=True)]}
