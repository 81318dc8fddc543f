"""FEVER's labels and scoring.

* :func:`graded_accuracy`: 1 for the gold label, ``idk_credit`` (paper 003: 0.3) for an honest
  "I don't know"-style answer or an abstention, else 0.
* :func:`fever_score`: the official FEVER scorer's definitions (sheffieldnlp/fever-scorer,
  ``fever_score`` with ``max_evidence``): label accuracy; strict score (the label is right and,
  unless the claim is NOT ENOUGH INFO, one whole gold evidence set is among the first
  ``max_evidence`` predicted sentences); evidence precision over non-NEI claims (share of the
  predicted sentences that appear in any gold set; a claim with no prediction counts 1);
  evidence recall over non-NEI claims (1 when a whole gold set was predicted); F1 of the two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

SUPPORTS, REFUTES, NEI = "SUPPORTS", "REFUTES", "NOT ENOUGH INFO"
LABELS = (SUPPORTS, REFUTES, NEI)
IDK_PHRASES = (
    "i don't know",
    "i do not know",
    "not sure",
    "cannot determine",
    "can't determine",
    "unable to determine",
    "i dont know",
)
_ALIASES = {
    "SUPPORT": SUPPORTS,
    "SUPPORTED": SUPPORTS,
    "REFUTE": REFUTES,
    "REFUTED": REFUTES,
    "NEI": NEI,
    "NOT ENOUGH INFORMATION": NEI,
    "NOTENOUGHINFO": NEI,
}


def normalize_label(text: str | None) -> str | None:
    """A label in any usual spelling as one of LABELS; None when it is none of them."""
    if text is None:
        return None
    key = re.sub(r"[^A-Z ]", "", text.upper()).strip()
    key = " ".join(key.split())
    if key in LABELS:
        return key
    return _ALIASES.get(key) or _ALIASES.get(key.replace(" ", ""))


def is_idk(text: str | None) -> bool:
    low = (text or "").lower().replace("’", "'")
    return any(phrase in low for phrase in IDK_PHRASES)


def graded_accuracy(gold: str, prediction: str | None, idk_credit: float = 0.3) -> float:
    """Paper 003's factual accuracy: 1 for the right label, partial credit for "I don't know"."""
    if prediction is None or is_idk(prediction):
        return idk_credit
    return float(normalize_label(prediction) == gold)


# -- the official FEVER scorer, by its definitions ------------------------------------------------

Evidence = list[list[list]]  # sets of [annotation_id, evidence_id, page, line]


@dataclass(frozen=True)
class Prediction:
    label: str  # gold label
    predicted_label: str | None  # None: no label (abstained or failed)
    evidence: Evidence  # gold evidence sets, official form
    predicted_evidence: Sequence[tuple[str, int]]


@dataclass(frozen=True)
class FeverScores:
    strict: float
    accuracy: float
    precision: float
    recall: float
    f1: float
    claims: int


def _sentences(group: Iterable[list]) -> list[tuple]:
    return [(e[2], e[3]) for e in group]


def strictly_correct(p: Prediction, max_evidence: int | None = 5) -> bool:
    if (p.predicted_label or "").upper() != p.label.upper():
        return False
    if p.label.upper() == NEI:
        return True
    predicted = {tuple(e) for e in p.predicted_evidence[:max_evidence]}
    return any(all(s in predicted for s in _sentences(group)) for group in p.evidence)


def evidence_precision(p: Prediction, max_evidence: int | None = 5) -> tuple[float, float]:
    """(precision, counted) as the scorer sums them: NEI claims do not count."""
    if p.label.upper() == NEI:
        return 0.0, 0.0
    gold = {s for group in p.evidence for s in _sentences(group) if s[1] is not None}
    predicted = [tuple(e) for e in p.predicted_evidence[:max_evidence]]
    if not predicted:
        return 1.0, 1.0
    return sum(e in gold for e in predicted) / len(predicted), 1.0


def evidence_recall(p: Prediction, max_evidence: int | None = 5) -> tuple[float, float]:
    if p.label.upper() == NEI:
        return 0.0, 0.0
    if not p.evidence or all(len(group) == 0 for group in p.evidence):
        return 1.0, 1.0
    predicted = {tuple(e) for e in p.predicted_evidence[:max_evidence]}
    hit = any(all(s in predicted for s in _sentences(group)) for group in p.evidence)
    return float(hit), 1.0


def fever_score(predictions: Sequence[Prediction], max_evidence: int | None = 5) -> FeverScores:
    if not predictions:
        raise ValueError("fever_score needs at least one prediction")
    correct = sum((p.predicted_label or "").upper() == p.label.upper() for p in predictions)
    strict = sum(strictly_correct(p, max_evidence) for p in predictions)
    prec = [evidence_precision(p, max_evidence) for p in predictions]
    rec = [evidence_recall(p, max_evidence) for p in predictions]
    prec_hits, rec_hits = sum(h for _, h in prec), sum(h for _, h in rec)
    precision = sum(v for v, _ in prec) / prec_hits if prec_hits else 1.0
    recall = sum(v for v, _ in rec) / rec_hits if rec_hits else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    n = len(predictions)
    return FeverScores(strict / n, correct / n, precision, recall, f1, n)
