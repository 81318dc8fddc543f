"""``provbench generate``: questions with gold chains from a suite's knowledge base (:mod:`provbench.question_gen`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
from rich.console import Console

from .cli_options import MODEL_HELP, PLUGIN_OPTION, out_option

console = Console(soft_wrap=True)


@click.command("generate")
@PLUGIN_OPTION
@click.argument("suite")
@out_option(
    "Where to write the questions (JSON lines, the qa loader's format).", default=Path("generated-questions.jsonl")
)
@click.option("--count", type=click.IntRange(1, 10_000), default=20, show_default=True, help="Questions to draw.")
@click.option("--hops", type=click.IntRange(1, 4), default=2, show_default=True, help="Relations per chain.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draw.")
@click.option(
    "--model", default=None, help="The model that phrases the questions (default: the suite's). " + MODEL_HELP
)
@click.option(
    "--suite-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write a copy of SUITE that runs on the generated questions and the same KB.",
)
@click.option("--force", is_flag=True, help="Replace --out and --suite-out if they exist.")
def generate_cmd(
    suite: str, out: Path, count: int, hops: int, seed: int, model: str | None, suite_out: Path | None, force: bool
) -> None:
    """Draw multi-hop questions along relations SUITE's knowledge base holds (built or reused as
    `kb build` does), each with its gold chain, phrased by the suite's model (docs/own-data.md says
    what such questions can and cannot show)."""
    from .bundled import resolve_suite
    from .errors import UserError
    from .kb import KnowledgeBase
    from .kb.sources import text_unit_sources
    from .llm_setup import make_run_llm
    from .local_plugins import plugin_setup
    from .question_gen import generate_questions, generated_suite, write_rows
    from .runner import build_suite_kb, kb_llm_cache_dir, prepare_suite

    for path in (out, suite_out):
        if path is not None and path.exists() and not force:
            raise UserError(f"{path} exists; choose another path or pass --force to replace it")
    suite_path = resolve_suite(suite)
    kb_dir, _, _ = build_suite_kb(suite_path, model=model, console=console)
    loaded = prepare_suite(suite_path, plugin_setup(suite_path)[1], model, None)
    llm = make_run_llm(loaded.suite.model, kb_llm_cache_dir(kb_dir), loaded.suite.concurrency)
    files = {unit: source.get("file") or "" for unit, source in text_unit_sources(kb_dir).items()}
    with KnowledgeBase.open(kb_dir, read_only=True) as kb:
        rows = generate_questions(kb, llm, files, count=count, hops=hops, seed=seed)
    write_rows(rows, out)
    phrasing = Counter("model" if row["phrasing"] == "model" else "template" for row in rows)
    console.print(
        f"questions: {out} ({len(rows)} of {count} asked, {hops} hop(s) each; phrased by the model "
        f"{phrasing['model']}, by the template {phrasing['template']})",
        highlight=False,
        markup=False,
    )
    if suite_out is not None:
        suite_out.parent.mkdir(parents=True, exist_ok=True)
        suite_out.write_text(generated_suite(suite_path, out, kb_dir, suite_out), encoding="utf-8")
        console.print(
            f"suite: {suite_out} (next: provbench run {suite_out}; provbench validate {suite_out})",
            highlight=False,
            markup=False,
        )
