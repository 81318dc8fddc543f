"""Which new concepts a round keeps when more are reachable than its frontier holds.

The paper caps the frontier at 12 concepts and focuses each round's query "on what the previous
hop found"; it does not say which neighbours survive the cap. Here the candidates (concepts not
visited yet, reached by an edge the round follows) are ranked by relevance to the focus, then
kept in that order until the cap:

1. reached by a relation type the model chose last round;
2. reached by a relation type the question or the focus names ("builds_on" is named by "what
   does X build on"; ``_`` and ``-`` read as spaces, a final "s" ignored, whole words only);
3. more words of the question and focus in the concept's name;
4. the store's order (outgoing edges first, then by relation id), so the ranking is deterministic.

A concept reached by several edges counts with its best one.
"""

from __future__ import annotations

import re
from typing import Iterable

from provbench.kb.types import Neighbor

_NON_WORD = re.compile(r"[^\w]+")
MIN_WORD_CHARS = 3  # shorter words ("of", "it", "a") say nothing about relevance


def words_of(text: str) -> list[str]:
    """Lower-cased words, a plural or third-person "s" dropped ("builds" and "build" are one word)."""
    words = _NON_WORD.sub(" ", text.replace("_", " ").casefold()).split()
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words]


class Focus:
    """The text a round is focused on (the question and the last focus) and the chosen relation types."""

    def __init__(self, question: str, focus: str, chosen_types: Iterable[str] = ()):
        words = words_of(f"{question} {focus}")
        self.padded = f" {' '.join(words)} "
        self.words = {w for w in words if len(w) >= MIN_WORD_CHARS}
        self.chosen = set(chosen_types)

    def names_relation(self, label: str) -> bool:
        phrase = " ".join(words_of(label))
        return bool(phrase) and f" {phrase} " in self.padded

    def key(self, neighbour: Neighbor) -> tuple[bool, bool, int]:
        label = neighbour.relation.label
        overlap = len(self.words & set(words_of(neighbour.entity.name)))
        return (label not in self.chosen, not self.names_relation(label), -overlap)


def rank_candidates(candidates: list[Neighbor], focus: Focus) -> list[Neighbor]:
    """One neighbour per new concept, most relevant first (module docstring); ties keep their order."""
    ranked: dict[str, Neighbor] = {}
    for neighbour in sorted(candidates, key=focus.key):  # a stable sort: ties keep the store's order
        ranked.setdefault(neighbour.entity.id, neighbour)
    return list(ranked.values())
