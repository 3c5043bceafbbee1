"""Sizes are written once, in the config registry (engines/config/registry.py): every engine config,
the write path and the scenario's sizing take their defaults from there. The guard looks for size
*values* in the source, however they are spelled, not only for a line ``MB = ...``."""

from __future__ import annotations

import ast
from pathlib import Path

from bench.scenario import SizingSpec
from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.engine import Option1Config
from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import Option2Config
from engines.config.registry import COW, MB, O1, O2, default
from engines.cow_baseline.config import CowConfig
from engines.hudi.config import HudiConfig

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("engines", "bench", "reports", "runresults", "workloads")
REGISTRY = REPO / "engines" / "config" / "registry.py"
UNITS = {"KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"}
UNIT = 1 << 20


def _number(node: ast.AST) -> int | float | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) in (int, float) else None


def size_values(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every size value written in ``tree``: a byte unit defined, a shift by 10/20/30/40
    bits, ``1024 * 1024``, a power of two from 2**10 up, a literal multiple of one MiB, or a literal
    number times a unit name (``120 * MB``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(node.lineno, f"{t.id} defined") for t in targets if isinstance(t, ast.Name) and t.id in UNITS]
        if isinstance(node, ast.BinOp):
            left, right = _number(node.left), _number(node.right)
            if isinstance(node.op, ast.LShift) and right in (10, 20, 30, 40):
                found.append((node.lineno, f"<< {right}"))
            elif isinstance(node.op, ast.Mult) and 1024 in (left, right) and None not in (left, right):
                found.append((node.lineno, "* 1024"))
            elif isinstance(node.op, ast.Pow) and left == 2 and isinstance(right, int) and right >= 10:
                found.append((node.lineno, f"2 ** {right}"))
            elif isinstance(node.op, ast.Mult) and (
                    (left is not None and isinstance(node.right, ast.Name) and node.right.id in UNITS)
                    or (right is not None and isinstance(node.left, ast.Name) and node.left.id in UNITS)):
                found.append((node.lineno, "a number times a unit"))
        value = _number(node)
        if isinstance(value, int) and not isinstance(value, bool) and value >= UNIT and value % UNIT == 0:
            found.append((node.lineno, f"{value} (a multiple of one MiB)"))
    return found


def test_the_guard_finds_every_spelling_of_a_size() -> None:
    spellings = ["MB = 1 << 20", "x = 1 << 20", "x = 120 << 20", "x = 1048576", "x = 1_048_576", "x = 1024 * 1024",
                 "x = 2**20", "x = 2 ** 30", "x = 104857600", "x = 120 * MB", "x = MB * 100", "def f(a=3 * GB): pass"]
    for code in spellings:
        assert size_values(ast.parse(code)), code
    for code in ("x = n / MB", "x = mb * MB", "x = 1 << 3", "x = 1000", "x = 65_536", "x = 1 << 62"):
        assert not size_values(ast.parse(code)), code


def test_no_size_is_written_outside_the_registry() -> None:
    found = [f"{p.relative_to(REPO)}:{line}: {what}" for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))
             if p != REGISTRY for line, what in size_values(ast.parse(p.read_text()))]
    assert found == [], found


def test_tests_take_the_byte_unit_from_the_registry() -> None:
    defined = [f"{p.relative_to(REPO)}:{line}" for p in sorted((REPO / "tests").rglob("*.py"))
               for line, what in size_values(ast.parse(p.read_text())) if what.endswith("defined")]
    assert defined == [], defined


def test_configs_start_from_the_registry_defaults() -> None:
    assert (CowConfig().small_file_limit, CowConfig().max_file_size, CowConfig().record_size_estimate) == (
        100 * MB, 120 * MB, 1024) == (default("small_file_limit", COW), default("max_file_size", COW),
                                       default("record_size_estimate", COW))
    assert (CompactionConfig().small_file_limit, CompactionConfig().target_file_size) == (
        default("small_file_limit", O1), default("target_file_size", O1))
    c = ClusteringConfig()
    assert (c.small_file_limit, c.target_file_size, c.max_bytes_per_group) == (300 * MB, 1024 * MB, 2048 * MB)
    h = HudiConfig()
    assert (h.small_file_limit, h.max_file_size, h.cleaner_commits_retained) == (100 * MB, 120 * MB, 10)
    s = SizingSpec()
    assert (s.small_file_limit_mb * MB, s.max_file_mb * MB, s.row_group_rows, s.cleaner_commits_retained) == (
        100 * MB, 120 * MB, 65_536, 10)
    # the four insert-sizing fields: one declaration, read by the baseline's planner and Option 2's insert
    assert Option2Config().ingest_sizing.cow_config(120 * MB) == CowConfig(small_file_limit=0)
    assert default("record_size_estimate", O2) == default("record_size_estimate", COW)


def test_the_dead_target_sizes_are_gone() -> None:
    """Option 1's compaction target is its planner's, Option 2's clustering target its planner's: the
    engine configs hold no ``target_file_size`` that nothing read."""
    assert "target_file_size" not in Option1Config.__dataclass_fields__
    assert "target_file_size" not in Option2Config.__dataclass_fields__
