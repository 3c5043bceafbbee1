"""Ours next to Apache Hudi, same batches (T10): each Apache Hudi engine of a run beside the engine
of ours with the same semantics (``hudi_cow`` ↔ the COW baseline, ``hudi_clustering`` ↔ Option 2
with the same sort columns, ``hudi_mor`` / ``hudi_mor_clustering`` ↔ Option 2 on MERGE_ON_READ by
their registry entries' ``pairs_with``), figure by figure, from the results tables alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engines.config.registry import MB, hudi_default
from engines.kinds import APACHE_HUDI, BASELINE, KINDS, OPTION_2, family_of
from reports.summary import EngineSummary, fmt
from runresults import Results

COPY_ON_WRITE = "COPY_ON_WRITE"

# Why real Hudi's figures still differ from ours, each a named Hudi rule we do not follow (engines/hudi/config.py
# keeps Hudi's defaults for them; a scenario may override any of them with its hoodie.* key).
RULES = [
    "**File rolling on the open row group's size** (HoodieBaseParquetWriter.canWrite: "
    "ParquetWriter.getDataSize() against `hoodie.parquet.max.file.size` × (1 + `hoodie.parquet.compression.ratio`)): "
    "while a row group is open its bytes are counted before compression, and with `hoodie.parquet.block.size` "
    f"({hudi_default('hoodie.parquet.block.size') // MB} MB) larger than the file the whole file is one open row group, so Hudi closes a file at about "
    "max size / compression ratio and opens the next (clustering output groups `-0`, `-1`, `-2`, and extra insert "
    "files); ours size files by written bytes.",
    "**The cleaner after every write** (BaseHoodieWriteClient.mayBeCleanAndArchive → autoCleanOnCommit after each write, `hoodie.clean.automatic`): "
    "Hudi's datasource write cleans after each commit, so a replaced file group goes once "
    "`hoodie.cleaner.commits.retained` commits follow its replacecommit; Option 2 driven by the runner's schedule "
    "(mode manual) cleans with each maintenance run, so replaced files stay up to one interval longer (physical "
    "files and space amplification, not live files).",
    "**Clustering groups** (SparkSizeBasedClusteringPlanStrategy): Hudi packs a partition's eligible files "
    "largest first and, with sort columns, clusters a lone small file too; sorted Option 2 groups files whose "
    "sort-column ranges overlap (`grouping: sort_overlap`) and leaves a lone file alone. The output-group count, "
    "ceil(group bytes / `hoodie.clustering.plan.strategy.target.file.max.bytes`), is the same rule in both.",
    "**Unsorted clustering outputs of whole input files** (MultipleSparkJobExecutionStrategy reads one Spark "
    "partition per slice, NonSortPartitionerWithRows coalesces them to the group's output count): each output "
    "holds whole input files, largest first, as uneven as they are; Option 2 writes near-equal row runs unless "
    "`clustering_split: hudi` (which follows this rule; the simulator models the even split).",
    "**Bloom filter in clustered files even when switched off** (HoodieInternalRowFileWriterFactory, the row "
    "writer of clustering, checks only `hoodie.populate.meta.fields`): with `hoodie.parquet.bloom.filter.enabled"
    "=false` Hudi's inserts carry no ~431 KB footer filter but its clustered files do; ours follow the key.",
]
# Hudi rules our engines follow since T10 (each a config switch whose default is Hudi's), so they explain
# no difference any more; a scenario that switches one off brings its difference back.
FOLLOWED = [
    "**Bloom filter in every base file** (HoodieBloomFilterWriteSupport; `hoodie.parquet.bloom.filter.enabled`, "
    f"`hoodie.index.bloom.num_entries`={hudi_default('hoodie.index.bloom.num_entries')}, `hoodie.index.bloom.fpp`="
    f"{hudi_default('hoodie.index.bloom.fpp'):.0e}".replace("e-0", "e-") + ", `hoodie.bloom.index.filter.type`="
    f"{hudi_default('hoodie.bloom.index.filter.type')}): our files carry the same ~431 KB serialized filter and min/max record keys in their footers, "
    "byte for byte Hudi's (real Hudi's BLOOM index finds our keys).",
    "**Column encodings as parquet-mr chooses them** (Hudi writes base files with parquet-mr, which keeps a "
    "column dictionary-encoded only where the dictionary pays on the first page): our writer falls back to plain "
    "the same way, so the same rows take the same data bytes (within 1% per record on the default scenario).",
    "**Insert split by estimated record size** (UpsertPartitioner: new buckets of `hoodie.parquet.max.file.size` / "
    f"average record size records, `hoodie.copyonwrite.record.size.estimate`="
    f"{hudi_default('hoodie.copyonwrite.record.size.estimate')} until a commit wrote more than "
    "`hoodie.parquet.small.file.limit` × `hoodie.record.size.estimation.threshold` bytes): Option 2's ingest "
    "(small-file limit 0) splits a batch as Hudi does (`insert_split: hudi`).",
]


def _config(results: Results, engine: str) -> dict[str, Any]:
    return results.run.get("engines", {}).get(engine, {}).get("config") or {}


def _writes_cow(kind: str) -> bool:
    """Whether engine kind ``kind`` writes COPY_ON_WRITE tables (a kind the registry no longer names: yes)."""
    entry = KINDS.get(kind)
    return entry is None or COPY_ON_WRITE in entry.table_types


def _sorted_label(design: str, sort: list[str]) -> str:
    return design + (f" sorted by {', '.join(sort)}" if sort else "")


def fidelity_pairs(results: Results) -> list[tuple[str, str, str]]:
    """(label, our engine, Hudi engine) for every Apache Hudi engine that has a counterpart of ours:
    a kind whose registry entry names one (``pairs_with``: our kind; with sort columns, the same
    ones), else the ``hudi`` kind's preset (``hudi_cow`` ↔ the
    COW baseline inserting, ``hudi_clustering`` ↔ Option 2 on COPY_ON_WRITE with the same sort columns)."""
    engines = results.run.get("engines", {})
    out = []
    for name, info in engines.items():
        if family_of(info.get("kind", "")) != APACHE_HUDI:
            continue
        cfg = _config(results, name)
        sort = list(cfg.get("sort_columns") or [])
        entry = KINDS.get(info.get("kind", ""))
        pairs_with = entry.pairs_with if entry is not None else None
        by_preset = entry.pair_for(cfg.get("preset")) if entry is not None and pairs_with is None else None
        if pairs_with is not None:
            ours = [n for n, i in engines.items() if i.get("kind") == pairs_with
                    and (not sort or list(_config(results, n).get("sort_columns") or []) == sort)]
            label = _sorted_label(f"{family_of(pairs_with)} on {' / '.join(KINDS[pairs_with].table_types)}", sort)
        elif by_preset is None:
            continue
        elif family_of(by_preset) == BASELINE:
            ours = [n for n, i in engines.items() if family_of(i.get("kind", "")) == BASELINE
                    and _config(results, n).get("operation", "insert") == "insert"]
            label = "COW baseline"
        else:
            ours = [n for n, i in engines.items() if family_of(i.get("kind", "")) == OPTION_2
                    and _writes_cow(i.get("kind", ""))
                    and list(_config(results, n).get("sort_columns") or []) == sort]
            label = _sorted_label("Option 2", sort)
        if ours:
            out.append((label, ours[0], name))
    return out


def _files_after_commits(results: Results, engine: str) -> list[int]:
    c = results.table("commits")
    rows = c[c.engine == engine].sort_values("seq")
    return [int(v) for v in rows.live_files]


def _first_difference(a: list[int], b: list[int]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"commit {i + 1}: {x} vs {y}"
    return "identical" if len(a) == len(b) else f"{len(a)} vs {len(b)} commits"


def _compact(seq: list[int], limit: int = 24) -> str:
    text = " ".join(map(str, seq[:limit]))
    return text + (" …" if len(seq) > limit else "")


def fidelity_rows(results: Results, summaries: list[EngineSummary]) -> list[dict[str, str]]:
    """One row per figure per pair: ours, real Hudi."""
    by = {s.engine: s for s in summaries}
    rows = []
    for label, ours, hudi in fidelity_pairs(results):
        a, b = by.get(ours), by.get(hudi)
        if a is None or b is None:
            continue
        fa, fb = _files_after_commits(results, ours), _files_after_commits(results, hudi)
        figures = [
            ("live files after every commit", _compact(fa), _compact(fb)),
            ("first difference in file counts", _first_difference(fa, fb), ""),
            ("commits with equal file counts", f"{sum(x == y for x, y in zip(fa, fb, strict=False))}/{len(fa)}",
             f"max gap {max((abs(x - y) for x, y in zip(fa, fb, strict=False)), default=0)} files"),
            ("data bytes written (MB)", fmt(a.bytes_written / MB, 1), fmt(b.bytes_written / MB, 1)),
            ("WA", fmt(a.wa, 2), fmt(b.wa, 2)),
            ("space amplification (final)", fmt(a.space_amp_final, 2), fmt(b.space_amp_final, 2)),
            ("live files (final)", fmt(a.live_files), fmt(b.live_files)),
            ("ingest p50 (s)", fmt(a.ingest_p50_s, 3), fmt(b.ingest_p50_s, 3)),
            ("maintenance runs / time (s)", f"{a.maintenance_runs} / {fmt(a.maintenance_s, 2)}",
             f"{b.maintenance_runs} / {fmt(b.maintenance_s, 2)}"),
        ]
        rows += [{"design": f"{label} ({ours} vs {hudi})", "figure": f, "ours": x, "Apache Hudi": y}
                 for f, x, y in figures]
    return rows


def note(results: Results) -> str:
    """The section's preamble: Hudi's version and the rules that explain the differences."""
    versions = results.run.get("versions", {})
    hudi = next((f"{k}:{v}" for k, v in versions.items() if "hudi-spark" in k), "Apache Hudi")
    return (f"Real Hudi is {hudi} (table version 6, metadata table off), fed the same cached batches. "
            "Where file counts or bytes differ, the Hudi rule responsible:\n\n" + "\n".join(f"- {r}" for r in RULES)
            + "\n\nHudi rules our engines follow (by default; each can be switched off), so they explain no "
            "difference:\n\n" + "\n".join(f"- {r}" for r in FOLLOWED)
            + "\n\nIngest times compare unlike write paths: ours writes a small batch (up to 100k rows) in the "
            "driver, byte for byte as its Spark tasks would (`engines/files/gate.py` decides; `engines/spark/local_write.py`, "
            "`engines/cow_baseline/driver_merge.py`), "
            "sparing a PySpark task's Python-worker round trip, and reads the batch from the driver's rows "
            "where Hudi reads it from Spark's cache; Hudi's JVM writer runs in Spark tasks.")


def find_fidelity_run(run_dir: str | Path) -> Path | None:
    """The newest results folder beside ``run_dir`` that holds Apache Hudi engines paired with ours
    (a ``make bench-hudi`` run) and was written by the same git SHA, or None."""
    folder = Path(run_dir).resolve()
    try:
        sha = json.loads((folder / "run.json").read_text()).get("git", {}).get("sha")
    except (OSError, ValueError):
        return None
    if not sha:
        return None
    found = []
    for other in folder.parent.iterdir():
        if other == folder or not (other / "run.json").is_file():
            continue
        try:
            run = json.loads((other / "run.json").read_text())
        except (OSError, ValueError):
            continue
        if run.get("git", {}).get("sha") == sha and fidelity_pairs(Results(other)):
            found.append(other)
    return max(found, key=lambda p: p.name) if found else None


def attachment_note(fidelity_dir: Path | None, sha: str | None) -> str:
    """The sentence naming the fidelity run a report's Apache Hudi claims rest on, or saying none is."""
    if fidelity_dir is None:
        return ("No fidelity run is attached: Apache Hudi's writers run in `make bench-hudi`, and "
                f"`layoutbench report RUN --fidelity HUDI_RUN` attaches one (none of git SHA {sha or '?'} was "
                "found beside this run).")
    return f"The fidelity run these figures come from: `{fidelity_dir}` (same batches; its own run.json)."
