"""The ``layoutbench`` command line."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Benchmark and simulate Hudi RFC-19 small-file designs on Spark.")
console = Console()


@app.callback()
def _root() -> None:
    """Benchmark and simulate Hudi RFC-19 small-file designs on Spark."""


def fail(message: str, code: int = 2) -> None:
    """Print one clear error and exit non-zero."""
    Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


@app.command()
def inspect(
    table: str = typer.Argument(..., help="table base path or URI"),
    as_of: str | None = typer.Option(None, "--as-of", help="17-digit instant to time-travel to"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    small_file_limit_mb: float = typer.Option(100.0, help="small-file threshold for the count"),
) -> None:
    """Print a Hudi table's timeline, partitions, file groups, file sizes and row count."""
    from bench.inspect_table import inspect_table

    try:
        info = inspect_table(table, as_of=as_of, small_file_limit=int(small_file_limit_mb * (1 << 20)))
    except (OSError, ValueError, RuntimeError) as exc:
        fail(str(exc))
        return
    if as_json:
        json.dump(info, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    console.print(f"[bold]{info['table_name']}[/] at {info['base_path']} — {info['table_type']}, "
                  f"table version {info['table_version']}, timeline layout {info['timeline_layout']}"
                  + (f", as of {as_of}" if as_of else ""))
    tl = Table("instant", "action", "state", title="timeline")
    for i in info["timeline"]:
        tl.add_row(i["instant"], i["action"], i["state"].lower())
    console.print(tl)
    parts = Table("partition", "live files", "bytes", "rows", title="partitions (snapshot)")
    for p, d in info["partitions"].items():
        parts.add_row(p or "(none)", str(d["live_files"]), f"{d['bytes']:,}", f"{d['rows']:,}")
    console.print(parts)
    hist = Table("size", "files", title="live file sizes")
    for label, n in info["size_histogram"].items():
        hist.add_row(label, str(n))
    console.print(hist)
    console.print(
        f"file groups {info['file_groups']} · live files {info['live_files']} · physical files "
        f"{info['physical_files']} · small files (<{info['small_file_limit'] / (1 << 20):g} MB) "
        f"{info['small_files']} · mean {info['mean_file_bytes']:,} B · space amplification "
        f"{info['space_amplification']} · snapshot rows {info['snapshot_rows']:,}"
    )


def main() -> None:
    app()


if __name__ == "__main__":
    main()
