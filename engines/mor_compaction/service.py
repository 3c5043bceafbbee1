"""MERGE_ON_READ compaction as a :class:`engines.maintenance_round.TableService`.

| call           | what                                                                        |
| -------------- | --------------------------------------------------------------------------- |
| ``schedule``   | :func:`executor.schedule`: a plan once ``max_delta_commits`` deltacommits completed since the last compaction (None otherwise) |
| ``execute``    | :func:`executor.execute`: the given or earliest pending compaction, a killed attempt rolled back first |
| ``clean``      | the table cleaner (KEEP_LATEST_COMMITS, ``commits_retained``): old slices, base and logs |
| ``pending_plan`` | the earliest pending ``compaction`` instant                               |

A MOR engine hands it to :class:`engines.maintenance_round.MaintenanceRound` (``schedule → execute →
clean``) as the clustering and Option 1 engines hand themselves; ``on_step`` observes the
``compaction.*`` fault points.
"""

from __future__ import annotations

from dataclasses import dataclass

from engines.maintenance_round import MaintenanceResult, earliest_pending, plan_to_execute
from engines.mor_compaction import executor
from engines.mor_compaction.planner import CompactionConfig
from engines.table import faults
from engines.table.cleaner import DEFAULT_COMMITS_RETAINED, run_clean
from engines.table.table import HudiTable
from engines.table.timeline import MOR_COMPACTION


@dataclass
class MorCompactionService:
    """Compaction of one MERGE_ON_READ table, as a maintenance round calls it."""

    table: HudiTable
    config: CompactionConfig
    commits_retained: int = DEFAULT_COMMITS_RETAINED
    on_step: faults.StepHook = None

    def schedule(self) -> str | None:
        return executor.schedule(self.table, self.config, on_step=self.on_step)

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        found = plan_to_execute(self, instant)
        if found is None:
            return None
        result = executor.execute(self.table, found, on_step=self.on_step)
        return MaintenanceResult(kind="compaction", instant=result.instant, duration_s=result.duration_s,
                                 files_in=result.operations + result.log_files_merged, files_out=len(result.stats),
                                 bytes_written=result.bytes_written, records=sum(s.num_writes for s in result.stats),
                                 details={"log_files_merged": result.log_files_merged,
                                          "rolled_back_first": result.rolled_back_first})

    def clean(self) -> MaintenanceResult | None:
        res = run_clean(self.table, self.commits_retained, on_step=self.on_step)
        if res.instant is None:
            return None
        return MaintenanceResult(kind="clean", instant=res.instant, duration_s=res.duration_s,
                                 files_deleted=res.files_deleted, details={"bytes_freed": res.bytes_freed})

    def pending_plan(self) -> str | None:
        return earliest_pending(self.table, (MOR_COMPACTION,))
