"""The authors' graph-answer gate, from their released pipeline (the paper only names a
"consistency threshold 0.7"): GA-RAG answers from the graph unless the graph is too small, too
inconsistent or the answer too little grounded in it, and then returns the baseline's answer.

* coverage: at least ``low_coverage_facts`` (authors: 5) facts shown;
* consistency score (their formula) >= ``consistency_threshold`` (authors: 0.7):
  ``0.5 x mean confidence + 0.3 x (1 - contradictions / n) + 0.2 x min(1, inferences / (5 n))``
  over the n facts of the local graph (0 for an empty graph). Their contradiction check compares
  an edge's relation with another relation on the same edge, which a graph holding one relation
  per pair never has, so contradictions are always 0 there and here. Inferences are their
  transitivity rule: a chain (a, r, b), (b, r, c) for r in :data:`TRANSITIVE` with no fact
  linking a to c;
* grounding (after the graph answer) >= ``grounding_threshold`` (authors: 0.2): the share of the
  facts shown whose subject or object occurs in the answer (case ignored).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from statistics import fmean
from typing import Sequence

from .graph import FactNode

# the authors' transitive relations, compared with "_" and "-" read as spaces
TRANSITIVE = frozenset({"is part of", "located in", "member of", "is ancestor of", "is supervisor of"})


def _key(text: str) -> str:
    return " ".join(text.replace("_", " ").replace("-", " ").lower().split())


def inferences(facts: Sequence[FactNode]) -> int:
    """Distinct (a, r, c) the authors' transitivity rule infers from the facts."""
    linked = {(_key(f.subject), _key(f.object)) for f in facts}
    chains = [f for f in facts if _key(f.relation) in TRANSITIVE]
    inferred = {
        (_key(a.subject), _key(a.relation), _key(b.object))
        for a in chains
        for b in chains
        if _key(a.relation) == _key(b.relation)
        and _key(a.object) == _key(b.subject)
        and _key(a.subject) != _key(b.object)
        and (_key(a.subject), _key(b.object)) not in linked
    }
    return len(inferred)


def consistency_score(facts: Sequence[FactNode], contradictions: int = 0) -> float:
    if not facts:
        return 0.0
    n = len(facts)
    bonus = min(1.0, inferences(facts) / (5 * n))
    score = 0.5 * fmean(f.confidence for f in facts) + 0.3 * (1 - contradictions / n) + 0.2 * bonus
    return min(1.0, max(0.0, score))


def grounding_score(shown: Sequence[FactNode], answer: str) -> float:
    if not shown or not answer:
        return 0.0
    text = answer.lower()
    return sum(1 for f in shown if f.subject.lower() in text or f.object.lower() in text) / len(shown)


@dataclass
class Gate:
    """What the gate saw for one claim, and why the baseline answered (``reason`` = its note)."""

    facts_shown: int
    consistency: float
    grounding: float | None = None
    reason: str | None = None
    fallback: bool = False  # the option: when on, a reason makes the baseline's answer the answer

    def as_dict(self) -> dict:
        return asdict(self)


def pre_answer_reason(gate: Gate, low_coverage_facts: int, consistency_threshold: float) -> str | None:
    """The note for a gate that fails before the graph answer (coverage first, as the authors)."""
    if gate.facts_shown < low_coverage_facts:
        return f"[Graph coverage low ({gate.facts_shown} facts)]"
    if gate.consistency < consistency_threshold:
        return f"[Warning: Low consistency ({gate.consistency:.2f})]"
    return None
