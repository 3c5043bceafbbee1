"""The one gate: does a write job run in the driver process or as Spark tasks?

A small job spends most of its time on the fixed costs of a Spark job (scheduling, shipping the task,
a Python worker's round trip), not on writing: its tasks then run in the driver, with the task indices
and attempt 0 a Spark job would give them, so the files, names and bytes are the same
(tests/test_local_write.py, tests/test_rewrite_paths.py). :func:`choose_route` is the rule; the
``*_route`` functions below are its only callers, one per kind of write job, and build every reason a
job cannot take the driver (or, for a job with one route only, why). :func:`record_route` counts the
route each job took per table, which the runner puts in the run's profile per engine
(``profile.routes``, :func:`routes_by_owner`). Every job that writes base files goes through here.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from engines.config.registry import SINGLE_TASK_BYTES, SORT_RUN_BYTES
from engines.files.inputs import Inputs, sortable

# At most this many rows a job writes in the driver. Sized like LOCAL_BYTES: the driver then holds no more
# than a sorting task would (the benchmark's log rows take ~280 bytes in Arrow: 100k rows ~ 28 MB, ~10 MB
# of Parquet).
LOCAL_ROWS = 100_000
# At most this many uncompressed input bytes a job reads in the driver. Measured on the loaded 2-core
# machine (unsorted rewrites, medians of 4): a 1-task no-op Spark job costs 0.2-0.4 s; 3 MB in, 1 output:
# Spark 0.43 s, driver 0.09 s; 25 MB, 1 output: 0.64 / 0.33 s; 100 MB, 4 outputs: 2.64 / 1.94 s. Option 1/2
# runs of the default scenario read 1-27 MB on disk (3-85 MB uncompressed). The bound is the memory one
# sorting task holds (SORT_RUN_BYTES), so no driver holds more than a task would.
LOCAL_BYTES = SORT_RUN_BYTES

_LOCK = threading.Lock()
_TAKEN: Counter[tuple[str, str]] = Counter()  # (table base URI, "job: route") -> jobs


class RouteRefusedError(ValueError):
    """A write job the gate sends to Spark tasks that has no Spark route: refused before it writes."""


@dataclass(frozen=True)
class Route:
    """Where a write job runs, and the short reason the gate gave."""

    in_driver: bool
    reason: str

    def __str__(self) -> str:
        return f"{'driver' if self.in_driver else 'spark'} ({self.reason})"


def choose_route(*, rows: int | None = None, input_bytes: int | None = None, blocker: str | None = None) -> Route:
    """The driver when the job is small and pyarrow can stand in for Spark, else Spark tasks.

    ``rows``: the rows the job writes, where the rule bounds them (inserts, top-ups); ``input_bytes``:
    the uncompressed bytes of the files it reads (rewrites, top-ups); ``blocker``: why pyarrow cannot do
    the job as Spark would (files it cannot read as Spark does, a sort it orders differently, a row count
    not known without a Spark job), None when it can."""
    if blocker is not None:
        return Route(False, blocker)
    if rows is not None and rows > LOCAL_ROWS:
        return Route(False, f"more than {LOCAL_ROWS} rows")
    if input_bytes is not None and input_bytes > LOCAL_BYTES:
        return Route(False, f"more than {LOCAL_BYTES} input bytes")
    bounds = ([f"at most {LOCAL_ROWS} rows"] if rows is not None else []) + \
        ([f"at most {LOCAL_BYTES} input bytes"] if input_bytes is not None else [])
    return Route(True, ", ".join(bounds) or "nothing to bound")


# --- one function per kind of write job: the facts in, the route and its reason out ---------------------

def insert_needs_count(rows: int | None, num_tasks: int | None) -> bool:
    """Whether an insert of new file groups must count its batch per partition in a Spark job first: its
    row count is unknown or too large for the driver, and the caller did not fix the task count."""
    return num_tasks is None and (rows is None or not choose_route(rows=rows).in_driver)


def insert_route(rows: int | None, num_tasks: int | None, string_partitions: bool) -> Route:
    """An insert of new file groups (one task per partition value): the driver writes it as the tasks
    would when its rows are known and few, and its tasks need no hash over a non-string partition column."""
    blocker = ("row count not known without a Spark job" if rows is None
               else None if num_tasks == 1 or string_partitions
               else "tasks over a partition column that is not a string")
    return choose_route(rows=rows, blocker=blocker)


def bucket_route(batch_schema: pa.Schema, record_key: str, partition_column: str, num_rows: int) -> Route:
    """Insert buckets (the UpsertPartitioner's), before any small file's footer is read: the batch's own
    facts (row count, a record key pyarrow orders as Spark does, a string partition column)."""
    blocker = ("a record key pyarrow does not order as Spark does" if not sortable(batch_schema, [record_key])
               else "a partition column that is not a string"
               if not pa.types.is_string(batch_schema.field(partition_column).type) else None)
    return choose_route(rows=num_rows, blocker=blocker)


def bucket_inputs_route(num_rows: int, footers: Sequence[Inputs | None], batch_schema: pa.Schema) -> Route:
    """Insert buckets, once their small files' footers are read: each readable by pyarrow in the batch's
    columns and types (so Spark's union schema is the batch's), all at most :data:`LOCAL_BYTES` in all."""
    def nullable(schema: pa.Schema) -> pa.Schema:
        return pa.schema([f.with_nullable(True) for f in schema])

    if any(f is None or not nullable(f.schema).equals(nullable(batch_schema)) for f in footers):
        return choose_route(blocker="a small file pyarrow cannot read in the batch's schema")
    return choose_route(rows=num_rows, input_bytes=sum(f.total_bytes for f in footers if f is not None))


def rewrite_route(inputs: Inputs | None, ordering: str, sort_keys: Sequence[str]) -> Route:
    """A rewrite of base files (clustering, compaction): the driver runs the pyarrow tasks when pyarrow
    reads the inputs as Spark does, sorts ``sort_keys`` as Spark does (ordering ``linear``) and the input
    is small; a curve ordering always runs in Spark (Spark computes its key). A sorted pyarrow rewrite's
    reason also says its shape (:func:`sorted_in_one_task`)."""
    if ordering in ("zorder", "hilbert"):
        return choose_route(blocker="a curve ordering (Spark computes its key)")
    blocker = ("inputs pyarrow cannot read as Spark does" if inputs is None
               else None if ordering == "none" or sortable(inputs.schema, sort_keys)
               else "sort columns pyarrow does not order as Spark does")
    route = choose_route(input_bytes=inputs.total_bytes if inputs is not None else None, blocker=blocker)
    if inputs is None or blocker is not None or ordering == "none":
        return route
    shape = (f"sorted in one task: at most {SINGLE_TASK_BYTES} input bytes" if sorted_in_one_task(inputs.total_bytes)
             else f"sorted in runs, then merged: more than {SINGLE_TASK_BYTES} input bytes")
    return Route(route.in_driver, f"{route.reason}; {shape}")


def sorted_in_one_task(input_bytes: int) -> bool:
    """Whether a sorted pyarrow rewrite sorts every row in one task (at most ``SINGLE_TASK_BYTES`` of
    uncompressed input: a second stage and its temporary runs cost more than the parallel sort saves)."""
    return input_bytes <= SINGLE_TASK_BYTES


def upsert_merge_route() -> Route:
    """The COW upsert's merge of a touched file group: its rows are joined with the batch in Spark."""
    return choose_route(blocker="kept rows found by a Spark join with the batch (no driver route)")


def upsert_inserts_route() -> Route:
    """The COW upsert's rows of new keys: found by a Spark anti-join with the touched files."""
    return choose_route(blocker="new keys found by a Spark anti-join (no driver route)")


def driver_only_route(*, rows: int | None = None, input_bytes: int | None = None, why: str) -> Route:
    """A job only the driver can run today (``why``): it runs there, and the reason says whether it stays
    within the driver's bounds or how far over them it goes."""
    over = [f"{rows} rows, over {LOCAL_ROWS}"] if rows is not None and rows > LOCAL_ROWS else []
    over += [f"{input_bytes} input bytes, over {LOCAL_BYTES}"] if input_bytes is not None and \
        input_bytes > LOCAL_BYTES else []
    return Route(True, f"{why}; " + ("; ".join(over) if over else choose_route(rows=rows, input_bytes=input_bytes)
                                     .reason))


def mor_compaction_route(input_bytes: int) -> Route:
    """A MERGE_ON_READ compaction of one file group (its logs merged over its base, in the driver: the table
    core's MOR merge has no Spark route). It runs there whatever its size: one file group is what one
    compaction task of Hudi's holds, and the reason says how far over the driver's bound it goes."""
    return driver_only_route(input_bytes=input_bytes, why="the table core's MOR merge has no Spark route")


def deltacommit_inserts_route(rows: int) -> Route:
    """A deltacommit's rows of new keys, written as base files from the batch the driver already holds
    (the table core's deltacommit has no Spark route)."""
    return driver_only_route(rows=rows, why="the table core's deltacommit has no Spark route")


def mor_clustering_route(input_bytes: int) -> Route:
    """A MERGE_ON_READ clustering group, merged and sorted in the driver (the table core's MOR merge has
    no Spark route): the driver when its input is at most :data:`LOCAL_BYTES`, else Spark tasks, which
    :func:`require_driver` refuses."""
    return choose_route(input_bytes=input_bytes)


def require_driver(job: str, route: Route, what: str) -> None:
    """Refuse ``job`` on ``what`` (:class:`RouteRefusedError`, nothing written) when the gate sent it to
    Spark tasks but the job has no Spark route."""
    if not route.in_driver:
        raise RouteRefusedError(
            f"{job} refused for {what}: {route.reason}, and it has no Spark route (its rows are merged in the "
            f"driver, which holds at most {LOCAL_BYTES} bytes); plan smaller groups. Nothing was written")


# --- the record ------------------------------------------------------------------------------------

def record_route(job: str, route: Route, base_uri: str) -> Route:
    """Count that a ``job`` (insert, rewrite, bucket insert, ...) writing into the table at ``base_uri``
    took ``route``; returns ``route``."""
    with _LOCK:
        _TAKEN[(base_uri, f"{job}: {route}")] += 1
    return route


def routes_taken() -> dict[tuple[str, str], int]:
    """How many jobs took each route in this process so far: (table base URI, ``job: where (reason)``) ->
    count."""
    with _LOCK:
        return dict(_TAKEN)


def routes_by_owner(since: Mapping[tuple[str, str], int], owners: Mapping[str, str],
                    other: str = "harness") -> dict[str, dict[str, int]]:
    """The jobs recorded after the snapshot ``since`` (:func:`routes_taken`), per owner of their table
    (``owners``: base URI -> engine name; any other table, a gate's or the harness's scratch one, is
    ``other``): owner -> ``job: where (reason)`` -> count."""
    out: dict[str, Counter[str]] = {}
    for (uri, label), n in sorted(routes_taken().items()):
        ran = n - since.get((uri, label), 0)
        if ran > 0:
            out.setdefault(owners.get(uri, other), Counter())[label] += ran
    return {owner: dict(sorted(c.items())) for owner, c in sorted(out.items())}
