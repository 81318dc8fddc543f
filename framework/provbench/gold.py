"""Gold evidence: what answers a question, in the dataset's own terms.

A loader that knows it sets ``Question.gold`` (and declares ``DatasetLoader.provides_gold``):

* 2WikiMultiHopQA: the supporting facts as sentences (title, sentence index, text) in one group,
  and the evidence triples;
* FEVER: the evidence sentences, in groups (any one complete group verifies or refutes the claim);
* generated worlds (medical, curriculum): the gold path or chain as ordered triples
  (``ordered=True``), with the entities along it.

Two things read it, both through this one interface: the known-truth controls
(:mod:`provbench.controls`: does a prompt hold the evidence?) and the gold-trajectory scores (what
of the gold did a system retrieve, visit, read, cite?). Mapping gold onto a knowledge base's ids is
a separate step (per KB), never done here: gold stays in dataset terms.

"The text holds the gold evidence" (:meth:`GoldEvidence.held_in`) means one alternative is held
completely: every sentence of one sentence group appears in the text (whitespace-normalised, case
ignored), or every triple appears as a relation line (a single line naming its subject, its
relation and its object, case ignored, ``_`` and ``-`` read as spaces in the relation).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, model_validator

_SPACES = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Whitespace collapsed to single spaces, case folded: how gold is matched in a prompt."""
    return _SPACES.sub(" ", text).strip().casefold()


def normalize_relation(label: str) -> str:
    return normalize_text(label.replace("_", " ").replace("-", " "))


class GoldSentence(BaseModel):
    """One evidence sentence: its document (2Wiki title, FEVER page), its index there, its text."""

    model_config = ConfigDict(frozen=True)

    document: str
    index: int | None = None
    text: str = Field("", description="the sentence itself; '' when the dataset gave only its position")

    def held_in(self, normalized: str) -> bool:
        return bool(self.text.strip()) and normalize_text(self.text) in normalized


class GoldTriple(BaseModel):
    """One evidence statement (subject, relation, object), by names as the dataset writes them."""

    model_config = ConfigDict(frozen=True)

    subject: str
    relation: str
    object: str

    def held_in_line(self, normalized_line: str) -> bool:
        return (
            normalize_text(self.subject) in normalized_line
            and normalize_text(self.object) in normalized_line
            and normalize_relation(self.relation) in normalize_relation(normalized_line)
        )

    def held_in(self, lines: Iterable[str]) -> bool:
        return any(self.held_in_line(line) for line in lines)


class GoldEvidence(BaseModel):
    """A question's gold evidence (see the module docstring for what each dataset puts here).

    ``sentence_groups``: alternatives, as indices into ``sentences``; each complete group is
    enough. Empty means one group of every sentence. ``triples``: one more alternative (all of
    them); ``ordered``: the triples are a chain, in order (a gold path). ``entities``: names of
    the entities the evidence is about (a path's nodes in order, 2Wiki's evidence entities).
    """

    model_config = ConfigDict(extra="forbid")

    sentences: list[GoldSentence] = Field(default_factory=list)
    sentence_groups: list[list[int]] = Field(default_factory=list)
    triples: list[GoldTriple] = Field(default_factory=list)
    ordered: bool = False
    entities: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _groups_index_sentences(self) -> "GoldEvidence":
        for g, group in enumerate(self.sentence_groups):
            bad = [i for i in group if not 0 <= i < len(self.sentences)]
            if bad or not group:
                raise ValueError(
                    f"sentence_groups[{g}] must be non-empty indices into sentences "
                    f"(0..{len(self.sentences) - 1}), got {group}"
                )
        return self

    @property
    def empty(self) -> bool:
        return not self.sentences and not self.triples

    def groups(self) -> list[list[GoldSentence]]:
        """The sentence alternatives (each a complete group), in order."""
        if not self.sentences:
            return []
        groups = self.sentence_groups or [list(range(len(self.sentences)))]
        return [[self.sentences[i] for i in group] for group in groups]

    def held_in(self, text: str) -> bool:
        """True when ``text`` holds one alternative completely (module docstring)."""
        normalized = normalize_text(text)
        if any(all(s.held_in(normalized) for s in group) for group in self.groups()):
            return True
        if self.triples:
            lines = [normalize_text(line) for line in text.splitlines() if line.strip()]
            return all(t.held_in(lines) for t in self.triples)
        return False

    def missing_from(self, text: str) -> list[GoldSentence | GoldTriple]:
        """What the closest alternative still lacks in ``text`` (empty when it is held)."""
        normalized = normalize_text(text)
        lines = [normalize_text(line) for line in text.splitlines() if line.strip()]
        options: list[list[GoldSentence | GoldTriple]] = [
            [s for s in group if not s.held_in(normalized)] for group in self.groups()
        ]
        if self.triples:
            options.append([t for t in self.triples if not t.held_in(lines)])
        return min(options, key=len) if options else []


# Question.metadata key: why the loader claims no gold evidence from what the question's row gave
# (the ``qa`` loader: its answer is in none of its supporting documents); every surface names it
UNCLAIMED = "gold_unclaimed"


def unclaimed_lines(questions: Iterable[Any]) -> list[str]:
    """The questions whose gold evidence was not claimed (:data:`UNCLAIMED`), each named with why,
    for ``data info``, ``init``, ``plan`` and the run's gold-evidence line; [] when there is none."""
    found = {q.id: q.metadata[UNCLAIMED] for q in questions if q.metadata.get(UNCLAIMED)}
    if not found:
        return []
    head = f"gold evidence not claimed for {len(found)} question(s) (their supporting documents are not their gold):"
    return [head, *(f"  {qid}: {why}" for qid, why in found.items())]


__all__ = [
    "UNCLAIMED",
    "GoldEvidence",
    "GoldSentence",
    "GoldTriple",
    "unclaimed_lines",
    "normalize_text",
    "normalize_relation",
]
