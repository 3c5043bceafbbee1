"""Reports rendered from a results folder alone: comparison, design review, run-to-run comparison."""

from reports.compare import compare_runs
from reports.render import render_report

__all__ = ["compare_runs", "render_report"]
