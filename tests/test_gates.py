"""T17's gates and the final checkpoint's interleaved query rounds: what the small run writes, and
a planted bug caught by each gate (an update the clustering drops, a crash point that lost rows, a
reader that gets a wrong answer, a query round with a wrong result)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.gates.concurrent_update import check_concurrent_update
from bench.gates.in_run import round_engines
from bench.gates.isolation import isolation_rows
from bench.gates.no_loss import latest_crashtest, maintenance_points, no_loss_rows
from bench.query_rounds import round_order, run_query_rounds
from bench.scenario import ScenarioError, load_scenario, parse_scenario
from runresults import Results, ResultsWriter

SMALL = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml"


def gates_of(results: Results) -> dict[tuple[str, str], dict]:
    return {(r["engine"], r["gate"]): r for r in results.table("gates").to_dict("records")}


def test_small_run_writes_a_row_per_candidate_and_gate(small_run: Results) -> None:
    gates = gates_of(small_run)
    engines = set(small_run.engines)
    in_run = {(e, g) for e in engines for g in ("isolation", "no_loss", "concurrent_update")}
    assert in_run <= set(gates)  # beside them: incremental and time travel (test_history_gates)
    iso_rows = small_run.table("isolation")
    for e in engines:  # every engine maintains: its readers raced a maintenance run
        iso, mine = gates[(e, "isolation")], iso_rows[iso_rows.engine == e]
        assert iso["checked"] == len(mine) >= 1 and iso["failures"] == (mine.outcome != "ok").sum(), iso
        assert verdict(iso) == (iso["failures"] == 0)
    assert all(verdict(gates[(e, "isolation")]) is True for e in ("option2", "option2_sorted"))  # snapshot isolation
    for e in ("option2", "option2_sorted"):  # reject strategy: both halves refused, naming the plan
        cu = gates[(e, "concurrent_update")]
        assert verdict(cu) is True and cu["checked"] == 2 and cu["figure"] == 0, cu
        assert cu["detail"].count(": refused") == 2
    cu = gates[("baseline", "concurrent_update")]  # its merge happens at ingest: no plan to race, n/a with the reason
    assert verdict(cu) is None and "no plan for an update to race" in cu["detail"]
    for e in ("option1_rfc", "option1_cbd"):  # its COW merge refuses a group a pending compaction reads, naming it
        cu = gates[(e, "concurrent_update")]
        assert verdict(cu) is True and cu["checked"] == 2 and cu["figure"] == 0, cu
        assert cu["detail"].count(": refused") == 2 and "pending base-file compaction plan" in cu["detail"], cu
    for e in engines:  # no crash test of this commit beside a temporary results folder
        nl = gates[(e, "no_loss")]
        assert verdict(nl) is None and "run layoutbench crashtest" in nl["detail"]
    phases = small_run.run["profile"]["phases_s"]
    assert {"query_rounds", "gates/isolation", "gates/no_loss"} <= set(phases)
    assert {k.rsplit("/", 1)[1] for k in phases if k.startswith("gates/concurrent_update/")} == engines


def verdict(row: dict) -> bool | None:
    """A gate row's ``passed`` as True, False or None (pandas reads a bool column with nulls as objects)."""
    value = row["passed"]
    return None if value is None or value != value else bool(value)


def test_small_run_interleaves_the_final_queries(small_run: Results) -> None:
    qr = small_run.table("query_rounds")
    rounds = load_scenario(SMALL).queries.rounds
    q = small_run.table("queries")
    suite = sorted(set(q["query"]))
    # a candidate a required gate ruled out is not in the rounds: by isolation in the batch loop (option1_rfc,
    # whose final checkpoint keeps its own warm runs), or by a gate measured after it (option1_cbd re-stamps
    # its compacted rows: incremental), whose final checkpoint ran each query once, cold, as a round engine's
    requires = set(load_scenario(SMALL).review.requires)
    failed = [r for r in small_run.table("gates").to_dict("records") if r["gate"] in requires and verdict(r) is False]
    by_isolation = {r["engine"] for r in failed if r["gate"] == "isolation"}
    out = {r["engine"] for r in failed}
    assert by_isolation == {"option1_rfc"} and out == {"option1_rfc", "option1_cbd"}, failed
    engines = sorted(set(small_run.engines) - out)
    final = q.checkpoint.max()
    assert set(qr.checkpoint) == {final, final - 3}  # the earlier checkpoint's rounds: checkpoint_rounds (conftest)
    earlier, qr = qr[qr.checkpoint < final], qr[qr.checkpoint == final]
    assert len(qr) == rounds * len(suite) * len(engines) and qr.verified.all()
    # the earlier checkpoint's two rounds: every candidate the isolation gate did not rule out in the batch loop,
    # in place of its warm runs there (option1_cbd is ruled out only by the gates after the loop)
    in_earlier = sorted(set(small_run.engines) - by_isolation)
    assert sorted(set(earlier.engine)) == in_earlier and len(earlier) == 2 * len(suite) * len(in_earlier)
    before = q[q.checkpoint == final - 3]
    for e in in_earlier:
        assert before[before.engine == e].groupby("query").run.apply(sorted).tolist() == [[0, 1, 2]] * len(suite)
    assert (before[before.engine == "option1_rfc"].groupby("query").run.max()
            == load_scenario(SMALL).queries.warm_runs).all()
    assert {"checkpoint_rounds", "query_rounds"} <= set(small_run.run["profile"]["phases_s"])
    led = small_run.run["review"]["candidates"]["option2"]["ledger"]
    assert (led["sample_basis"], led["samples"]) == ("round", [0, 1])  # one repetition: the rounds' groups
    # the rounds are the final checkpoint's warm runs: the checkpoint itself ran each query once, cold
    last = q[q.checkpoint == final]
    for e in engines:
        runs = last[last.engine == e].groupby("query").run.apply(sorted).tolist()
        assert runs == [list(range(rounds + 1))] * len(suite), (e, runs)
    ruled_out = last[last.engine == "option1_rfc"]
    assert (ruled_out.groupby("query").run.max() == load_scenario(SMALL).queries.warm_runs).all()
    assert (last[last.engine == "option1_cbd"].run == 0).all()
    for _, g in qr.groupby("round"):  # every engine's every query once per round, positions 0..n-1
        assert sorted(g.position) == list(range(len(suite) * len(engines)))
        assert sorted(zip(g.engine, g["query"], strict=True)) == sorted((e, q) for e in engines for q in suite)
    firsts = qr[qr.position == 0].sort_values("round").engine.tolist()
    assert len(set(firsts)) == min(rounds, len(engines))  # the order rotates from round to round


def test_round_order_rotates_engines_and_queries() -> None:
    engines, queries = ["a", "b", "c"], ["q1", "q2"]
    orders = [[(s.engine, s.query) for s in round_order(engines, queries, r)] for r in range(3)]
    assert orders[0][:2] == [("a", "q1"), ("a", "q2")] and orders[1][:2] == [("b", "q2"), ("b", "q1")]
    assert [o[0][0] for o in orders] == ["a", "b", "c"]
    assert all(sorted(o) == sorted((e, q) for e in engines for q in queries) for o in orders)


def test_rounds_are_validated() -> None:
    doc = {"name": "x", "workload": {"num_batches": 2}, "engines": [{"name": "o2", "kind": "clustering"}],
           "queries": {"rounds": 0}}
    with pytest.raises(ScenarioError, match="rounds"):
        parse_scenario(doc)
    assert parse_scenario({**doc, "queries": {}}).queries.rounds == 10
    unmeasured = {**doc, "queries": {"checkpoint_rounds": 3}, "review": {"measure": False}}
    with pytest.raises(ScenarioError, match="checkpoint_rounds is 3, but no interleaved rounds run"):
        parse_scenario(unmeasured)
    assert parse_scenario({**unmeasured, "queries": {"checkpoint_rounds": 3, "interleaved": True}}).queries.checkpoint_rounds == 3


def test_a_wrong_result_in_a_round_is_unverified_and_named(spark, tmp_path) -> None:
    """Planted: the ground truth of one query differs from what the table holds."""
    from bench.engine_factory import build_engine
    from bench.queries import SUITE, choose_params
    from workloads.generator import batch_df, batch_table

    sc = load_scenario(SMALL).select_engines(["option2"])
    e = build_engine(sc.engines[0], sc, str(tmp_path / "t"))
    for b in range(2):
        e.ingest(batch_df(spark, sc.workload, b))
    truth = batch_table(sc.workload, 0)  # one batch short: every count is wrong
    params = choose_params(truth, sc.workload.partition_column)
    expected = {q: SUITE[q].reference(truth, params) for q in ("full_scan_by_level", "point_lookup")}
    rows: list[dict] = []
    failures = run_query_rounds(spark, [e], 2, list(expected), params, expected, 2, add_row=lambda **r: rows.append(r))
    assert len(rows) == 4
    assert not any(r["verified"] for r in rows if r["query"] == "full_scan_by_level")
    assert all(r["verified"] for r in rows if r["query"] == "point_lookup")  # the key is in batch 0 either way
    assert len(failures) == 2 and all("full_scan_by_level" in f and "interleaved round" in f for f in failures)
    with pytest.raises(ValueError, match="rounds"):
        run_query_rounds(spark, [e], 2, list(expected), params, expected, 0)


def test_rounds_run_on_the_design_candidates_only() -> None:
    """The control and the peers are reference columns: no paired comparison reads their rounds."""
    from types import SimpleNamespace

    kinds = {"baseline": "cow_baseline", "o1": "append_compaction", "o2": "clustering", "ctl": "append_only",
             "delta": "delta_peer", "hudi_cow": "hudi"}
    engines = [SimpleNamespace(name=n) for n in kinds]
    assert [e.name for e in round_engines(engines, kinds)] == ["baseline", "o1", "o2"]


def test_isolation_gate_fails_on_a_wrong_reader_result() -> None:
    """Planted: one reader query during maintenance returned other rows than the ground truth."""
    ok = {"engine": "o2", "outcome": "ok", "query": "q", "maintenance_instant": "1"}
    wrong = {**ok, "outcome": "wrong", "expected": "[1]", "got": "[2]"}
    maint = [{"engine": "o2", "instant": "1"}, {"engine": "ctl", "instant": None}]
    rows = {r["engine"]: r for r in isolation_rows(["o2", "ctl"], [ok, ok, wrong], maint, True)}
    assert rows["o2"]["passed"] is False and (rows["o2"]["checked"], rows["o2"]["failures"]) == (3, 1)
    assert "expected [1], got [2]" in rows["o2"]["detail"]
    assert rows["ctl"]["passed"] is None and "no maintenance" in rows["ctl"]["detail"]
    assert isolation_rows(["o2"], [ok], maint, True)[0]["passed"] is True
    assert isolation_rows(["o2"], [ok], maint, False)[0]["passed"] is None


def test_concurrent_update_gate_fails_when_the_clustering_drops_the_update(spark, tmp_path) -> None:
    """Planted: Hudi's allow strategy writes the update into a file group the pending plan then
    replaces with its pre-update rows (HUDI-3846): the update is applied, then lost."""
    doc = load_scenario(SMALL).model_dump(mode="json")
    doc["engines"] = [{"name": "option2_allow", "kind": "clustering",
                       "config": {"hoodie.clustering.updates.strategy": "allow",
                                  "hoodie.parquet.bloom.filter.enabled": False}}]
    sc = parse_scenario(doc)
    row = check_concurrent_update(spark, sc.engines[0], sc, tmp_path / "t")
    assert row["passed"] is False and row["figure"] > 0, row
    assert "pending" in row["detail"] and "applied" in row["detail"] and "applied updates gone" in row["detail"]
    assert not (tmp_path / "t").exists()  # the scratch table is removed


def _crash_folder(root: Path, name: str, sha: str, dirty: bool, rows: list[dict], engines: dict) -> Path:
    w = ResultsWriter(root / name)
    for r in rows:
        w.add("crash", **{"query_failures": 0, "hudi_rs_agrees": True, "details": "{}", **r})
    w.write_run({"run_id": name, "kind": "crashtest", "git": {"sha": sha, "dirty": dirty}, "engines": engines})
    return root / name


def test_no_loss_attaches_the_same_commits_crash_test(tmp_path) -> None:
    kinds = {"o1": {"kind": "append_compaction", "config": {"order": "rfc"}}, "o2": {"kind": "clustering"}}
    o1_points, o2_points = maintenance_points("append_compaction", {"order": "rfc"}), maintenance_points("clustering")
    assert "option1.after_old_file_deleted:2" in o1_points and "clustering.before_replacecommit" in o2_points
    assert not any(p.startswith("ingest.") for p in o1_points + o2_points)
    rows = ([{"engine": "o1", "point": p, "recovered": True, "rows_lost": 0, "rows_duplicated": 0} for p in o1_points]
            + [{"engine": "o2", "point": p, "recovered": True, "rows_lost": 0, "rows_duplicated": 0} for p in o2_points])
    rows[o1_points.index("option1.after_old_file_deleted")]["rows_lost"] = 120  # the RFC order's hazard
    _crash_folder(tmp_path, "20260101T000000-crash-crash", "abc", False, rows, kinds)
    newest = _crash_folder(tmp_path, "20260102T000000-crash-crash", "abc", False, rows, kinds)
    _crash_folder(tmp_path, "20260103T000000-crash-crash", "abc", True, [], kinds)  # dirty: not this commit's code
    _crash_folder(tmp_path, "20260104T000000-crash-crash", "other", False, [], kinds)
    assert latest_crashtest(tmp_path, "abc") == newest and latest_crashtest(tmp_path, "zzz") is None
    cands = [("o1", "append_compaction", {"order": "rfc"}), ("o2", "clustering", {}),
             ("o2_sorted", "clustering", {}), ("ctl", "append_only", {})]
    got = {r["engine"]: r for r in no_loss_rows(cands, newest, "abc")}
    assert got["o1"]["passed"] is False and got["o1"]["figure"] == 120 and got["o1"]["failures"] == 1
    assert "option1.after_old_file_deleted" in got["o1"]["detail"]
    assert got["o2"]["passed"] is True and got["o2"]["checked"] == len(o2_points)
    assert got["o2_sorted"]["passed"] is None and "no engine o2_sorted" in got["o2_sorted"]["detail"]
    assert got["ctl"]["passed"] is None and "no maintenance" in got["ctl"]["detail"]
    some = _crash_folder(tmp_path, "20260105T000000-crash-crash", "abc", False, rows[-3:], kinds)
    assert no_loss_rows(cands[1:2], some, "abc")[0]["passed"] is None  # a subset cannot show there is no loss
    none = {r["engine"]: r for r in no_loss_rows(cands, None, "abc")}
    assert none["o1"]["passed"] is None and "no crashtest run of abc" in none["o1"]["detail"]
