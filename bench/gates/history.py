"""What the incremental and time-travel gates know of one candidate's history: its ingest instant
per batch, its upsert instant per batch with corrections (``kind`` ``upsert``), and every completed
data instant the run recorded (the ``commits`` table of repetition 0), with the ground truth's answer
to "which rows were committed after instant t" (inserted or updated after it: an update gives a row
a new commit time) and "which rows did the table hold as of instant t".
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.gates.truth import HistoryTruth, KeySum, versioned_hashes


class HistoryError(ValueError):
    """The run's commits do not give one ingest instant per batch for an engine."""


@dataclass
class EngineHistory:
    """One engine's instants against the ground truth of the batches it ingested."""

    engine: str
    truth: HistoryTruth
    batch_instants: list[str]  # ingest instant of batch b
    instants: list[str]  # every completed data instant, ascending (ingest and maintenance)
    maintenance: list[str]  # the maintenance instants among them
    upsert_instants: dict[int, str] = field(default_factory=dict)  # batch -> the upsert of its corrections
    _sums: list[KeySum] = field(default_factory=list)
    _last_written: np.ndarray | None = None  # per truth row: the instant that last wrote it

    @classmethod
    def of_commits(cls, engine: str, truth: HistoryTruth, commits: Iterable[Mapping[str, Any]]) -> EngineHistory:
        """From the ``commits`` rows of ``engine``'s first repetition."""
        by_batch: dict[int, str] = {}
        upserts: dict[int, str] = {}
        instants: set[str] = set()
        maintenance: set[str] = set()
        for row in commits:
            if row["engine"] != engine or row.get("repeat", 0) != 0 or not row.get("instant"):
                continue
            instants.add(row["instant"])
            if row["kind"] in ("ingest", "upsert"):
                mine = by_batch if row["kind"] == "ingest" else upserts
                if row["batch"] in mine:
                    raise HistoryError(f"{engine}: two {row['kind']} instants for batch {row['batch']}")
                mine[row["batch"]] = row["instant"]
            else:
                maintenance.add(row["instant"])
        missing = [b for b in range(truth.num_batches) if b not in by_batch]
        if missing:
            raise HistoryError(f"{engine}: no ingest instant recorded for batches {missing[:5]}")
        batch_instants = [by_batch[b] for b in range(truth.num_batches)]
        if batch_instants != sorted(batch_instants):
            raise HistoryError(f"{engine}: ingest instants are not in batch order")
        if truth.updated is not None:
            corrected = {int(b) for b in np.unique(truth.updated[truth.updated >= 0])}
            if corrected - set(upserts):
                raise HistoryError(f"{engine}: no upsert instant recorded for the corrections of batches "
                                   f"{sorted(corrected - set(upserts))[:5]}")
        return cls(engine, truth, batch_instants, sorted(instants), sorted(maintenance), upserts)

    def batches_upto(self, instant: str) -> int:
        """How many batches were committed at or before ``instant``."""
        return bisect_right(self.batch_instants, instant)

    def as_of(self, instant: str) -> KeySum:
        """The rows the table held as of ``instant``: every batch committed at or before it; with
        corrections, each key at the version the upserts committed by then gave it (:func:`versioned_hashes`)."""
        if self.truth.has_updates:
            present = self.truth.batch < self.batches_upto(instant)
            done = sorted(b for b, t in self.upsert_instants.items() if t <= instant)
            versions = self.truth.versions_upto(done)
            return KeySum.of(versioned_hashes(self.truth.hashes[present], versions[present]))
        if not self._sums:
            self._sums = self.truth.sums_upto()
        return self._sums[self.batches_upto(instant)]

    def last_written(self) -> np.ndarray:
        """Each ground-truth row's commit instant: the instant that last wrote it (its last correction's
        upsert, else its batch's ingest)."""
        if self._last_written is None:
            self._last_written = np.asarray(
                self.truth.row_instants(self.batch_instants, self.upsert_instants).to_pylist(), dtype=str)
        return self._last_written

    def written_after(self, instant: str) -> np.ndarray:
        """The key hashes of the rows an incremental pull from ``instant`` must return: inserted or
        updated in ``(instant, latest]``."""
        if not self.truth.has_updates:
            return self.truth.hashes[self.truth.batch >= self.batches_upto(instant)]
        return self.truth.hashes[self.last_written() > instant]

    def committed_after(self, instant: str) -> KeySum:
        """The rows committed in ``(instant, latest]``: an incremental pull from ``instant``."""
        if self.truth.has_updates:
            return KeySum.of(self.written_after(instant))
        if not self._sums:
            self._sums = self.truth.sums_upto()
        done = self._sums[self.batches_upto(instant)]
        total = self._sums[-1]
        mask = (1 << 64) - 1
        return KeySum(total.rows - done.rows, (total.key_sum - done.key_sum) & mask, total.key_xor ^ done.key_xor)

    def row_commit_positions(self) -> np.ndarray:
        """Each ground-truth row's commit instant (:meth:`last_written`) as its position among :attr:`instants`."""
        if not self.truth.has_updates:
            return np.searchsorted(np.asarray(self.instants), np.asarray(self.batch_instants))[self.truth.batch]
        return np.searchsorted(np.asarray(self.instants), self.last_written())

    def before(self, instant: str) -> str | None:
        """The completed data instant just before ``instant`` (None: it is the first)."""
        i = self.instants.index(instant)
        return self.instants[i - 1] if i > 0 else None


def wrong_rows(truth_hashes: np.ndarray, returned: np.ndarray) -> tuple[int, int]:
    """(re-emitted, missing): rows ``returned`` that the expected set does not hold (or holds once
    and were returned again), and expected rows not returned. Keys are identified by their 64-bit hash."""
    if len(returned) == 0:
        return 0, len(truth_hashes)
    keys, counts = np.unique(returned, return_counts=True)
    expected = np.isin(keys, truth_hashes, assume_unique=False)
    reemitted = int(counts[~expected].sum() + (counts[expected] - 1).sum())
    return reemitted, len(truth_hashes) - int(expected.sum())
