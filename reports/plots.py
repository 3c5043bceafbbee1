"""Seaborn plots of a results folder, written as PNG files."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from bench.results import Results  # noqa: E402

MB = 1 << 20


def _line(df: pd.DataFrame, y: str, title: str, ylabel: str, path: Path, x: str = "seq") -> Path:
    fig, ax = plt.subplots(figsize=(8, 4.2))
    if len(df):
        sns.lineplot(data=df, x=x, y=y, hue="engine", ax=ax, drawstyle="steps-post")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("instant (ingest and maintenance, in order)" if x == "seq" else x)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def render_plots(results: Results, out: Path) -> dict[str, Path]:
    """All plots of the comparison report; returns name -> PNG path."""
    out.mkdir(parents=True, exist_ok=True)
    sns.set_theme(style="whitegrid")
    c = results.table("commits").sort_values(["engine", "seq"]).copy()
    c["cum_mb_written"] = c.cum_bytes_written / MB
    paths = {
        "live_files": _line(c, "live_files", "Live files (snapshot)", "files", out / "live_files.png"),
        "physical_files": _line(c, "physical_files", "Physical files on storage", "files", out / "physical_files.png"),
        "bytes_written": _line(c, "cum_mb_written", "Cumulative data bytes written", "MB", out / "bytes_written.png"),
        "write_amplification": _line(c, "wa", "Write amplification (cumulative)", "WA", out / "write_amplification.png"),
        "space_amplification": _line(c, "space_amp", "Space amplification (storage / live)", "ratio",
                                     out / "space_amplification.png"),
    }
    ing = c[c.kind == "ingest"]
    paths["ingest_latency"] = _line(ing, "duration_s", "Per-batch ingest latency", "seconds",
                                    out / "ingest_latency.png", x="batch")
    q = results.table("queries")
    warm = q[q.run > 0] if (q.run > 0).any() else q
    if len(warm):
        g = sns.relplot(data=warm, x="checkpoint", y="latency_s", hue="engine", col="query", kind="line",
                        col_wrap=3, height=2.8, aspect=1.2, facet_kws={"sharey": False})
        g.figure.suptitle("Query latency per checkpoint (warm runs)", y=1.02)
        p = out / "query_latency.png"
        g.figure.savefig(p, dpi=80, bbox_inches="tight")
        plt.close(g.figure)
        paths["query_latency"] = p
        final = warm[warm.checkpoint == warm.checkpoint.max()]
        fig, ax = plt.subplots(figsize=(9, 4.5))
        sns.barplot(data=final, x="query", y="latency_s", hue="engine", ax=ax, estimator="median", errorbar=None)
        ax.set_title("Final checkpoint: warm median latency per query")
        ax.set_ylabel("seconds")
        ax.tick_params(axis="x", rotation=15)
        fig.tight_layout()
        p = out / "query_final.png"
        fig.savefig(p, dpi=90)
        plt.close(fig)
        paths["query_final"] = p
        cold = q[(q.run == 0) & (q.checkpoint == q.checkpoint.max())]
        fig, ax = plt.subplots(figsize=(9, 4.5))
        sns.barplot(data=cold, x="query", y="files_scanned", hue="engine", ax=ax, errorbar=None)
        ax.set_title("Final checkpoint: files scanned per query (after min/max pruning)")
        ax.tick_params(axis="x", rotation=15)
        fig.tight_layout()
        p = out / "query_files_scanned.png"
        fig.savefig(p, dpi=90)
        plt.close(fig)
        paths["query_files_scanned"] = p
    return paths
