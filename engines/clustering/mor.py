"""Clustering on a MERGE_ON_READ table: a group's rows are its slices' logs merged over their bases.

| step    | what                                                                                   |
| ------- | -------------------------------------------------------------------------------------- |
| inputs  | the view's latest slice of each planned file group, which must be the plan's (same base file) |
| merge   | :func:`engines.table.mor.merge_slice` per slice: every committed log block applied by key and ordering field |
| order   | the plan's ordering, as copy-on-write clustering orders rows (:func:`engines.files.ordering.order_table`) |
| write   | ``numOutputFiles`` new file groups of near-equal row counts, parquet base files (the RFC: clustering output is always parquet) |

The replacecommit replaces every planned group, base and logs alike, so an update sitting in a log
is carried into the output and never lost. Deltacommits updating a group under a pending
clustering are refused (:mod:`engines.files.deltacommit`), so the logs merged here are the ones the
group had when it was planned (plus none). Pure pyarrow (the shared base-file writer): no Spark
job, as the table core's MOR writes have none yet. :func:`execute_merged` runs a saved plan through
``requested → inflight → replacecommit`` with the clustering fault points; the clustering engine's
own execute reaches :func:`cluster_merged_group` through ``executor.cluster_group`` (the one direction
between the two modules: the plan's load and commit are :mod:`engines.clustering.replacecommit`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pyarrow as pa

from engines.clustering.plan import ClusteringGroup, ClusteringPlan
from engines.clustering.replacecommit import commit, load_plan
from engines.files.gate import mor_clustering_route, record_route, require_driver
from engines.files.ordering import order_table
from engines.files.writer import NO_ROLL, ROW_GROUP_ROWS, WriteSpec, write_partition_rows
from engines.table import faults
from engines.table.model import WriteStat
from engines.table.mor import committed_instants, merge_slice
from engines.table.table import HudiTable
from engines.table.timeline import REPLACE, State, TimelineError
from engines.table.view import MergeSlice


class ClusteringInputError(ValueError):
    """A planned file group whose latest slice is no longer the one the plan names."""


def _group_slices(table: HudiTable, group: ClusteringGroup) -> list[MergeSlice]:
    """The view's latest slice of each planned file group, in the plan's order; each must be the plan's."""
    current = {s.file_group: s for s in table.view(read_footers=False).merge_slices()}
    out = []
    for planned in group.slices:
        s = current.get(planned.file_group)
        if s is None or s.base is None or s.base.path != planned.path:
            raise ClusteringInputError(f"clustering input {planned.path} is no longer the latest slice of file group "
                                       f"{planned.file_id}; nothing was written")
        out.append(s)
    return out


def _input_bytes(table: HudiTable, slices: list[MergeSlice]) -> int:
    """What merging ``slices`` holds in the driver, before reading a row: their base files' uncompressed
    bytes (footers) plus their log files' bytes."""
    total = 0
    for s in slices:
        assert s.base is not None  # _group_slices checked it
        md = table.storage.parquet_metadata(s.base.path)
        total += sum(md.row_group(i).total_byte_size for i in range(md.num_row_groups)) + s.log_bytes
    return total


def merged_group_rows(table: HudiTable, slices: list[MergeSlice]) -> pa.Table:
    """The rows of ``slices`` with their logs merged, in the plan's slice order."""
    committed = committed_instants(table, None)
    parts: list[pa.Table] = []
    for s in slices:
        base, records, _ = merge_slice(table, s, committed, [])
        parts.append(base)
        if records:
            parts.append(pa.Table.from_pylist(records, schema=base.schema))
    return pa.concat_tables(parts)


def cluster_merged_group(table: HudiTable, group: ClusteringGroup, plan: ClusteringPlan, instant: str, index: int,
                         row_group_rows: int, preserve_commit_metadata: bool, ordering: str) -> list[WriteStat]:
    """One group of a MERGE_ON_READ clustering: merged rows, in ``ordering`` by the plan's sort columns as a
    copy-on-write clustering orders them (:func:`engines.files.ordering.order_table`: sort columns or their
    curve key, then the record key, nulls first), written as evenly sized base files.

    The rows are merged in the driver (the table core's MOR merge has no Spark route), so the gate
    (:func:`engines.files.gate.mor_clustering_route`) bounds the group's input as it bounds every driver
    job, and a larger group is refused before any row is read (:class:`engines.files.gate.RouteRefusedError`)."""
    slices = _group_slices(table, group)
    route = record_route("mor clustering", mor_clustering_route(_input_bytes(table, slices)), table.base_uri)
    require_driver("MERGE_ON_READ clustering", route, f"group {index} ({len(slices)} file groups)")
    rows = order_table(merged_group_rows(table, slices), ordering, plan.sort_columns, table.record_key)
    n_out = max(1, group.num_output_files)
    spec = WriteSpec.for_table(table, instant, row_group_rows=row_group_rows, file_id_prefix=f"group-{index}",
                          preserve_commit_metadata=preserve_commit_metadata)
    spec = replace(spec, target_file_bytes=NO_ROLL, max_rows_per_file=max(1, math.ceil(rows.num_rows / n_out)))
    return write_partition_rows(spec, [rows], task=index, attempt=0) if rows.num_rows else []


def execute_merged(table: HudiTable, instant: str, preserve_commit_metadata: bool = True,
                   on_step: faults.StepHook = None) -> list[WriteStat]:
    """Execute the saved clustering plan ``instant`` of a MERGE_ON_READ table (requested → inflight →
    replacecommit), every group through :func:`cluster_merged_group`."""
    with table.lock:
        current = table.refresh().get(instant)
        if current is None or current.action != REPLACE or current.state != State.REQUESTED:
            raise TimelineError(f"{instant} is not a requested clustering of {table.base_uri}")
        plan = load_plan(table, instant)
        inflight = table.refresh().transition_to_inflight(current)
        faults.step("clustering.after_inflight", on_step)
        stats: list[WriteStat] = []
        ordering = plan.extra_metadata.get("ordering", "none")
        for i, group in enumerate(plan.groups):
            stats += cluster_merged_group(table, group, plan, instant, i, ROW_GROUP_ROWS, preserve_commit_metadata,
                                          ordering)
            faults.step("clustering.after_group_written", on_step)
        faults.step("clustering.after_all_groups", on_step)
        commit(table, plan, inflight, stats, ordering, preserve_commit_metadata, on_step)
    return stats
