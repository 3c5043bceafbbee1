"""The simulator held to a real run of the same scenario: each figure beside the real one.

Stated tolerances (what the simulator promises):
- file counts per commit (live, physical, written): exact, since the same pure planners run;
- files scanned per query and checkpoint: exact, since the same pruning
  (:mod:`engines.table.pruning`) runs on files whose ranges come from the same rows, and the
  simulated tables mint the engines' fileIds and instants (:func:`engines.table.model.new_file_id`,
  the logical clock), so the baseline tops up its small files in the same order;
- final write amplification: within 10%, since sizes are rows x bytes-per-record estimates where
  real Parquet compression varies.

The exact figures hold while no file lies within the byte estimate's error of a size limit: the
baseline's top-ups and the planners' small-file tests compare estimated bytes with the limits, so
a file that sits on a limit can be small in one run and not in the other. A shipped sweep carries
a calibration for that reason (``bench/sweeps/*_calibration.json``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from runresults import Results

WA_TOLERANCE = 0.10


@dataclass
class Check:
    """One figure of one engine: the real value, the simulated one, and whether it is within tolerance."""

    engine: str
    figure: str
    real: float | int | str
    simulated: float | int | str
    ok: bool


def _series(df, engine: str, column: str) -> list:  # noqa: ANN001
    rows = df[df.engine == engine].sort_values("seq")
    return [int(v) for v in rows[column].tolist()]


def validate(real: Results, sim: Results) -> list[Check]:
    """Every comparable figure of the engines both runs have."""
    checks: list[Check] = []
    rc, sc = real.table("commits"), sim.table("commits")
    rq, sq = real.table("queries"), sim.table("queries")
    rq = rq[rq.run == 0]
    engines = [e for e in real.engines if e in set(sc.engine)]
    for engine in engines:
        for column in ("live_files", "physical_files", "files_written"):
            r, s = _series(rc, engine, column), _series(sc, engine, column)
            first = next((i for i, (a, b) in enumerate(zip(r, s, strict=False)) if a != b), None)
            same = r == s
            checks.append(Check(engine, f"{column} per commit ({len(r)} commits)",
                                "equal" if same else f"first differs at commit {first}: {r[first] if first is not None else len(r)}",
                                "equal" if same else (s[first] if first is not None else len(s)), same))
        r_wa = float(rc[rc.engine == engine].sort_values("seq").wa.iloc[-1])
        s_wa = float(sc[sc.engine == engine].sort_values("seq").wa.iloc[-1])
        checks.append(Check(engine, "final WA", round(r_wa, 4), round(s_wa, 4),
                            abs(s_wa / r_wa - 1) <= WA_TOLERANCE if r_wa else s_wa == r_wa))
        real_q = rq[rq.engine == engine].set_index(["checkpoint", "query"]).files_scanned
        sim_q = sq[sq.engine == engine].set_index(["checkpoint", "query"]).files_scanned
        for key in sorted(set(real_q.index) & set(sim_q.index)):
            a, b = int(real_q[key]), int(sim_q[key])
            checks.append(Check(engine, f"files scanned: {key[1]} at batch {key[0] + 1}", a, b, a == b))
    return checks


def render(checks: list[Check]) -> str:
    """A Markdown table of the checks, failures first counted in a heading line."""
    bad = [c for c in checks if not c.ok]
    lines = [f"Simulator vs real run: {len(checks) - len(bad)} of {len(checks)} figures within tolerance "
             "(file counts and files scanned exact, final WA within 10%).", "",
             "| engine | figure | real | simulated | ok |", "|---|---|---|---|---|"]
    lines += [f"| {c.engine} | {c.figure} | {c.real} | {c.simulated} | {'yes' if c.ok else '**no**'} |" for c in checks]
    return "\n".join(lines) + "\n"


def as_rows(checks: list[Check]) -> list[dict]:
    """The checks as plain records (for a results table or JSON)."""
    return [asdict(c) for c in checks]
