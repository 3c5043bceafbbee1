"""Apache Hudi's own streaming sink (``writeStream.format("hudi")``, T13): a short stream into a
``hudi`` engine with ``stream_sink: hudi`` whose async clustering runs inside Hudi's sink — a
replacecommit completes between the stream's commits — and the table verifies against ground
truth with every key present once; bad input quarantined and named, the old batch counted."""

from __future__ import annotations

import json

import pytest

from bench.hoodie_conf import read_config
from bench.scenario import parse_scenario
from bench.stream.landing import BAD_NAME, OLD_NAME, OLD_RECORDS
from engines.hudi.config import HudiConfig, hoodie_options, streaming_sink_options

DOC = {
    "name": "stream_hudi_sink_test",
    "workload": {"seed": 5, "num_batches": 6, "batch_records": 800, "partition_granularity": "day",
                 "num_partitions": 2, "late_fraction": 0.1},
    "engines": [{"name": "hudi_sink", "kind": "hudi",
                 "config": {"preset": "hudi_clustering", "stream_sink": "hudi", "sort_columns": ["service", "ts"]}}],
    "sizing": {"small_file_limit_mb": 0.6, "target_file_mb": 0.8, "max_file_mb": 0.8, "row_group_rows": 1000,
               "cleaner_commits_retained": 2},
    "maintenance": {"mode": "async", "async_interval_s": 0.5},
    "queries": {"warm_runs": 1, "suite": ["full_scan_by_level", "point_lookup"]},
    "isolation": {"enabled": False},
    "stream": {"rate": 1.0, "async_max_commits": 2, "retention_hours": 168, "bad_input": True, "timeout_s": 240,
               "rate_search": {"enabled": False}},
}


def test_stream_sink_config_is_validated() -> None:
    with pytest.raises(ValueError, match="unknown stream_sink 'kafka'"):
        HudiConfig(stream_sink="kafka")
    with pytest.raises(ValueError, match="mode must be 'manual'"):
        HudiConfig(preset="hudi_clustering", stream_sink="hudi", mode="async")
    with pytest.raises(ValueError, match="stream_sink=Hudi: expected one of"):
        read_config("hudi", {"preset": "hudi_clustering", "stream_sink": "Hudi"})
    cfg = HudiConfig(preset="hudi_clustering", stream_sink="hudi", sort_columns=("service", "ts"))
    opts = streaming_sink_options(cfg, hoodie_options(cfg, "t", "dt", "trace_id"), 3)
    assert opts["hoodie.clustering.async.enabled"] == "true"
    assert opts["hoodie.clustering.async.max.commits"] == "3"
    assert opts["hoodie.clustering.inline"] == "false" and opts["hoodie.clustering.schedule.inline"] == "false"
    assert opts["hoodie.clustering.plan.strategy.sort.columns"] == "service,ts"
    assert opts["hoodie.datasource.write.streaming.checkpoint.identifier"] == "layoutbench"
    assert opts["hoodie.datasource.write.streaming.ignore.failed.batch"] == "false"
    off = streaming_sink_options(cfg, hoodie_options(cfg, "t", "dt", "trace_id"), 3, async_clustering=False)
    assert off["hoodie.clustering.async.enabled"] == "false"


@pytest.mark.slow
def test_hudi_sink_async_clustering_beside_the_stream(spark, tmp_path) -> None:
    from bench.results import Results
    from bench.stream.run import run_stream_scenario
    from engines.table.table import HudiTable
    from engines.table.timeline import State

    results = Results(run_stream_scenario(parse_scenario(DOC), out=tmp_path, run_id="s"))
    assert results.run["verification"] == {"ok": True, "failures": []}
    s = results.run["stream"]["hudi_sink"]
    assert s["maintenance_mode"] == "hudi_async_clustering"
    assert s["keys"]["rows_lost"] == 0 and s["keys"]["rows_duplicated"] == 0 and s["keys"]["rows_unexpected"] == 0
    assert s["quarantined"] == [BAD_NAME] and s["late_rows"] == OLD_RECORDS
    stream = results.table("stream")
    assert stream.files.sum() == 7 and stream.freshness_s.dropna().gt(0).all()
    assert OLD_NAME in ",".join(stream.batches)
    assert results.table("queries").verified.all()

    # From the timeline: every micro-batch one commit carrying Hudi's sink checkpoint, and a
    # replacecommit (Hudi's async clustering) scheduled after one of them and completed before a
    # later one — executed while the stream was writing.
    table = HudiTable.open(results.run["engines"]["hudi_sink"]["table_path"])
    timeline = table.refresh()
    commits = timeline.completed(["commit"])
    batch_ids = [int(json.loads(table.commit_metadata(c).extra["_hudi_streaming_sink_checkpoint"])["layoutbench"])
                 for c in commits]
    assert batch_ids == sorted(batch_ids) and len(set(batch_ids)) == len(batch_ids)

    def done(i: object) -> float:
        return table.storage.entry(f"{timeline.folder}/{timeline.file_name(i, State.COMPLETED)}").mtime_ns / 1e9

    replaces = timeline.completed(["replacecommit"])
    assert replaces, "Hudi's sink scheduled no clustering"
    between = [r for r in replaces if commits[0].timestamp < r.timestamp and done(r) < done(commits[-1])
               and any(c.timestamp > r.timestamp for c in commits)]
    assert between, ([(r.timestamp, done(r)) for r in replaces], [(c.timestamp, done(c)) for c in commits])
    # hudi-rs reads the table Hudi's sink wrote: every landed key exactly once
    from collections import Counter

    from bench.crashtest import hudi_rs_keys
    from bench.stream.run import truth_of

    truth = truth_of(parse_scenario(DOC), [n for b in stream.batches if b for n in b.split(",")])
    assert Counter(hudi_rs_keys(results.run["engines"]["hudi_sink"]["table_path"]) or []) == Counter(
        truth.column("trace_id").to_pylist())
    maint = results.table("maintenance")
    assert ((maint.kind == "clustering") & (maint["mode"] == "stream-async")).sum() == len(replaces)
