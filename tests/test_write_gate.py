"""The one write gate (engines.files.gate): every job that writes base files asks it and is recorded per
table, and a driver-only job over the driver's bound is refused before it writes."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from test_mor_core import new_table, write_history

from engines.clustering import executor as clustering
from engines.clustering.config import ClusteringConfig
from engines.clustering.mor import execute_merged
from engines.files import gate
from engines.files.inputs import Inputs
from engines.mor_compaction import executor as compaction
from engines.mor_compaction.planner import CompactionConfig
from engines.table.rollback import recover

ENGINES = Path(__file__).resolve().parent.parent / "engines"
# the calls that write base files
WRITERS = {"write_partition_rows", "write_dataframe", "write_groups", "write_locally", "write_as_tasks",
           "write_empty_file", "write_bucket", "rewrite_unsorted", "rewrite_sorted"}
# functions that write without asking the gate themselves, each because its only caller asked it
GATED_BY_CALLER = {
    # the writers and the tasks: what a gated job runs
    ("files/writer.py", "write_partition_rows"), ("files/writer.py", "write_empty_file"),
    ("files/as_tasks.py", "write_as_tasks"), ("files/rewrite_tasks.py", "write_run"),
    ("files/rewrite_tasks.py", "merge_range"), ("files/rewrite_tasks.py", "sort_and_write"),
    ("spark/writer.py", "run"), ("spark/writer.py", "write_dataframe"), ("spark/local_write.py", "write_locally"), ("spark/group_write.py", "write_groups"), ("spark/group_write.py", "run"),
    ("spark/local_write.py", "job"), ("spark/insert.py", "write"), ("spark/arrow_rewrite.py", "rewrite_unsorted"),
    ("spark/arrow_rewrite.py", "rewrite_sorted"), ("cow_baseline/bucket_write.py", "write_bucket"),
    # called by a function that records the route: write_buckets, merge_write, cluster_group/rewrite_files
    ("cow_baseline/insert.py", "_write_buckets_as_tasks"), ("cow_baseline/insert.py", "write_group"),
    ("cow_baseline/driver_merge.py", "merge_in_driver"), ("cow_baseline/driver_merge.py", "job"),
    ("spark/rewrite.py", "rewrite"),
    # compact_operation records itself; its empty-file branch is the same job
}


def _functions_writing_without_the_gate() -> list[str]:
    out = []
    for path in sorted(ENGINES.rglob("*.py")):
        rel = str(path.relative_to(ENGINES))
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, ast.FunctionDef):
                continue
            calls = {c.func.id if isinstance(c.func, ast.Name) else c.func.attr if isinstance(c.func, ast.Attribute)
                     else "" for c in ast.walk(fn) if isinstance(c, ast.Call)}
            if calls & WRITERS and "record_route" not in calls and (rel, fn.name) not in GATED_BY_CALLER:
                out.append(f"{rel}:{fn.lineno} {fn.name}")
    return out


def test_every_function_writing_base_files_asks_the_gate() -> None:
    assert _functions_writing_without_the_gate() == []


def test_the_routes_are_counted_per_table_and_owner() -> None:
    before = gate.routes_taken()
    gate.record_route("insert", gate.choose_route(rows=10), "/t/a")
    gate.record_route("insert", gate.choose_route(rows=10), "/t/a")
    gate.record_route("rewrite", gate.choose_route(blocker="why not"), "/t/scratch")
    routes = gate.routes_by_owner(before, {"/t/a": "baseline"})
    assert routes == {"baseline": {f"insert: driver (at most {gate.LOCAL_ROWS} rows)": 2},
                      "harness": {"rewrite: spark (why not)": 1}}


def test_a_driver_only_job_says_how_far_over_the_bound_it_is() -> None:
    assert str(gate.driver_only_route(rows=5, why="no Spark route")) == \
        f"driver (no Spark route; at most {gate.LOCAL_ROWS} rows)"
    over = gate.driver_only_route(input_bytes=gate.LOCAL_BYTES + 1, why="no Spark route")
    assert over.in_driver and f"{gate.LOCAL_BYTES + 1} input bytes, over {gate.LOCAL_BYTES}" in over.reason


def test_mor_jobs_are_recorded_and_a_group_over_the_driver_bound_is_refused(tmp_path, monkeypatch) -> None:
    table = new_table(tmp_path)
    before = gate.routes_taken()
    write_history(table)
    compaction.execute(table, compaction.schedule(table, CompactionConfig(), force=True))
    ts = clustering.schedule(table, ClusteringConfig())
    monkeypatch.setattr(gate, "LOCAL_BYTES", 1)
    files = sorted(e.path for e in table.storage.list("", recursive=True) if e.path.endswith(".parquet"))
    with pytest.raises(gate.RouteRefusedError, match="MERGE_ON_READ clustering refused for group 0 .*no Spark route"):
        execute_merged(table, ts)
    assert sorted(e.path for e in table.storage.list("", recursive=True) if e.path.endswith(".parquet")) == files
    monkeypatch.undo()
    recover(table)  # the refused attempt's inflight instant rolled back, its plan kept
    execute_merged(table, ts)
    jobs = {label.split(":")[0] for label in gate.routes_by_owner(before, {table.base_uri: "mor"})["mor"]}
    assert jobs == {"deltacommit inserts", "mor compaction", "mor clustering"}


def test_the_pure_pyarrow_writers_do_not_import_pyspark() -> None:
    """MOR clustering and compaction, deltacommits and the insert commit write with pyarrow only."""
    code = ("import sys; import engines.clustering.mor, engines.mor_compaction.executor, engines.files.deltacommit, "
            "engines.files.insert_commit, engines.files.job; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark' or m.startswith('engines.spark')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ENGINES.parent, env={**os.environ, "PYTHONPATH": str(ENGINES.parent)})
    assert out.stdout.strip() == "[]", out.stdout


def test_the_gate_builds_every_reason() -> None:
    schema = pa.schema([("k", pa.string()), ("dt", pa.string()), ("x", pa.float64())])

    def inputs(total_bytes: int, s: pa.Schema = schema) -> Inputs:
        return Inputs(["a.parquet"], [[10]], s.names, s, total_bytes)

    small = gate.rewrite_route(inputs(gate.SINGLE_TASK_BYTES), "linear", ["k"])
    assert small.in_driver and small.reason.endswith(f"sorted in one task: at most {gate.SINGLE_TASK_BYTES} input bytes")
    runs = gate.rewrite_route(inputs(gate.SINGLE_TASK_BYTES + 1), "linear", ["k"])
    assert "sorted in runs, then merged" in runs.reason
    assert str(gate.rewrite_route(inputs(1), "linear", ["x", "k"])) == \
        "spark (sort columns pyarrow does not order as Spark does)"
    assert str(gate.rewrite_route(None, "zorder", ["x"])) == "spark (a curve ordering (Spark computes its key))"
    assert str(gate.rewrite_route(inputs(gate.LOCAL_BYTES + 1), "none", [])) == \
        f"spark (more than {gate.LOCAL_BYTES} input bytes)"
    assert str(gate.bucket_route(schema, "x", "dt", 5)) == "spark (a record key pyarrow does not order as Spark does)"
    assert gate.bucket_route(schema, "k", "dt", 5).in_driver
    other = pa.schema([("k", pa.string()), ("dt", pa.string())])
    assert str(gate.bucket_inputs_route(5, [inputs(1, other)], schema)) == \
        "spark (a small file pyarrow cannot read in the batch's schema)"
    assert gate.bucket_inputs_route(5, [inputs(1)], schema).in_driver
    assert str(gate.insert_route(None, None, True)) == "spark (row count not known without a Spark job)"
    assert str(gate.insert_route(5, 3, False)) == "spark (tasks over a partition column that is not a string)"
    assert gate.insert_route(5, 1, False).in_driver
    assert gate.insert_needs_count(None, None) and not gate.insert_needs_count(None, 2)
    assert gate.insert_needs_count(gate.LOCAL_ROWS + 1, None) and not gate.insert_needs_count(5, None)


def test_the_bucket_job_reuses_the_footers_the_gate_read(tmp_path) -> None:
    """One read of every small file or one read each: decided on the footers the gate read as
    inspect_inputs of them all together decides it (so they are not read again)."""
    from engines.cow_baseline.insert import _one_schema
    from engines.files.inputs import inspect_inputs
    from engines.files.writer import WriteSpec, write_partition_rows
    from engines.table.model import FileSlice
    from engines.table.table import HudiTable, TableConfig

    table = HudiTable.create(str(tmp_path / "t"), TableConfig("t", "dt", "k"))
    rows = pa.table({"k": ["a", "b"], "dt": ["d", "d"], "x": [1, 2]})
    slices = []
    for i, t in enumerate([rows, rows, rows.append_column("y", pa.array([1.0, 2.0]))]):
        spec = WriteSpec.for_table(table, f"2026010100000000{i}", file_id_prefix=str(i))
        slices += [FileSlice(s.partition, s.file_id, spec.instant, s.path, s.file_size, s.num_writes)
                   for s in write_partition_rows(spec, [t], 0, 0)]
    for chosen in ([0, 1], [0, 2], [1, 2]):
        picked = [slices[i] for i in chosen]
        footers = {i: inspect_inputs(table.storage, [s], keep_meta=False) for i, s in enumerate(picked)}
        assert _one_schema(footers) == (inspect_inputs(table.storage, picked, True) is not None)
