"""The replay's ``commits`` rows kept as one run of values, turned into the table's columns at the end.

A simulated year commits some 300,000 instants; building a ``commit_row`` dict for each, then
reading every field back out of every dict to write the table, cost more than a tenth of the run.
Here a commit is its figures appended to one flat list (a column is then one strided slice); the
table's derived columns (space amplification, mean file size, cumulative bytes and write
amplification) are computed over whole columns by the rules of :func:`runresults.commit_row` and
:func:`runresults.derive_cumulative`, and :meth:`CommitLog.rows` gives the very dicts those two
would have built, for the callers that read rows (sweeps, projections, the production map).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from runresults import TABLES, commit_row

# the figures of one simulated commit, in the order :meth:`CommitLog.append` takes them
FIELDS = ("engine", "seq", "batch", "instant", "action", "operation", "kind", "duration_s", "records_written",
          "bytes_written", "files_written", "files_replaced", "batch_bytes", "live_files", "physical_files",
          "live_bytes", "physical_bytes", "small_files")
_WIDTH = len(FIELDS)
_EXACT = 2 * int(1 / np.finfo(np.float64).eps)  # 2^53: integers below it are exact as doubles, so numpy's quotient is then Python's
_CONSTANT = {"metadata_bytes": 0, "repeat": 0, "plan_s": None, "write_s": None, "commit_s": None}


class CommitLog:
    """The replay's commits in the order it made them, across its engines."""

    def __init__(self) -> None:
        self.values: list[Any] = []  # every commit's :data:`FIELDS` values, one commit after another
        self.append = self.values.extend  # one commit: a tuple of :data:`FIELDS`' values

    def __len__(self) -> int:
        return len(self.values) // _WIDTH

    def column(self, name: str) -> list[Any]:
        """Field ``name`` of every commit."""
        return self.values[FIELDS.index(name)::_WIDTH]

    def rows(self) -> list[dict[str, Any]]:
        """Each commit as :func:`runresults.commit_row` builds it (``derive_cumulative`` not applied)."""
        return [commit_row(**dict(zip(FIELDS, c, strict=True)), metadata_bytes=0)
                for c in zip(*[iter(self.values)] * _WIDTH, strict=True)]

    def batch_bytes(self) -> dict[int, int]:
        """The batch written once, per batch: the first ingest commit's ``batch_bytes`` (any engine's)."""
        out: dict[int, int] = {}
        for kind, batch, bb in zip(self.column("kind"), self.column("batch"), self.column("batch_bytes"), strict=True):
            if kind == "ingest" and batch not in out:
                out[batch] = bb
        return out

    def table(self) -> pa.Table:
        """The ``commits`` table, its cumulative columns derived as
        ``derive_cumulative(writer, self.batch_bytes())`` derives them from :meth:`rows`."""
        n = len(self)
        cols: dict[str, Any] = {name: self.column(name) for name in FIELDS}
        ints = {name: np.fromiter(cols[name], dtype=np.int64, count=n) for name in
                ("seq", "batch", "bytes_written", "live_files", "live_bytes", "physical_bytes")}
        cols["space_amp"] = _ratio(ints["physical_bytes"], ints["live_bytes"], None)
        cols["mean_file_bytes"] = _ratio(ints["live_bytes"], ints["live_files"], 0.0)
        cols.update(_cumulative(cols["engine"], cols["kind"], ints, self.batch_bytes()))
        for name, value in _CONSTANT.items():
            cols[name] = pa.nulls(n, pa.float64()) if value is None else np.full(n, value, dtype=np.int64)
        schema = TABLES["commits"]
        return pa.table({f.name: pa.array(cols[f.name], f.type) for f in schema}, schema=schema)


def _ratio(num: np.ndarray, den: np.ndarray, zero: float | None) -> pa.Array:
    """``num / den`` per row as Python divides the ints, ``zero`` where ``den`` is 0 (None: null)."""
    if len(num) and max(int(np.abs(num).max()), int(np.abs(den).max())) >= _EXACT:
        return pa.array([a / b if b else zero for a, b in zip(num.tolist(), den.tolist(), strict=True)], pa.float64())
    empty = den == 0
    out = num / np.where(empty, 1, den)
    if zero is None:
        return pa.array(out, pa.float64(), mask=empty)
    return pa.array(np.where(empty, zero, out), pa.float64())


def _cumulative(engines: list[str], kinds: list[str], ints: dict[str, np.ndarray],
                batch_bytes: dict[int, int]) -> dict[str, Any]:
    """``batch_bytes``, ``cum_bytes_written``, ``cum_batch_bytes`` and ``wa`` of every commit: per
    engine in ``seq`` order, the batch's bytes on its first ingest commit of the batch (0 on every
    other commit), both running sums, and their ratio (None before any batch)."""
    n = len(engines)
    names = np.array(engines, dtype=object)
    seq, batch, written = ints["seq"], ints["batch"], ints["bytes_written"]
    ingest = np.array([k == "ingest" for k in kinds], dtype=bool)
    bb = np.zeros(n, dtype=np.int64)
    cum_w = np.zeros(n, dtype=np.int64)
    cum_b = np.zeros(n, dtype=np.int64)
    for name in dict.fromkeys(engines):
        idx = np.flatnonzero(names == name)
        idx = idx[np.argsort(seq[idx], kind="stable")]
        first = np.zeros(len(idx), dtype=bool)
        _, at = np.unique(batch[idx[ingest[idx]]], return_index=True)  # each batch's first ingest commit
        first[np.flatnonzero(ingest[idx])[at]] = True
        bb[idx] = [batch_bytes.get(b, 0) if f else 0 for b, f in zip(batch[idx].tolist(), first.tolist(), strict=True)]
        cum_w[idx] = np.cumsum(written[idx])
        cum_b[idx] = np.cumsum(bb[idx])
    return {"batch_bytes": bb, "cum_bytes_written": cum_w, "cum_batch_bytes": cum_b,
            "wa": _ratio(cum_w, cum_b, None)}
