"""Simulator vs closed forms: baseline copy-on-write write amplification and Option 2 space
amplification, on one-partition steady scenarios where both can be computed by hand.

Expectations are computed here from the batch size, small-file limit, max file size, schedule and
cleaner window only; nothing is read back from the simulator to build them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from bench.scenario import Scenario
from bench.simulate.costmodel import MB, CostModel
from bench.simulate.results_folder import simulate
from runresults import Results

BPR = 1024  # bytes per record; equal to Hudi's record-size estimate so insert "room" is exact


def _scenario(kind: str, batches: int, records: int, small_mb: float, max_mb: float, every: int | None,
              retained: int = 10) -> Scenario:
    doc: dict[str, Any] = {
        "name": f"xcheck_{kind}",
        "workload": {"seed": 1, "num_batches": batches, "batch_records": records, "partition_granularity": "day",
                     "num_partitions": 1, "late_fraction": 0.0, "max_lateness_partitions": 1},
        # closed forms on data bytes: no ~431 KB footer bloom filter per file
        "engines": [{"name": kind, "kind": kind, "config": {"bloom_filter": False}}],
        "sizing": {"small_file_limit_mb": small_mb, "target_file_mb": max_mb, "max_file_mb": max_mb,
                   "cleaner_commits_retained": retained},
        "maintenance": {"mode": "none"} if every is None else {"mode": "inline", "every_commits": every},
        "queries": {"checkpoint_every": batches},
        "isolation": {"enabled": False},
    }
    return Scenario.model_validate(doc)


def _run(sc: Scenario, tmp_path: Path) -> Results:
    cal = CostModel(bytes_per_record=float(BPR)).save(tmp_path / "cal.json")
    return Results(simulate(sc, tmp_path, calibration_path=cal, run_id="sim"))


def baseline_wa_closed_form(b: int, small: int, max_file: int, n: int) -> float:
    """Equal batches of b bytes into one partition. A file absorbs batches while it is below the
    small-file limit L, so it closes after k = ceil(L / b) batches (needs k*b <= M). The i-th batch
    of a cycle rewrites the (i-1)*b open file plus its own b: writes i*b. With n = q*k + r:
    WA = (q * k(k+1)/2 + r(r+1)/2) * b / (n * b)."""
    k = math.ceil(small / b)
    assert k * b <= max_file, "closed form assumes a full file never exceeds the max file size"
    q, r = divmod(n, k)
    return (q * k * (k + 1) // 2 + r * (r + 1) // 2) / n


@pytest.mark.parametrize(("records", "batches"), [(10_000, 20), (7_000, 23), (3_000, 31)])
def test_baseline_wa_matches_closed_form(tmp_path: Path, records: int, batches: int) -> None:
    small_mb, max_mb = 30.0, 120.0
    sim = _run(_scenario("cow_baseline", batches, records, small_mb, max_mb, every=None), tmp_path)
    c = sim.table("commits")
    ing = c[c.kind == "ingest"]
    assert len(ing) == batches
    simulated = ing.bytes_written.sum() / ing.batch_bytes.sum()
    expected = baseline_wa_closed_form(records * BPR, int(small_mb * MB), int(max_mb * MB), batches)
    assert expected > 1.5  # the scenario really exercises small-file merging
    assert simulated == pytest.approx(expected, rel=1e-9)
    assert c.wa.iloc[-1] == pytest.approx(expected, rel=0.01)


def option2_space_amp_closed_form(c: int, retained: int, cycles: int) -> list[float]:
    """One partition, c batches of b bytes (b < L <= c*b <= target) then one clustering that
    replaces the c small files by one file of c*b. Cycle j's clustering is instant j*(c+1); the
    cleaner (after each clustering) keeps replaced files with dead_at > I_j - R, i.e.
    m = ceil(R / (c+1)) replaced sets of c*b. The clustering commit is recorded before that clean,
    so it sees min(j, m+1) replaced sets over live bytes j*c*b: SA_j = 1 + min(j, m+1) / j."""
    m = math.ceil(retained / (c + 1))
    return [1 + min(j, m + 1) / j for j in range(1, cycles + 1)]


@pytest.mark.parametrize(("every", "retained", "cycles"), [(4, 10, 12), (3, 10, 15), (4, 3, 10)])
def test_option2_space_amp_matches_closed_form(tmp_path: Path, every: int, retained: int, cycles: int) -> None:
    records, small_mb, target_mb = 10_000, 25.0, 120.0
    b = records * BPR
    assert b < small_mb * MB <= every * b <= target_mb * MB
    sim = _run(_scenario("clustering", every * cycles, records, small_mb, target_mb, every, retained), tmp_path)
    c = sim.table("commits")
    amp = c.physical_bytes / c.live_bytes
    assert (amp >= 1.0).all()
    # bound: live + bytes rewritten by the clusterings of the last retained window (plus the current one)
    window = math.ceil(retained / (every + 1)) + 1
    assert (amp <= 1 + window * every * b / c.live_bytes + 1e-12).all()
    cl = c[c.kind == "clustering"]
    assert len(cl) == cycles
    expected = option2_space_amp_closed_form(every, retained, cycles)
    assert (cl.physical_bytes / cl.live_bytes).tolist() == pytest.approx(expected, rel=1e-12)
    assert amp.max() == pytest.approx(max(expected), rel=1e-12)
    # steady state: once the window is full, SA_j = 1 + (m+1)/j
    j = cycles
    assert expected[-1] == pytest.approx(1 + window / j)
