"""The RFC's replace-metadata scaling table, measured for real on our metadata path
(``CommitMetadata.to_json`` / ``from_json``) beside the RFC's Java figures."""

from __future__ import annotations

import json
import time
import tracemalloc
import uuid
from pathlib import Path

from engines.table.metadata import CommitMetadata

# (partitions, replaced file groups) -> (serialise ms, deserialise ms, memory) from the RFC page
RFC_FIGURES = {
    (1, 300): (55, 41, "60KB"), (1, 3000): (55, 42, "570KB"), (1, 30000): (93, 120, "5.7MB"),
    (1, 300000): (103, 130, "57MB"), (10, 300): (53, 32, "60KB"), (10, 3000): (68, 52, "574KB"),
    (10, 30000): (87, 104, "5.7MB"), (10, 300000): (97, 114, "57MB"),
}


def replace_metadata_scaling(out_path: str | Path | None = None, sizes: list[tuple[int, int]] | None = None,
                             repeats: int = 3) -> list[dict]:
    rows = []
    for partitions, total in sizes or list(RFC_FIGURES):
        per = total // partitions
        replaced = {f"dt=2026-01-{p + 1:02d}": [f"{uuid.UUID(int=p * 10_000_000 + i)}-0" for i in range(per)]
                    for p in range(partitions)}
        meta = CommitMetadata("CLUSTER", [], schema=None, replaced_file_ids=replaced)
        ser, de = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            data = meta.to_json(replace=True)
            ser.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            CommitMetadata.from_json(data)
            de.append(time.perf_counter() - t0)
        tracemalloc.start()
        data = meta.to_json(replace=True)
        parsed = CommitMetadata.from_json(data)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del parsed
        rfc = RFC_FIGURES.get((partitions, total))
        rows.append({"partitions": partitions, "replaced_file_groups": total,
                     "serialise_ms": round(min(ser) * 1000, 2), "deserialise_ms": round(min(de) * 1000, 2),
                     "serialised_bytes": len(data), "peak_memory_bytes": peak,
                     "rfc_serialise_ms": rfc[0] if rfc else None, "rfc_deserialise_ms": rfc[1] if rfc else None,
                     "rfc_memory": rfc[2] if rfc else None})
    if out_path:
        Path(out_path).write_text(json.dumps(rows, indent=2))
    return rows
