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
from engines.config.registry import COW, MB, O1, O2, SETTINGS, default
from engines.cow_baseline.config import CowConfig
from engines.hudi.config import HudiConfig

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("engines", "bench", "reports", "runresults", "workloads")
REGISTRY = REPO / "engines" / "config" / "registry.py"
UNITS = {"kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "kilobyte", "megabyte", "gigabyte"}  # case-insensitive
MIB, KIB = 1 << 20, 1 << 10
LARGEST = 1 << 50  # beyond a PiB a power of two is a bit mask or "no limit", not a size
BINARY_SHIFTS = (10, 20, 30, 40)
DECIMAL = (10**6, 10**9, 10**12)
REGISTRY_MB_NAMES = {s.mb_name for s in SETTINGS if s.mb_name}  # small_file_limit_mb, max_file_mb, ...
UNIT_VALUES = {base**k for base in (1000, 1024) for k in range(1, 5)}
BYTE_WORDS = ("byte", "mb", "gb", "tb", "size")
# Bit arithmetic that is not a size, by file and source text (each a hash, not a byte count)
NOT_SIZES = {("engines/files/hash_partitioning.py", "1 << 32"): "Spark's int32 wrap of a Murmur3 hash",
             ("engines/files/hash_partitioning.py", "1 << 31"): "Spark's int32 wrap of a Murmur3 hash",
             ("workloads/rowdef.py", "h >> 20"): "bits of a row's hash"}
OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
       ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
       ast.Pow: lambda a, b: a ** b if abs(b) <= 64 else None, ast.LShift: lambda a, b: a << b if 0 <= b <= 64 else None,
       ast.RShift: lambda a, b: a >> b if 0 <= b <= 64 else None}


def constant(node: ast.AST) -> int | float | None:
    """The value of an expression of number literals only (``1024 ** 2``, ``8 << 21``, ``-1.5e6``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        v = constant(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        a, b = constant(node.left), constant(node.right)
        if a is None or b is None or (isinstance(node.op, ast.LShift | ast.RShift) and
                                      not (isinstance(a, int) and isinstance(b, int))):
            return None
        try:
            return OPS[type(node.op)](a, b)
        except (ArithmeticError, ValueError, TypeError):
            return None
    return None


def _is_mib_multiple(v: float) -> bool:
    return (isinstance(v, int) or float(v).is_integer()) and MIB <= abs(v) <= LARGEST and int(v) % MIB == 0


def _names_bytes(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in BYTE_WORDS)


class _Finder(ast.NodeVisitor):
    """Every size value in one module (see :func:`size_values`)."""

    def __init__(self, source: str) -> None:
        self.lines = source.splitlines()
        self.found: list[tuple[int, str]] = []
        self.context: list[ast.AST] = []  # the statement or f-string around a node

    def text(self, node: ast.AST) -> str:
        """``node``'s source (its lines cut at its columns), or an f-string's literal parts."""
        if isinstance(node, ast.JoinedStr):
            return " ".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        if first == last:
            return self.lines[first][node.col_offset:node.end_col_offset]
        return "\n".join([self.lines[first][node.col_offset:], *self.lines[first + 1:last],
                          self.lines[last][:node.end_col_offset]])

    def flag(self, node: ast.AST, what: str) -> None:
        self.found.append((node.lineno, what))

    def visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            if isinstance(t, ast.Name):
                self.mb_default(t.id, node.value, node)
        for t in targets:  # a unit in any case (KIB); lower case only as a constant (``mb = n / MB`` is a quantity)
            if isinstance(t, ast.Name) and t.id.lower() in UNITS and (
                    t.id.isupper() or (node.value is not None and constant(node.value) in UNIT_VALUES)):
                self.flag(node, f"{t.id} defined")
        self.context.append(node)
        self.generic_visit(node)
        self.context.pop()

    visit_AnnAssign = visit_Assign  # noqa: N815

    def mb_default(self, name: str, value: ast.AST | None, node: ast.AST) -> None:
        """A registry size in MB (``small_file_limit_mb``) given a literal default: the registry's."""
        if value is None or name not in REGISTRY_MB_NAMES:
            return
        if isinstance(value, ast.Call) and value.args:  # Field(100.0, ...), typer.Option(100.0, ...)
            value = value.args[0]
        v = constant(value)
        if v is not None and v >= 1:
            self.flag(node, f"{name} = {v!r} (an MB size written outside the registry)")

    def visit_arguments(self, node: ast.arguments) -> None:
        args = [*node.posonlyargs, *node.args]
        for arg, value in [*zip(args[len(args) - len(node.defaults):], node.defaults, strict=True),
                           *zip(node.kwonlyargs, node.kw_defaults, strict=True)]:
            self.mb_default(arg.arg, value, arg)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                self.mb_default(key.value, value, key)
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self.context.append(node)
        self.generic_visit(node)
        self.context.pop()

    def visit_Constant(self, node: ast.Constant) -> None:
        if type(node.value) in (int, float) and _is_mib_multiple(node.value):
            self.flag(node, f"{node.value!r} (a multiple of one MiB)")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        value = constant(node)
        left, right = constant(node.left), constant(node.right)
        if value is not None:  # literals only: judged by the value they make, whatever the spelling
            if _is_mib_multiple(value) or (value == KIB and not isinstance(node.op, ast.Add | ast.Sub)):
                self.flag(node, f"{self.text(node)} = {value:,} (a byte size)")
            elif isinstance(node.op, ast.Pow) and left == 10 and value in DECIMAL:
                self.flag(node, f"{self.text(node)} (a decimal byte size)")
            return  # its parts are the same value
        if isinstance(node.op, ast.Mult | ast.Div | ast.FloorDiv) and KIB in (left, right):
            self.flag(node, f"{self.text(node)}: times or over 1024")
        elif isinstance(node.op, ast.Pow) and left == 1024:
            self.flag(node, f"{self.text(node)}: a power of 1024")
        elif isinstance(node.op, ast.LShift | ast.RShift) and right in BINARY_SHIFTS:
            self.flag(node, f"{self.text(node)}: a shift by {right} bits")
        elif isinstance(node.op, ast.Mult | ast.Div | ast.FloorDiv) and {left, right} & set(DECIMAL) and (
                _names_bytes(self.text(node)) or (self.context and _names_bytes(self.text(self.context[-1])))):
            self.flag(node, f"{self.text(node)}: a decimal MB/GB of bytes")
        elif isinstance(node.op, ast.Mult) and (
                (left is not None and isinstance(node.right, ast.Name) and node.right.id.lower() in UNITS)
                or (right is not None and isinstance(node.left, ast.Name) and node.left.id.lower() in UNITS)):
            self.flag(node, f"{self.text(node)}: a number times a unit")
        self.generic_visit(node)


def size_values(tree: ast.AST, source: str = "", path: str = "") -> list[tuple[int, str]]:
    """(line, what) of every size value written in ``tree`` (parsed from ``source``), judged by value,
    not by spelling: a byte unit defined (any case: ``KIB``); an expression of literals whose value is
    a multiple of one MiB (``1024 ** 2``, ``1 << 21``, ``1048576.0``, ``125829120.0``) or 1024 made by
    an operation (``2 ** 10``); ``10 ** 9``; a literal multiple of one MiB; a value times or over 1024
    (``n * 1024 * 1024``, ``b / 1024``); a power of 1024; a shift by 10, 20, 30 or 40 bits
    (``b >> 20``); 1e6, 1e9 or 1e12 multiplying or dividing bytes (where the statement or f-string
    names bytes or MB: ``rb / 1e6`` printed as MB); a number times a unit (``120 * MB``). The hash
    arithmetic in :data:`NOT_SIZES` is exempt."""
    finder = _Finder(source)
    finder.visit(tree)
    return [(line, what) for line, what in finder.found
            if not any(path == p and what.startswith(text) for p, text in NOT_SIZES)]


def _scan(path: Path) -> list[tuple[int, str]]:
    source = path.read_text()
    return size_values(ast.parse(source), source, str(path.relative_to(REPO)))


def _found(code: str) -> list[tuple[int, str]]:
    return size_values(ast.parse(code), code)


def test_the_guard_finds_every_spelling_of_a_size() -> None:
    spellings = ["MB = 1 << 20", "x = 1 << 20", "x = 120 << 20", "x = 1048576", "x = 1_048_576", "x = 1024 * 1024",
                 "x = 2**20", "x = 2 ** 30", "x = 104857600", "x = 120 * MB", "x = MB * 100", "def f(a=3 * GB): pass",
                 # the spellings the first guard missed
                 "x = 1024 ** 2", "x = n * 1024 * 1024", "x = b / 1024 / 1024", "x = b >> 20", "x = 1 << 21",
                 "x = 8 << 21", "x = 1048576.0", "x = 125829120.0", "x = 2 ** 10", "x = 10**9", "KIB = 1024",
                 "x = 1024 * KIB", "kib = 1024", "x_mb = b / 1e6", "rmb = float(r.bytes_read.sum()) / 1e6",
                 "s = f'{rb / 1e6:,.1f} MB'", "x = size * 1e9", "x = n * 1e12 / bytes_total",
                 # an MB size with a literal default (Hudi's 100 MB limit written again)
                 "small_file_limit_mb: float = 100.0", "small_file_limit_mb: float = Field(100.0, ge=0)",
                 "def f(small_file_limit_mb: float = typer.Option(100.0)): pass",
                 "DEFAULTS = {'small_file_limit_mb': 100.0}"]
    for code in spellings:
        assert _found(code), code
    for code in ("x = n / MB", "x = mb * MB", "x = 1 << 3", "x = 1000", "x = 65_536", "x = 1 << 62",
                 "x = (1 << 64) - 1", "seconds = ns / 1e9", "retention_us = hours * 3600 * 1e6", "x = h >> 16",
                 "LATENCY_QUANTILES = 1024", "x = 1_000_000", "x = 1 << 16",
                 "small_file_limit_mb: float = HUDI_SMALL_FILE_LIMIT_MB", "ratio_mb = 0.5"):
        assert not _found(code), code


def test_the_guard_fails_on_a_planted_size(tmp_path: Path) -> None:
    """A module with a size written outside the registry makes the scan fail, naming the line."""
    planted = REPO / "bench" / "_planted_size_for_the_guard.py"
    planted.write_text('"""planted by a test"""\n\nTIMEOUT_S = 30\nBUFFER = 4 * 1024 * 1024\n')
    try:
        found = [f"{p.relative_to(REPO)}:{line}: {what}" for p in [planted] for line, what in _scan(p)]
    finally:
        planted.unlink()
    assert found == ["bench/_planted_size_for_the_guard.py:4: 4 * 1024 * 1024 = 4,194,304 (a byte size)"], found


def test_no_size_is_written_outside_the_registry() -> None:
    found = [f"{p.relative_to(REPO)}:{line}: {what}" for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py"))
             if p != REGISTRY for line, what in _scan(p)]
    assert found == [], found


def test_tests_take_the_byte_unit_from_the_registry() -> None:
    defined = [f"{p.relative_to(REPO)}:{line}" for p in sorted((REPO / "tests").rglob("*.py"))
               for line, what in _scan(p) if what.endswith("defined")]
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
