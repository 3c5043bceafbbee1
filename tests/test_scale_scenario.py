"""The scale run's wiring (T18, ``make bench-scale``) at a size that runs in seconds: an engine's
stated prefix, tables removed once an engine's figures are taken, planning timed apart from
execution, the scale report section; and the refusal of a scenario the disk cannot hold, before
Spark starts."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bench.batch_loop import MAINTAIN, MaintenanceSchedule, run_batches
from bench.cli import EXIT_BAD_INPUT, app
from bench.disk_estimate import GB, DiskEstimateError, check_disk, estimate
from bench.scenario import ScenarioError, load_scenario, parse_scenario
from runresults import Results

RFC_SCALE = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "rfc_scale.yaml"
runner = CliRunner()


def small_scale_doc() -> dict:
    """rfc_scale.yaml through the same code paths at a few batches: small sizes, a baseline prefix."""
    doc = yaml.safe_load(RFC_SCALE.read_text())
    doc["workload"].update(num_batches=6, batch_mb=None, batch_records=1500)
    doc["sizing"].update(small_file_limit_mb=0.1, target_file_mb=0.15, max_file_mb=0.15, row_group_rows=2000)
    doc["maintenance"]["every_commits"] = 2
    doc["queries"].update(rounds=2, checkpoint_every=3, checkpoint_rounds=2)
    doc["engines"] = [
        {"name": "baseline", "kind": "cow_baseline", "num_batches": 3,
         "config": {"hoodie.parquet.bloom.filter.enabled": False}},
        {"name": "option2_sorted", "kind": "clustering",
         "config": {"sort_columns": ["service", "ts"], "small_file_limit_mb": 0.3, "target_file_mb": 1.0,
                    "hoodie.parquet.bloom.filter.enabled": False}},
        {"name": "append_only", "kind": "append_only", "config": {"hoodie.parquet.bloom.filter.enabled": False}},
    ]
    return doc


def test_rfc_scale_is_hudis_defaults_at_a_gigabyte() -> None:
    sc = load_scenario(RFC_SCALE)
    assert sc.workload.num_batches >= 1000 and sc.workload.batch_mb == 1.0 and sc.workload.num_partitions >= 2
    assert (sc.sizing.small_file_limit_mb, sc.sizing.max_file_mb) == (100, 120)
    assert sc.maintenance.mode == "inline" and sc.maintenance.every_commits == 4
    assert {e.name for e in sc.engines} == {"baseline", "option1_cbd", "option2", "option2_sorted", "append_only",
                                            "delta_optimize"}
    assert not sc.keep_tables and sc.queries.interleaved and sc.queries.rounds >= 10
    from bench.engine_factory import resolve_planner

    o2 = resolve_planner(next(e for e in sc.engines if e.name == "option2"), sc)[0]
    assert (o2.small_file_limit, o2.target_file_size) == (300 << 20, 1 << 30)
    assert estimate(sc).peak_bytes < 30 * GB  # the 30 GB budget, by the same estimate validate prints


@pytest.mark.parametrize(("change", "needle"), [
    (lambda d: d["engines"][0].update(num_batches=7), "more than the workload's 6 batches"),
    (lambda d: [e.update(num_batches=2) for e in d["engines"]], "at least one must run them all"),
    (lambda d: d["maintenance"].update(mode="async"), "needs a synchronous maintenance mode"),
    (lambda d: d.update(review={"measure": True}), "cannot be gated"),
])
def test_a_prefix_is_validated(change, needle: str) -> None:
    doc = small_scale_doc()
    change(doc)
    with pytest.raises(ScenarioError, match=needle):
        parse_scenario(doc)


def test_run_batches_takes_a_stated_prefix_of_the_whole_scenario() -> None:
    sc = parse_scenario(small_scale_doc())
    cut = sc.first_batches(2)
    assert (cut.workload.num_batches, cut.batches_run, cut.batches_of("baseline")) == (6, 2, 2)
    assert cut.workload == sc.workload  # the same batches as the whole scenario's
    with pytest.raises(ScenarioError, match="between 1 and the scenario's 6 batches"):
        sc.first_batches(7)


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def begin_batch(self, b: int) -> None: ...
    def end_batch(self, b: int) -> None: ...
    def before_final(self, b: int) -> None: ...
    def checkpoint(self, b: int) -> None: ...

    def ingest(self, t: str, b: int) -> None:
        self.calls.append(("ingest", t, b))

    def maintain(self, t: str, b: int, step: str) -> None:
        self.calls.append((step, t, b))


def test_a_prefix_stops_its_target_and_maintains_it_at_its_own_end() -> None:
    rec = _Recorder()
    schedule = MaintenanceSchedule("inline", 2, True)
    run_batches(rec, ["full", "prefix"], schedule, 6, prefix=lambda t: 3 if t == "prefix" else 6)
    assert [b for op, t, b in rec.calls if t == "prefix" and op == "ingest"] == [0, 1, 2]
    assert [b for op, t, b in rec.calls if t == "full" and op == "ingest"] == list(range(6))
    # every 2 commits (after batch 1), then the prefix's own final maintenance after batch 2
    assert [b for op, t, b in rec.calls if t == "prefix" and op == MAINTAIN] == [1, 2]
    assert [b for op, t, b in rec.calls if t == "full" and op == MAINTAIN] == [1, 3, 5]


def test_a_scenario_the_disk_cannot_hold_is_refused_before_spark(tmp_path: Path) -> None:
    doc = small_scale_doc()
    free = shutil.disk_usage(tmp_path).free
    # every engine's batches alone exceed the free space twice over
    doc["workload"].update(batch_records=None, batch_mb=64.0, num_batches=int(2 * free / (64 << 20)) + 1)
    doc["engines"][0]["num_batches"] = 3
    path = tmp_path / "huge.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = runner.invoke(app, ["validate", str(path), "--out", str(tmp_path)])
    assert result.exit_code == EXIT_BAD_INPUT
    out = " ".join(result.output.split())
    assert "GB at their peak" in out and "GB free on" in out and "batches of 64 MB" in out
    result = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "results")])
    assert result.exit_code == EXIT_BAD_INPUT and "GB at their peak" in " ".join(result.output.split())
    assert not (tmp_path / "results").exists()  # nothing half-written: refused before the folder and Spark
    with pytest.raises(DiskEstimateError, match="more than the"):
        check_disk(parse_scenario(doc), tmp_path)


def test_small_scale_run_wiring(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.partial_results import PartialResults
    from bench.runner import run_scenario

    seen: list[tuple[dict, int]] = []  # what the folder held after each partial write (a run cut off there)
    write = PartialResults.write

    def snapshot(self: PartialResults, batch: int) -> None:
        write(self, batch)
        got = Results(self.writer.folder)
        seen.append((got.incomplete, len(got.table("commits"))))

    monkeypatch.setattr(PartialResults, "write", snapshot)
    from reports.scale import scale_section

    doc = small_scale_doc()
    doc["workload"]["num_batches"] = 8
    sc = parse_scenario(doc).first_batches(6)  # run --batches 6: the simulator projects every engine to 8
    assert sc.batches_run == 6 and sc.batches_of("baseline") == 3 and sc.batches_of("append_only") == 6
    run_dir = run_scenario(sc, out=tmp_path, progress=False, run_id="scale")
    res = Results(run_dir)
    assert res.run["verification"]["ok"], res.run["verification"]["failures"]
    c = res.table("commits")
    assert c[c.engine == "baseline"].batch.max() == 2 and c[c.engine == "append_only"].batch.max() == 5
    assert res.incomplete is None  # the finished run replaced the partial folder
    at_prefix = next(inc for inc, _ in seen if inc["batches_done"] == 3)  # the baseline's prefix ended there
    assert at_prefix["engines_batches_done"]["baseline"] == 3 and at_prefix["batches_run"] == 6
    assert seen[-1][1] <= len(c) and seen[0][1] > 0
    assert not (run_dir / "tables").exists()  # keep_tables: false; the prefix's table went at its end
    q = res.table("queries")
    assert set(q[q.engine == "baseline"].checkpoint) == {2} and set(q[q.engine != "baseline"].checkpoint) == {2, 5}
    assert (q.planning_s > 0).all() and (q.execution_s > 0).all()
    assert ((q.planning_s + q.execution_s - q.latency_s).abs() < 1e-6).all()
    qr = res.table("query_rounds")
    by_checkpoint = qr.groupby("checkpoint").engine.agg(set).to_dict()
    # the baseline's prefix ends at 2: its table takes that checkpoint's rounds beside the others' before it goes
    assert by_checkpoint == {2: {"baseline", "option2_sorted", "append_only"}, 5: {"option2_sorted", "append_only"}}
    assert qr.planning_s.notna().all() and len(qr) == 2 * 2 * 3 + 2 * 2 * 2
    wa = res.run["scale_wa"]
    assert wa["baseline"]["batches_measured"] == 3 and wa["baseline"]["simulated_wa_total"] is not None
    assert wa["baseline"]["simulated_wa_at_prefix"] == pytest.approx(wa["baseline"]["measured_wa"], rel=0.25)
    assert wa["append_only"]["batches_total"] == 8 and wa["append_only"]["simulated_wa_total"] == 1.0
    assert wa["append_only"]["closed_form_wa"] == 1.0 and wa["append_only"]["measured_wa"] == pytest.approx(1.0, rel=0.1)
    load = res.run["load"]
    assert load["samples"] and load["tables_peak_bytes"] > 0 and load["load1_max"] >= load["load1_min"]
    md = scale_section(res)  # the section the report renders (tests/test_reports.py renders reports)
    assert "### Write amplification beside its closed form" in md and "(projected: simulator)" in md
    assert "gain over append_only" in md and "rows per second" in md and "Planning apart from execution" in md


def _scale_folder(tmp_path: Path, rounds: int = 10, more: Any = None) -> Path:
    """A results folder of a scale run written without Spark: two layouts, their rounds, the blocks
    the runner adds (``scale_wa``, ``load``); ``more(writer)`` adds rows before the run is written."""
    import random

    from runresults import ResultsWriter, commit_row, derive_cumulative

    folder = tmp_path / "scale-run"
    w = ResultsWriter(folder)
    for seq, (engine, written) in enumerate([("append_only", 100), ("option2_sorted", 100),
                                             ("option2_sorted", 400), ("baseline", 100), ("baseline", 4000)]):
        w.add("commits", **commit_row(engine=engine, seq=seq + 1, batch=0, instant=f"{seq:017d}", action="commit",
                                      operation="insert", kind="ingest" if written == 100 else "clustering",
                                      duration_s=1.0, records_written=10, bytes_written=written, files_written=1,
                                      files_replaced=0, live_files=1, physical_files=1, live_bytes=100,
                                      physical_bytes=100, small_files=1, metadata_bytes=0))
    derive_cumulative(w, {0: 100})
    rng = random.Random(7)
    for r in range(rounds):
        for engine, slow in (("append_only", 3.0), ("option2_sorted", 1.0)):
            for query in ("service_hours", "full_scan_by_level"):
                plan = 0.2 * slow + rng.random() * 0.01
                exe = slow + rng.random() * 0.1
                w.add("query_rounds", engine=engine, checkpoint=0, query=query, round=r, position=0,
                      latency_s=plan + exe, planning_s=plan, execution_s=exe, result_rows=1, verified=True)
    for engine, files in (("append_only", 300), ("option2_sorted", 2)):
        w.add("queries", engine=engine, checkpoint=0, query="service_hours", run=0, latency_s=1.0,
              files_scanned=files, verified=True)
    if more is not None:
        more(w)
    scale_wa = {e: {"kind": k, "batches_measured": m, "batches_total": 1000, "every_commits": 4, "measured_wa": None,
                    "small_file_limit_mb": lim, "batch_mb": 1.0, "closed_form_wa": cf, "closed_form": "f",
                    "simulated_wa_at_prefix": 39.0 if m < 1000 else None,
                    "simulated_wa_total": 40.0 if m < 1000 else None}
                for e, k, m, lim, cf in (("append_only", "append_only", 1000, 100, 1.0),
                                         ("option2_sorted", "clustering", 1000, 300, 38.5),
                                         ("baseline", "cow_baseline", 200, 100, 50.0))}
    w.write_run({"run_id": "scale-run", "scenario": {"name": "rfc_scale", "queries": {"interleaved": True},
                                                      "engines": [{"name": "baseline", "num_batches": 200}]},
                 "engines": {}, "wall_time_s": 600.0, "git": {"sha": "abc"}, "tables_kept": False,
                 "ground_truth": {"rows": 1_000_000}, "scale_wa": scale_wa,
                 "load": {"interval_s": 10, "cpus": 2, "load1_min": 1.0, "load1_mean": 2.0, "load1_max": 3.0,
                          "tables_peak_bytes": 3 << 30, "samples": [[0, 1.0, 0], [10, 3.0, 3 << 30]]},
                 "verification": {"ok": True, "failures": []}})
    return folder


def test_scale_section_renders_from_results(tmp_path: Path) -> None:
    from reports.scale import planning_frame, scale_section, selective_frame

    res = Results(_scale_folder(tmp_path))
    md = scale_section(res)
    assert md is not None and "wall time 10.0 min" in md and "max 3" in md and "3.00 GB" in md
    assert "200 of 1000" in md and "40 (projected: simulator)" in md and "50 (limit" not in md
    sel = selective_frame(res).set_index("engine")
    gain = sel.loc["option2_sorted", "gain over append_only (its latency / this one's)"]
    assert gain.startswith("2.") and "(95%, n=10)" in gain  # ~3.6 s / ~1.25 s, paired over ten rounds
    assert sel.loc["append_only", "files scanned"] == 300
    plan = planning_frame(res)
    assert set(plan.engine) == {"append_only", "option2_sorted"} and plan["planning s"].str.contains("n=10").all()


def test_a_folder_written_before_the_planning_split_still_reads(tmp_path: Path) -> None:
    import json

    import pyarrow.parquet as pq

    from reports.scale import planning_frame

    folder = _scale_folder(tmp_path)
    for table in ("queries", "query_rounds"):  # as format 5 wrote them: no planning_s / execution_s
        t = pq.read_table(folder / f"{table}.parquet")
        pq.write_table(t.drop_columns(["planning_s", "execution_s"]), folder / f"{table}.parquet")
    run = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**run, "format_version": 5}))
    res = Results(folder)
    assert res.table("query_rounds")["planning_s"].isna().all() and planning_frame(res).empty


def test_a_prefix_checkpoint_has_its_own_rounds_rows_and_gains(tmp_path: Path) -> None:
    """A scale run's prefix engines take the rounds of their last checkpoint (every layout on the same
    batches): each checkpoint with rounds gets its own rows, its own files scanned and its own rows."""
    from reports.scale import full_scan_frame, selective_frame

    def prefix_rounds(w: Any) -> None:
        for r in range(10):
            for engine, lat in (("append_only", 2.0), ("baseline", 1.0), ("option2_sorted", 0.5)):
                for query in ("service_hours", "full_scan_by_level"):
                    w.add("query_rounds", engine=engine, checkpoint=199, query=query, round=r, position=0,
                          latency_s=lat + r * 0.001, planning_s=0.1, execution_s=lat, result_rows=1, verified=True)
        for engine, files in (("append_only", 200), ("baseline", 3), ("option2_sorted", 1)):
            w.add("queries", engine=engine, checkpoint=199, query="service_hours", run=0, latency_s=1.0,
                  files_scanned=files, verified=True)
            w.add("queries", engine=engine, checkpoint=199, query="full_scan_by_level", run=0, latency_s=1.0,
                  files_scanned=files, rows_scanned=200_000, verified=True)

    folder = _scale_folder(tmp_path, more=prefix_rounds)
    res = Results(folder)
    sel = selective_frame(res).set_index(["after batch", "engine"])
    assert sel.loc[("200", "baseline"), "files scanned"] == 3 and sel.loc[("200", "append_only"), "files scanned"] == 200
    assert sel.loc[("1", "append_only"), "files scanned"] == 300  # the final checkpoint's own cold run
    gain = sel.loc[("200", "option2_sorted"), "gain over append_only (its latency / this one's)"]
    assert gain.startswith("3.9") and "(95%, n=10)" in gain  # 2.0 s over 0.5 s, less the rounds drift
    full = full_scan_frame(res).set_index(["after batch", "engine"])
    assert full.loc[("200", "baseline"), "rows"] == "200,000"  # the table's rows there, not the final truth's
    assert full.loc[("1", "append_only"), "rows"] == "1,000,000"


def test_apache_hudis_presets_run_only_when_named() -> None:
    """rfc_scale's Apache Hudi presets are engines on request: not in a run that does not name them,
    taken by ``--engines`` (with ``--batches`` at their prefix, since no other engine runs them all)."""
    sc = load_scenario(RFC_SCALE)
    assert {e.name for e in sc.engines_on_request} == {"hudi_cow", "hudi_clustering"}
    assert not {"hudi_cow", "hudi_clustering"} & {e.name for e in sc.engines}
    hudi = sc.first_batches(100).select_engines(["hudi_cow", "hudi_clustering"])
    assert [e.name for e in hudi.engines] == ["hudi_cow", "hudi_clustering"] and hudi.batches_run == 100
    assert hudi.batches_of("hudi_cow") == 100 and not hudi.engines_on_request
    beside = sc.select_engines(["append_only", "hudi_cow"])  # beside an engine that takes every batch
    assert beside.batches_of("hudi_cow") == 100 and beside.batches_of("append_only") == 1000
    with pytest.raises(ScenarioError, match="at least one must run them all"):
        sc.select_engines(["hudi_cow", "hudi_clustering"])
    doc = yaml.safe_load(RFC_SCALE.read_text())
    doc["engines_on_request"].append({"name": "baseline", "kind": "cow_baseline"})
    with pytest.raises(ScenarioError, match="engines_on_request names engines the scenario already has"):
        parse_scenario(doc)
