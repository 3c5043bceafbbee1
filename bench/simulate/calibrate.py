"""``layoutbench calibrate RUN``: fit the cost model's parameters to a real run (least squares)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from bench.hoodie_conf import BLOOM_KEYS, HoodieConfError, split_hoodie, translate
from bench.simulate.costmodel import MB, CostModel
from bench.simulate.driver import KEY_LENGTH
from engines.table.bloom import BloomConfig, bloom_of, footer_bytes
from runresults import Results


def _fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares (Lawson-Hanson, ``scipy.optimize.nnls``): no cost may be negative."""
    coef, _residual = nnls(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return coef


def _bloom(res: Results, engine: str) -> BloomConfig:
    """The footer bloom filter ``engine``'s files carry: its config's bloom keys (shorthands or
    ``hoodie.*``); Hudi's defaults for real Hudi; none for delta-rs."""
    info = res.run.get("engines", {}).get(engine, {})
    kind, config = info.get("kind"), info.get("config") or {}
    if kind == "delta_peer":
        return BloomConfig(enabled=False)
    hoodie, own = split_hoodie(config)
    if isinstance(own.get("options"), dict):  # real Hudi's pass-through keys
        hoodie = {**hoodie, **own["options"]}
    bloom_keys = {k: v for k, v in hoodie.items() if k in BLOOM_KEYS}
    try:  # every kind of ours reads the bloom keys alike
        engine_fields = translate("cow_baseline", bloom_keys)[1]
    except HoodieConfError:
        engine_fields = {}
    return bloom_of({**own, **engine_fields})


def calibrate(run_dir: str | Path, out_path: str | Path | None = None) -> Path:
    res = Results(run_dir)
    model = CostModel(source=f"calibrated from {res.run.get('run_id')}")
    c = res.table("commits")
    ing = c[c.kind == "ingest"]
    if len(ing) >= 3:
        x = np.column_stack([np.ones(len(ing)), ing.bytes_written / MB, ing.files_written])
        a, w, f = _fit(x, ing.duration_s.to_numpy())
        model.commit_overhead_s, model.write_s_per_mb, model.file_create_s = float(a), float(w), float(f)
        # data bytes per record: each file's footer bloom filter (engines.table.bloom) is not per record
        footers = sum(int(r.files_written) * footer_bytes(int(r.records_written) // max(1, int(r.files_written)),
                                                          _bloom(res, r.engine), KEY_LENGTH) for r in ing.itertuples())
        model.bytes_per_record = float(max(0, ing.bytes_written.sum() - footers) / max(1, ing.records_written.sum()))
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
    return model.save(out_path or Path(run_dir) / "calibration.json")
