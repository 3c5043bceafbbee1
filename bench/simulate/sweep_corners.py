"""``layoutbench sweep --validate-corners``: real runs at the corners of a sweep's map, each beside the
simulator's figures for the same scenario.

Apart from :mod:`bench.simulate.sweep` because it runs the real harness (:mod:`bench.runner`), which
imports the sweep files' loader through the review's target verdict (:mod:`bench.simulate.target_review`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.simulate.results_folder import simulate
from bench.simulate.sweep import Grid
from bench.simulate.validate import validate
from runresults import Results


def corners(grid: Grid) -> list[dict[str, Any]]:
    """The corners of the map's axes, the other parameters on the base line (validation points)."""
    base = grid.base_values()
    x, y = grid.axes
    xs = [grid.values[x][0], grid.values[x][-1]]
    ys = [grid.values[y][0], grid.values[y][-1]] if y else [None]
    out = []
    for vx in xs:
        for vy in ys:
            p = dict(base, **{x: vx})
            if y:
                p[y] = vy
            out.append(p)
    return out


def validate_corners(grid: Grid, out_dir: str | Path, progress: bool = False) -> list[dict[str, Any]]:
    """Real runs of the map's corners, each beside the simulator's figures for the same scenario.

    Per corner: the checks of :func:`bench.simulate.validate.validate` (file counts and files
    scanned exact, WA within 10%), counted, with the largest WA error."""
    from bench.runner import run_scenario  # here: the real harness (Spark's modules) only when corners run

    out = []
    for i, point in enumerate(corners(grid)):
        sc = grid.scenario(point).model_copy(update={"name": f"{grid.spec.name}_corner{i}"})
        real = Results(run_scenario(sc, out=Path(out_dir), progress=progress, run_id=f"corner{i}-real"))
        sim = Results(simulate(sc, out_dir, calibration_path=grid.calibration, run_id=f"corner{i}-sim"))
        checks = validate(real, sim)
        wa = [c for c in checks if c.figure == "final WA"]
        worst = max(wa, key=lambda c: abs(float(c.simulated) / float(c.real) - 1) if c.real else 0.0, default=None)
        out.append({
            "corner": point, "real_run": str(real.folder), "checks": len(checks),
            "ok": sum(c.ok for c in checks),
            "file_counts_exact": all(c.ok for c in checks if "per commit" in c.figure),
            "files_scanned_equal": f"{sum(c.ok for c in checks if c.figure.startswith('files scanned'))}/"
                                   f"{sum(1 for c in checks if c.figure.startswith('files scanned'))}",
            "worst_wa_error": (f"{worst.engine} {float(worst.simulated) / float(worst.real) - 1:+.1%}"
                               if worst is not None and worst.real else None),
            "failures": [f"{c.engine}: {c.figure}: real {c.real}, simulated {c.simulated}"
                         for c in checks if not c.ok],
        })
    return out
