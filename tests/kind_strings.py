"""Where code outside the kinds registry decides by a kind's name (tests/test_engine_kinds.py's guard).

An AST scan of the harness's modules for a string equal to a registered engine kind's name in a place
where it selects or dispatches: a comparison (``==``, ``!=``, ``in``/``not in`` a list, tuple or set,
either side), a dict literal's key, ``.startswith``/``.endswith``, a ``case`` pattern, a ``kind=``
argument, a parameter's default, or a module- or class-level constant (and a comparison with a name
bound to one). ``engines/kinds.py`` and each kind's own package (where its engine lives) may name it.

Two kind names are words of other vocabularies too: ``clustering`` (a table service, a fault-point family,
a Hudi operation) and ``hudi`` (a table format, a builder, a split rule): :func:`shared_words` finds them
in the registry. Those two are flagged only in a kind's context: a comparison, ``case`` subject or dict
subscript that mentions a kind (a name, attribute or key holding ``kind``), a constant or parameter named
for one, or the ``kind=`` of an ``...Spec(...)``. Every other kind name is flagged in every place above.

Run as a script to count: ``python tests/kind_strings.py [ROOT]`` (ROOT: a checkout, default this one).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOPS = ("engines", "bench", "reports", "runresults", "workloads")
# Files that may name a kind, each with why.
ALLOWED: dict[str, str] = {
    # NOT data, a known debt: the config registry's settings groups (EngineKind.settings) are spelled as the
    # kinds (COW, O1, ... and `kind == HUDI` in hudi_keys; hoodie_conf's `HUDI in s.kinds`). engines.config sits
    # below engines.kinds and cannot ask it; both files are being rewritten by the config-registry work (T23).
    "engines/config/registry.py": "settings groups named as the kinds",
    "engines/config/docs.py": "the docs table's Apache Hudi settings group (t23-config adds `k == HUDI` there)",
    "bench/hoodie_conf.py": "the Apache Hudi settings group",
}


def registered() -> dict[str, str]:
    """Each registered kind's name and its own package (``engines/<package>``)."""
    sys.path.insert(0, str(REPO))
    from engines.kinds import KINDS

    return {name: "/".join(k.engine.split(":")[0].split(".")[:2]) for name, k in KINDS.items()}


def shared_words() -> set[str]:
    """The kind names that are also a table service, fault-point family, table format or builder."""
    from engines.kinds import KINDS

    words = {getattr(k, f) for k in KINDS.values() for f in ("service", "fault_points", "table_format", "builder")}
    return set(KINDS) & words


def _mentions_kind(*nodes: ast.AST | None) -> bool:
    """Whether any of ``nodes`` names a kind: an identifier, attribute or string key holding ``kind``."""
    for node in nodes:
        for n in ast.walk(node) if node is not None else ():
            text = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else \
                n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) < 20 else ""
            if "kind" in text.lower():
                return True
    return False


def _kind(node: ast.AST, names: set[str], constants: dict[str, str]) -> str | None:
    """The kind ``node`` spells: a string constant, a name (or attribute) bound to a kind constant
    (``constants``: name -> kind), or the first kind among a list, tuple or set's elements."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
        return node.value
    if isinstance(node, ast.Name) and constants.get(node.id) in names:
        return constants[node.id]
    if isinstance(node, ast.Attribute) and constants.get(node.attr) in names:
        return constants[node.attr]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return next((k for e in node.elts if (k := _kind(e, names, constants))), None)
    return None


def _constants(tree: ast.Module, names: set[str], shared: set[str]) -> dict[str, tuple[str, ast.AST]]:
    """Module- and class-level names bound to a kind's name (or a collection of them); ``A, B = x, y`` pairwise."""
    out = {}
    bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for node in body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
            value = getattr(node, "value", None)
            pairs = []
            for t in targets:
                if isinstance(t, ast.Tuple) and isinstance(value, ast.Tuple) and len(t.elts) == len(value.elts):
                    pairs += list(zip(t.elts, value.elts, strict=True))
                else:
                    pairs.append((t, value))
            found = [(t, k) for t, v in pairs if isinstance(t, ast.Name) and v is not None
                     and (k := _kind(v, names, {})) is not None]
            listed = any(k not in shared for _, k in found)  # beside another kind's name: a list of kinds
            out.update({t.id: (k, node) for t, k in found if listed or _mentions_kind(t)})
    return out


def _module(rel: str) -> str:
    return rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _imported(tree: ast.Module, defined: dict[str, dict[str, str]]) -> dict[str, str]:
    """The names ``tree`` imports that another module binds to a kind's name, with the kind
    (``defined``: module -> its kind constants)."""
    return {a.asname or a.name: defined[n.module][a.name] for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module in defined for a in n.names if a.name in defined[n.module]}


def _via_constant(node: ast.AST, constants: dict[str, str]) -> bool:
    """Whether ``node`` uses a name bound to a kind constant (a list of kinds: a kind's context)."""
    return any(isinstance(n, ast.Name) and n.id in constants or isinstance(n, ast.Attribute) and n.attr in constants
               for n in ast.walk(node))


def findings(path: Path, names: set[str], rel: str, shared: set[str] = frozenset(),
             defined: dict[str, dict[str, str]] | None = None) -> Iterator[str]:
    """``rel:line: what`` for each place ``path`` decides by a kind's name (``shared``: the names that
    are other vocabularies' words too, flagged only in a kind's context; ``defined``: the kind constants
    other modules bind, which an import brings in)."""
    tree = ast.parse(path.read_text())
    bound = _constants(tree, names, shared)
    for name, (k, node) in bound.items():
        if k in names:
            yield f"{rel}:{node.lineno}: constant {name}"
    constants = {**_imported(tree, defined or {}), **{name: k for name, (k, _) in bound.items()}}
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        k, context = None, None
        if isinstance(node, ast.Compare):
            k = next((k for e in (node.left, *node.comparators) if (k := _kind(e, names, constants))), None)
            what, context = "compared", node
        elif isinstance(node, ast.Dict):
            k = next((k for e in node.keys if e is not None and (k := _kind(e, names, {}))), None)
            up = parent.get(node)
            what, context = "dict key", up.slice if isinstance(up, ast.Subscript) and up.value is node else None
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("startswith", "endswith"):
                k = next((k for a in node.args if (k := _kind(a, names, constants))), None)
                what, context = node.func.attr, node
            if k is None:
                k = next((k for kw in node.keywords if kw.arg == "kind" and (k := _kind(kw.value, names, constants))),
                         None)
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                what, context = "kind= argument", ast.Name("kind") if name.endswith("Spec") else None
        elif isinstance(node, ast.match_case):
            k = next((k for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue)
                      and (k := _kind(p.value, names, constants))), None)
            up = next((m for m in ast.walk(tree) if isinstance(m, ast.Match) and node in m.cases), None)
            what, context = "case", up.subject if up is not None else None
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            for a, d in [*zip(args.args[len(args.args) - len(args.defaults):], args.defaults, strict=True),
                         *zip(args.kwonlyargs, args.kw_defaults, strict=True)]:
                if d is not None and (k := _kind(d, names, {})) and (k not in shared or "kind" in a.arg.lower()):
                    break
                k = None
            what, context = "parameter default", ast.Name("kind")
        if k is not None and (k not in shared or _mentions_kind(context) or _via_constant(node, constants)):
            yield f"{rel}:{getattr(node, 'lineno', None) or node.pattern.lineno}: {what} {k}"


def _files(root: Path) -> list[tuple[Path, str]]:
    return [(p, p.relative_to(root).as_posix()) for top in TOPS for p in sorted((root / top).rglob("*.py"))]


@lru_cache(maxsize=4)
def defined_constants(root: Path = REPO, kinds: tuple[tuple[str, str], ...] | None = None
                      ) -> dict[str, dict[str, str]]:
    """Every module's kind constants (module -> name -> kind), the allowed files' too: another module
    importing one compares a kind by it (``kinds``: :func:`registered`'s items)."""
    kinds = dict(kinds) if kinds is not None else registered()
    shared = shared_words()
    return {_module(rel): {name: k for name, (k, _) in _constants(ast.parse(p.read_text()), set(kinds),
                                                                 shared).items()} for p, rel in _files(root)}


def scan(root: Path = REPO, kinds: dict[str, str] | None = None) -> list[str]:
    """Every place under ``root``'s harness modules that decides by a kind's name, outside the registry
    and the kind's own package (and :data:`ALLOWED`)."""
    kinds = kinds if kinds is not None else registered()
    shared = shared_words()
    files = _files(root)
    defined = defined_constants(root, tuple(kinds.items()))
    out = []
    for path, rel in files:
        if rel == "engines/kinds.py" or rel in ALLOWED:
            continue
        # a kind's own package may name that kind (and only it)
        names = {n for n, pkg in kinds.items() if not rel.startswith(pkg + "/")}
        out.extend(findings(path, names, rel, shared, defined))
    return out


if __name__ == "__main__":
    found = scan(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO)
    print("\n".join(found))
    print(f"{len(found)} places in {len({f.split(':')[0] for f in found})} files")
