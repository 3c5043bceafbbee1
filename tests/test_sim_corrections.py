"""The simulator with corrections (``workload.update_fraction``, T21): each batch's corrections are one
copy-on-write upsert commit after the insert commit, rewriting every file group that holds an updated
key (bench/simulate/corrections.py), held to a real run's deterministic figures; the estimated mode's
draw held to the exact mode's matching; what the simulator refuses; the production map's axis."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bench.scenario import Scenario, load_scenario
from bench.simulate import production_map as pm
from bench.simulate import simulator as simmod
from bench.simulate.costmodel import CostModel
from bench.simulate.results_folder import simulate
from bench.simulate.supports import corrections_problems
from bench.simulate.sweep import fast_model, load_sweep
from bench.simulate.validate import WA_TOLERANCE, validate
from runresults import Results

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "bench" / "scenarios" / "small.yaml"
SHIPPED_MAP = REPO / "bench" / "sweeps" / "rfc19_production.yaml"
COW = ("baseline", "option1_cbd", "option2_sorted")
RUN_COW = ("baseline", "option1_cbd")  # the copy-on-write engines of the session's corrections run
# what a commit of the simulator and of the real run must agree on exactly (the same planners and merge rule)
DETERMINISTIC = ["batch", "kind", "files_written", "live_files", "physical_files"]
# records written may part by a row: the baseline sizes its inserts by Hudi's average record size, read from
# the previous commit's bytes, which the simulator estimates (small.yaml, batch 1: a new bucket of 51 rows
# simulated, 50 real; the upsert that rewrites its neighbour then writes 2,949 rows against 2,950)
RECORDS_TOLERANCE = 0.005


def _corrected(sc: Scenario, batches: int, fraction: float = 0.1) -> Scenario:
    return sc.model_copy(update={
        "name": "sim_corrections", "engines": [e for e in sc.engines if e.name in COW],
        "workload": sc.workload.model_copy(update={"num_batches": batches, "corrections_fraction": fraction}),
        "isolation": sc.isolation.model_copy(update={"enabled": False})})


@pytest.fixture(scope="module")
def corrected(corrections_run: Results, tmp_path_factory: pytest.TempPathFactory) -> tuple[Scenario, Results, Results]:
    """The session's real run with corrections (tests/conftest.py: four batches, 10% corrections,
    maintenance after batch 3's upsert, queries after batches 2 and 4), and the simulator over its
    copy-on-write engines with the run's own bytes per record (their ingest commits; no footer bloom
    filter in small.yaml). Its MERGE_ON_READ engine is held to it in tests/test_sim_mor.py."""
    real = corrections_run
    sc = Scenario.model_validate(real.run["scenario"])
    sc = sc.model_copy(update={"engines": [e for e in sc.engines if e.name in RUN_COW]})
    c = real.table("commits")
    ing = c[(c.kind == "ingest") & c.engine.isin(RUN_COW)]
    out = tmp_path_factory.mktemp("sim_corrections")
    cal = CostModel(bytes_per_record=float(ing.bytes_written.sum() / ing.records_written.sum()),
                    source="the corrections run's copy-on-write ingest commits").save(out / "calibration.json")
    return sc, real, Results(simulate(sc, out, calibration_path=cal, run_id="sim", as_run=True))


def _commits(res: Results, engine: str) -> pd.DataFrame:
    c = res.table("commits")
    return c[c.engine == engine].sort_values("seq")[[*DETERMINISTIC, "records_written"]].reset_index(drop=True)


def test_every_commit_matches_the_real_run_with_corrections(corrected) -> None:  # noqa: ANN001
    _, real, sim = corrected
    for engine in RUN_COW:
        r, s = _commits(real, engine), _commits(sim, engine)
        assert (r.kind == "upsert").sum() == 3  # batches 1-3 carry corrections, batch 0 none
        pd.testing.assert_frame_equal(s[DETERMINISTIC], r[DETERMINISTIC], check_dtype=False, obj=engine)
        rel = (s.records_written - r.records_written).abs() / r.records_written
        assert (rel <= RECORDS_TOLERANCE).all(), (engine, s.records_written.tolist(), r.records_written.tolist())
    checks = validate(real, sim)
    assert {c.engine for c in checks} == set(RUN_COW)
    assert [c for c in checks if ("per commit" in c.figure or "files scanned" in c.figure) and not c.ok] == []
    wa = [c for c in checks if c.figure == "final WA"]
    assert len(wa) == len(RUN_COW) and all(abs(float(c.simulated) / float(c.real) - 1) <= WA_TOLERANCE for c in wa)


def test_an_upsert_rewrites_whole_file_groups(corrected) -> None:  # noqa: ANN001
    """A merge writes each touched group's rows again: rows of a rewritten group, not of the corrections
    alone, and the simulated bytes of the upserts within the WA tolerance of the real ones."""
    sc, real, sim = corrected
    for engine in RUN_COW:
        r, s = (res.table("commits") for res in (real, sim))
        ru, su = (t[(t.engine == engine) & (t.kind == "upsert")].sort_values("seq") for t in (r, s))
        assert (ru.records_written.to_numpy() > 0.1 * sc.workload.batch_records).all()
        got, want = su.bytes_written.sum(), ru.bytes_written.sum()
        assert abs(got / want - 1) <= WA_TOLERANCE, (engine, got, want)


def test_without_corrections_no_upsert_and_the_same_tables() -> None:
    """update_fraction 0 writes no upsert commit, and the replay's rows are those of the scenario
    without the field (the code path of corrections is not taken: ``layoutbench perf-check`` holds
    the figures themselves to the baseline)."""
    sc = load_scenario(SMALL)
    zero = sc.model_copy(update={"workload": sc.workload.model_copy(update={"corrections_fraction": 0.0})})
    a, b = (simmod.run_simulation(x, CostModel()).sink.rows for x in (sc, zero))
    assert not [c for c in a["commits"] if c["kind"] == "upsert"]
    assert a == b


@pytest.mark.parametrize(("fraction", "batches"), [(0.005, 24), (0.02, 12)])
def test_the_estimated_draw_follows_the_exact_keys(monkeypatch: pytest.MonkeyPatch, fraction: float,
                                                   batches: int) -> None:
    """Without rows (long horizons) the touched groups are drawn by each file's share of the earlier
    rows; over a replay their count stays within 20% of the exact matching of the updated keys."""
    sc = _corrected(load_scenario(SMALL), batches, fraction)

    def touched() -> int:
        rows = simmod.run_simulation(sc, CostModel()).sink.rows["commits"]
        return sum(c["files_written"] for c in rows if c["kind"] == "upsert")

    exact = touched()
    monkeypatch.setattr(simmod, "ROWS_LIMIT", 0)
    estimated = touched()
    assert exact > 0 and abs(estimated / exact - 1) <= 0.20, (exact, estimated)
    assert touched() == estimated  # deterministic per seed


def test_engines_without_a_model_of_corrections_are_named() -> None:
    """MERGE_ON_READ Option 2 is modelled (engines/clustering_mor/sim.py), its inserts appended to small
    groups' logs (option2_mor_logs) too; its compaction scheduled by the maintenance round
    (``compaction_inline: false``) is not: named, and a projection with it refused."""
    sc = _corrected(load_scenario(SMALL), 4)
    assert corrections_problems(sc) == []
    mor = sc.engines[0].model_copy(update={"name": "option2_mor", "kind": "clustering_mor", "config": {}})
    # inserts into logs below 0.6 MB: within small.yaml's 0.8 MB files (a limit above the max file is refused)
    logs = mor.model_copy(update={"name": "option2_mor_logs",
                                  "config": {"hoodie.parquet.small.file.limit": 600_000}})
    late = mor.model_copy(update={"name": "option2_mor_async", "config": {"compaction_inline": False}})
    assert corrections_problems(sc.model_copy(update={"engines": [*sc.engines, mor, logs]})) == []
    with_late = sc.model_copy(update={"engines": [*sc.engines, mor, logs, late]})
    problems = corrections_problems(with_late)
    assert len(problems) == 1 and "option2_mor_async (kind clustering_mor)" in problems[0] and "MERGE_ON_READ" in problems[0]
    doc = with_late.model_dump(mode="json")
    doc["review"]["project"] = True
    with pytest.raises(ValueError, match="option2_mor_async"):
        Scenario.model_validate(doc)
    doc["engines"] = doc["engines"][:-1]
    assert Scenario.model_validate(doc).review.project  # copy-on-write designs and both MOR engines project


def test_simulate_takes_inserts_into_logs_and_refuses_what_is_not_modelled(tmp_path: Path) -> None:
    """`simulate` with corrections takes option2_mor (its upserts as log files) and option2_mor_logs (its
    inserts appended to small groups' logs too), and refuses a MOR engine whose compaction the maintenance
    round schedules, naming it, writing nothing."""
    from typer.testing import CliRunner

    from bench.cli import app

    body = SMALL.read_text().replace("  max_lateness_partitions: 1\n",
                                     "  max_lateness_partitions: 1\n  update_fraction: 0.1\n", 1)
    body = body.replace("engines:\n", "engines:\n  - {name: option2_mor, kind: clustering, "
                        "config: {table_type: MERGE_ON_READ}}\n"
                        "  - {name: option2_mor_logs, kind: clustering, config: {table_type: MERGE_ON_READ, "
                        "hoodie.parquet.small.file.limit: 629145}}\n", 1)
    path = tmp_path / "mor.yaml"
    path.write_text(body)
    res = CliRunner().invoke(app, ["simulate", str(path), "--out", str(tmp_path / "ok")])
    assert res.exit_code == 0, res.output
    c = Results(next((tmp_path / "ok").iterdir())).table("commits")
    mor = c[(c.engine == "option2_mor") & (c.kind == "upsert")]
    assert len(mor) and set(mor.action) == {"deltacommit"}
    ing = c[c.kind == "ingest"].set_index(["engine", "batch"]).bytes_written
    # the padded engine's inserts went to logs: its ingests after the first wrote other bytes than option2_mor's
    assert (ing["option2_mor_logs"].iloc[1:] != ing["option2_mor"].iloc[1:]).all()
    late = body.replace("config: {table_type: MERGE_ON_READ}}\n", "config: {table_type: MERGE_ON_READ}}\n"
                        "  - {name: option2_mor_async, kind: clustering, config: {table_type: MERGE_ON_READ, "
                        "compaction_inline: false}}\n", 1)
    path.write_text(late)
    assert "option2_mor_async" in [e.name for e in load_scenario(path).engines]  # valid: `run` measures it
    res = CliRunner().invoke(app, ["simulate", str(path), "--out", str(tmp_path / "no")])
    assert res.exit_code != 0 and "option2_mor_async" in res.output and "MERGE_ON_READ" in res.output
    assert not (tmp_path / "no").exists()  # nothing written


def test_the_production_map_has_the_update_fraction_as_an_axis() -> None:
    grid = load_sweep(SHIPPED_MAP)
    assert grid.values["update_fraction"] == [0, 0.05] and len(grid.points()) >= 1000
    assert pm.replay_key({"update_fraction": 0.05}) != pm.replay_key({})
    assert pm.replay_key({"update_fraction": 0.0}) == pm.replay_key({})  # the old points replay as before
    settings = pm.Settings(replay_cap=200, replay_max=400, corrections_replay_cap=100)
    assert settings.caps({"update_fraction": 0.05}) == (100, 100) and settings.caps({}) == (200, 400)
    for bad in (-0.1, 1.0, "x"):
        assert any("update_fraction" in p for p in pm.point_problems({"update_fraction": bad}, settings))
    point = {"batch_mb": 1, "small_file_limit_mb": 32, "partitions_per_year": 365, "horizon_days": 30,
             "store": "local"}
    rows, _ = pm.run_points(grid.base, [point, {**point, "update_fraction": 0.05}], settings, fast_model(grid),
                            workers=1)
    wa = {(r["engine"], r["update_fraction"] if "update_fraction" in r else 0): r["wa"] for r in rows}
    for e in grid.base.engines:  # every copy-on-write design rewrites the groups its corrections touch
        assert wa[(e.name, 0.05)] > wa[(e.name, 0)]
    near = pm.nearest_point(grid.values, pm.point_target(point, pm.Settings()), 1.0, pm.Settings(),
                            update_fraction=0.1)
    assert near["update_fraction"] == 0.05


def test_option1_files_have_the_real_paths(corrections_run: Results, monkeypatch: pytest.MonkeyPatch) -> None:
    """Option 1's simulated files carry the real engine's names (fileId, write token, instant) at every
    checkpoint: its APPEND ingest's by Spark task, its compaction's outputs by operation and task, its
    upserts' rewrites keeping the group's fileId; so a compaction concatenates one instant's inputs in the
    real engine's order (instant, task, sequence number, path)."""
    sc = Scenario.model_validate(corrections_run.run["scenario"])
    sc = sc.model_copy(update={"engines": [e for e in sc.engines if e.name == "option1_cbd"]})
    seen: dict[int, list[str]] = {}
    queries = simmod.Simulator.queries

    def spy(self, e, b, params, final=False):  # noqa: ANN001, ANN202
        seen[b] = sorted(s.path for s in e.live.values())
        return queries(self, e, b, params, final)

    monkeypatch.setattr(simmod.Simulator, "queries", spy)
    simmod.run_simulation(sc, CostModel())
    f = corrections_run.table("files")
    f = f[(f.engine == "option1_cbd") & f.live]
    assert sorted(seen) == sorted(f.checkpoint.unique())
    for cp, paths in seen.items():
        assert paths == sorted(f[f.checkpoint == cp].path), cp
