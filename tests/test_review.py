"""The review's rules on synthetic results folders: whole candidates, required gates, one ledger,
differences judged against the margin; and the scenario's ``review:`` block refused when wrong."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from results_factory import make_design_results

from bench.scenario import ScenarioError, parse_scenario
from engines.config.registry import GB
from reports import render_report
from reports.answer import MAX_SENTENCES, answer_sentences, ledger_frame
from runresults import Results
from runresults.review import review, store_review
from runresults.review.choice import ledger_ratio
from runresults.review.ledger import PARTS, Ledger
from runresults.review.prices import DEFAULT_PRICES, HOURS_PER_MONTH
from runresults.uncertainty import decide

SLIGHTLY_FASTER = {"option1": 0.97, "baseline": 1.3}  # Option 1 3% faster on every timing


def _rows(rev: dict, design: str) -> dict[str, dict]:
    block = next(b for b in rev["criteria"] if b["design"] == design)
    return {r["criterion"]: r for r in block["rows"]}


def test_three_percent_faster_and_two_files_fewer_is_equivalent(tmp_path: Path) -> None:
    """69 against 71 files and 3% on every timing: every criterion "equivalent", the verdict from the ledger."""
    rev = review(Results(make_design_results(tmp_path / "run", speed=SLIGHTLY_FASTER, final_files={"option1": 69})))
    choice = rev["choice"]["run"]
    assert {choice["design"], *choice["equivalent"]} == {"Option 1", "Option 2"} and not choice["decided"]
    assert rev["decided_by"]["kind"] == "equivalent"
    rows = _rows(rev, "Option 2" if choice["design"] == "Option 1" else "Option 1")
    for name in ("ingest latency (per batch)", "maintenance (core-seconds per run of the table)", "live files (final)",
                 "query full_scan_by_level (s)", "cost ($ per TB ingested)"):
        assert rows[name]["verdict"] == "equivalent", (name, rows[name])
    assert "n=200" in rows["ingest latency (per batch)"]["ratio_text"]  # 20 batches x 10 repetitions, paired
    assert "95%, n=12" in rows["query full_scan_by_level (s)"]["ratio_text"]  # the interleaved rounds
    assert "95%, n=10" in rows["cost ($ per TB ingested)"]["ratio_text"]  # ten repetitions: inside the margin
    assert "equivalent in cost" in answer_sentences(rev, "x")[0]
    assert rows["ingest latency (per batch)"]["ratio"]["value"] == pytest.approx(1 / 0.97, rel=1e-3)


def test_a_range_of_three_decides_nothing(tmp_path: Path) -> None:
    """Three repetitions give each ratio a range, not a 95% interval: 1.3x the cost on every sample is
    "equivalent", not separable, and the answer says why; ten repetitions decide the same difference."""
    slow = {"option1": 1.3, "option1_keep_time": 1.3, "option1_rfc": 1.3, "baseline": 1.3}
    three = review(Results(make_design_results(tmp_path / "three", repeats=3, speed=slow)))
    cost = _rows(three, "Option 1")["cost ($ per TB ingested)"]
    assert cost["verdict"] == "equivalent" and "range" in cost["ratio_text"] and "n=3" in cost["ratio_text"]
    assert not three["choice"]["run"]["decided"]
    assert "fewer than 10 samples (a range, not a 95% interval), not separable" in answer_sentences(three, "x")[0]
    ten = review(Results(make_design_results(tmp_path / "ten", repeats=10, speed=slow)))
    assert _rows(ten, "Option 1")["cost ($ per TB ingested)"]["verdict"] == "higher"


def test_the_choice_without_the_criteria_is_the_same_choice(tmp_path: Path) -> None:
    """A projected target (a year: 5 x 10^5 simulated batches) is reviewed for its choice only: the
    criteria's per-batch bootstraps are left out, and the choice, gates and ledgers do not move."""
    results = Results(make_design_results(tmp_path / "run", speed=SLIGHTLY_FASTER, final_files={"option1": 69}))
    full, choice_only = review(results), review(results, criteria=False)
    assert full["criteria"] and choice_only["criteria"] == []
    assert {k: v for k, v in choice_only.items() if k != "criteria"} == {k: v for k, v in full.items() if k != "criteria"}


def test_the_ledger_decides_when_the_criteria_are_equivalent(tmp_path: Path) -> None:
    """Same timings and files as above, but Option 2 keeps three times the bytes and queries are rare:
    storage makes the ledger differ beyond the margin, and the ledger decides."""
    run = make_design_results(tmp_path / "run", speed=SLIGHTLY_FASTER, final_files={"option1": 69},
                              stored={"option2": 3.0}, review={"queries_per_hour": 0.5})
    rev = review(Results(run))
    assert rev["choice"]["run"]["design"] == "Option 1" and rev["choice"]["run"]["decided"]
    assert rev["decided_by"]["kind"] == "ledger"
    rows = _rows(rev, "Option 2")
    assert rows["ingest latency (per batch)"]["verdict"] == "equivalent"
    assert rows["live files (final)"]["verdict"] == "equivalent"
    assert rows["cost ($ per TB ingested)"]["verdict"] == "higher"
    assert answer_sentences(rev, "x")[0].startswith("**Scenario `x`.** Choose Option 1 (`option1`)")


@pytest.mark.parametrize("requires", [None, ["isolation", "no_loss", "time_travel", "concurrent_update"]])
def test_a_failed_incremental_gate_decides_only_when_required(tmp_path: Path, requires: list[str] | None) -> None:
    review_cfg = None if requires is None else {"requires": requires}
    run = make_design_results(tmp_path / "run", speed={"option1": 0.8, "baseline": 1.3},
                              failing={"incremental": {"option1": 9000.0}}, review=review_cfg)
    rev = review(Results(run))
    sentences = answer_sentences(rev, "x")
    assert len(sentences) <= MAX_SENTENCES
    if requires is None:  # default: all five gates
        assert rev["choice"]["run"]["design"] == "Option 2"
        assert rev["decided_by"] == {"kind": "gate", "gates": ["incremental"], "without_gates": "Option 1"}
        assert "The incremental gate decided" in " ".join(sentences)
        cost = rev["candidates"]["option1"]["ledger"]["usd_per_tb"]["value"]
        assert f"{cost:.4g}" not in " ".join(sentences)  # no figure of a candidate that failed a required gate
        assert rev["candidates"]["option1"]["failed_required"] == ["incremental"]
        # a failing candidate appears in the gates and nowhere else: not in the ledger, not in the criteria
        assert "option1" not in set(ledger_frame(rev).candidate)
        assert all(r["b"] != "option1" and r["a"] != "option1" for b in rev["criteria"] for r in b["rows"])
        assert [f["text"] for f in rev["flips"]] == ["without incremental consumers (incremental gate): Option 1"]
    else:
        assert rev["choice"]["run"]["design"] == "Option 1" and rev["decided_by"]["kind"] == "ledger"
        assert [f["text"] for f in rev["flips"]] == ["with incremental consumers (incremental gate): Option 2"]


@pytest.mark.parametrize(("option2", "cause"), [
    ((0.035, 0.06, 0.02), "most of it is planning, the check the design implies"),
    ((0.02, 0.075, 0.02), "most of it is writing the same files: overhead of ours that neither design implies"),
])
def test_a_decided_ingest_difference_names_its_phase(tmp_path: Path, option2: tuple, cause: str) -> None:
    """Both designs write the same files; Option 2's ingest is 15% slower, the extra 15 ms per batch in one
    phase: the review says which, and whether the design implies it (T17)."""
    run = make_design_results(tmp_path / "run", phases={"option1": (0.02, 0.06, 0.02), "option2": option2,
                                                        "baseline": (0.03, 0.09, 0.03)})
    rev = review(Results(run))
    row = next(r for b in rev["criteria"] for r in b["rows"]
               if r["criterion"] == "ingest latency (per batch)" and {r["a"], r["b"]} == {"option1", "option2"})
    assert row["verdict"] in ("lower", "higher")
    assert "both wrote the same files" in row["note"] and cause in row["note"], row["note"]
    assert "+15.0 ms" in row["note"] or "-15.0 ms" in row["note"], row["note"]
    md = render_report(run, design_review=True)["report.md"].read_text()
    assert f"- ingest latency (per batch): {row['note']}" in md


def _hand_ledger(results: Results, engine: str, repeat: int, qph: float) -> dict[str, float]:
    """The ledger's rules written out again, for one repetition."""
    core = 2 * DEFAULT_PRICES.core_hour.usd / 3600  # local[2]: two cores
    span = 86400.0 / 20  # one day partition over 20 batches
    c = results.table("commits", all_repeats=True)
    c = c[(c.engine == engine) & (c.repeat == repeat)]
    m = results.table("maintenance", all_repeats=True)
    m = m[(m.engine == engine) & (m.repeat == repeat)]
    q = results.table("queries", all_repeats=True)
    q = q[(q.engine == engine) & (q.repeat == repeat) & (q.run == 1)].set_index("checkpoint").latency_s
    final = results.table("query_rounds")
    final = float(final[final.engine == engine].latency_s.median())
    t9, t19 = 10 * span, 20 * span
    query_s = qph / 3600 * (q[9] * t9 + (q[9] + final) / 2 * (t19 - t9))  # flat to the first checkpoint, then linear
    storage = sum(int(c[c.batch == b].physical_bytes.iloc[-1]) for b in range(20)) * span / GB / 3600 / HOURS_PER_MONTH
    return {"compute: ingest": float(c.duration_s.sum()) * core,
            "compute: maintenance": float(m[m.kind != "clean"].duration_s.sum()) * core,
            "compute: cleaning": float(m[m.kind == "clean"].duration_s.sum()) * core,
            "queries": query_s * core, "storage": storage * DEFAULT_PRICES.storage_gb_month.usd, "requests": 0.0}


def test_ledger_summed_by_hand_equals_the_reports(tmp_path: Path) -> None:
    run = make_design_results(tmp_path / "run", stored={"option2": 2.0}, review={"queries_per_hour": 6})
    results = Results(run)
    stored = store_review(run)
    led = stored["candidates"]["option2"]["ledger"]
    tb = 20 * 1_000_000 / 1e12
    for r in range(10):  # the factory's ten repetitions: ten samples, a 95% interval
        hand = _hand_ledger(results, "option2", r, 6.0)
        for part in PARTS:
            assert led["parts_usd"][part][r] == pytest.approx(hand[part], rel=1e-9), (part, r)
        assert led["usd_per_tb_by_sample"][r] == pytest.approx(sum(hand.values()) / tb, rel=1e-9)
    mean = float(np.mean([sum(_hand_ledger(results, "option2", r, 6.0).values()) / tb for r in range(10)]))
    assert led["usd_per_tb"]["value"] == pytest.approx(mean, rel=1e-9)
    assert Results(run).run["review"]["candidates"]["option2"]["ledger"]["usd_per_tb"]["value"] == led["usd_per_tb"]["value"]
    md = render_report(run, design_review=True)["report.md"].read_text()
    answer = md.split("## The answer", 1)[1].split("## Setup", 1)[0]
    assert "![cost_ledger](plots/cost_ledger.png)" in answer
    cell = f"| option2 | Option 2 | represents Option 2 | {mean:.3g} ["
    assert cell in md


BASE = yaml.safe_load((Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml").read_text())


@pytest.mark.parametrize(("block", "named"), [
    ({"requires": ["incremental", "snapshot"]}, "review.requires: unknown gate(s) ['snapshot']"),
    ({"prices": {"put": {"usd": -0.005, "date": "2026-11-24", "source": "S3"}}}, "review.prices.put.usd"),
    ({"margin": 1.0}, "review.margin"),
    ({"margin": 0}, "review.margin"),
    ({"target": {"batch_mb": 0}}, "review.target.batch_mb"),
    ({"target": {"small_file_limit_mb": 500}}, "small_file_limit_mb (500) must not exceed max_file_mb"),
    ({"target": {"batch_mb": 300}}, "review.target: the simulator cannot model it: batch_mb"),
    ({"target": {"store": "gcs"}}, "review.target.store"),
])
def test_bad_review_block_is_one_error_naming_the_field(block: dict, named: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario({**BASE, "review": block}, "s.yaml")
    assert named in str(exc.value) and "1 problem(s)" in str(exc.value)


def test_defaults_are_dated_and_the_rfc_example() -> None:
    sc = parse_scenario(BASE, "s.yaml")
    assert sc.review.requires == ["isolation", "no_loss", "incremental", "time_travel", "concurrent_update"]
    assert sc.review.margin == 0.05
    t = sc.review.target
    assert (t.batch_mb, t.small_file_limit_mb, t.max_file_mb, t.horizon_days, t.store, t.latency_ms) == (
        1.0, 100.0, 120.0, 365.0, "s3", 20.0)
    for price in (sc.review.prices.core_hour, sc.review.prices.storage_gb_month, sc.review.prices.put):
        assert price.date and price.source


def test_batch_span_matches_the_workloads() -> None:
    """The ledger's event-time cadence is :func:`workloads.rowdef.batch_span` (runresults cannot import it)."""
    from runresults.review.ledger import batch_span_s
    from workloads.rowdef import batch_span
    from workloads.spec import WorkloadSpec

    for doc in ({"num_batches": 150, "num_partitions": 3}, {"num_batches": 7, "num_partitions": 5,
                                                            "partition_granularity": "hour"}):
        assert batch_span_s({"scenario": {"workload": doc}}) == pytest.approx(batch_span(WorkloadSpec(**doc)).total_seconds(), abs=1e-5)


def test_breakeven_factors_solve_the_ledger_lines(tmp_path: Path) -> None:
    """Option 2 is 20% faster but keeps ten times the bytes, and queries are rare: the ledger chooses
    Option 1. A cheaper storage, a dearer core-hour or more queries would choose Option 2; each
    break-even factor, applied to the ledgers' parts by hand, puts Option 2 at exactly (1 - margin)
    of Option 1's cost, and at (1 + margin) where it becomes equivalent."""
    from runresults.review.breakeven import LEVERS, breakeven

    run = make_design_results(tmp_path / "run", speed={"option2": 0.8, "baseline": 1.3}, stored={"option2": 10.0},
                              review={"queries_per_hour": 0.01})
    rev = review(Results(run))
    assert rev["choice"]["run"]["candidate"] == "option1" and rev["choice"]["run"]["decided"]
    assert rev["breakeven"] == breakeven(rev)
    rows = {b["lever"]: b for b in rev["breakeven"] if b["candidate"] == "option2"}
    m = rev["margin"]

    def cost(engine: str, lever: str, f: float) -> float:
        parts = {p: iv["value"] for p, iv in rev["candidates"][engine]["ledger"]["parts_usd_per_tb"].items() if iv}
        return sum(v * (f if p in LEVERS[lever] else 1.0) for p, v in parts.items())

    assert rows["storage_gb_month"]["cheaper_at"] < 1 < rows["core_hour"]["cheaper_at"]
    assert rows["queries_per_hour"]["cheaper_at"] > 1
    assert rows["requests"]["cheaper_at"] is None  # a local run: no requests to price
    for lever, row in rows.items():
        f, g = row["cheaper_at"], row["equivalent_at"]
        if f is None:
            continue
        assert cost("option2", lever, f) == pytest.approx((1 - m) * cost("option1", lever, f)), lever
        assert cost("option2", lever, g) == pytest.approx((1 + m) * cost("option1", lever, g)), lever
    md = render_report(run, design_review=True)["report.md"].read_text()
    assert "(break-even of the ledgers)" in md and rows["core_hour"]["text"] in md


def test_a_repetition_not_queried_is_priced_with_the_first_repetitions_latencies(tmp_path: Path) -> None:
    """The review's runs query a round engine's first repetition only (bench.runner): the ledger prices
    a later repetition's query seconds at every checkpoint from the first's, not as zero."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    run = make_design_results(tmp_path / "run", noise=0.2, review={"queries_per_hour": 6})
    full = store_review(run)["candidates"]["option2"]["ledger"]["parts_usd"]["queries"]
    assert full[1] != full[0]  # each repetition's own checkpoint latencies
    path = run / "queries.parquet"
    q = pq.read_table(path)
    pq.write_table(q.filter(pc.equal(q.column("repeat"), 0)), path)
    only_first = store_review(run)["candidates"]["option2"]["ledger"]["parts_usd"]["queries"]
    assert only_first[0] == pytest.approx(full[0], rel=1e-12)
    assert only_first[1] == only_first[2] == pytest.approx(full[0], rel=1e-12)


def _hand_round_queries(results: Results, engine: str, groups: int, k: int, qph: float) -> float:
    """Sample ``k``'s query dollars summed by hand: at each checkpoint the median of the rounds r with
    r mod ``groups`` = k, flat to the first checkpoint, linear to the last (batches 9 and 19)."""
    rounds = results.table("query_rounds")
    mine = rounds[(rounds.engine == engine) & (rounds["round"] % groups == k)]
    at = {cp: float(g.latency_s.median()) for cp, g in mine.groupby("checkpoint")}
    span = 86400.0 / 20
    t9, t19 = 10 * span, 20 * span
    query_s = qph / 3600 * (at[9] * t9 + (at[9] + at[19]) / 2 * (t19 - t9))
    return query_s * 2 * DEFAULT_PRICES.core_hour.usd / 3600


def test_one_repetition_samples_the_ledger_by_groups_of_interleaved_rounds(tmp_path: Path) -> None:
    """One repetition with interleaved rounds at both checkpoints (4 at the first, 10 at the last): four
    samples, sample k the medians of the rounds r with r mod 4 = k, and the ratio paired by group."""
    run = make_design_results(tmp_path / "run", repeats=1, rounds=10, checkpoint_rounds=4, noise=0.2,
                              speed={"option1": 1.3}, review={"queries_per_hour": 6})
    results = Results(run)
    led = store_review(run)["candidates"]["option2"]["ledger"]
    assert (led["sample_basis"], led["samples"]) == ("round", [0, 1, 2, 3])
    for k in range(4):
        assert led["parts_usd"]["queries"][k] == pytest.approx(_hand_round_queries(results, "option2", 4, k, 6.0),
                                                              rel=1e-9)
    assert len(set(led["parts_usd"]["queries"])) == 4  # the samples share no query run
    assert len(set(led["parts_usd"]["storage"])) == 1  # measured once: the same in every sample
    rows = _rows(review(results), "Option 1")
    cost = rows["cost ($ per TB ingested)"]
    assert cost["basis"] == "paired by group of interleaved query rounds" and "n=4" in cost["ratio_text"]
    maint = rows["maintenance (core-seconds per run of the table)"]
    assert maint["basis"] == "runs paired by the batch they ran after" and "n=4" in maint["ratio_text"]


def test_ten_round_groups_decide_a_cost_difference_beyond_the_margin(tmp_path: Path) -> None:
    """Ten rounds at every checkpoint of one repetition: ten samples, a 95% interval, and Option 1 at 1.3x
    on every timing decided "higher" by the ledger; at 1.03x the same run is "equivalent"."""
    for factor, verdict in ((1.3, "higher"), (1.03, "equivalent")):
        run = make_design_results(tmp_path / f"run{factor}", repeats=1, rounds=10, checkpoint_rounds=10,
                                  speed={"option1": factor, "baseline": 2.0}, review={"queries_per_hour": 6})
        rev = review(Results(run))
        assert rev["candidates"]["option2"]["ledger"]["usd_per_tb"]["n"] == 10
        cost = _rows(rev, "Option 1")["cost ($ per TB ingested)"]
        assert "95%, n=10" in cost["ratio_text"] and cost["verdict"] == verdict, cost


def test_without_rounds_at_every_checkpoint_one_repetition_is_one_sample(tmp_path: Path) -> None:
    """One repetition, rounds at the final checkpoint only: one sample, no interval, nothing decided by it."""
    run = make_design_results(tmp_path / "run", repeats=1, speed={"option1": 1.3})
    rev = review(Results(run))
    led = rev["candidates"]["option2"]["ledger"]
    assert (led["sample_basis"], led["samples"], led["usd_per_tb"]["n"]) == ("repetition", [0], 1)
    assert _rows(rev, "Option 1")["cost ($ per TB ingested)"]["verdict"] == "equivalent"


def _storage_ledger(engine: str, usd: float, **timed: float) -> Ledger:
    parts = {p: [0.0] for p in PARTS} | {"storage": [usd]} | {p: [v] for p, v in timed.items()}
    return Ledger(engine, tb_ingested=1.0, cores=2, parts_usd=parts, samples=[0])


def test_a_storage_only_ledger_is_exact_and_decides_on_its_value() -> None:
    """Storage follows from the seed: one sample of it is the figure, not a measurement of one (the
    example prices no seconds); a timed part priced makes the same ratio a single sample again."""
    cheap, dear = _storage_ledger("a", 1.0), _storage_ledger("b", 1.3)
    ratio = ledger_ratio(cheap, dear)
    assert (ratio.kind, ratio.lo, ratio.hi) == ("exact", 1.3, 1.3)
    assert decide(ratio, 0.1) == "higher" and decide(ledger_ratio(cheap, _storage_ledger("c", 1.05)), 0.1) == "equivalent"
    timed = ledger_ratio(_storage_ledger("a", 1.0, queries=0.5), _storage_ledger("b", 1.3, queries=0.5))
    assert timed.kind != "exact" and decide(timed, 0.1) == "equivalent"
