"""``provbench init``: a suite for the user's own documents and questions (:mod:`provbench.scaffold`)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from .cli_options import out_option

console = Console(soft_wrap=True)


@click.command("init")
@click.option(
    "--docs",
    "docs",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder of your documents (.txt, .md, .html, .pdf).",
)
@click.option(
    "--questions",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Your questions: .csv, .jsonl, .json or .parquet (docs/own-data.md lists the columns).",
)
@click.option(
    "--system",
    "systems",
    multiple=True,
    help="A system to evaluate (repeatable; default: paper 000's llm-only, rag, graphrag, agentic-graphrag).",
)
@out_option("Where to write the suite.", default=Path("suite.yaml"))
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
def init_cmd(docs: Path, questions: Path, systems: tuple[str, ...], out: Path, force: bool) -> None:
    """Write a commented suite that evaluates GraphRAG on your own documents and questions; it runs as
    written (`provbench kb build`, `provbench run`, `provbench validate`)."""
    from .registry import default_registry
    from .scaffold import DEFAULT_SYSTEMS, write_suite

    path, summary = write_suite(default_registry(), docs, questions, out, list(systems or DEFAULT_SYSTEMS), force)
    console.print(
        f"suite: {path} ({summary})\nnext: provbench kb build {path}; provbench run {path}; provbench validate {path}",
        highlight=False,
        markup=False,
    )
