"""Imports inside engines/ run one way (docs/architecture.md): config <- table <- files <- spark <- the engine
packages. A lower room importing a higher one, or two packages importing each other, fails here; imports
inside function bodies count too (they hide circles, they do not break them)."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINES = Path(__file__).resolve().parents[1] / "engines"
# what each lower room may import, besides itself
ALLOWED = {
    "engines.config": set(),
    "engines.table": {"engines.config"},
    "engines.files": {"engines.config", "engines.table"},
    "engines.spark": {"engines.config", "engines.table", "engines.files"},
}


def _room(module: str) -> str:
    return ".".join(module.split(".")[:2])


def import_edges(engines: Path = ENGINES) -> dict[str, set[str]]:
    """Per room of ``engines`` (a subpackage or a top-level module), the rooms it imports."""
    edges: dict[str, set[str]] = {}
    for path in engines.rglob("*.py"):
        module = ".".join(path.relative_to(engines.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                if name.startswith("engines.") and _room(name) != _room(module):
                    edges.setdefault(_room(module), set()).add(_room(name))
    return edges


def test_lower_rooms_import_only_lower_rooms() -> None:
    edges = import_edges()
    for room, allowed in ALLOWED.items():
        assert edges.get(room, set()) <= allowed, f"{room} imports {sorted(edges[room] - allowed)}"


def test_no_two_rooms_import_each_other() -> None:
    edges = import_edges()

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            room = todo.pop()
            if room == goal:
                return True
            if room not in seen:
                seen.add(room)
                todo.extend(edges.get(room, ()))
        return False

    circles = sorted((a, b) for a, targets in edges.items() for b in targets if reaches(b, a))
    assert not circles, f"import circles inside engines/: {circles}"


def test_the_check_sees_imports_in_function_bodies(tmp_path: Path) -> None:
    (tmp_path / "engines" / "spark").mkdir(parents=True)
    (tmp_path / "engines" / "spark" / "ordering.py").write_text(
        "def f():\n    from engines.clustering.ordering import curve_key\n")
    assert import_edges(tmp_path / "engines") == {"engines.spark": {"engines.clustering"}}
