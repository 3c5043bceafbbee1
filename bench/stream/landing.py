"""The landing folder: the generator's batches arrive here as Parquet files, one per batch.

Batch ``b`` is written once per spec into a cache (``batch_table``, the same rows as the batch
mode's ``batch_df``) and copied into ``landing/`` at its arrival time: written under a hidden name
(Spark's file source skips names starting with ``.``) and renamed, so a file appears whole. Every
arrival (wall time of the rename) is appended to ``arrivals.jsonl``, which a restarted stream reads
back. Batches land every ``1 / rate`` seconds; their sizes follow ``workload.arrival`` (steady,
bursty, diurnal), so the records per second follow the pattern.

Updates: ``u<b>.parquet`` carries batch ``b``'s corrections of earlier keys
(:func:`workloads.truth.corrections_of`, the batch runner's upsert commits' rows too); the writer
upserts a micro-batch holding one.

Bad input (``stream.bad_input``): ``bad-000.parquet``, a file in a foreign schema, and
``old-000000.parquet``, a generator batch (another seed) dated well before the retention window.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from workloads.generator import arrow_schema, batch_table
from workloads.spec import WorkloadSpec
from workloads.truth import corrections_of

BAD_NAME = "bad-000.parquet"
OLD_NAME = "old-000000.parquet"
OLD_BATCH = -1  # the old batch's index in the stream's records
OLD_RECORDS = 300


def batch_name(b: int) -> str:
    return f"b{b:06d}.parquet"


def update_name(b: int) -> str:
    """The landing file carrying batch ``b``'s updates (``workload.corrections_fraction`` of earlier keys)."""
    return f"u{b:06d}.parquet"


def update_of(name: str) -> int | None:
    """The generator batch whose updates a landing file carries, None for other files."""
    if name.startswith("u") and name.endswith(".parquet") and name[1:-8].isdigit():
        return int(name[1:-8])
    return None


def batch_of(name: str) -> int | None:
    """The generator batch a landing file carries (``OLD_BATCH`` for the old batch), None for others."""
    if name == OLD_NAME:
        return OLD_BATCH
    if name.startswith("b") and name.endswith(".parquet") and name[1:-8].isdigit():
        return int(name[1:-8])
    return None


def old_spec(spec: WorkloadSpec, retention_hours: float) -> WorkloadSpec:
    """The workload of the old batch: another seed, starting twice the retention (and a day) earlier."""
    back = timedelta(hours=2 * retention_hours) + timedelta(days=1)
    return spec.model_copy(update={"seed": spec.seed + 7919, "start": spec.start - back, "num_batches": 1,
                                   "batch_records": OLD_RECORDS, "batch_mb": None, "arrival": "steady",
                                   "late_fraction": 0.0})


def batch_rows(spec: WorkloadSpec, name: str, retention_hours: float) -> pa.Table:
    """The rows a landing file of the generator carries (ground truth for it)."""
    u = update_of(name)
    if u is not None:
        return corrections_of(spec, u)
    b = batch_of(name)
    if b is None:
        raise ValueError(f"{name} is not a generator batch")
    return batch_table(old_spec(spec, retention_hours), 0) if b == OLD_BATCH else batch_table(spec, b)


def bad_table() -> pa.Table:
    """A file that is not the generator's schema (what a misconfigured shipper would drop)."""
    return pa.table({"when": pa.array(["2026-01-01T00:00:00"]), "payload": pa.array([b"\x00\x01"])})


@dataclass(frozen=True)
class Arrival:
    name: str
    t: float  # wall time (time.time()) of the rename into the landing folder


class Landing:
    """One landing folder (``root/landing``), its quarantine and its arrival log."""

    def __init__(self, root: str | Path, spec: WorkloadSpec, cache: str | Path, retention_hours: float = 24.0) -> None:
        self.root = Path(root)
        self.folder = self.root / "landing"
        self.quarantine = self.root / "quarantine"
        self.log = self.root / "arrivals.jsonl"
        self.cache = Path(cache)
        self.spec = spec
        self.retention_hours = retention_hours
        self.folder.mkdir(parents=True, exist_ok=True)
        self.quarantine.mkdir(parents=True, exist_ok=True)
        self.cache.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.arrivals: dict[str, float] = self._read_log()

    def _read_log(self) -> dict[str, float]:
        if not self.log.is_file():
            return {}
        out = {}
        for line in self.log.read_text().splitlines():
            if line.strip():
                doc = json.loads(line)
                out[doc["name"]] = float(doc["t"])
        return out

    def source(self, name: str) -> Path:
        """The cached file of ``name``, written on first use."""
        path = self.cache / name
        if not path.is_file():
            table = bad_table() if name == BAD_NAME else batch_rows(self.spec, name, self.retention_hours)
            tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
            pq.write_table(table, tmp, compression="snappy")
            tmp.replace(path)
        return path

    def drop(self, name: str) -> Arrival:
        """Land ``name`` now (atomically) and log its arrival; a file already landed keeps its time."""
        with self._lock:
            if name in self.arrivals:
                return Arrival(name, self.arrivals[name])
            tmp = self.folder / f".{name}.tmp"
            shutil.copyfile(self.source(name), tmp)
            tmp.replace(self.folder / name)
            t = time.time()
            self.arrivals[name] = t
            with self.log.open("a") as fh:
                fh.write(json.dumps({"name": name, "t": t}) + "\n")
            return Arrival(name, t)

    def arrival(self, name: str) -> float | None:
        with self._lock:
            return self.arrivals.get(name)

    def landed(self) -> dict[str, float]:
        with self._lock:
            return dict(self.arrivals)

    def schema_problem(self, path: str | Path) -> str | None:
        """None when ``path`` is in the generator's schema, else what is wrong with it."""
        want = arrow_schema(self.spec)
        try:
            got = pq.read_schema(path)
        except (OSError, pa.ArrowInvalid) as exc:
            return f"not readable as Parquet ({exc})"
        missing = [f.name for f in want if f.name not in got.names]
        extra = [n for n in got.names if n not in want.names]
        wrong = [f"{f.name}: {got.field(f.name).type} (want {f.type})" for f in want
                 if f.name in got.names and not got.field(f.name).type.equals(f.type)]
        if not (missing or extra or wrong):
            return None
        parts = ([f"missing columns {missing}"] if missing else []) + ([f"unknown columns {extra}"] if extra else [])
        return "not the generator's schema: " + "; ".join(parts + ([f"wrong types {wrong}"] if wrong else []))

    def move_to_quarantine(self, path: str | Path, reason: str) -> Path:
        """Move a landing file aside with a note of why; idempotent for a file already moved."""
        src = Path(path)
        dest = self.quarantine / src.name
        if src.exists():
            src.replace(dest)
        dest.with_name(dest.name + ".reason.txt").write_text(reason + "\n")
        return dest


def schedule(names: list[str], rate: float) -> list[tuple[float, str]]:
    """(offset in seconds, name): one landing file every ``1 / rate`` seconds, the first at once."""
    return [(i / rate, name) for i, name in enumerate(names)]


class Dropper(threading.Thread):
    """Drops the scheduled files into the landing folder at their offsets from ``start()``."""

    def __init__(self, landing: Landing, plan: list[tuple[float, str]]) -> None:
        super().__init__(daemon=True, name="landing-dropper")
        self.landing = landing
        self.plan = plan
        self._stop_event = threading.Event()
        self.error: str | None = None
        for _, name in plan:  # generated before any clock starts: no arrival waits on generation
            landing.source(name)

    def run(self) -> None:
        t0 = time.monotonic()
        try:
            for offset, name in self.plan:
                if self._stop_event.wait(max(0.0, t0 + offset - time.monotonic())):
                    return
                self.landing.drop(name)
        except Exception as exc:  # the run reports it; the stream stops waiting for the rest
            self.error = f"{type(exc).__name__}: {exc}"

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
