"""The ground truth per instant that the incremental and time-travel gates check readers against.

The runner ingests each batch's new rows (``workloads.generator.batch_table``) and, when the workload
has corrections (``update_fraction``), upserts the batch's corrections of earlier keys as a commit of
its own (``workloads.truth.corrections_of``). A record key is written by the ingest instant of its
batch and again by the upsert instant of every batch that corrects it: an update legitimately gives a
row a new commit time. :class:`HistoryTruth` holds every key's batch, the last batch that corrected it
(-1: never) and the 64-bit hash its ``trace_id`` starts with (the key checksum of
:mod:`workloads.truth`); :meth:`HistoryTruth.row_instants` maps them to one engine's instants.
Corrections change no key set: the table as of an instant holds the keys of the batches ingested by
then, each at the version its last correction upserted by then gave it (a corrected row's message names
the batch: :func:`message_versions`), which the time-travel gate checks through :func:`versioned_hashes`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_HEX = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEX[_c] = 10 + _i


class KeyFormatError(ValueError):
    """A record key that does not start with the 16 hex digits every generated key has."""


def key_hashes(keys: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The 64-bit hash each record key starts with (its first 16 hex digits), as ``uint64``:
    vectorised :func:`workloads.truth.key_hashes` (the same numbers, without a Python loop)."""
    arr = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    if len(arr) == 0:
        return np.zeros(0, dtype=np.uint64)
    if arr.null_count:
        raise KeyFormatError(f"{arr.null_count} null record keys")
    head = pc.utf8_slice_codeunits(arr, 0, 16).cast(pa.string())  # a fresh array: offsets from 0
    offsets = np.frombuffer(head.buffers()[1], dtype=np.int32, count=len(head) + 1)
    if offsets[-1] != 16 * len(head) or not np.array_equal(np.diff(offsets), np.full(len(head), 16, np.int32)):
        raise KeyFormatError("a record key shorter than the 16 hex digits it must start with")
    nibbles = _HEX[np.frombuffer(head.buffers()[2], dtype=np.uint8, count=16 * len(head)).reshape(-1, 16)]
    if (nibbles == 255).any():
        raise KeyFormatError("a record key whose first 16 characters are not hex digits")
    packed = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]  # 8 bytes per key, most significant first
    return np.ascontiguousarray(packed).view(">u8").ravel().astype(np.uint64)


VERSION_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: distinct correction batches mix to distinct words
CORRECTED = r"^CORRECTED in batch (?P<b>[0-9]+): "  # how a correction marks the message it rewrites


def versioned_hashes(hashes: np.ndarray, versions: np.ndarray) -> np.ndarray:
    """Each key hash mixed with the batch that last corrected its row (``versions``: -1 for a row never
    corrected, whose hash is unchanged): equal sums then mean the same keys at the same versions."""
    with np.errstate(over="ignore"):
        mix = (np.asarray(versions, np.int64) + 1).astype(np.uint64) * VERSION_MIX  # wraps mod 2**64
    return np.asarray(hashes, np.uint64) ^ mix


def message_versions(messages: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The batch that last corrected each row, read from its message (``CORRECTED in batch <b>: ...``,
    :func:`workloads.generator.batch_updates_table`); -1 for a row as its batch inserted it."""
    arr = messages.combine_chunks() if isinstance(messages, pa.ChunkedArray) else messages
    if len(arr) == 0:
        return np.zeros(0, np.int64)
    found = pc.struct_field(pc.extract_regex(arr.cast(pa.string()), CORRECTED), "b")  # null where no match
    return pc.fill_null(pc.cast(found, pa.int64()), -1).to_numpy(zero_copy_only=False).astype(np.int64)


@dataclass(frozen=True)
class KeySum:
    """Rows, and the sum (mod 2**64) and xor of their key hashes: equal for the same multiset of keys."""

    rows: int
    key_sum: int
    key_xor: int

    @classmethod
    def of(cls, hashes: np.ndarray) -> KeySum:
        if len(hashes) == 0:
            return cls(0, 0, 0)
        return cls(len(hashes), int(np.sum(hashes, dtype=np.uint64)), int(np.bitwise_xor.reduce(hashes)))

    @classmethod
    def of_keys(cls, keys: pa.Array | pa.ChunkedArray, messages: pa.Array | pa.ChunkedArray | None = None) -> KeySum:
        """The sum of ``keys``; with ``messages``, each key at the version its message names (a run with
        corrections: :func:`versioned_hashes`)."""
        hashes = key_hashes(keys)
        return cls.of(hashes if messages is None else versioned_hashes(hashes, message_versions(messages)))

    def __add__(self, other: KeySum) -> KeySum:
        return KeySum(self.rows + other.rows, (self.key_sum + other.key_sum) & ((1 << 64) - 1),
                      self.key_xor ^ other.key_xor)

    def __str__(self) -> str:
        return f"{self.rows} rows, key sum {self.key_sum:016x}, xor {self.key_xor:016x}"


@dataclass
class HistoryTruth:
    """Every generated row's record key, hash and batch, in batch order."""

    keys: pa.Array  # trace_id of every row
    hashes: np.ndarray  # uint64 per row
    batch: np.ndarray  # int per row: the batch that inserted it
    num_batches: int
    updated: np.ndarray | None = None  # int per row: the last batch whose upsert corrected it, -1 never (None: no corrections)
    corrected: dict[int, np.ndarray] | None = None  # batch -> the rows its upsert corrected

    @property
    def has_updates(self) -> bool:
        """Whether any row was corrected after its ingest."""
        return self.updated is not None and bool((self.updated >= 0).any())

    @classmethod
    def of_batches(cls, parts: list[pa.Table], key: str = "trace_id",
                   updates: list[pa.Table] | None = None) -> HistoryTruth:
        """From the batches the runner ingested (``batch_table(spec, b)`` for b = 0, 1, ...) and, when
        given, each batch's corrections (``updates[b]``: the rows batch ``b``'s upsert wrote)."""
        keys = pa.concat_arrays([p.column(key).combine_chunks() for p in parts]) if parts else pa.array([], pa.string())
        batch = np.repeat(np.arange(len(parts)), [p.num_rows for p in parts])
        hashes = key_hashes(keys)
        updated, corrected = None, None
        if updates is not None and any(u.num_rows for u in updates):
            if len(updates) != len(parts):
                raise ValueError(f"corrections of {len(updates)} batches for {len(parts)} batches")
            updated = np.full(len(hashes), -1, np.int64)
            corrected = {}
            order = np.argsort(hashes, kind="stable")
            for b, u in enumerate(updates):  # ascending: a later correction of a key wins
                if not u.num_rows:
                    continue
                u_hash = key_hashes(u.column(key))
                at = np.clip(np.searchsorted(hashes[order], u_hash), 0, max(len(hashes) - 1, 0))
                found = hashes[order][at] == u_hash
                if not found.all():
                    raise ValueError(f"batch {b} corrects {int((~found).sum())} keys no earlier batch inserted")
                updated[order[at]] = b
                corrected[b] = order[at]
        return cls(keys, hashes, batch, len(parts), updated, corrected)

    def versions_upto(self, done: list[int]) -> np.ndarray:
        """Each row's version once the corrections of batches ``done`` (ascending) were upserted: the last
        of them that corrected it, -1 for none."""
        out = np.full(len(self.hashes), -1, np.int64)
        for b in done:
            rows = (self.corrected or {}).get(b)
            if rows is not None:
                out[rows] = b
        return out

    def sums_upto(self) -> list[KeySum]:
        """``[k]``: the key sum of batches 0..k-1 (``[0]`` empty): the table as of batch k's ingest is ``[k+1]``."""
        out = [KeySum(0, 0, 0)]
        for b in range(self.num_batches):
            out.append(out[-1] + KeySum.of(self.hashes[self.batch == b]))
        return out

    def row_instants(self, batch_instants: list[str], upsert_instants: dict[int, str] | None = None) -> pa.Array:
        """Each row's commit instant on an engine whose batch ``b`` committed at ``batch_instants[b]`` and
        whose upsert of batch ``b``'s corrections committed at ``upsert_instants[b]``: the instant that
        last wrote the row (its last correction's, else its ingest's)."""
        if len(batch_instants) != self.num_batches:
            raise ValueError(f"{len(batch_instants)} ingest instants for {self.num_batches} batches")
        out = np.asarray(batch_instants, dtype=object)[self.batch]
        if self.updated is not None:
            upserts = upsert_instants or {}
            corrected = self.updated >= 0
            missing = sorted({int(b) for b in self.updated[corrected]} - set(upserts))
            if missing:
                raise ValueError(f"no upsert instant for the corrections of batches {missing[:5]}")
            out[corrected] = [upserts[int(b)] for b in self.updated[corrected]]
        return pa.array(out, pa.string())
