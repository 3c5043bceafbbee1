"""The report section "Where the answer changes", rendered from a sweep's results folder.

The verdict's rules (:mod:`reports.map_winners`): whole candidates, each design represented by its
cheapest by the ledger among those that passed the run's required gates, a difference inside the
margin "equivalent". The ledger's $ per TB ingested is the choice; the other criteria show what the
chosen candidates do.

Per criterion: a heatmap over the map's two axes (each cell: the design that wins with the other
parameters on the base line, and the share of all points at that cell's (x, y) it wins), the
crossover lines drawn between cells whose winners differ, and sentences generated from the
crossovers on the base line. The validation of the map against real runs at its corners is
printed beside it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

from reports.map_winners import Winner, along, crossovers, shares, winners  # noqa: E402
from runresults import SWEEP_CRITERIA as CRITERIA  # noqa: E402
from runresults import SWEEP_RUN, SWEEP_TABLE  # noqa: E402
from runresults.plain_ledger import DEFAULT_MARGIN  # noqa: E402

DESIGNS = ["Baseline", "Option 1", "Option 2", "Baseline = Option 1", "Baseline = Option 2", "Option 1 = Option 2",
           "Baseline = Option 1 = Option 2"]
COLORS = ["#9e9e9e", "#4c72b0", "#dd8452", "#b8c4da", "#e8c4a8", "#c9d9a6", "#ffffff"]
SHORT = {"Baseline": "B", "Option 1": "O1", "Option 2": "O2", "Baseline = Option 1": "B=O1",
         "Baseline = Option 2": "B=O2", "Option 1 = Option 2": "O1=O2", "Baseline = Option 1 = Option 2": "all"}
NONE = DESIGNS[-1]


class SweepResults:
    """A sweep's results folder opened for reading, with its winners and crossovers."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        run_file = self.folder / SWEEP_RUN
        if not run_file.is_file():
            raise FileNotFoundError(f"{self.folder} is not a sweep results folder: {SWEEP_RUN} not found")
        self.run: dict[str, Any] = json.loads(run_file.read_text())
        self.table = pd.read_parquet(self.folder / SWEEP_TABLE)
        self.values: dict[str, list[Any]] = self.run["values"]
        self.params = list(self.values)
        self.base: dict[str, Any] = self.run["base_values"]
        self.axes: list[str | None] = self.run["axes"]
        self.criteria = [c for c in CRITERIA if c in self.table.columns]
        records = self.table.to_dict("records")
        self.margin = float(self.run.get("margin") or DEFAULT_MARGIN)
        self.excluded: dict[str, str] = self.run.get("excluded") or {}
        self.winners = winners(records, self.params, self.criteria, self.margin)
        self.crossovers = crossovers(self.winners, self.values)



def _fmt(v: object) -> str:
    """A parameter's value: a number compactly (``:g``), a name as it is (the store)."""
    return f"{v:g}" if isinstance(v, int | float) else str(v)

def _on_base(w: Winner, base: dict[str, Any], free: list[str]) -> bool:
    return all(w.point[k] == v for k, v in base.items() if k not in free)


def heatmap(res: SweepResults, criterion: str, path: Path) -> Path:
    """One criterion's winners over the two axes (one axis: a strip), crossover lines in black."""
    x, y = res.axes[0], res.axes[1] if len(res.axes) > 1 else None
    xs = res.values[x]
    ys = res.values[y] if y else [None]
    free = [x] + ([y] if y else [])
    cell = {}
    for w in res.winners:
        if w.criterion == criterion and _on_base(w, res.base, free):
            cell[(w.point[x], w.point[y] if y else None)] = w.winner
    share: dict[tuple, Counter] = {}
    for w in res.winners:
        if w.criterion == criterion:
            share.setdefault((w.point[x], w.point[y] if y else None), Counter())[w.winner] += 1
    grid = [[DESIGNS.index(cell.get((vx, vy), NONE)) for vx in xs] for vy in ys]
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(xs), 1.0 + 0.6 * len(ys)))
    ax.imshow(grid, cmap=ListedColormap(COLORS), vmin=0, vmax=len(DESIGNS) - 1, origin="lower", aspect="auto")
    for j, vy in enumerate(ys):
        for i, vx in enumerate(xs):
            win = cell.get((vx, vy), NONE)
            counts = share.get((vx, vy), Counter())
            pct = 100 * counts[win] / max(1, sum(counts.values()))
            ax.text(i, j, f"{SHORT[win]}\n{pct:.0f}%", ha="center", va="center", fontsize=7)
            if i + 1 < len(xs) and cell.get((xs[i + 1], vy), NONE) != win:
                ax.plot([i + 0.5, i + 0.5], [j - 0.5, j + 0.5], color="black", lw=2)
            if j + 1 < len(ys) and cell.get((vx, ys[j + 1]), NONE) != win:
                ax.plot([i - 0.5, i + 0.5], [j + 0.5, j + 0.5], color="black", lw=2)
    ax.set_xticks(range(len(xs)), [_fmt(v) for v in xs], fontsize=7)
    ax.set_xlabel(x)
    if y:
        ax.set_yticks(range(len(ys)), [_fmt(v) for v in ys], fontsize=7)
        ax.set_ylabel(y)
    else:
        ax.set_yticks([])
    ax.set_title(CRITERIA[criterion], fontsize=8)
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)
    return path


def sentences(res: SweepResults) -> list[str]:
    """Per criterion, who wins how often and where the answer changes on the base line."""
    out = []
    counts = shares(res.winners)
    total = len({tuple(w.point.items()) for w in res.winners})
    for crit in res.criteria:
        c = counts[crit]
        ranked = ", ".join(f"{_who(d)} {'equivalent' if '=' in d else 'wins'} at {n} of {total} points"
                           for d, n in c.most_common())
        changes = []
        for p in res.params:
            for cr in along(res.crossovers, crit, p, res.base):
                changes.append(f"along {p}, {_who(cr.before)} at {_fmt(cr.lo)} gives way to {_who(cr.after)} at {_fmt(cr.hi)}")
        where = "; ".join(changes) if changes else "no crossover on the base line"
        out.append(f"**{CRITERIA[crit]}**: {ranked}. {where[0].upper() + where[1:]}.")
    return out


def _who(design: str) -> str:
    if design.count("=") == 2:
        return "all three"
    return design.replace(" = ", " and ") if "=" in design else design


def gates_line(res: SweepResults) -> str:
    """Which candidates the run's required gates left out of the map (or that no gates were given)."""
    cands = ", ".join(f"`{c}`" for c in res.run.get("candidates") or [])
    if not res.run.get("gates_run"):
        return (f"Candidates: {cands}. No run's gates were given (`layoutbench sweep FILE --gates RUN`): every "
                "candidate competes, none is known to pass the gates.")
    req = ", ".join(res.run.get("required_gates") or [])
    out = "; ".join(f"`{e}` {why}" for e, why in sorted(res.excluded.items())) or "none"
    return (f"Candidates: {cands}. Left out by the required gates ({req}) at run "
            f"`{Path(res.run['gates_run']).name}`: {out}.")


def validation_lines(res: SweepResults) -> list[str]:
    """The corners' real runs beside the simulator, one line each (or why there is none)."""
    val = res.run.get("validation") or []
    if not val:
        return ["No corner was validated against a real run (run `layoutbench sweep FILE --validate-corners`)."]
    lines = ["| corner | checks within tolerance | file counts exact | files scanned equal | worst WA error |",
             "|---|---|---|---|---|"]
    for v in val:
        where = ", ".join(f"{k}={_fmt(v['corner'][k])}" for k in res.axes if k)
        lines.append(f"| {where} | {v['ok']}/{v['checks']} | {'yes' if v['file_counts_exact'] else '**no**'} | "
                     f"{v['files_scanned_equal']} | {v['worst_wa_error'] or 'n/a'} |")
    misses = [f"- {where}: {f}" for v in val for f in v["failures"][:3]
              for where in [", ".join(f"{k}={_fmt(v['corner'][k])}" for k in res.axes if k)]]
    return lines + ([""] + ["Out of tolerance (first three per corner):"] + misses if misses else [])


def render_section(folder: str | Path, plots_dir: Path | None = None) -> tuple[str, dict[str, Path]]:
    """The Markdown section and its heatmaps (written under ``plots_dir``, default the sweep
    folder's ``plots``; linked as ``plots/<name>.png``)."""
    res = SweepResults(folder)
    plots_dir = plots_dir or res.folder / "plots"
    plots_dir.mkdir(parents=True, exist_ok=True)
    run = res.run
    base = ", ".join(f"{k}={_fmt(v)}" for k, v in res.base.items())
    lines = ["## Where the answer changes", "",
             f"Generated from the simulator over {run['points']} grid points (sweep `{run['sweep']['name']}` on "
             f"`{run['base_scenario']}`, {run['wall_time_s']:.0f} s on {run['machine'].get('cores', '?')} cores). "
             "The baseline, Option 1 and Option 2 compete as whole candidates: at each point a design is "
             "its cheapest candidate by the ledger ($ per TB ingested), and every figure of it is that "
             "candidate's; lower is better; designs within the margin "
             f"(±{res.margin:.0%}) of the best are equivalent (B = baseline, O1 = Option 1, O2 = Option 2). "
             f"The base line is {base}.", ""]
    lines += [gates_line(res), ""]
    lines += [f"- {s}" for s in sentences(res)] + [""]
    pngs = {}
    for crit in res.criteria:
        png = pngs[f"map_{crit}"] = heatmap(res, crit, plots_dir / f"map_{crit}.png")
        lines.append(f"![{CRITERIA[crit]}](plots/{png.name})")
    lines += ["", "Each cell: the winner with the other parameters on the base line, and the share of all the "
              "points at that cell it wins. Black lines: crossovers.", "", "### Validation at the corners", ""]
    lines += validation_lines(res)
    return "\n".join(lines) + "\n", pngs
