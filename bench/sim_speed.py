"""The simulator's speed as a benchmark, old code beside new on one machine (``make bench-sim``).

``layoutbench simulate SCENARIO`` is timed as a whole process, in turn: the code of a given
revision (``--vs REV``, checked out in a temporary git worktree, its own copy of the scenario
file), then this checkout with the replay serial (``LAYOUTBENCH_SERIAL_REPLAY=1``), then this
checkout as it chooses by itself (forked when the machine has a core to spare,
:mod:`bench.simulate.forked_replay`). Each run's wall seconds, CPU seconds (user and system of
the process tree, from ``wait4``), peak memory and the 1-minute load before it are kept; the
summary gives each variant's median and range, and each pair's ratio to the old code. The results
tables of every variant are compared with the first run's (pandas ``equals``): a speed-up that
moves a figure is not a speed-up.

The record (``results/sim-speed/<time>.json`` unless ``--out``) holds the machine, its processor,
the commits and the date, as asv keeps its results. Speed targets live here and in
docs/simulator.md, never in a timed unit test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from bench.simulate.forked_replay import SERIAL_ENV
from engines.config.registry import KIB, MB
from runresults import cpu_model

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SCENARIO = "bench/scenarios/sim_year_hourly.yaml"
GOAL_S = 30.0  # T20: sim_year_hourly within 30 s on the 2-core machine


@dataclass
class Timing:
    """One whole-process run of ``layoutbench simulate``."""

    variant: str  # "old", "serial" or "own choice"
    pair: int
    wall_s: float
    cpu_s: float  # user + system of the process and its children (the forked replay's included)
    peak_mib: float  # the largest resident set among the process and its children
    load_before: float  # 1-minute load average just before the run
    folder: str


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _simulate(checkout: Path, scenario: str, out: Path, env_extra: dict[str, str]) -> tuple[float, float, float]:
    """Run ``simulate`` of ``checkout`` once; (wall s, CPU s, peak MiB). Exits loudly on failure."""
    env = {**os.environ, "PYTHONPATH": str(checkout), **env_extra}
    cmd = [sys.executable, "-m", "bench.cli", "simulate", str(checkout / scenario), "--out", str(out)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"simulate failed in {checkout} (exit {proc.returncode}):\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * KIB / MB  # ru_maxrss: KiB on Linux


def _folder(out: Path) -> Path:
    """The results folder ``simulate`` wrote under ``out`` (one run per root)."""
    runs = [p for p in out.iterdir() if p.is_dir()]
    if len(runs) != 1:
        raise SystemExit(f"expected one results folder under {out}, found {len(runs)}")
    return runs[0]


# a file's name, not a figure: the simulator names Option 1's files as the engine does since 2026-11-27
NAME_COLUMNS = ("file_id", "path")


def compare_tables(a: Path, b: Path) -> dict[str, list[str]]:
    """The results tables (``*.parquet``) of two folders: ``moved``, those whose rows differ on the
    figure columns both have (an older results format lacks later columns, which are not figures
    that moved); ``renamed``, those that differ only in the files' names (:data:`NAME_COLUMNS`);
    ``only_in_one``, the tables one folder has and the other lacks (a table added since)."""
    names_a, names_b = {p.name for p in a.glob("*.parquet")}, {p.name for p in b.glob("*.parquet")}
    moved, renamed = [], []
    for name in sorted(names_a & names_b):
        left = pd.read_parquet(a / name).reset_index(drop=True)
        right = pd.read_parquet(b / name).reset_index(drop=True)
        common = [c for c in left.columns if c in right.columns]
        figures = [c for c in common if c not in NAME_COLUMNS]
        if len(left) != len(right) or not left[figures].equals(right[figures]):
            moved.append(name)
        elif not left[common].equals(right[common]):
            renamed.append(name)
    return {"moved": moved, "renamed": renamed, "only_in_one": sorted(names_a ^ names_b)}


def summary(timings: list[Timing]) -> dict[str, dict[str, float]]:
    """Per variant: median and range of wall and CPU seconds, n, and the median of the pairs' wall
    ratios to the old code where it ran."""
    out: dict[str, dict[str, float]] = {}
    old = {t.pair: t for t in timings if t.variant == "old"}
    for variant in dict.fromkeys(t.variant for t in timings):
        mine = [t for t in timings if t.variant == variant]
        walls, cpus = [t.wall_s for t in mine], [t.cpu_s for t in mine]
        row = {"n": len(mine), "wall_median_s": statistics.median(walls), "wall_min_s": min(walls),
               "wall_max_s": max(walls), "cpu_median_s": statistics.median(cpus), "cpu_min_s": min(cpus),
               "cpu_max_s": max(cpus), "peak_mib_max": max(t.peak_mib for t in mine)}
        ratios = [t.wall_s / old[t.pair].wall_s for t in mine if t.pair in old and variant != "old"]
        if ratios:
            row["wall_ratio_to_old_median"] = statistics.median(ratios)
        out[variant] = row
    return out


def run(scenario: str, pairs: int, vs: str | None, record: Path) -> dict:
    """Time ``pairs`` rounds of the variants in turn; write and return the record."""
    head = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    work = Path(tempfile.mkdtemp(prefix="sim-speed-"))
    old_tree = None
    try:
        if vs:
            old_tree = work / "old-tree"
            _git("worktree", "add", "--detach", str(old_tree), vs)
        variants: list[tuple[str, Path, dict[str, str]]] = []
        if old_tree:
            variants.append(("old", old_tree, {}))
        variants += [("serial", ROOT, {SERIAL_ENV: "1"}), ("own choice", ROOT, {})]
        timings: list[Timing] = []
        for pair in range(pairs):
            for variant, checkout, env in variants:
                out = work / f"{variant.replace(' ', '_')}-{pair}"
                out.mkdir()
                load = os.getloadavg()[0]
                wall, cpu, peak = _simulate(checkout, scenario, out, env)
                timings.append(Timing(variant, pair, wall, cpu, peak, load, str(_folder(out))))
                print(f"pair {pair + 1}/{pairs} {variant:>10}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
                      f"{peak:5.0f} MiB, load before {load:.2f}", flush=True)
        first = Path(timings[0].folder)
        compared = {f"{t.variant} {t.pair + 1}": compare_tables(first, Path(t.folder)) for t in timings[1:]}
        result = {
            "scenario": scenario, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "commit": head + ("+dirty" if dirty else ""), "vs": vs and _git("rev-parse", "--short", vs),
            "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "host": os.uname().nodename},
            "goal_s": GOAL_S, "pairs": pairs, "summary": summary(timings),
            "tables_against_first_run": compared, "runs": [asdict(t) for t in timings],
        }
    finally:
        if old_tree:
            _git("worktree", "remove", "--force", str(old_tree))
        shutil.rmtree(work, ignore_errors=True)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(result, indent=2) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.sim_speed [--vs REV] [--pairs N] [--scenario FILE] [--out FILE]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, help="scenario, relative to each checkout")
    parser.add_argument("--pairs", type=int, default=2, help="rounds of the variants in turn")
    parser.add_argument("--vs", help="a git revision whose code runs first in each round (the old code)")
    parser.add_argument("--out", type=Path, help="the record (default results/sim-speed/<time>.json)")
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    record = args.out or ROOT / "results" / "sim-speed" / f"{time.strftime('%Y%m%dT%H%M%S')}.json"
    result = run(args.scenario, args.pairs, args.vs, record)
    for variant, row in result["summary"].items():
        ratio = row.get("wall_ratio_to_old_median")
        print(f"{variant:>10}: wall {row['wall_median_s']:.1f} s [{row['wall_min_s']:.1f}, {row['wall_max_s']:.1f}] "
              f"CPU {row['cpu_median_s']:.1f} s, n={row['n']}" + (f", wall ratio to old {ratio:.2f}" if ratio else ""))
    compared = result["tables_against_first_run"]
    moved = {run: c["moved"] for run, c in compared.items() if c["moved"]}
    extra = sorted({name for c in compared.values() for name in c["only_in_one"]})
    print("every table both runs have is identical to the first run's" if not moved else f"figures moved: {moved}")
    if extra:
        print(f"tables in one folder only (added or removed since): {', '.join(extra)}")
    renamed = sorted({name for c in compared.values() for name in c["renamed"]})
    if renamed:
        print(f"tables whose files' names alone differ: {', '.join(renamed)}")
    print(f"record: {record}")
    return 1 if moved else 0


if __name__ == "__main__":
    raise SystemExit(main())
