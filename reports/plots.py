"""Seaborn plots of a results folder, written as PNG files (matplotlib's Agg backend, no display)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from engines.config.registry import MB
from reports.answer import shown_in_ledger  # noqa: E402
from reports.stream import lag_plot  # noqa: E402
from runresults import Results  # noqa: E402
from runresults.uncertainty import MIN_N, interval  # noqa: E402

DPI = 90


def batch_axis(commits: pd.DataFrame) -> pd.DataFrame:
    """Commits with ``x``: the batch index, maintenance instants placed between their batch and the next.

    Engines run different numbers of maintenance instants, so plotting over ``seq`` would misalign
    them; over ``x`` every engine's ingest of batch b sits at b.
    """
    c = commits.sort_values(["engine", "seq"]).copy()
    if c.empty:
        c["x"] = pd.Series(dtype=float)
        return c
    rank = c.groupby(["engine", "batch"]).cumcount()
    size = c.groupby(["engine", "batch"]).seq.transform("size")
    c["x"] = c.batch + rank / size
    return c


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def _line(df: pd.DataFrame, y: str, title: str, ylabel: str, path: Path, x: str = "x",
          order: list[str] | None = None, **lineplot: object) -> Path:
    """Lines per engine over ``x``: every point as it is, unless ``lineplot`` overrides seaborn's
    aggregation (``estimator``, ``errorbar``)."""
    fig, ax = plt.subplots(figsize=(8, 4.2))
    data = df.dropna(subset=[y])
    if len(data):
        sns.lineplot(data=data, x=x, y=y, hue="engine", style="engine", hue_order=order, style_order=order, ax=ax,
                     dashes=True, **{"drawstyle": "steps-post", "estimator": None, **lineplot})
    else:
        ax.text(0.5, 0.5, "no data in this results folder", ha="center", transform=ax.transAxes)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("batch (maintenance instants between batches)" if x == "x" else x)
    return _save(fig, path)


# Timing plots pool every repetition and draw the median with the report's own interval
# (runresults.uncertainty.interval: 95% percentile bootstrap from MIN_N warm runs on, the range below),
# one seeded bootstrap per cell, so a re-render draws the same bars and a cell never shows more than it has.
def spread_cells(df: pd.DataFrame, keys: list[str], y: str) -> pd.DataFrame:
    """One row per group of ``keys``: the median of ``y`` (``value``), its interval (``lo``, ``hi``) and ``n``."""
    rows = []
    for key, group in (df.groupby(keys, sort=True) if len(df) else ()):
        iv = interval(group[y].tolist())
        if iv is not None:
            rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                         "value": iv.value, "lo": iv.lo, "hi": iv.hi, "n": iv.n})
    return pd.DataFrame(rows, columns=[*keys, "value", "lo", "hi", "n"])


def spread_label(cells: pd.DataFrame) -> str:
    """What the error bars of ``cells`` are: a 95% interval only where every cell has MIN_N samples."""
    if cells.empty:
        return "no samples"
    lo, hi = int(cells.n.min()), int(cells.n.max())
    n = f"n={lo}" if lo == hi else f"n={lo}-{hi}"
    if lo >= MIN_N:
        return f"95% bootstrap interval, {n}"
    return f"range where n<{MIN_N}, 95% bootstrap interval from {MIN_N} on; {n}"


def _errorbars(ax: plt.Axes, x: list[float], cells: pd.DataFrame, **kw: object) -> None:
    ax.errorbar(x, cells.value, yerr=[cells.value - cells.lo, cells.hi - cells.value], capsize=3, **kw)


def _bars(df: pd.DataFrame, y: str, title: str, ylabel: str, path: Path, estimator: str = "median",
          order: list[str] | None = None, spread: bool = False) -> Path:
    fig, ax = plt.subplots(figsize=(9, 4.5))
    if not spread:
        sns.barplot(data=df, x="query", y=y, hue="engine", hue_order=order, ax=ax, estimator=estimator, errorbar=None)
    else:
        cells = spread_cells(df, ["query", "engine"], y)
        queries = sorted(cells["query"].unique())
        engines = [e for e in (order or sorted(cells.engine.unique())) if e in set(cells.engine)]
        width = 0.8 / max(len(engines), 1)
        colors = sns.color_palette("deep", len(engines))
        for i, (engine, color) in enumerate(zip(engines, colors, strict=True)):
            mine = cells[cells.engine == engine].set_index("query").reindex(queries).dropna(subset=["value"])
            x = [queries.index(q) - 0.4 + width * (i + 0.5) for q in mine.index]
            ax.bar(x, mine.value, width=width, color=color, label=engine)
            _errorbars(ax, x, mine, fmt="none", ecolor="black", elinewidth=0.8)
        ax.set_xticks(range(len(queries)), queries)
        ax.legend(fontsize=8)
        title = f"{title} ({spread_label(cells)})"
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.tick_params(axis="x", rotation=15)
    return _save(fig, path)


def _query_latency(warm: pd.DataFrame, path: Path, order: list[str]) -> Path:
    """One panel per query: each engine's warm median latency per checkpoint with its interval."""
    cells = spread_cells(warm, ["query", "engine", "checkpoint"], "latency_s")
    queries = sorted(cells["query"].unique())
    cols = min(3, len(queries))
    rows = -(-len(queries) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.9 * rows), squeeze=False)
    engines = [e for e in order if e in set(cells.engine)]
    colors = dict(zip(engines, sns.color_palette("deep", len(engines)), strict=True))
    markers = "osD^vP*Xhp<>"
    for ax, query in zip(axes.flat, queries, strict=False):
        for i, engine in enumerate(engines):
            mine = cells[(cells["query"] == query) & (cells.engine == engine)].sort_values("checkpoint")
            if len(mine):
                _errorbars(ax, mine.checkpoint.tolist(), mine, color=colors[engine], marker=markers[i % len(markers)],
                           label=engine, markersize=4)
        ax.set_title(query, fontsize=9)
        ax.set_xlabel("checkpoint")
        ax.set_ylabel("seconds")
    for ax in list(axes.flat)[len(queries):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 0.95))
    fig.suptitle("Query latency per checkpoint: median of the warm runs of every repetition "
                 f"({spread_label(cells)})", y=1.02)
    fig.tight_layout()
    return _save(fig, path)


def _ingest_latency(results: Results, path: Path, order: list[str]) -> Path:
    """Per-batch ingest latency: the median over the repetitions, the band their range."""
    c = results.table("commits", all_repeats=True)
    c = c[c.kind == "ingest"]
    reps = int(c["repeat"].max()) + 1 if len(c) else 1
    title = "Per-batch ingest latency" + (f" (median of {reps} repetitions, band: their range)" if reps > 1 else "")
    return _line(c, "duration_s", title, "seconds", path, x="batch", order=order, estimator="median",
                 errorbar=("pi", 100))


def render_plots(results: Results, out: Path) -> dict[str, Path]:
    """All plots of the comparison report; returns name -> PNG path (plots without data are skipped)."""
    out.mkdir(parents=True, exist_ok=True)
    sns.set_theme(style="whitegrid")
    c = batch_axis(results.table("commits"))
    present = set(c.engine) | set(results.table("queries").engine) | set(results.table("maintenance").engine)
    order = [e for e in results.engines if e in present] + sorted(present - set(results.engines))
    c["cum_mb_written"] = c.cum_bytes_written / MB
    paths = {
        "live_files": _line(c, "live_files", "Live files (snapshot)", "files", out / "live_files.png", order=order),
        "physical_files": _line(c, "physical_files", "Physical files on storage (incl. replaced, not yet cleaned)",
                                "files", out / "physical_files.png", order=order),
        "bytes_written": _line(c, "cum_mb_written", "Cumulative data bytes written", "MB", out / "bytes_written.png", order=order),
        "write_amplification": _line(c, "wa", "Write amplification (cumulative bytes written / batch bytes)", "WA",
                                     out / "write_amplification.png", order=order),
        "space_amplification": _line(c, "space_amp", "Space amplification (bytes on storage / live bytes)", "ratio",
                                     out / "space_amplification.png", order=order),
        "ingest_latency": _ingest_latency(results, out / "ingest_latency.png", order),
    }
    m = results.table("maintenance", all_repeats=True)
    m = m[m.kind != "clean"]
    if len(m):
        fig, ax = plt.subplots(figsize=(8, 4.2))
        sns.scatterplot(data=m, x="batch", y="duration_s", hue="engine", style="engine", hue_order=order,
                        style_order=order, ax=ax, s=60, alpha=0.7)
        ax.set_title("Maintenance run duration (compaction / clustering), every run of every repetition")
        ax.set_ylabel("seconds")
        paths["maintenance"] = _save(fig, out / "maintenance.png")
    lag = lag_plot(results, out)
    if lag is not None:
        paths["stream_lag"] = lag
    q = results.table("queries", all_repeats=True)
    q = q[q.error.isna()] if "error" in q else q
    warm = q[q.run > 0] if (q.run > 0).any() else q
    if len(warm):
        paths["query_latency"] = _query_latency(warm, out / "query_latency.png", order)
        paths["query_final"] = _bars(warm[warm.checkpoint == warm.checkpoint.max()], "latency_s",
                                     "Final checkpoint: warm median latency per query", "seconds",
                                     out / "query_final.png", order=order, spread=True)
        q = q[q.repeat == 0]  # scan counts are exact: the first repetition's
        cold = q[(q.run == 0) & (q.checkpoint == q.checkpoint.max())]
        if len(cold):
            paths["query_files_scanned"] = _bars(cold, "files_scanned",
                                                 "Final checkpoint: files scanned per query (after pruning)", "files",
                                                 out / "query_files_scanned.png", estimator="max", order=order)
    return paths


def ledger_plot(review: dict, path: Path) -> Path | None:
    """The answer's figure: $ per TB ingested per candidate, stacked by part (candidates failing a
    required gate are left out; references are marked), the interval of the total as an error bar."""
    engines = shown_in_ledger(review)
    if not engines:
        return None
    parts = review["parts"]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    bottom = [0.0] * len(engines)
    colors = sns.color_palette("deep", len(parts))
    for part, color in zip(parts, colors, strict=True):
        vals = []
        for e in engines:
            iv = review["candidates"][e]["ledger"]["parts_usd_per_tb"].get(part)
            vals.append(iv["value"] if iv else 0.0)
        ax.bar(engines, vals, bottom=bottom, label=part, color=color)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    totals = [review["candidates"][e]["ledger"]["usd_per_tb"] for e in engines]
    ax.errorbar(engines, [t["value"] for t in totals], yerr=[[t["value"] - t["lo"] for t in totals],
                                                              [t["hi"] - t["value"] for t in totals]],
                fmt="none", ecolor="black", capsize=4)
    labels = [f"{e}\n{review['candidates'][e]['family']}" + ("" if review["candidates"][e]["competes"] else
                                                             "\n(reference)") for e in engines]
    ax.set_xticks(range(len(engines)), labels, rotation=0, fontsize=8)
    n = sorted({t["n"] for t in totals})
    ax.set_title("Cost over the table's life: $ per TB ingested, by part (bar: total's "
                 + ("95% interval" if min(n) >= 10 else f"range over repetitions, n={'/'.join(map(str, n))}") + ")")
    ax.set_ylabel("$ per TB ingested")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
    return _save(fig, path)
