"""A seeded generator of an invented world, written as 2WikiMultiHopQA questions (plain dev.json).

Why invented: paper 000 drops the questions a bare LLM answers from memory. Here every person,
film, novel, place and country is made up (names built from random syllables), so no model can
know a single fact, and the llm-only baseline plays that exclusion role by construction.

The world: families of three generations (grandparents, notable parents, children who are film
directors or novelists), the children's films and novels, marriages across families, films based
on novels, and namesakes (a novel with the title of an unrelated film: "Glass Harbor (film)" and
"Glass Harbor (novel)"). Every entity has one fixed paragraph, so the same paragraph recurs in
several questions and the knowledge graph built from them connects.

Questions follow 2Wiki's templates (compositional, inference, comparison, bridge_comparison);
the gold paragraphs are the ones stating each evidence triple. Distractors are other world
paragraphs, of two sorts, told apart with the very test ``twowiki_selection.category`` applies:

- traps, which overlap the gold route: a namesake work, a paragraph mentioning a hop entity (the
  director's other film, the spouse of the bridge person, the novel a film adapts) or the
  answer's own paragraph. Each offers a wrong but plausible next hop (the novel's author instead
  of the film's director, the maternal instead of the paternal grandfather);
- clean paragraphs of similar entities (other directors, other films, a director whose mother has
  the same occupation), which look alike but never touch the route.

A local-path question gets clean distractors only, a distractor-path question at least one trap,
and comparison questions are summary-vs-local whatever their distractors. Each record is checked
with ``category`` and ``ineligible_reason`` before it is kept, so the requested mix is met exactly
and every record is eligible.

Pure Python and linear in the number of questions: one family (some 9 paragraphs, 12 entities) per
question. Modules: :mod:`.names` (invented names), :mod:`.world` (families, works, paragraphs,
relations), :mod:`.questions` (the four templates and distractor choice), :mod:`.identities` (the
data_ids release's ids and the aliases of ``id_aliases.json``).
``python -m provbench_tools.world_2wiki OUT [--questions N] [--seed S]`` writes a world to OUT and
its ``id_aliases.json`` beside it; with no options but OUT it writes datasets/2wiki-mini's.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .identities import Identities, alias_lines
from .questions import QuestionWriter
from .world import (
    DEFAULT_PROPORTION,
    FAMILIES_PER_QUESTION,
    INFERENCE_SHARE,
    MINI_SEED,
    MINI_SIZE,
    PARAGRAPHS_PER_QUESTION,
    World,
)

ALIASES_FILE = "id_aliases.json"

__all__ = [
    "generate_world",
    "generate_release",
    "write_world",
    "ALIASES_FILE",
    "resolve_mix",
    "MINI_SEED",
    "MINI_SIZE",
    "PARAGRAPHS_PER_QUESTION",
]


def resolve_mix(n_questions: int, mix: Sequence[int] | None) -> tuple[int, int, int]:
    """Counts of (local-path, distractor-path, summary-vs-local); default 40% / 40% / 20%."""
    if n_questions < 0:
        raise ValueError(f"n_questions must be >= 0, got {n_questions}")
    if mix is None:
        local = distractor = round(n_questions * DEFAULT_PROPORTION[0] / sum(DEFAULT_PROPORTION))
        return local, distractor, n_questions - local - distractor
    counts = tuple(int(c) for c in mix)
    if len(counts) != 3 or min(counts) < 0 or sum(counts) != n_questions:
        raise ValueError(f"mix must be 3 non-negative counts summing to n_questions={n_questions}, got {mix!r}")
    return counts  # type: ignore[return-value]


def _slots(counts: tuple[int, int, int]) -> list[tuple[str, str]]:
    """(category, type) per question: bridge categories split compositional / inference."""
    local, distractor, summary = counts
    slots = []
    for category, n in (("local-path", local), ("distractor-path", distractor)):
        inference = round(n * INFERENCE_SHARE)
        slots += [(category, "compositional")] * (n - inference) + [(category, "inference")] * inference
    bridge = summary // 2
    slots += [("summary-vs-local", "comparison")] * (summary - bridge)
    slots += [("summary-vs-local", "bridge_comparison")] * bridge
    return slots


def generate_world(
    n_questions: int = MINI_SIZE, seed: int = MINI_SEED, mix: tuple[int, int, int] | None = None
) -> list[dict[str, Any]]:
    """``n_questions`` 2Wiki records in a world invented from ``seed``, in the requested mix."""
    return generate_release(n_questions, seed, mix)[0]


def generate_release(
    n_questions: int = MINI_SIZE, seed: int = MINI_SEED, mix: tuple[int, int, int] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The records and the lines of their ``id_aliases.json`` (:mod:`.identities`)."""
    counts = resolve_mix(n_questions, mix)
    rng = random.Random(seed)
    world = World(rng, max(6, math.ceil(n_questions * FAMILIES_PER_QUESTION)))
    identities = Identities(world)
    writer = QuestionWriter(world, rng, identities)
    records, namesake_shown = [], False
    for category, qtype in _slots(counts):
        # the first distractor-path compositional question is about a film with a namesake
        prefer = category == "distractor-path" and qtype == "compositional" and not namesake_shown
        records.append(writer.write(category, qtype, prefer))
        namesake_shown = namesake_shown or prefer
    rng.shuffle(records)  # categories interleave in file order, as in 2Wiki
    return records, alias_lines(identities, records)


def write_world(
    path: str | Path, n_questions: int = MINI_SIZE, seed: int = MINI_SEED, mix: tuple[int, int, int] | None = None
) -> Path:
    """Writes the records to ``path`` and, beside it, their ``id_aliases.json`` (JSON lines, as the
    data_ids release ships it; a suite reads it with the 2wiki loader's option ``id_aliases``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    records, aliases = generate_release(n_questions, seed, mix)
    path.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in aliases)
    (path.parent / ALIASES_FILE).write_text(lines, encoding="utf-8")
    return path
