"""The task ``df.repartition(n, col)`` sends a string value to, computed without Spark.

Spark's hash partitioning puts a row in task ``pmod(murmur3(col, seed 42), n)``, where a string is
hashed by ``Murmur3_x86_32.hashUnsafeBytes``: Spark's own variant of Murmur3 (x86, 32 bit), which
mixes each of the last ``len % 4`` bytes as a whole (sign-extended) block instead of folding them
into one. A null leaves the seed as the hash. Pure functions; checked against Spark's ``hash()``
and ``spark_partition_id()`` in the tests.
"""

from __future__ import annotations

SEED = 42  # the seed of Spark's HashPartitioning (Murmur3Hash's default)
_MASK = 0xFFFF_FFFF
_C1 = 0xCC9E2D51
_C2 = 0x1B873593


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix_k1(k1: int) -> int:
    return (_rotl((k1 * _C1) & _MASK, 15) * _C2) & _MASK


def _mix_h1(h1: int, k1: int) -> int:
    return (_rotl(h1 ^ k1, 13) * 5 + 0xE6546B64) & _MASK


def _fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    return h1 ^ (h1 >> 16)


def spark_murmur3(data: bytes, seed: int = SEED) -> int:
    """Spark's ``Murmur3_x86_32.hashUnsafeBytes(data, seed)`` as a signed 32-bit int."""
    aligned = len(data) - len(data) % 4
    h1 = seed & _MASK
    for i in range(0, aligned, 4):
        h1 = _mix_h1(h1, _mix_k1(int.from_bytes(data[i:i + 4], "little")))
    for b in data[aligned:]:
        h1 = _mix_h1(h1, _mix_k1((b - 256 if b > 127 else b) & _MASK))
    h = _fmix(h1, len(data))
    return h - (1 << 32) if h >= 1 << 31 else h


def string_hash(value: str | None, seed: int = SEED) -> int:
    """Spark's ``hash(value)`` of a string column's value (the seed for null)."""
    return seed if value is None else spark_murmur3(value.encode("utf-8"), seed)


def hash_partition(value: str | None, num_partitions: int) -> int:
    """The task of ``value`` among ``num_partitions`` in ``repartition(num_partitions, col)``."""
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be at least 1, got {num_partitions}")
    return string_hash(value) % num_partitions  # Python's % is Spark's pmod for a positive divisor
