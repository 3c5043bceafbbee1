"""The verdict at the user's scale (bench/simulate/project.py): a target the simulator cannot model
is refused by field; a projection covers the target's whole horizon; its periodic extrapolation
prices the table as a full replay does; the decision map around the target names what flips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.scenario import load_scenario
from bench.simulate.project import (
    Plan,
    _write,
    extrapolate,
    flip_map,
    periodicity,
    plan_replay,
    project_to_target,
    projection_model,
    replay,
)
from bench.simulate.results_folder import simulate
from bench.simulate.target import Target, TargetError, target_scenario, validate_target
from runresults import Results
from runresults.plain_ledger import cheapest, design_choice, ledger

REPO = Path(__file__).resolve().parents[1]
# 20 days of 2 batches an hour into one partition a day, limits scaled to the batches: 960 batches
SMALL_TARGET = Target(batch_mb=0.5, batches_per_hour=2, partitions=20, horizon_days=20, small_file_limit_mb=4,
                      target_file_mb=5, max_file_mb=5, store="local", latency_ms=0)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """A small run to project from (simulated: the projection reads any results folder)."""
    sc = load_scenario(REPO / "bench" / "scenarios" / "sweep_tiny.yaml")
    out = tmp_path_factory.mktemp("proj")
    return simulate(sc, out, run_id="run"), sc


@pytest.mark.parametrize(("change", "field"), [
    ({"batch_mb": -1}, "batch_mb"),
    ({"batches_per_hour": 0}, "batches_per_hour"),
    ({"partitions": 2.5}, "partitions"),
    ({"store": "gcs"}, "store"),
    ({"latency_ms": 9000}, "latency_ms"),
    ({"small_file_limit_mb": 200}, "small_file_limit_mb"),
    ({"target_file_mb": 130}, "target_file_mb"),
    ({"horizon_days": 1e6}, "horizon_days"),
    ({"partitions": 100_000, "horizon_days": 1, "batches_per_hour": 1}, "partitions"),
    ({"batch_mb": "big"}, "batch_mb"),
    ({"colour": "red"}, "colour"),
])
def test_a_target_the_simulator_cannot_model_is_named(change: dict, field: str) -> None:
    problems = validate_target({**Target().as_dict(), **change})
    assert len(problems) == 1, problems
    assert f"review.target.{field}" in problems[0] or field in problems[0], problems
    with pytest.raises(TargetError, match=field):
        Target.of({**Target().as_dict(), **change})


def test_the_default_target_is_the_rfc_example() -> None:
    t = Target()
    assert validate_target(t) == [] and validate_target(None) == []
    assert (t.batch_mb, t.small_file_limit_mb, t.max_file_mb, t.horizon_days, t.store, t.latency_ms) == (
        1.0, 100.0, 120.0, 365.0, "s3", 20.0)
    assert t.horizon_batches == 365 * 24 * 60


def test_target_scenario_keeps_the_candidates_whole(run_dir: tuple[Path, object]) -> None:
    _, sc = run_dir
    moved = target_scenario(sc, SMALL_TARGET)
    assert [e.model_dump() for e in moved.engines] == [e.model_dump() for e in sc.engines]
    assert moved.workload.num_batches == 960 and moved.workload.num_partitions == 20
    assert moved.sizing.small_file_limit_mb == 4 and moved.store.kind == "local"
    assert moved.maintenance == sc.maintenance.model_copy(update={"final": False})


def test_projection_covers_the_horizon_and_states_how(run_dir: tuple[Path, object], tmp_path: Path) -> None:
    folder, sc = run_dir
    res = project_to_target(folder, sc, SMALL_TARGET, tmp_path)
    proj = res.run["projection"]
    assert proj["horizon_batches"] == 960 and proj["replayed_batches"] < 960
    assert proj["replayed_batches"] + proj["extrapolated_batches"] == 960
    assert proj["periodic"], proj["periodicity"]["off"]
    assert "calibrated on the run" in proj["model"]
    c = res.table("commits")
    for engine, rows in c.groupby("engine"):
        ingest = rows[rows.kind == "ingest"]
        assert sorted(ingest.batch) == list(range(960)), engine
        assert rows.seq.is_monotonic_increasing and rows.cum_batch_bytes.iloc[-1] == ingest.batch_bytes.sum()
    q = res.table("queries")
    assert q.checkpoint.max() == 959 and len(set(q.checkpoint)) > 3


@pytest.mark.parametrize("store", ["local", "s3"])
def test_periodic_extrapolation_prices_as_a_full_replay(run_dir: tuple[Path, object], tmp_path: Path,
                                                        store: str) -> None:
    """The ledger of the extrapolated horizon equals the full replay's within 2% for every part
    (on S3: the shipped request model's requests and first-byte latency too)."""
    folder, sc = run_dir
    target = SMALL_TARGET.moved(store=store, latency_ms=20.0 if store == "s3" else 0.0)
    target_sc = target_scenario(sc, target)
    model, note = projection_model(Results(folder), target)
    assert ("s3_calibration.json" in note) == (store == "s3")
    plan = plan_replay(target_sc, target)
    assert plan.extrapolated > 0
    short, _, _ = replay(target_sc, model, plan)
    assert periodicity(short, plan)["periodic"]
    whole = Plan(plan.horizon, plan.horizon, plan.window, 0)
    full, _, _ = replay(target_sc, model, whole)
    run = {"scenario": target_sc.model_dump(mode="json"), "projection": {"batches_per_hour": 2},
           "engines": {e.name: {"kind": e.kind} for e in target_sc.engines}}
    a = ledger(Results(_write(tmp_path / "x", extrapolate(short, plan), run)))
    b = ledger(Results(_write(tmp_path / "f", extrapolate(full, whole), run)))
    assert all((b[e].requests_usd > 0) == (store == "s3") for e in b)
    for engine in b:
        for part in ("compute_usd", "queries_usd", "storage_usd", "requests_usd"):
            x, y = getattr(a[engine], part), getattr(b[engine], part)
            assert x == pytest.approx(y, rel=0.02, abs=1e-9), (engine, part, x, y)


def test_design_choice_margin() -> None:
    kinds = {"b": "cow_baseline", "o1": "append_compaction", "o1b": "append_compaction", "o2": "clustering"}
    costs = {"b": 10.0, "o1": 5.0, "o1b": 4.0, "o2": 4.1}
    assert design_choice({e: (kinds[e], c) for e, c in costs.items()}, 0.05) == "Option 1 = Option 2"
    assert design_choice({e: (kinds[e], c) for e, c in costs.items()}, 0.01) == "Option 1"


def test_flip_map_names_each_point(run_dir: tuple[Path, object], tmp_path: Path) -> None:
    folder, sc = run_dir
    seen: list[str] = []

    def choose(res: Results) -> str:
        seen.append(res.folder.name)
        return cheapest(res)

    points = flip_map(folder, sc, SMALL_TARGET, choose, tmp_path,
                      params=("small_file_limit_mb", "queries_per_hour", "horizon_days", "latency_ms"),
                      factors=(0.5, 2.0), workers=1, keep_folders=True)
    by = {(p["param"], p["factor"]): p for p in points}
    assert len(points) == 8 and "target" in seen
    # 8 MB is above the 5 MB max file size: not modelled, said why
    assert by[("small_file_limit_mb", 2.0)]["choice"] is None
    assert "max_file_mb" in by[("small_file_limit_mb", 2.0)]["note"]
    assert by[("latency_ms", 2.0)]["note"] == "the target's store is local: no first-byte latency"
    for key in (("small_file_limit_mb", 0.5), ("queries_per_hour", 2.0), ("horizon_days", 2.0)):
        p = by[key]
        assert p["choice"] == cheapest(Results(p["folder"])) and p["flips"] == (p["choice"] != p["target_choice"])
    q = json.loads((Path(by[("queries_per_hour", 2.0)]["folder"]) / "run.json").read_text())
    assert q["projection"]["queries_per_hour"] == 2 * by[("queries_per_hour", 0.5)]["value"] * 2
    h = Results(by[("horizon_days", 2.0)]["folder"])
    assert h.run["projection"]["horizon_batches"] == 1920 and h.run["projection"]["target"]["partitions"] == 40


def test_project_review_is_json_data_with_its_phases(run_dir: tuple[Path, object], tmp_path: Path) -> None:
    from bench.simulate.target_review import project_review

    folder, sc = run_dir
    out = project_review(folder, sc, SMALL_TARGET, cheapest, out_dir=tmp_path, workers=1)
    json.dumps(out)
    assert out["choice"] == cheapest(Results(out["folder"]))
    assert set(out["phases_s"]) == {"review/projection", "review/flip_map", "review/production_map"}
    assert out["production_map"]["choice"] != "none" and out["production_map"]["point"]["store"] == SMALL_TARGET.store
    assert len(out["flip_map"]) == 24 and out["periodic"]
    assert all(p["choice"] is not None or p["note"] for p in out["flip_map"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target"]  # the points' folders are gone


def test_the_reviews_ledger_reads_the_targets_time(run_dir: tuple[Path, object], tmp_path: Path) -> None:
    """One partition over the horizon stretches the workload's event time; the review's ledger
    prices the target's batches at its rate (2 an hour: 1800 s each)."""
    from runresults.review.ledger import batch_span_s

    folder, sc = run_dir
    res = project_to_target(folder, sc, SMALL_TARGET.moved(partitions=1), tmp_path)
    assert batch_span_s(res.run) == 1800.0


def test_the_run_stores_its_choice_at_the_target(run_dir: tuple[Path, object], tmp_path: Path) -> None:
    """bench.target_verdict: after a run, the passing candidates are projected to review.target and the
    target's choice lands in run.json's review beside the run's, with how it was made and its seconds;
    the answer's paragraph says it."""
    import json
    import shutil

    from bench.target_verdict import passing_candidates, project_run
    from reports import render_report
    from runresults import Results
    from runresults.review import store_review
    from runresults.review.settings import TargetSpec

    src, sc = run_dir
    folder = tmp_path / "run"
    shutil.copytree(src, folder, ignore=shutil.ignore_patterns("projection*"))
    stored = store_review(folder)
    target = TargetSpec(**{k: v for k, v in SMALL_TARGET.as_dict().items() if k in TargetSpec.model_fields})
    sc = sc.model_copy(update={"review": sc.review.model_copy(update={"target": target, "project": True})})
    projection = project_run(folder, sc)
    assert projection is not None and projection["elapsed_s"] >= 0
    run = json.loads((folder / "run.json").read_text())
    got = run["review"]["choice"]["target"]
    assert got["text"] == projection["text"] and got["candidates"] == passing_candidates(stored)
    assert got["design"] in {"Baseline", "Option 1", "Option 2"}
    md = render_report(folder, design_review=True)["report.md"].read_text()
    assert "At the target scale" in md and "not projected" not in md.split("## Setup")[0]
    assert Results(folder).run["review"]["choice"]["run"] == stored["choice"]["run"]  # the run's own choice kept
