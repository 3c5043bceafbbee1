"""read_snapshot remembers Spark's schema inference: later reads skip the inference job and give the
same DataFrame (schema, column order, rows) as Spark inferring it."""

from __future__ import annotations

import threading

from engine_helpers import new_table, spec

from engines.spark import reader
from engines.spark.insert import insert_new_file_groups
from engines.spark.reader import file_uri, read_snapshot
from workloads.generator import batch_df


def test_schema_inferred_once_and_reads_unchanged(spark, tmp_path) -> None:
    table = new_table(tmp_path / "t")
    ws = spec(num_batches=2)
    for b in range(ws.num_batches):
        insert_new_file_groups(table, batch_df(spark, ws, b), num_tasks=1)
    snap = table.view().snapshot()
    paths = [file_uri(table.storage, s.path) for s in snap]
    inferred = spark.read.option("basePath", file_uri(table.storage, "")).parquet(*paths)  # Spark alone
    first = read_snapshot(spark, table.storage, snap).df
    key = reader._inference_key(spark, table.storage, snap[0], file_uri(table.storage, ""))
    assert key is not None and key in reader._INFERRED[spark]
    calls = []
    footer = table.storage.parquet_metadata
    table.storage.parquet_metadata = lambda rel: calls.append(rel) or footer(rel)  # type: ignore[method-assign]
    try:
        again = read_snapshot(spark, table.storage, snap).df  # from the remembered schema
    finally:
        del table.storage.parquet_metadata
    assert calls == []  # nor is the first file's footer read again (on a store: a HEAD and two GETs)
    for df in (first, again):
        assert df.schema == inferred.schema and df.columns == inferred.columns  # dt keeps its place
        assert sorted(map(tuple, df.collect())) == sorted(map(tuple, inferred.collect()))
    selective = read_snapshot(spark, table.storage, snap, [("service", "=", "svc-001")]).df
    assert selective.where("service = 'svc-001'").count() == inferred.where("service = 'svc-001'").count()


def test_many_paths_in_few_py4j_calls_read_the_same_files(spark, tmp_path) -> None:
    """parquet_paths hands the JVM every path in one string: the same files and rows as reader.parquet,
    in a number of Py4J calls that does not grow with the number of files."""
    from py4j.clientserver import JavaClient
    from py4j.protocol import MEMORY_COMMAND_NAME, MEMORY_DEL_SUBCOMMAND_NAME

    table = new_table(tmp_path / "t")
    ws = spec(num_batches=16, batch_records=100, num_partitions=2)
    for b in range(ws.num_batches):
        insert_new_file_groups(table, batch_df(spark, ws, b))
    paths = sorted(file_uri(table.storage, s.path) for s in table.view().snapshot())
    assert len(paths) >= 16
    calls = {"n": 0}
    original = JavaClient.send_command

    caller = threading.get_ident()

    def counting(self, command, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        # the reader's calls only: not another thread's, nor the deletes Python's garbage collector sends for
        # proxies of earlier tests (in the full suite, 67 calls were counted where the read makes about 20)
        if threading.get_ident() == caller and not command.startswith(MEMORY_COMMAND_NAME + MEMORY_DEL_SUBCOMMAND_NAME):
            calls["n"] += 1
        return original(self, command, *args, **kwargs)

    def count_calls(fn):  # noqa: ANN001, ANN202
        calls["n"] = 0
        JavaClient.send_command = counting
        try:
            out = fn()
        finally:
            JavaClient.send_command = original
        return out, calls["n"]

    schema = spark.read.parquet(paths[0]).schema
    plain, plain_calls = count_calls(lambda: spark.read.schema(schema).parquet(*paths))
    ours, our_calls = count_calls(lambda: reader.parquet_paths(spark.read.schema(schema), paths))
    assert sorted(ours.inputFiles()) == sorted(plain.inputFiles())
    assert sorted(map(tuple, ours.collect())) == sorted(map(tuple, plain.collect()))
    # PySpark: one call per path; ours: a few more calls than the read itself, at most once per session
    assert our_calls <= plain_calls - len(paths) + 8, (plain_calls, our_calls)
