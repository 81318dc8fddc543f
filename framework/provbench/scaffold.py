"""``provbench init``: a commented suite for the user's own documents and questions, which runs as
written (docs/own-data.md walks through it).

The suite reads the questions with the ``qa`` loader (its ``documents`` option: the folder the
``supporting_documents`` column names), builds the knowledge base with the ``documents`` builder,
runs the chosen systems (default: paper 000's four), paper 000's six graph ablations on the graph
systems with its exclusion step, the answer and provenance metrics, and, when the questions carry
gold evidence, gold trajectories and known-truth controls (``provbench validate``). The questions
are loaded first, so a bad file is reported (file, row, field) before anything is written.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import PluginError, UserError
from .gold import unclaimed_lines

if TYPE_CHECKING:
    from .registry import Registry

DEFAULT_SYSTEMS = ("llm-only", "p000/rag", "graphrag", "agentic-graphrag")
NOT_GRAPH = {"llm-only", "rag", "vanilla-rag", "vector-rag"}  # systems the graph ablations cannot change
ABLATIONS = (
    "cited-removal",
    "random-removal",
    "full-isolation",
    "text-only-isolation",
    "entity-removal",
    "entity-text-mask",
)


def relative(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def probe_questions(registry: "Registry", questions: Path, documents: str) -> tuple[int, int, Counter, list[str]]:
    """(questions, questions with gold, answer types, the lines naming questions whose gold was
    not claimed) of the file, read as the suite will read it."""
    loaded = registry.create("dataset_loader", "qa").load(str(questions), documents=documents)
    types = Counter(q.metadata["answer_type"] for q in loaded)
    return len(loaded), sum(q.gold is not None for q in loaded), types, unclaimed_lines(loaded)


def suite_text(
    name: str, questions: str, documents: str, systems: list[str], count: int, with_gold: int, types: Counter
) -> str:
    keys = [s.rsplit("/", 1)[-1] for s in systems]
    graph = [k for k in keys if k not in NOT_GRAPH]
    kinds = ", ".join(f"{n} {t}" for t, n in types.most_common())
    lines = [
        "# Written by `provbench init`: your documents and questions, evaluated as paper 000 evaluates",
        "# GraphRAG (docs/own-data.md). Edit freely; `provbench run` checks every field and names the line.",
        f"name: {name}",
        f"description: Own documents ({documents}) and {count} questions ({kinds}).",
        "",
        "dataset:",
        "  loader: qa                # a plain question file: jsonl, json, csv, parquet or a hub id",
        f"  path: {questions}    # relative to this file",
        "  options:",
        f"    documents: {documents}   # the folder your supporting_documents name (relative to the question file)",
        "    # fields: {question: my_question, answer: my_answer}   # when your columns have other names",
        "",
        "knowledge_base:",
        "  builder: documents        # chunks, extraction with the model below, entity resolution, communities",
        "  options:",
        "    chunk_size: 256           # tokens per text unit",
        "    # extractor: llamaindex-schema   # LlamaIndex's SchemaLLMPathExtractor instead of provbench's block",
        "    # max_failed_extraction_share: 0.5   # a KB whose extraction failed more often is refused",
        "",
        "model:",
        "  id: embedded              # the tiny local model: a pipeline check, not a result; use a litellm id,",
        "  params: {}                # e.g. deepseek/deepseek-chat, or --model on the command line",
        "",
        "systems:",
        *[f"  - {s}" for s in systems],
    ]
    if graph:
        lines += [
            "",
            "# paper 000's six graph ablations (Table 2), on the systems that read the graph",
            f"intervention_systems: [{', '.join(graph)}]",
            "interventions:",
        ]
        lines += [
            f"  - {a}" if a != "random-removal" else "  - {name: random-removal, options: {repeats: 1}}"
            for a in ABLATIONS
        ]
    if "llm-only" in keys and graph:
        lines += [
            "",
            "# questions the LLM alone answers right say nothing about the graph: left out of Table 2",
            "exclusion:",
            "  reference_system: llm-only",
        ]
    lines += [
        "",
        "metrics:",
        "  - accuracy",
        "  - em                        # exact match and token F1 of free-text answers",
        "  - f1",
        "  - output-changed",
        "  - footprint",
        "  - provenance",
    ]
    if with_gold:
        lines += ["  - gold-trajectory           # what of your supporting documents each system retrieved and cited"]
    lines += ["", "seed: 0", "concurrency: 2"]
    if with_gold and "llm-only" in keys and graph:
        lines += controls_block(questions, documents, graph)
    return "\n".join(lines) + "\n"


def controls_block(questions: str, documents: str, graph: list[str]) -> list[str]:
    """The controls of the suite's own graph systems, each read by claims (so a system replaced
    in ``systems:`` but left here is warned of by validate: docs/controls.md)."""
    lines = [
        "",
        "# Known-truth controls (`provbench validate`): LLMs of known behaviour run this suite's systems",
        "# offline on your questions; each claim says what their runs must show (docs/controls.md).",
        "# Replace a system above and replace it here too (validate warns of claims about systems not run).",
        "controls:",
        "  dataset:",
        "    loader: qa",
        f"    path: {questions}",
        f"    options: {{documents: {documents}}}",
        "  knowledge_base: {builder: documents, options: {chunk_size: 256}}",
        "  llms: [oracle, parametric, ignores-context]",
        "  differences:               # what the controls run otherwise than this suite (printed with the verdicts)",
        f"    systems: [llm-only, {', '.join(graph)}]",
        f"    intervention_systems: [{', '.join(graph)}]",
        "    interventions: [cited-removal, random-removal, full-isolation]",
        "    metrics: [accuracy, gold-trajectory]",
        "  claims:",
        "    - p000/exclusion-reference",
    ]
    for system in graph:
        lines += [
            "    - name: p000/cited-removal-beats-random   # the oracle's answers follow its cited evidence",
            f"      label: cited-beats-random/{system}",
            f"      options: {{system: {system}, expect: [{{control: oracle, effect: true}}]}}",
        ]
    lines += [  # the agent's only: a reader of all text units is changed by a random set as by the real one
        "    - name: p000/ignores-context-unchanged   # full isolation too, with uses-uncited among the llms,",
        f"      options: {{conditions: [cited-removal], system: {graph[-1]}}}   # once your questions can show it",
        '      expect_not_measurable: {ignores-context: "it cites nothing, so cited removal hides nothing for it"}',
    ]
    return lines


def write_suite(
    registry: "Registry", docs: Path, questions: Path, out: Path, systems: list[str], force: bool = False
) -> tuple[Path, str]:
    """Write the suite to ``out``; returns (path, a one-line summary)."""
    if out.exists() and not force:
        raise UserError(f"{out} exists; choose another --out or pass --force to replace it")
    if not docs.is_dir():
        raise UserError(f"--docs {docs}: no such folder")
    for system in systems:  # an unknown name, or one that needs options, fails here: the suite must run as written
        try:
            registry.create("system", system)
        except (PluginError, UserError) as err:
            raise UserError(
                f"--system {system}: {err} (add a system that needs options to the suite by hand)"
            ) from None
    documents = relative(docs, questions.parent)
    count, with_gold, types, unclaimed = probe_questions(registry, questions, documents)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", out.stem).strip("-.") or "own-data"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        suite_text(name, relative(questions, out.parent), documents, systems, count, with_gold, types), encoding="utf-8"
    )
    summary = f"{count} question(s), {with_gold} with gold evidence; systems: {', '.join(systems)}"
    return out, "\n".join([summary, *unclaimed])
