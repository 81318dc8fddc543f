"""Seed concepts: the concepts whose name occurs in the question, most specific first.

A name *occurs* when it equals, ignoring case, a run of whole words of the question (hyphens,
apostrophes and inner punctuation kept, as in "Chain-of-Thought Prompting").

*Most specific* (the paper names the rule, not the measure), in this order:

1. a match that lies inside a longer match is dropped ("GraphRAG" inside "Agentic GraphRAG");
2. longer names first (more characters: a longer name narrows the topic more);
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
    start: int
    end: int
    degree: int

    @property
    def key(self) -> tuple:
        return (-len(self.entity.name), self.degree, self.entity.id)


def question_spans(question: str) -> dict[str, tuple[int, int]]:
    """Every run of up to MAX_NAME_WORDS whole words, lower-cased -> its first (start, end)."""
    words = list(WORD.finditer(question))
    spans: dict[str, tuple[int, int]] = {}
    for i, first in enumerate(words):
        for last in words[i:i + MAX_NAME_WORDS]:
            text = question[first.start():last.end()].lower()
            spans.setdefault(text, (first.start(), last.end()))
    return spans


def select_seeds(view: Any, question: str, max_seeds: int, min_chars: int = 3) -> list[SeedMatch]:
    """Up to ``max_seeds`` seed concepts named in ``question``, most specific first (module docstring)."""
    spans = question_spans(question)
    candidates = [e for e in view.entities_named(spans) if len(e.name.strip()) >= min_chars]
    matches = sorted((SeedMatch(e, *spans[e.name.strip().lower()], degree=len(view.neighbors(e.id)))
                      for e in candidates), key=lambda m: m.key)
    chosen: list[SeedMatch] = []
    for match in matches:
        nested = any(c.start <= match.start and match.end <= c.end and (c.start, c.end) != (match.start, match.end)
                     for c in matches)
        if not nested:
            chosen.append(match)
        if len(chosen) == max_seeds:
            break
    return chosen
