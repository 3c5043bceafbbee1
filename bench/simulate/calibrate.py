"""``layoutbench calibrate RUN [RUN ...]``: fit the cost model's parameters to real runs (least squares).

The first run gives the time model (ingest, maintenance, query seconds). Runs on the S3-protocol
store (a non-empty ``requests`` table) also give the request model (:mod:`bench.simulate.requests`,
fitted on the first of them) and the query model on the store: query seconds against files, MB and
the first-byte latency of the requests each run made, over every store run given, so two runs at two
latencies separate what latency adds from what it does not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from bench.engine_factory import engine_bloom
from bench.simulate import requests as reqmodel
from bench.simulate.costmodel import MB, CostModel
from bench.simulate.simulator import KEY_LENGTH, run_simulation
from engines.kinds import kinds_with
from engines.table.bloom import BloomConfig, footer_bytes
from runresults import Results
from workloads.generator import bytes_per_record


def _fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares (Lawson-Hanson, ``scipy.optimize.nnls``): no cost may be negative."""
    from scipy.optimize import nnls  # imported here: scipy costs every `simulate` a second or more to load

    coef, _residual = nnls(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return coef


def _bloom(res: Results, engine: str) -> BloomConfig:
    """The footer bloom filter ``engine``'s files carry in the run (:func:`engine_bloom`)."""
    scenario = _scenario(res)
    spec = next((e for e in scenario.engines if e.name == engine), None)
    return engine_bloom(spec, scenario) if spec is not None else BloomConfig(enabled=False)


def calibrate(run_dir: str | Path | list[str | Path], out_path: str | Path | None = None,
              requests_from: str | Path | None = None) -> Path:
    """Fit a cost model to the real run(s) and save it (default ``RUN/calibration.json``); the
    request model from ``requests_from`` when given (a store run of the code whose requests are to
    be modelled), else from the first store run."""
    dirs = list(run_dir) if isinstance(run_dir, (list, tuple)) else [run_dir]
    runs = [Results(d) for d in dirs]
    res = runs[0]
    counted = Results(requests_from) if requests_from is not None else None
    model = CostModel(source="calibrated from " + ", ".join(str(r.run.get("run_id")) for r in runs)
                      + (f"; requests from {counted.run.get('run_id')}" if counted is not None else ""))
    c = res.table("commits")
    ing = c[c.kind == "ingest"]
    if len(ing) >= 3:
        x = np.column_stack([np.ones(len(ing)), ing.bytes_written / MB, ing.files_written])
        a, w, f = _fit(x, ing.duration_s.to_numpy())
        model.commit_overhead_s, model.write_s_per_mb, model.file_create_s = float(a), float(w), float(f)
        # data bytes per record: each file's footer bloom filter (engines.table.bloom) is not per record
        # a MERGE_ON_READ engine padding small groups' logs writes most inserts as Avro log blocks: only
        # its first ingest (an empty table, no small group) is Parquet bytes per record
        padded = _padding_engines(res)
        base = ing[~ing.engine.isin(padded) | (ing.batch == 0)] if padded else ing
        footers = sum(int(r.files_written) * footer_bytes(int(r.records_written) // max(1, int(r.files_written)),
                                                          _bloom(res, r.engine), KEY_LENGTH) for r in base.itertuples())
        model.bytes_per_record = float(max(0, base.bytes_written.sum() - footers) / max(1, base.records_written.sum()))
    m = res.table("maintenance")
    m = m[m.kind != "clean"]
    if len(m) >= 2:
        # read and written bytes are nearly collinear in a rewrite: fit one per-MB cost on bytes read
        x = np.column_stack([np.ones(len(m)), m.bytes_read / MB, m.files_in + m.files_out])
        o, r, f = _fit(x, m.duration_s.to_numpy())
        model.service_overhead_s, model.read_s_per_mb, model.service_file_s = float(o), float(r), float(f)
        model.rewrite_s_per_mb = 0.0
    q = res.table("queries")
    q = q[(q.run == 0) & q.rows_scanned.notna()]
    if len(q) >= 3 and model.bytes_per_record:
        x = np.column_stack([np.ones(len(q)), q.files_scanned, q.rows_scanned * model.bytes_per_record / MB])
        o, f, s = _fit(x, q.latency_s.to_numpy())
        model.query_overhead_s, model.file_open_s, model.scan_s_per_mb = float(o), float(f), float(s)
    on_store = [r for r in runs if not r.table("requests").empty]
    if on_store:
        # the generator's bytes per record, as the simulator uses uncalibrated: it reproduces the real
        # file counts (held exact by the validation), which a per-run average over small files does not
        model.bytes_per_record = None
        model.requests = fit_requests(counted or on_store[0], model)
        fit_store_queries(on_store, model)
    return model.save(out_path or Path(dirs[0]) / "calibration.json")


def _padding_engines(res: Results) -> set[str]:
    """The run's engines whose ingest appends inserts to small file groups' logs (option2_mor_logs)."""
    from bench.engine_factory import resolve_planner
    from engines.kinds import kind_of

    sc = _scenario(res)
    out = set()
    for e in sc.engines:
        entry = kind_of(e.kind)
        if entry.simulated and entry.load("sim").pads_inserts(resolve_planner(e, sc)[1]):
            out.add(e.name)
    return out


def _scenario(res: Results):  # noqa: ANN202 - bench.scenario.Scenario, imported late (pydantic)
    from bench.scenario import Scenario

    return Scenario.model_validate(res.run["scenario"])


def fit_requests(res: Results, model: CostModel) -> dict[str, list[float]]:
    """The request model: the simulator replays the real run's scenario (same planners, same file
    counts) and its events are regressed on the real run's counted requests."""
    done = run_simulation(_scenario(res), model)
    events = {e.name: e.events for e in done.engines}
    return reqmodel.fit(events, {e.name: e.kind for e in done.engines}, res.table("requests"))


def store_query_points(res: Results) -> pd.DataFrame:
    """Per engine, checkpoint and query of a store run: median latency over its runs, files and MB
    scanned (cold run) and requests per run (query scan, all operations)."""
    q = res.table("queries")
    q = q[(q.get("repeat", 0) == 0) & q.error.isna()] if "error" in q else q[q.get("repeat", 0) == 0]
    req = res.table("requests")
    req = req[(req.get("repeat", 0) == 0) & (req.phase == "query_scan")]
    per_ctx = req.groupby(["engine", "context"])["count"].sum()
    rows = []
    for (engine, cp, name), runs in q.groupby(["engine", "checkpoint", "query"]):
        cold = runs[runs.run == 0]
        if cold.empty or cold.rows_scanned.isna().all():
            continue
        rows.append({"engine": engine, "checkpoint": int(cp), "query": name, "latency_s": float(runs.latency_s.median()),
                     "files": int(cold.files_scanned.iloc[0]), "rows": float(cold.rows_scanned.iloc[0]),
                     "requests": float(per_ctx.get((engine, f"{name}@{int(cp)}"), 0)) / len(runs)})
    return pd.DataFrame(rows)


def fit_store_queries(runs: list[Results], model: CostModel) -> None:
    """Query seconds on the store = overhead + per file + per MB + share x requests x first-byte
    latency, fitted over the store runs (at least two first-byte latencies to separate the terms)."""
    xs, ys = [], []
    for res in runs:
        fb_s = float((res.run.get("store") or {}).get("first_byte_ms") or 0.0) / 1000
        kinds = {n: e.get("kind") for n, e in res.run.get("engines", {}).items()}
        bpr = model.bytes_per_record or bytes_per_record(_scenario(res).workload)
        pts = store_query_points(res)
        pts = pts[pts.engine.map(kinds).isin(kinds_with(simulated=True))] if not pts.empty else pts
        for p in pts.itertuples():
            xs.append([1.0, p.files, p.rows * bpr / MB, p.requests * fb_s])
            ys.append(p.latency_s)
    if len(ys) < 4:
        return
    o, f, s, share = _fit(np.array(xs), np.array(ys))
    model.query_overhead_s, model.file_open_s, model.scan_s_per_mb = float(o), float(f), float(s)
    model.first_byte_share = float(share)
