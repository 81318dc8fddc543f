"""Seed concepts: the concepts whose name (or an alias) occurs in the question, most specific first.

A name *occurs* when it equals, ignoring case, a run of whole words of the question (hyphens,
apostrophes and inner punctuation kept, as in "Chain-of-Thought Prompting"). A concept's aliases
(``Entity.aliases``, e.g. "RAG" for Retrieval-Augmented Generation) count as its names.

*Most specific* (the paper names the rule, not the measure), in this order:

1. a concept all of whose occurrences lie inside a longer matched name is dropped ("GraphRAG"
   inside "Agentic GraphRAG");
2. longer names first (the longest of its names that occurs; more characters: a longer name
   narrows the topic more);
3. among names of equal length, the concept with fewer active edges first (rarer in the graph);
4. then the entity id, so the order is deterministic.

Names shorter than ``min_chars`` characters are ignored ("It", "US"): on extracted KBs they are
often pronouns or abbreviations that match by accident.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from provbench.kb.types import Entity

WORD = re.compile(r"\w+(?:[-'’.]\w+)*")
MAX_NAME_WORDS = 12


@dataclass(frozen=True)
class SeedMatch:
    entity: Entity
    spans: tuple[tuple[int, int], ...]  # every place the name occurs in the question
    degree: int

    matched: str = ""  # the longest of its names that occurs in the question

    @property
    def key(self) -> tuple:
        return (-len(self.matched or self.entity.name), self.degree, self.entity.id)


def question_spans(question: str) -> dict[str, list[tuple[int, int]]]:
    """Every run of up to MAX_NAME_WORDS whole words, lower-cased -> where it occurs (start, end)."""
    words = list(WORD.finditer(question))
    spans: dict[str, list[tuple[int, int]]] = {}
    for i, first in enumerate(words):
        for last in words[i : i + MAX_NAME_WORDS]:
            spans.setdefault(question[first.start() : last.end()].lower(), []).append((first.start(), last.end()))
    return spans


def _inside(span: tuple[int, int], other: tuple[int, int]) -> bool:
    return other[0] <= span[0] and span[1] <= other[1] and span != other


def select_seeds(view: Any, question: str, max_seeds: int, min_chars: int = 3) -> list[SeedMatch]:
    """Up to ``max_seeds`` seed concepts named in ``question``, most specific first (module docstring)."""
    spans = question_spans(question)
    matches = []
    for entity in view.entities_named(spans):
        names = [
            n.strip()
            for n in (entity.name, *entity.aliases)
            if len(n.strip()) >= min_chars and n.strip().lower() in spans
        ]
        if names:
            found = tuple(span for n in names for span in spans[n.lower()])
            matches.append(SeedMatch(entity, found, degree=len(view.neighbors(entity.id)), matched=max(names, key=len)))
    matches.sort(key=lambda m: m.key)
    every_span = [span for m in matches for span in m.spans]
    # a name all of whose occurrences lie inside longer matched names is not a seed
    free = [m for m in matches if any(not any(_inside(s, o) for o in every_span) for s in m.spans)]
    return free[:max_seeds]
