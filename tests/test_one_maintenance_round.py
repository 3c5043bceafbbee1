"""Guard: the maintenance round is written once, in engines/maintenance_round.py.

An AST scan of ``engines/`` and ``bench/`` for the three things that module owns, each found per
function (a lambda belongs to the function it is written in, a nested function is its own):

- a *round by hand*: a function that calls more than one of ``.schedule()``, ``.execute(...)`` and
  ``.clean()`` on an engine, or one of them beside a ``MaintenanceRound(...)`` / ``execute_pending``
  of its own (the order of a round's steps composed by hand); calls on a ``MaintenanceRound`` the
  function made are the round's own steps, and are fine: a caller may act between them;
- *"execute what is pending" by hand*: ``.execute(...)`` inside a loop, or a function that looks up
  ``.pending_plan()`` and calls ``.execute(...)`` itself;
- *"earliest pending" by hand*: the first of a timeline's ``.pending(...)`` taken (``[0]`` or
  ``next(...)`` over it), or the default instant ``x or ….pending_plan()`` re-coded.

Run as a script it prints the counts of a checkout:
``python tests/test_one_maintenance_round.py /work/main``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("engines", "bench")
THE_ROUND = "engines/maintenance_round.py"
ROUND_STEPS = ("schedule", "execute", "clean")
KINDS = ("round", "execute_pending", "earliest_pending")

# (file, function) -> why it may still hand-code a kind; an entry that no longer matches fails too
ALLOWED: dict[tuple[str, str, str], str] = {
    ("bench/service.py", "run_service", "round"): "the service command's modes: wired to the round by the "
                                                  "service engineer (T23 'service'); drop this entry then",
    ("bench/service.py", "run_service", "execute_pending"): "as above (retry-last-failed finds and executes)",
    ("bench/service.py", "run_service", "earliest_pending"): "as above (--mode execute's default instant)",
    ("engines/table/archiver.py", "plan_archive", "earliest_pending"): "the archiver's boundary: the earliest "
        "pending instant of any action on a pure view's timeline, not a plan to execute (engines/table is below "
        "the round)",
}


def _attr_call(node: ast.AST, name: str) -> ast.Call | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name:
        return node
    return None


def _own_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of ``fn``'s body, lambdas included, nested functions and classes not."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _round_objects(nodes: list[ast.AST]) -> set[str]:
    """Names the function binds to a ``MaintenanceRound(...)``."""
    names = set()
    for node in nodes:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "MaintenanceRound"):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _engine_step(node: ast.AST, rounds: set[str]) -> str | None:
    """``schedule``/``execute``/``clean`` when ``node`` calls that step on something not a round."""
    for step in ROUND_STEPS:
        call = _attr_call(node, step)
        if call is None or (step != "execute" and call.args):
            continue
        receiver = call.func.value  # type: ignore[attr-defined]
        if isinstance(receiver, ast.Name) and receiver.id in rounds:
            return None
        return step
    return None


def _kinds_of(fn: ast.AST) -> set[str]:
    nodes = _own_nodes(fn)
    rounds = _round_objects(nodes)
    steps = {s for n in nodes if (s := _engine_step(n, rounds)) is not None}
    composes = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                   and n.func.id in ("MaintenanceRound", "execute_pending") for n in nodes)
    found = set()
    if len(steps) > 1 or (steps and composes):
        found.add("round")
    looked_up = any(_attr_call(n, "pending_plan") for n in nodes)
    in_loop = any(_engine_step(inner, rounds) == "execute"
                  for loop in nodes if isinstance(loop, (ast.For, ast.While))
                  for stmt in loop.body for inner in ast.walk(stmt))
    if in_loop or (looked_up and "execute" in steps):
        found.add("execute_pending")
    pending_names = {t.id for n in nodes if isinstance(n, ast.Assign) and _attr_call(n.value, "pending")
                     for t in n.targets if isinstance(t, ast.Name)}

    def is_pending(node: ast.AST) -> bool:
        return _attr_call(node, "pending") is not None or (isinstance(node, ast.Name) and node.id in pending_names)

    for n in nodes:
        first = (isinstance(n, ast.Subscript) and is_pending(n.value)
                 and isinstance(n.slice, ast.Constant) and n.slice.value == 0)
        nxt = (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "next" and n.args
               and isinstance(n.args[0], ast.GeneratorExp) and any(is_pending(g.iter) for g in n.args[0].generators))
        default = isinstance(n, ast.BoolOp) and isinstance(n.op, ast.Or) and any(
            _attr_call(v, "pending_plan") for v in n.values)
        if first or nxt or default:
            found.add("earliest_pending")
    return found


def hand_written(root: Path) -> dict[tuple[str, str, str], int]:
    """Every (file, function, kind) of ``root``'s engines/ and bench/ that hand-codes a kind (line)."""
    out: dict[tuple[str, str, str], int] = {}
    for top in SCANNED:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel == THE_ROUND:
                continue
            for fn in ast.walk(ast.parse(path.read_text(), rel)):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for kind in _kinds_of(fn):
                        out[(rel, fn.name, kind)] = fn.lineno
    return out


def test_the_round_is_written_once() -> None:
    found = hand_written(ROOT)
    bad = sorted(k for k in found if k not in ALLOWED)
    what = {"round": "calls more than one of schedule/execute/clean on an engine: a maintenance round by hand",
            "execute_pending": "executes pending plans itself (a loop, or pending_plan() then execute)",
            "earliest_pending": "picks the earliest pending plan itself (pending(...)[0], next(...), "
                                "or `instant or pending_plan()`)"}
    assert not bad, "\n".join(
        [f"{f}:{found[(f, fn, k)]} {fn}() {what[k]}: use engines/maintenance_round.py (MaintenanceRound, "
         "execute_pending, after_commit_round, plan_to_execute, earliest_pending)" for f, fn, k in bad])
    stale = sorted(k for k in ALLOWED if k not in found)
    assert not stale, f"ALLOWED entries that no longer match (remove them): {stale}"


def test_the_scan_finds_each_kind(tmp_path: Path) -> None:
    """The scan is not blind: each hand-written kind in a module of its own is found."""
    (tmp_path / "engines").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "copies.py").write_text('''
def by_hand(engine):
    plan = engine.schedule()
    engine.execute(plan)
    engine.clean()

def pending_loop(engine, timeline):
    for inst in timeline.pending(["replacecommit"]):
        engine.execute(inst.timestamp)

def earliest(timeline, instant):
    pending = timeline.pending(["compaction"])
    return next((i for i in pending if instant is None or i.timestamp == instant), None)

def default(engine, instant):
    return instant or engine.pending_plan()

def composed(engine):
    engine.clean()
    MaintenanceRound(engine).run()

def steps_of_a_round(engine):
    rnd = MaintenanceRound(engine)
    rnd.schedule()
    rnd.execute()
    rnd.clean()
''')
    assert sorted(hand_written(tmp_path)) == [
        ("bench/copies.py", "by_hand", "round"), ("bench/copies.py", "composed", "round"),
        ("bench/copies.py", "default", "earliest_pending"),
        ("bench/copies.py", "earliest", "earliest_pending"), ("bench/copies.py", "pending_loop", "execute_pending")]


if __name__ == "__main__":
    counts = {k: 0 for k in KINDS}
    for (rel, fn, kind), line in sorted(hand_written(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT).items()):
        counts[kind] += 1
        print(f"{kind:17} {rel}:{line} {fn}")
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
