"""Markdown pieces every report section shares; a leaf module: it imports no other module of ``reports``."""

from __future__ import annotations

import pandas as pd


def md_table(df: pd.DataFrame) -> str:
    """A Markdown table; ``|`` inside cells is replaced so the table stays intact."""
    if df.empty:
        return "_(no rows)_\n"
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "/") for v in row) + " |")
    return "\n".join(lines) + "\n"
