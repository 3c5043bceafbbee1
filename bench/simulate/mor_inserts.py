"""MERGE_ON_READ inserts appended to small file groups' logs, on the simulator's table (T21, option2_mor_logs).

With ``insert_small_file_limit`` > 0 the MOR engine's deltacommit hands a partition's inserts first to
its small base-only file groups (Hudi's MOR small-file handling): each chosen group takes up to its room
of the partition's inserts, in the batch's order, into one new log file, and the rest go to new base
files. The simulator replays it with the engine's own pure functions (:meth:`engines.clustering_mor.sim.
MorClusteringSim.log_insert_targets`, :func:`engines.files.deltacommit.fill_groups`); this module keeps
what the simulated table needs to ask them and to record the answer:

- **targets**: the latest slices of the batch's partitions as the planner takes them
  (:class:`engines.mor_compaction.planner.SliceLogs`: base bytes, log files) and the table's completed
  writes' (base-file bytes, records), newest first, for Hudi's average record size;
- **a padded group**: its new log file (bytes from the real log format, :mod:`bench.simulate.logsize`:
  exact with rows, else ``insert_log_size_model``) and its slice grown by the inserted rows: the slice
  keeps its base file (path, bytes: the small-file test and the clustering planner read base bytes
  only) while its rows count the log's inserts, so corrections find those keys in its group (exact
  mode), and compaction and clustering write them (:func:`inserted_rows` says how many are in logs).

Where the simulator can part from the engine: the room is ``(max_file_size - base bytes) // average
record bytes``, and both come from estimated base-file sizes (rows x bytes per record): a base file's
estimate off by ``d`` bytes moves its room by ``d / average`` records, one record where the real floor
falls within ``d`` of a multiple of the average.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from bench.simulate import logsize
from bench.simulate import rows as simrows
from engines.files.deltacommit import SmallFileTarget, fill_groups
from engines.mor_compaction.planner import SliceLogs
from engines.table.model import FileSlice, file_slice

if TYPE_CHECKING:
    from bench.simulate.simulator import SimEngine, Simulator


def pads(e: SimEngine) -> bool:
    """Whether ``e`` appends inserts to small file groups' logs (its kind's own rule, which
    :mod:`bench.simulate.calibrate` asks too)."""
    rule = getattr(e.behaviour, "pads_inserts", None)
    return rule is not None and rule(e.behaviour.options)


def targets(sim: Simulator, e: SimEngine, partitions: Any) -> list[SmallFileTarget]:
    """The groups of ``partitions`` that take this deltacommit's inserts, as the engine chooses them."""
    slices = []
    for p in partitions:
        for fid, s in e.by_part.get(p, {}).items():
            logs = e.logs.get(s.path, ())
            slices.append(SliceLogs(p, fid, s.instant, s.file_name, s.size_bytes,
                                    tuple(path.rsplit("/", 1)[-1] for path, _, _ in logs),
                                    sum([size for _, size, _ in logs])))
    return e.behaviour.log_insert_targets(slices, reversed(e.base_writes), sim.max_file)  # type: ignore[attr-defined]


def pad(sim: Simulator, e: SimEngine, b: int, instant: str, partition: str, inserts: int,
        chosen: list[SmallFileTarget], written: list[FileSlice]) -> int:
    """``partition``'s share of batch ``b``'s inserts that the chosen groups take into new log files
    (each appended to ``written``); returns how many inserts are left for new base files."""
    start = 0
    for target, n in fill_groups(chosen, partition, inserts):
        s = e.by_part[partition][target.file_id]
        if sim.with_rows:
            full = logsize.batch_by_partition(sim.spec, b)[partition].slice(start, n)
            size = logsize.log_block_bytes(full, instant, partition, s.file_id)
            data: pa.Table | None = pa.concat_tables([e.rows[s.path], sim.batch_rows[partition].slice(start, n)])
            stats = simrows.stats_of(data, sim.pcol, partition[len(sim.prefix):])
        else:
            size = logsize.insert_log_size_model(sim.spec).bytes_of(n)
            data = None
            from bench.simulate.simulator import _merge_two  # the module that imports this one

            stats = _merge_two(s.column_stats, sim._estimated_stats(partition))
        grown = file_slice(partition, s.file_id, s.instant, s.path, s.size_bytes, s.num_rows + n, stats)
        e.live[s.file_group] = e.by_part[partition][s.file_id] = grown
        if data is not None:
            e.rows[s.path] = data
        e.inserted[s.path] = e.inserted.get(s.path, 0) + n
        written.append(sim._add_log(e, grown, instant, n, size))
        start += n
    return inserts - start


def inserted_rows(e: SimEngine, s: FileSlice) -> int:
    """The rows of ``s`` that sit in its log files as inserts (not in its base file)."""
    return e.inserted.get(s.path, 0) if e.inserted else 0
