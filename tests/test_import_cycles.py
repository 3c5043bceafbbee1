"""No import circle between the modules of engines, bench, reports, runresults and workloads.

An import inside a function body counts as much as one at the top of the file: it hides a circle
from Python's import order, it does not break it (the two modules still need each other). Imports
under ``if TYPE_CHECKING:`` do not count: they never run. A submodule reaching its own package's
``__init__`` is not an edge (Python loads a module's parents before it); an explicit
``from pkg import name`` of something ``pkg/__init__.py`` defines is, and so is importing ``a.b.c``
from outside ``a.b``, which runs ``a/b/__init__.py`` first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engines", "bench", "reports", "runresults", "workloads")

# Circles kept on purpose, each while its owner reworks the modules involved; the owner deletes the entry
# with the fix. Each entry is the set of modules of one strongly connected component.
# no circle is allowed: the last two (bench.simulate.mor_inserts <-> simulator, clustering executor <-> mor)
# were broken by moving the MERGE_ON_READ model into engines/clustering_mor/sim.py and the replacecommit's
# two ends into engines/clustering/replacecommit.py
ALLOWED: list[frozenset[str]] = []


def modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module under ``packages`` by dotted name (a package by its own name, for its ``__init__``)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            found[".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")] = path
    return found


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement at any depth (function bodies included), skipping ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.orelse:
                yield from _imports(ast.Module(body=[stmt], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        else:
            yield from _imports(node)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` names or lies inside (``a.b.func`` -> ``a.b``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules it imports, among ``packages``."""
    known = modules(root, packages)
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                # `from pkg import sub` needs the submodule; `from pkg import name` needs pkg/__init__.py
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            for target in targets:
                resolved = _resolve(target, known)
                if resolved:
                    graph[module] |= _loaded_with(resolved, module, known)
    return graph


def _loaded_with(target: str, importer: str, known: dict[str, Path]) -> set[str]:
    """What importing ``target`` from ``importer`` runs: ``target`` itself (even a package above
    ``importer``, when named explicitly) and each package above it, except the packages above
    ``importer`` (Python has started those before ``importer``)."""
    parts = target.split(".")
    above_target = {".".join(parts[:i]) for i in range(1, len(parts))}
    above_importer = {".".join(importer.split(".")[:i]) for i in range(1, importer.count(".") + 1)}
    return {m for m in ({target} | above_target - above_importer) - {importer} if m in known}


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def cycle_in(component: frozenset[str], graph: dict[str, set[str]]) -> list[str]:
    """One closed import path through ``component`` (a -> b -> ... -> a), for the failure message."""
    start = min(component)
    paths = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for target in sorted(graph[node] & component):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                todo.append(target)
    raise AssertionError(f"{sorted(component)} is not a circle")


def _described(found: list[frozenset[str]], graph: dict[str, set[str]]) -> str:
    return "\n".join(f"  {' -> '.join(cycle_in(c, graph))}   (component: {', '.join(sorted(c))})" for c in found)


def test_no_import_circles_outside_the_allow_list() -> None:
    graph = import_graph()
    unexpected = [c for c in circles(graph) if c not in ALLOWED]
    assert not unexpected, "import circles (function-body imports count):\n" + _described(unexpected, graph)


def test_every_allowed_circle_still_exists() -> None:
    # an entry whose circle is gone must be deleted, so that the circle cannot come back unnoticed
    found = circles(import_graph())
    gone = [sorted(c) for c in ALLOWED if c not in found]
    assert not gone, f"these circles are broken (or changed): delete or update their ALLOWED entries: {gone}"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_check_finds_a_circle_hidden_in_a_function_body(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/run.py": "from pkg.kill import kill\n\ndef check():\n    pass\n",
        "pkg/kill.py": "def kill():\n    from pkg.run import check\n",
        "pkg/leaf.py": "from . import run\nfrom .run import check\n",
    })
    graph = import_graph(tmp_path, ("pkg",))
    assert circles(graph) == [frozenset({"pkg.run", "pkg.kill"})]
    assert cycle_in(circles(graph)[0], graph) == ["pkg.kill", "pkg.run", "pkg.kill"]


def test_the_check_ignores_type_checking_and_parent_packages(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "from pkg.a import f\n",
        "pkg/a.py": "from typing import TYPE_CHECKING\nfrom pkg import b\n\nif TYPE_CHECKING:\n"
                    "    from pkg.c import C\n\ndef f():\n    pass\n",
        "pkg/b.py": "",
        "pkg/c.py": "from pkg.a import f\n",
    })
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.b"}
    assert circles(graph) == []
    # but an explicit import of a name defined in pkg/__init__.py is an edge to it
    (tmp_path / "pkg" / "b.py").write_text("from pkg import f\n")
    assert circles(import_graph(tmp_path, ("pkg",))) == [frozenset({"pkg", "pkg.a", "pkg.b"})]
