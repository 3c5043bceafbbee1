"""Timeline archival with Hudi's visibility guards (hudi-semantics.md §3.3, §6.2).

When more than ``keep_max`` completed data instants are active (``hoodie.keep.max.commits``, 30),
the oldest are archived down to ``keep_min`` (``hoodie.keep.min.commits``, 20) — but never at or
past the boundary that protects readers:

- the last completed commit before the earliest pending instant (HUDI-5728: a pending
  clustering's output must stay "uncommitted", not "before the timeline start"; issue #4163);
- the first replacecommit (or base-file compaction that recorded replaced files) at or after the
  last completed clean's ``earliestCommitToRetain`` — the first one, if no clean ever ran: a
  replacecommit leaves the active timeline only after the cleaner deleted what it replaced, or the
  replaced file groups would become visible again (issue #6938, HUDI-5054 / HUDI-5341).

``respect_clean=False`` drops the second guard, reproducing pre-HUDI-5054 archival for the
regression test that shows the duplicates it caused. Archived instants are written to
``.hoodie/archived/layoutbench-<first>-<last>.json`` (atomically) before their files leave the
active timeline — requested and inflight first, the completed file last, oldest instant first — so a
crash at any point leaves a consistent active timeline (an instant may then be in both places,
which is harmless). Hudi's own archive format (Avro log blocks in ``.commits_.archive.N``) is not
written: Hudi readers only read the active timeline, and hudi-rs never reads the archive.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

from engines.table import faults
from engines.table.table import HudiTable
from engines.table.timeline import COMPACTION, METAFOLDER, REPLACE, Instant, State, Timeline, state_file
from engines.table.view import FileSystemView

DEFAULT_KEEP_MIN = 20  # hoodie.keep.min.commits
DEFAULT_KEEP_MAX = 30  # hoodie.keep.max.commits
ARCHIVE_FOLDER = f"{METAFOLDER}/archived"


class ArchiveConfigError(ValueError):
    """keep.min / keep.max / cleaner retention that Hudi's write config would reject."""


@dataclass
class ArchivePlan:
    instants: list[Instant] = field(default_factory=list)
    boundary: str | None = None  # nothing at or after it is archived
    reason: str = "nothing to archive"


def validate(keep_min: int, keep_max: int, cleaner_commits_retained: int | None) -> None:
    """Hudi's rule: cleaner retained < keep.min < keep.max."""
    if keep_min < 1 or keep_max <= keep_min:
        raise ArchiveConfigError(f"keep_max ({keep_max}) must exceed keep_min ({keep_min}) >= 1")
    if cleaner_commits_retained is not None and keep_min <= cleaner_commits_retained:
        raise ArchiveConfigError(f"keep_min ({keep_min}) must exceed cleaner_commits_retained "
                                 f"({cleaner_commits_retained}): archived instants must already be cleaned")


def plan_archive(view: FileSystemView, keep_min: int = DEFAULT_KEEP_MIN, keep_max: int = DEFAULT_KEEP_MAX,
                 cleaner_commits_retained: int | None = None, respect_clean: bool = True) -> ArchivePlan:
    """Which completed instants to archive (pure; see the module docstring)."""
    validate(keep_min, keep_max, cleaner_commits_retained)
    timeline = view.timeline
    data = timeline.completed_data_instants()
    if len(data) <= keep_max:
        return ArchivePlan(reason=f"{len(data)} completed data instants <= keep_max {keep_max}")
    bounds = {"keep_min": data[len(data) - keep_min].timestamp}
    pending = timeline.pending()
    if pending:
        before = [i.timestamp for i in data if i.timestamp < pending[0].timestamp]
        bounds["earliest pending instant"] = before[-1] if before else pending[0].timestamp
    replaces = [i for i in data if i.action == REPLACE
                or (i.action == COMPACTION and timeline.commit_metadata(i).replaced_file_ids)]
    if respect_clean and replaces:
        retained = view.earliest_retained_by_cleaner()
        uncleaned = [i.timestamp for i in replaces if retained is None or i.timestamp >= retained[0]]
        if uncleaned:
            bounds["first replacecommit not yet cleaned"] = uncleaned[0]
    reason, boundary = min(bounds.items(), key=lambda kv: kv[1])
    return ArchivePlan([i for i in timeline.completed() if i.timestamp < boundary], boundary, reason)


def _state_files(timeline: Timeline, inst: Instant) -> list[str]:
    """The instant's files in deletion order: requested, inflight, then completed."""
    names = [state_file(inst.timestamp, inst.action, s) for s in (State.REQUESTED, State.INFLIGHT)]
    return [*names, timeline.file_name(inst, State.COMPLETED)]


def run_archive(table: HudiTable, keep_min: int = DEFAULT_KEEP_MIN, keep_max: int = DEFAULT_KEEP_MAX,
                cleaner_commits_retained: int | None = None, respect_clean: bool = True) -> ArchivePlan:
    """Archive what :func:`plan_archive` allows; returns the plan that was carried out."""
    with table.lock:
        view = table.view()
        plan = plan_archive(view, keep_min, keep_max, cleaner_commits_retained, respect_clean)
        if not plan.instants:
            return plan
        timeline = view.timeline
        entries = []
        for inst in plan.instants:
            files = {}
            for name in _state_files(timeline, inst):
                rel = f"{METAFOLDER}/{name}"
                if table.storage.exists(rel):
                    files[name] = base64.b64encode(table.storage.read_bytes(rel)).decode()
            entries.append({"timestamp": inst.timestamp, "action": inst.action, "files": files})
        first, last = plan.instants[0].timestamp, plan.instants[-1].timestamp
        table.storage.write_atomic(f"{ARCHIVE_FOLDER}/layoutbench-{first}-{last}.json",
                                   json.dumps({"instants": entries}).encode())
        faults.point("archive.after_archive_written")
        for inst in plan.instants:
            for name in _state_files(timeline, inst):
                table.storage.delete(f"{METAFOLDER}/{name}", missing_ok=True)
        table.refresh()
    return plan
