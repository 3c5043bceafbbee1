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

On the S3-protocol store (the real run has a ``requests`` table and the simulation a calibrated
request model, :mod:`bench.simulate.requests`):
- PUTs per ingest commit (data files and timeline): exact, since each file written is one PUT and
  each commit writes the same instant files;
- requests per engine, phase and operation, summed over the run: within ``REQUEST_TOLERANCE`` (or
  ``REQUEST_SLACK`` requests for small counts), since the model is linear in what each phase did while
  the real count also follows caches and listings the model does not see;
- query seconds per engine and query at the last checkpoint (median of the real runs): within
  ``SECONDS_TOLERANCE``, since the machine's load moves real timings.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from bench.simulate import requests as reqmodel
from runresults import Results

WA_TOLERANCE = 0.10
REQUEST_TOLERANCE = 0.15
REQUEST_SLACK = 3
SECONDS_TOLERANCE = 0.5


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


def _requests(res: Results) -> pd.DataFrame:
    req = res.table("requests")
    if req.empty:
        return req
    return req[req.engine.notna() & (req.get("repeat", 0) == 0) & req.phase.isin(reqmodel.PHASES)]


def validate_store(real: Results, sim: Results) -> list[Check]:
    """Requests by phase and operation and query seconds, simulated vs real, per engine (none when
    either run has no request counts)."""
    rr, sr = _requests(real), _requests(sim)
    if rr.empty or sr.empty:
        return []
    checks: list[Check] = []
    fb = (real.run.get("store") or {}).get("first_byte_ms")
    engines = [e for e in real.engines if e in set(sr.engine)]
    for engine in engines:
        r, s = rr[rr.engine == engine], sr[sr.engine == engine]
        ri, si = r[(r.phase == "ingest") & (r.op == "PUT")], s[(s.phase == "ingest") & (s.op == "PUT")]
        puts = [(c, int(ri[ri.context == c]["count"].sum()), int(si[si.context == c]["count"].sum()))
                for c in sorted(set(r[r.phase == "ingest"].context), key=_batch_no)]
        diff = [p for p in puts if p[1] != p[2]]
        checks.append(Check(engine, f"PUTs per ingest commit ({len(puts)} commits)",
                            "equal" if not diff else f"{diff[0][0]}: {diff[0][1]}",
                            "equal" if not diff else diff[0][2], not diff))
        rt = r.groupby(["phase", "op"])["count"].sum()
        st = s.groupby(["phase", "op"])["count"].sum()
        for phase, op in sorted(set(rt.index) | set(st.index), key=lambda k: (reqmodel.PHASES.index(k[0]), k[1])):
            a, b = int(rt.get((phase, op), 0)), int(st.get((phase, op), 0))
            ok = abs(b - a) <= max(REQUEST_SLACK, REQUEST_TOLERANCE * a)
            checks.append(Check(engine, f"{op} in {phase}", a, f"{b} ({_err(a, b)})", ok))
    rq, sq = real.table("queries"), sim.table("queries")
    rq = rq[rq.get("repeat", 0) == 0]
    for engine in engines:
        mine = rq[rq.engine == engine]
        if mine.empty:
            continue
        last = int(mine.checkpoint.max())
        for name, runs in mine[mine.checkpoint == last].groupby("query"):
            a = float(runs.latency_s.median())
            sel = sq[(sq.engine == engine) & (sq.checkpoint == last) & (sq["query"] == name)]
            if sel.empty:
                continue
            b = float(sel.latency_s.iloc[0])
            checks.append(Check(engine, f"seconds: {name} at batch {last + 1}, {fb} ms first byte", round(a, 3),
                                f"{b:.3f} ({_err(a, b)})", abs(b - a) <= SECONDS_TOLERANCE * a))
    return checks


def _batch_no(context: str) -> int:
    return int(context.split()[-1]) if context.split()[-1].isdigit() else -1


def _err(real: float, sim: float) -> str:
    return f"{(sim - real) / real:+.0%}" if real else ("0" if not sim else "new")


def render(checks: list[Check]) -> str:
    """A Markdown table of the checks, failures first counted in a heading line."""
    bad = [c for c in checks if not c.ok]
    lines = [f"Simulator vs real run: {len(checks) - len(bad)} of {len(checks)} figures within tolerance "
             "(file counts and files scanned exact, final WA within 10%; on the store: PUTs per ingest commit "
             f"exact, requests per phase and operation within {REQUEST_TOLERANCE:.0%} or {REQUEST_SLACK}, query "
             f"seconds within {SECONDS_TOLERANCE:.0%}).", "",
             "| engine | figure | real | simulated | ok |", "|---|---|---|---|---|"]
    lines += [f"| {c.engine} | {c.figure} | {c.real} | {c.simulated} | {'yes' if c.ok else '**no**'} |" for c in checks]
    return "\n".join(lines) + "\n"
