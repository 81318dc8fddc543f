"""Commands that read finished runs: ``export`` (records as a table) and ``traces`` (OpenTelemetry
spans). :mod:`provbench.cli` adds them to the ``provbench`` group; heavy modules load inside them."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

console = Console(soft_wrap=True)
RUN_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command("export")
@click.argument("run_dir", type=RUN_DIR)
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "jsonl"]), default="parquet",
              show_default=True, help="File format of the table.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file (default: RUN_DIR/records.FORMAT).")
def export_cmd(run_dir: Path, fmt: str, out: Path | None) -> None:
    """Write RUN_DIR's records as one table, one row per unit: key, question, answer, status,
    footprint, tokens, the leak guard's verdict and every score (score.NAME)."""
    from .export import export_run

    console.print(f"exported: {export_run(run_dir, fmt, out)}", highlight=False)
