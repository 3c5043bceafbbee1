"""A write job under a crash point: the same wrapper for a Spark job and for its tasks run in the driver."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import TypeVar

import pyarrow.fs as pafs

from engines.files.writer import WriteSpec, filesystem_for
from engines.table import faults

T = TypeVar("T")


def run_write_job(spec: WriteSpec, fault_point: str | None, job: Callable[[], T]) -> T:
    """Run the write job ``job`` (a Spark job, or its tasks in the driver) writing ``spec``'s files,
    under the crash point ``fault_point`` (killed once the job's first output file is on storage)."""

    def first_output_written() -> bool:
        fs, root = filesystem_for(spec.base_uri)
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
        return any(i.path.endswith(f"_{spec.instant}.parquet") for i in infos)

    with faults.killed_mid_action(fault_point, first_output_written) if fault_point else nullcontext():
        return job()
