"""Hudi's copy-on-write sizing configs (hudi-semantics.md §7.1); fields, types and defaults (Hudi
0.12's) from the registry (:mod:`engines.config.registry`)."""

from __future__ import annotations

from dataclasses import dataclass

from engines.config.registry import COW, INSERT_SIZING, settings

PLANNER_KEYS = ("small_file_limit", "max_file_size", *INSERT_SIZING)


@dataclass(frozen=True)
class CowConfig(settings(*PLANNER_KEYS, kind=COW, frozen=True)):
    """The UpsertPartitioner's inputs: the small-file limit, the max file size and the insert sizing
    (each value checked by its registry entry's parser)."""
