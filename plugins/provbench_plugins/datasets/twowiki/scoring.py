"""2WikiMultiHopQA answer scoring: the official normalisation, exact match, token F1 and the
lenient accuracy provbench reports.

The official 2Wiki evaluation script (inherited from HotpotQA) normalises an answer by
lower-casing, removing punctuation, removing the articles a/an/the and collapsing white space.
EM compares normalised strings; F1 compares their token bags, except that "yes", "no" and
"noanswer" must match exactly (F1 0 otherwise).

What the reports call **accuracy** is neither: a prediction counts as correct when it is short
(at most ``ACCURACY_MAX_TOKENS`` normalised tokens) and contains a normalised gold answer (or an
alias) as a whole-token span. Paper 000 judges short entity answers this way; the length bound
stops a rambling answer from earning credit by listing every candidate.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable

ACCURACY_MAX_TOKENS = 10
_CLOSED_ANSWERS = frozenset({"yes", "no", "noanswer"})
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Official 2Wiki normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction), normalize_answer(gold)
    if (pred in _CLOSED_ANSWERS or ref in _CLOSED_ANSWERS) and pred != ref:
        return 0.0
    common = Counter(pred.split()) & Counter(ref.split())
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred.split()), overlap / len(ref.split())
    return 2 * precision * recall / (precision + recall)


def contains_answer(prediction: str, gold: str) -> float:
    """1.0 if the short normalised prediction contains the normalised gold as a token span."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not ref or not pred or len(pred) > ACCURACY_MAX_TOKENS:
        return 0.0
    width = len(ref)
    return float(any(pred[i:i + width] == ref for i in range(len(pred) - width + 1)))


def score(prediction: str | None, golds: Iterable[str]) -> dict[str, float]:
    """accuracy, em and f1 of one prediction, each the best over the accepted answers."""
    golds = [g for g in golds if g]
    if prediction is None or not golds:
        return {"accuracy": 0.0, "em": 0.0, "f1": 0.0}
    return {
        "accuracy": max(contains_answer(prediction, g) for g in golds),
        "em": max(exact_match(prediction, g) for g in golds),
        "f1": max(f1_score(prediction, g) for g in golds),
    }
