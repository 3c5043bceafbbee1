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

Timings on any store (:func:`validate_timings`, T18's tolerances for the simulator at scale):
- maintenance seconds per engine (its compactions or clusterings, summed): within
  ``MAINTENANCE_TOLERANCE``;
- query seconds per engine and query at the last checkpoint (median of the real runs): within
  ``SECONDS_TOLERANCE`` (on the store, :func:`validate_store` holds them, at the run's latency).

Every figure carries its error, and every miss its measured cause (:func:`cause`): what the real
run did differently (bytes per record, bytes read and written, seconds per MB, files scanned, the
spread of the real runs). A file count that differs passes only under the limit-edge condition,
with the files named: a real file whose size lies within the byte estimate's measured error of the
small-file limit or the max file size, at or before the commit where the counts part.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from bench.scenario import Scenario
from bench.simulate import requests as reqmodel
from engines.config.registry import MB
from runresults import Results

WA_TOLERANCE = 0.10
REQUEST_TOLERANCE = 0.15
REQUEST_SLACK = 3
SECONDS_TOLERANCE = 0.30
MAINTENANCE_TOLERANCE = 0.25
EDGE_MIN = 0.01  # the limit-edge band is at least this share of the limit (the byte estimate's floor)


@dataclass
class Check:
    """One figure of one engine: the real value, the simulated one, and whether it is within tolerance."""

    engine: str
    figure: str
    real: float | int | str
    simulated: float | int | str
    ok: bool
    error: str = ""  # the simulated figure's error against the real one (relative, or where series part)
    note: str = ""  # a miss's measured cause, or the limit-edge files a differing count is explained by


class ValidationError(ValueError):
    """A real run that cannot be held to the scenario (another workload or sizing)."""


def as_taken(scenario: Scenario, real: Results) -> Scenario:
    """``scenario`` as the real run took it: its ``run --batches`` (``stop_after``) and each engine's
    prefix (``engines.<name>.num_batches``), so the simulator replays each engine over exactly the
    batches the run measured (:func:`bench.simulate.simulator.run_simulation`, ``as_run``).
    Refused when the run's workload or sizing is not the scenario's: the batches would differ."""
    done = real.run.get("scenario") or {}
    for part in ("workload", "sizing"):
        mine = getattr(scenario, part).model_dump(mode="json")
        theirs = {k: v for k, v in (done.get(part) or {}).items() if k in mine}
        if theirs != {k: mine[k] for k in theirs}:
            diff = sorted(k for k in theirs if theirs[k] != mine[k])
            raise ValidationError(f"{real.folder}: the run's {part} is not {scenario.name}'s (differs in "
                                  f"{', '.join(diff)}): it cannot be held to this scenario")
    prefixes = {e.get("name"): e.get("num_batches") for e in done.get("engines") or []}
    engines = [e.model_copy(update={"num_batches": prefixes.get(e.name, e.num_batches)}) for e in scenario.engines]
    return scenario.model_copy(update={"engines": engines, "stop_after": done.get("stop_after")})


def batches_taken(scenario: Scenario) -> str:
    """Each engine's batches, as a run of ``scenario`` takes them (the validation's header)."""
    return ", ".join(f"{e.name} {scenario.batches_of(e.name)}" for e in scenario.engines)


def _series(df, engine: str, column: str) -> list:  # noqa: ANN001
    rows = df[df.engine == engine].sort_values("seq")
    return [int(v) for v in rows[column].tolist()]


def validate(real: Results, sim: Results) -> list[Check]:
    """Every comparable figure of the engines both runs have."""
    checks: list[Check] = []
    rc, sc = real.table("commits"), sim.table("commits")
    rq, sq = real.table("queries"), sim.table("queries")
    rq = rq[rq.run == 0]
    if "repeat" in rc:
        rc = rc[rc["repeat"].fillna(0) == 0]
    engines = [e for e in real.engines if e in set(sc.engine)]
    for engine in engines:
        for column in ("live_files", "physical_files", "files_written"):
            r, s = _series(rc, engine, column), _series(sc, engine, column)
            first = next((i for i, (a, b) in enumerate(zip(r, s, strict=False)) if a != b), None)
            same = r == s
            check = Check(engine, f"{column} per commit ({len(r)} commits)",
                          "equal" if same else f"first differs at commit {first}: {r[first] if first is not None else len(r)}",
                          "equal" if same else (s[first] if first is not None else len(s)), same,
                          error="0" if same else f"parts at commit {first if first is not None else min(len(r), len(s))}")
            if not same:
                at = first if first is not None else min(len(r), len(s)) - 1
                edge = limit_edge_files(real, sim, engine, at)
                check.ok = bool(edge)
                check.note = (f"limit edge: {len(edge)} real file(s) within the byte estimate's error of a limit: "
                              + "; ".join(edge[:8]) + (" ..." if len(edge) > 8 else "")) if edge else \
                    _count_cause(rc, sc, engine, at)
            checks.append(check)
        r_wa = float(rc[rc.engine == engine].sort_values("seq").wa.iloc[-1])
        s_wa = float(sc[sc.engine == engine].sort_values("seq").wa.iloc[-1])
        ok = abs(s_wa / r_wa - 1) <= WA_TOLERANCE if r_wa else s_wa == r_wa
        checks.append(Check(engine, "final WA", round(r_wa, 4), round(s_wa, 4), ok, _err(r_wa, s_wa),
                            "" if ok else _bytes_cause(rc, sc, engine)))
        real_q = rq[rq.engine == engine].set_index(["checkpoint", "query"]).files_scanned
        sim_q = sq[sq.engine == engine].set_index(["checkpoint", "query"]).files_scanned
        for key in sorted(set(real_q.index) & set(sim_q.index)):
            a, b = int(real_q[key]), int(sim_q[key])
            note = "" if a == b else _scan_cause(real, sim, engine, key[0])
            checks.append(Check(engine, f"files scanned: {key[1]} at batch {key[0] + 1}", a, b, a == b,
                                "0" if a == b else f"{b - a:+d} files", note))
    return checks


def _sizing(res: Results, engine: str | None = None) -> dict[str, float]:
    """The size limits a planner compares estimated bytes with: the scenario's small-file limit and max
    file size, and ``engine``'s own small-file limit where its config sets another (a clustering plan's
    ``hoodie.clustering.plan.strategy.small.file.limit``, 300 MB at Hudi's defaults)."""
    sz = (res.run.get("scenario") or {}).get("sizing") or {}
    out = {name: float(sz[key]) * MB for name, key in (("small-file limit", "small_file_limit_mb"),
                                                       ("max file size", "max_file_mb")) if sz.get(key)}
    own = _engine_limit(res, engine) if engine is not None else None
    if own and own != out.get("small-file limit"):
        out[f"{engine}'s own small-file limit"] = float(own)
    return out


def _engine_limit(res: Results, engine: str) -> int | None:
    """``engine``'s small-file limit as it ran (its planner's), from the run's scenario; None when the
    run's scenario cannot be read back."""
    from bench.disk_estimate import _small_file_limit
    from bench.scenario import ScenarioError, parse_scenario

    try:
        scenario = parse_scenario(res.run.get("scenario") or {})
    except (ScenarioError, ValueError):
        return None
    spec = next((e for e in scenario.engines if e.name == engine), None)
    return _small_file_limit(spec, scenario) if spec is not None else None


def estimate_error(real: Results, sim: Results, engine: str) -> float:
    """The byte estimate's measured error for ``engine``: bytes per record of its ingest commits,
    simulated over real, less 1 (at least :data:`EDGE_MIN`)."""
    rc, sc = real.table("commits"), sim.table("commits")
    if "repeat" in rc:
        rc = rc[rc["repeat"].fillna(0) == 0]
    r = rc[(rc.engine == engine) & (rc.kind == "ingest")]
    s = sc[(sc.engine == engine) & (sc.kind == "ingest")]
    rr, sr = float(r.records_written.sum()), float(s.records_written.sum())
    if not rr or not sr or not float(r.bytes_written.sum()):
        return EDGE_MIN
    ratio = (float(s.bytes_written.sum()) / sr) / (float(r.bytes_written.sum()) / rr)
    return max(EDGE_MIN, abs(ratio - 1))


def limit_edge_files(real: Results, sim: Results, engine: str, commit: int) -> list[str]:
    """The real files of ``engine`` at or before ``commit`` (its index in the engine's commits) whose size
    lies within the byte estimate's measured error of the small-file limit, the max file size or the
    engine's own small-file limit, each named with its size and the limit it sits on (the limit-edge
    condition)."""
    rc = real.table("commits")
    if "repeat" in rc:
        rc = rc[rc["repeat"].fillna(0) == 0]
    mine = rc[rc.engine == engine].sort_values("seq")
    if mine.empty:
        return []
    batch = int(mine.batch.iloc[min(commit, len(mine) - 1)])
    files = real.table("files")
    files = files[files.engine == engine]
    if files.empty:
        return []
    after = sorted(c for c in set(files.checkpoint) if c >= batch)
    cp = after[0] if after else int(files.checkpoint.max())
    band = estimate_error(real, sim, engine)
    limits = _sizing(real, engine)  # read back from the run's scenario once, not per file
    out = []
    for f in files[files.checkpoint <= cp].drop_duplicates("path").itertuples():
        for name, limit in limits.items():
            if abs(float(f.size_bytes) / limit - 1) <= band:
                out.append(f"{f.path} ({int(f.size_bytes):,} B, {float(f.size_bytes) / limit - 1:+.1%} of the "
                           f"{name}, band ±{band:.1%})")
    return out


def _count_cause(rc: pd.DataFrame, sc: pd.DataFrame, engine: str, at: int) -> str:
    r = rc[rc.engine == engine].sort_values("seq").reset_index(drop=True)
    s = sc[sc.engine == engine].sort_values("seq").reset_index(drop=True)
    if at >= len(r) or at >= len(s):
        return f"real {len(r)} commits, simulated {len(s)}"
    a, b = r.iloc[at], s.iloc[at]
    return (f"no file near a limit; commit {at} (batch {int(a.batch)}): real {a.kind} wrote {int(a.files_written)} "
            f"files of {int(a.bytes_written):,} B, simulated {b.kind} wrote {int(b.files_written)} of "
            f"{int(b.bytes_written):,} B")


def _bytes_cause(rc: pd.DataFrame, sc: pd.DataFrame, engine: str) -> str:
    parts = []
    for kind in sorted(set(rc[rc.engine == engine].kind)):
        r = rc[(rc.engine == engine) & (rc.kind == kind)]
        s = sc[(sc.engine == engine) & (sc.kind == kind)]
        rb, sb = float(r.bytes_written.sum()), float(s.bytes_written.sum())
        rr, sr = float(r.records_written.sum()), float(s.records_written.sum())
        bpr = f"; bytes per record real {rb / rr:.1f}, simulated {sb / sr:.1f}" if rr and sr else ""
        parts.append(f"{kind}: real {rb / MB:,.1f} MB, simulated {sb / MB:,.1f} MB ({_err(rb, sb)}){bpr}")
    return "bytes written by kind: " + " | ".join(parts)


def _scan_cause(real: Results, sim: Results, engine: str, checkpoint: int) -> str:
    out = []
    for label, res in (("real", real), ("simulated", sim)):
        q = res.table("queries")
        q = q[(q.engine == engine) & (q.checkpoint == checkpoint)]
        out.append(f"{label} {int(q.files_total.iloc[0]) if len(q) else 0} live files")
    return "at the checkpoint: " + ", ".join(out)


def _real_runs(res: Results) -> pd.DataFrame:
    q = res.table("queries")
    if "repeat" in q:
        q = q[q["repeat"].fillna(0) == 0] if q["repeat"].notna().any() else q
    return q[q["error"].isna()] if "error" in q else q


def validate_timings(real: Results, sim: Results) -> list[Check]:
    """Maintenance seconds per engine, and query seconds per engine and query at the last checkpoint
    (the real runs' median; on the store :func:`validate_store` holds them at the run's latency)."""
    checks: list[Check] = []
    rm, sm = real.table("maintenance"), sim.table("maintenance")
    if "repeat" in rm:
        rm = rm[rm["repeat"].fillna(0) == 0]
    engines = [e for e in real.engines if e in set(sim.table("commits").engine)]
    for engine in engines:
        r = rm[(rm.engine == engine) & (rm.kind != "clean")]
        s = sm[(sm.engine == engine) & (sm.kind != "clean")]
        if r.empty and s.empty:
            continue
        a, b = float(r.duration_s.sum()), float(s.duration_s.sum())
        ok = abs(b - a) <= MAINTENANCE_TOLERANCE * a if a else b == 0
        checks.append(Check(engine, f"maintenance seconds ({len(r)} runs real, {len(s)} simulated)", round(a, 3),
                            round(b, 3), ok, _err(a, b), "" if ok else _maintenance_cause(r, s, sim)))
    if not _requests(real).empty:
        return checks
    model = (sim.run.get("simulation") or {}).get("cost_model") or {}
    for engine, name, last, runs, sel in _final_query_pairs(_real_runs(real), sim.table("queries"), engines):
        a, b = float(runs.latency_s.median()), float(sel.latency_s.iloc[0])
        ok = abs(b - a) <= SECONDS_TOLERANCE * a
        note = "" if ok else f"{_query_cause(runs, sel)}; {_query_terms(model, sel, b)}"
        checks.append(Check(engine, f"query seconds: {name} at batch {last + 1}", round(a, 3), round(b, 3), ok,
                            _err(a, b), note))
    return checks


def _final_query_pairs(rq: pd.DataFrame, sq: pd.DataFrame, engines: list[str]) -> Iterator[tuple]:
    """``(engine, query, checkpoint, real runs, simulated row)`` at each engine's last real checkpoint."""
    for engine in engines:
        mine = rq[rq.engine == engine]
        if mine.empty:
            continue
        last = int(mine.checkpoint.max())
        for name, runs in mine[mine.checkpoint == last].groupby("query"):
            sel = sq[(sq.engine == engine) & (sq.checkpoint == last) & (sq["query"] == name)]
            if not sel.empty:
                yield engine, name, last, runs, sel


def _query_cause(runs: pd.DataFrame, sel: pd.DataFrame) -> str:
    return (f"real runs {runs.latency_s.min():.3f}-{runs.latency_s.max():.3f} s (n={len(runs)}); files scanned real "
            f"{int(runs.files_scanned.iloc[0])}, simulated {int(sel.files_scanned.iloc[0])}")


def _query_terms(model: dict, sel: pd.DataFrame, seconds: float) -> str:
    """The model's query seconds split into its terms: fixed cost, per file, per MB of the files
    scanned (whole files: the model has no column projection)."""
    nan = float("nan")
    fixed, per_file = float(model.get("query_overhead_s", nan)), float(model.get("file_open_s", nan))
    files = int(sel.files_scanned.iloc[0])
    per_mb = float(model.get("scan_s_per_mb", nan))
    scan = seconds - fixed - files * per_file
    mb = scan / per_mb if per_mb else nan
    return (f"the model: fixed {fixed:.3f} s + {files} files x {per_file:.4f} s + {mb:,.1f} MB of whole files x "
            f"{per_mb:.4f} s/MB = {seconds:.3f} s")


def _maintenance_cause(r: pd.DataFrame, s: pd.DataFrame, sim: Results) -> str:
    model = (sim.run.get("simulation") or {}).get("cost_model") or {}
    # MB = 2^20 bytes, the cost model's unit (its s/MB is printed beside this one)
    rmb = float(r.bytes_read.sum() + r.bytes_written.sum()) / MB
    smb = float(s.bytes_read.sum() + s.bytes_written.sum()) / MB
    per = f"{float(r.duration_s.sum()) / rmb:.4f}" if rmb else "n/a"
    return (f"MB read + written real {rmb:,.1f}, simulated {smb:,.1f}; real {per} s/MB over {len(r)} runs "
            f"(per run {r.duration_s.min():.2f}-{r.duration_s.max():.2f} s) against the model's "
            f"{model.get('read_s_per_mb', float('nan')):.4f} s/MB read + {model.get('rewrite_s_per_mb', float('nan')):.4f} "
            f"s/MB written + {model.get('service_overhead_s', float('nan')):.3f} s a run")


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
                            "equal" if not diff else diff[0][2], not diff,
                            "0" if not diff else f"{len(diff)} commits differ"))
        rt = r.groupby(["phase", "op"])["count"].sum()
        st = s.groupby(["phase", "op"])["count"].sum()
        for phase, op in sorted(set(rt.index) | set(st.index), key=lambda k: (reqmodel.PHASES.index(k[0]), k[1])):
            a, b = int(rt.get((phase, op), 0)), int(st.get((phase, op), 0))
            ok = abs(b - a) <= max(REQUEST_SLACK, REQUEST_TOLERANCE * a)
            checks.append(Check(engine, f"{op} in {phase}", a, b, ok, _err(a, b)))
    rq = real.table("queries")
    for engine, name, last, runs, sel in _final_query_pairs(rq[rq.get("repeat", 0) == 0], sim.table("queries"), engines):
        checks += query_request_checks(engine, name, last, runs, sel, rr)
        a, b = float(runs.latency_s.median()), float(sel.latency_s.iloc[0])
        ok = abs(b - a) <= SECONDS_TOLERANCE * a
        checks.append(Check(engine, f"seconds: {name} at batch {last + 1}, {fb} ms first byte (real: median of "
                                    f"{len(runs)} runs)", round(a, 3), round(b, 3), ok, _err(a, b),
                            "" if ok else _query_cause(runs, sel)))
    return checks


PER_RUN = (("requests", "store_requests", None), ("GET", "store_get", "GET"), ("HEAD", "store_head", "HEAD"),
           ("LIST", "store_list", "LIST"))


def query_request_checks(engine: str, name: str, last: int, runs: pd.DataFrame, sel: pd.DataFrame,
                         rr: pd.DataFrame) -> list[Check]:
    """One run of query ``name`` at the last checkpoint on the store: its requests (all, GET, HEAD,
    LIST), real against simulated. Real: the median of each run's own count (the ``queries`` table's
    store columns), or, in a folder written before them, the context's count over its runs.
    Simulated: the request model's count of one run (its row's store columns; 0 without a fitted
    model). Within ``REQUEST_TOLERANCE`` or ``REQUEST_SLACK``."""
    context = f"{name}@{last}"
    real_ctx = rr[(rr.engine == engine) & (rr.context == context)]
    per_row = runs.get("store_requests")
    has_runs = per_row is not None and per_row.notna().any()
    checks = []
    for label, column, op in PER_RUN:
        if has_runs:
            vals = runs[column].dropna().astype(float)
            a, how = float(vals.median()), f"median of {len(vals)} runs, range {vals.min():g}-{vals.max():g}"
        else:
            mine = real_ctx if op is None else real_ctx[real_ctx.op == op]
            a, how = float(mine["count"].sum()) / len(runs), f"{int(mine['count'].sum())} over {len(runs)} runs"
        s = sel.get(column)
        b = float(s.iloc[0]) if s is not None and s.notna().any() else 0.0
        ok = abs(b - a) <= max(REQUEST_SLACK, REQUEST_TOLERANCE * a)
        checks.append(Check(engine, f"{label} per run: {name} at batch {last + 1} (real: {how})", round(a, 1),
                            round(b, 1), ok, _err(a, b), "" if ok else _per_file_cause(runs, sel, a, b)))
    return checks


def _per_file_cause(runs: pd.DataFrame, sel: pd.DataFrame, real: float, sim: float) -> str:
    """A per-run request miss measured per file and row group scanned: the model's count is linear in
    them with one coefficient per engine kind over every query of the calibration run."""
    cold = runs[runs.run == 0] if "run" in runs else runs
    rf, sf = int(runs.files_scanned.iloc[0]), int(sel.files_scanned.iloc[0])
    rg = cold.row_groups_scanned.iloc[0] if "row_groups_scanned" in cold and len(cold) else None
    sg = sel.row_groups_scanned.iloc[0] if "row_groups_scanned" in sel else None
    groups = (f"; row groups scanned real {int(rg)}, simulated {int(sg)}"
              if rg is not None and sg is not None and pd.notna(rg) and pd.notna(sg) else "")
    return (f"files scanned real {rf}, simulated {sf}: real {real / rf if rf else float('nan'):.2f} per file, simulated "
            f"{sim / sf if sf else float('nan'):.2f}{groups}; the model's count is linear in files and row groups "
            "scanned, one coefficient per engine kind fitted over every query of the calibration run")


def _batch_no(context: str) -> int:
    return int(context.split()[-1]) if context.split()[-1].isdigit() else -1


def _err(real: float, sim: float) -> str:
    return f"{(sim - real) / real:+.1%}" if real else ("0" if not sim else "new")


def render(checks: list[Check]) -> str:
    """A Markdown table of the checks (every figure beside the real one, with its error), the count
    within tolerance first, then the misses with their measured causes and the limit-edge files."""
    bad = [c for c in checks if not c.ok]
    lines = [f"Simulator vs real run: {len(checks) - len(bad)} of {len(checks)} figures within tolerance "
             "(file counts and files scanned exact, a differing count only under the limit-edge condition; "
             f"final WA within {WA_TOLERANCE:.0%}; maintenance seconds within {MAINTENANCE_TOLERANCE:.0%}; query "
             f"seconds within {SECONDS_TOLERANCE:.0%}; on the store: PUTs per ingest commit exact, requests per phase "
             f"and operation within {REQUEST_TOLERANCE:.0%} or {REQUEST_SLACK}).", "",
             "| engine | figure | real | simulated | error | ok |", "|---|---|---|---|---|---|"]
    lines += [f"| {c.engine} | {c.figure} | {c.real} | {c.simulated} | {c.error} | {'yes' if c.ok else '**no**'} |"
              for c in checks]
    if bad:
        lines += ["", f"Misses ({len(bad)}), each with its measured cause:", ""]
        lines += [f"- {c.engine}: {c.figure}: real {c.real}, simulated {c.simulated} ({c.error}). "
                  f"{c.note or 'no cause measured'}" for c in bad]
    edge = [c for c in checks if c.ok and c.note.startswith("limit edge")]
    if edge:
        lines += ["", "Counts that differ under the limit-edge condition (the files named):", ""]
        lines += [f"- {c.engine}: {c.figure}: {c.note}" for c in edge]
    return "\n".join(lines) + "\n"
