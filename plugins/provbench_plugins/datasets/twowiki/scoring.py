"""2WikiMultiHopQA answer scoring: the official evaluation's normalisation, exact match and token
F1, and the stricter containment accuracy provbench reports.

The official evaluation (Alab-NII/2wikimultihop, ``2wikimultihop_evaluate_v1.1.py``, inherited
from HotpotQA) normalises an answer by lower-casing, removing punctuation, removing the articles
a/an/the and collapsing white space. EM compares normalised strings; F1 compares their token
bags, except that "yes", "no" and "noanswer" must match exactly (F1 0 otherwise). A question's
EM and F1 are the best over its gold answer and aliases (with ``id_aliases.json``, the aliases
and demonyms of its ``answer_id``); a run's EM and F1 are means x 100 over all questions, a
missing prediction scoring 0 (the ``em`` and ``f1`` metrics).

What the reports call **accuracy** is provbench's own rule, not the official one and not paper
000's (the paper states no criterion). A prediction is correct for a gold answer when:

1. it is short: at most ``ACCURACY_MAX_TOKENS`` normalised tokens (a rambling answer cannot
   earn credit by listing every candidate);
2. it contains the normalised gold as a whole-token span ("It was Mira Vale." is right for Mira
   Vale, "Vale" is not);
3. outside that span it neither hedges (``HEDGE_PHRASES``: "or", "maybe", "not sure", ...) nor
   negates (``NEGATIONS``: "not", "no", "never", ...), so "Not Kedem Tramore" and "Cold Pilgrim
   or Salt Vigil" are wrong. For a gold "no" a negation agrees with it: "No, they are not" is
   right; the opposite verdict ("yes" for a gold "no", "no" for a gold "yes") is always wrong;
4. it names none of ``others``, given by the caller from the question's evidence
   (:func:`other_candidates`), never parsed from its text: the other candidates of a comparison
   question ("Salt Vigil, not Cold Pilgrim" is wrong for a gold Cold Pilgrim when Salt Vigil is
   the other film compared), and the bridge entities of a compositional question ("Orin Vale;
   Mira Vale" and "Mira Vale and Orin Vale" are wrong for the mother of Orin Vale). A statement
   that puts the gold first and the other after a comparative ("Cold Pilgrim came out before
   Salt Vigil": ``COMPARATIVES``) names the other only to compare, and stays right;
5. it does not extend the gold into a longer name: a capitalised word right after it, or after
   a comma ("Paris, Texas" or "Kedem Tramore Jr." for Paris or Kedem Tramore), makes it another
   name. The price: "Paris, France" is wrong for Paris too (the rule cannot tell a place's
   country from another place); a qualifier in parentheses ("Cold Pilgrim (1985)") is fine.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable

from provbench.model import Question

from .selection import COMPARISON_TYPES

ACCURACY_MAX_TOKENS = 10
NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "neither",
        "nor",
        "none",
        "nothing",
        "isnt",
        "wasnt",
        "arent",
        "werent",
        "doesnt",
        "didnt",
        "dont",
        "cannot",
        "cant",
        "wont",
    }
)
HEDGE_PHRASES = tuple(
    tuple(p.split())
    for p in (
        "or",
        "either",
        "maybe",
        "perhaps",
        "possibly",
        "probably",
        "likely",
        "unlikely",
        "might",
        "unsure",
        "uncertain",
        "unknown",
        "unclear",
        "not sure",
        "no idea",
        "dont know",
        "do not know",
        "cannot tell",
        "not known",
        "noanswer",
    )
)
VERDICTS = ("yes", "no")
COMPARATIVES = frozenset({"before", "after", "than", "earlier", "later", "first", "older", "younger"})
_NAME_GOES_ON = re.compile(r"\s*,?\s*[A-Z]")  # a capitalised word after the gold (a comma between allowed)
_CLOSED_ANSWERS = frozenset({"yes", "no", "noanswer"})
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


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


def span_starts(tokens: list[str], span: list[str]) -> list[int]:
    """Where ``span`` occurs in ``tokens`` as consecutive whole tokens."""
    width = len(span)
    return [i for i in range(len(tokens) - width + 1) if span and tokens[i : i + width] == span]


def contains_answer(prediction: str, gold: str) -> float:
    """1.0 if the short normalised prediction contains the normalised gold as a token span
    (rules 1-2 of the module docstring only)."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not ref or not pred or len(pred) > ACCURACY_MAX_TOKENS:
        return 0.0
    return float(bool(span_starts(pred, ref)))


def gold_positions(pred: list[str], ref: list[str]) -> set[int]:
    """Indices of the prediction's tokens inside an occurrence of the gold span."""
    return {start + k for start in span_starts(pred, ref) for k in range(len(ref))}


def hedges_or_negates(pred: list[str], ref: list[str]) -> bool:
    """Rule 3: a hedge, a negation (unless the gold is "no") or the opposite verdict outside the
    gold span (a hedge phrase counts unless it lies wholly inside the gold: "War or Peace")."""
    inside = gold_positions(pred, ref)
    for phrase in HEDGE_PHRASES:
        if any(not all(s + k in inside for k in range(len(phrase))) for s in span_starts(pred, list(phrase))):
            return True
    rest = [token for i, token in enumerate(pred) if i not in inside]
    if ref == ["no"]:
        return "yes" in rest
    return any(token in NEGATIONS for token in rest)


def names_another(pred: list[str], ref: list[str], others: Iterable[str]) -> bool:
    """Rule 4: the prediction names another candidate (one that is not part of the gold name),
    other than after a comparative that follows the gold."""
    for other in others:
        candidate = normalize_answer(other).split()
        if candidate and candidate != ref and span_starts(pred, candidate) and not span_starts(ref, candidate):
            if not compares(pred, ref, candidate):
                return True
    return False


def compares(pred: list[str], ref: list[str], candidate: list[str]) -> bool:
    """The gold comes first and a comparative stands between it and the candidate ("Cold Pilgrim
    came out before Salt Vigil")."""
    gold_at, other_at = span_starts(pred, ref), span_starts(pred, candidate)
    if not gold_at or not other_at or gold_at[0] >= other_at[0]:
        return False
    return bool(COMPARATIVES.intersection(pred[gold_at[0] + len(ref) : other_at[0]]))


def extends_name(prediction: str, gold: str) -> bool:
    """Rule 5: every occurrence of the gold in the raw prediction goes on into a longer
    capitalised name ("Paris, Texas", "Kedem Tramore Jr.")."""
    words = re.findall(r"\w+", gold)
    if not words:
        return False
    found = list(re.finditer(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b", prediction, re.IGNORECASE))
    return bool(found) and all(_NAME_GOES_ON.match(prediction, m.end()) for m in found)


def accurate(prediction: str, gold: str, others: Iterable[str] = ()) -> float:
    """1.0 when ``prediction`` is right for ``gold`` under all four rules of the module docstring."""
    if not contains_answer(prediction, gold):
        return 0.0
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if hedges_or_negates(pred, ref) or names_another(pred, ref, others) or extends_name(prediction, gold):
        return 0.0
    return 1.0


def score(prediction: str | None, golds: Iterable[str], others: Iterable[str] = ()) -> dict[str, float]:
    """accuracy, em and f1 of one prediction, each the best over the accepted answers; ``others``
    are wrong candidates an accurate answer must not name (rule 4)."""
    golds, others = [g for g in golds if g], list(others)
    if prediction is None or not golds:
        return {"accuracy": 0.0, "em": 0.0, "f1": 0.0}
    return {
        "accuracy": max(accurate(prediction, g, others) for g in golds),
        "em": max(exact_match(prediction, g) for g in golds),
        "f1": max(f1_score(prediction, g) for g in golds),
    }


def _key(name: str) -> str:
    return normalize_answer(_QUALIFIER.sub("", name))


def other_candidates(question: Question) -> list[str]:
    """Entities an answer must not name beside the gold, from the question's evidence: for a
    comparison, the entities it compares other than its answer (below); for another question,
    its bridge entities (:func:`bridge_entities`).

    The compared entities are the evidence triples' subjects that are no triple's object (the
    roots: "Glass Harbor" and "Red Meadow" in ``[Glass Harbor, publication date, 1987],
    [Red Meadow, publication date, 1992]``; a bridge-comparison's films, not their directors).
    Empty for other question types, for a yes/no answer (naming both entities is then normal)
    and when no root is the answer or an alias (nothing to tell the right candidate from).
    """
    golds = {_key(g) for g in (question.answer, *question.aliases) if g}
    if question.type not in COMPARISON_TYPES:
        return bridge_entities(question, golds)
    if golds & set(VERDICTS):
        return []
    triples = [t for t in question.metadata.get("evidences") or [] if isinstance(t, (list, tuple)) and len(t) == 3]
    objects = {_key(str(o)) for _, _, o in triples}
    roots = list(dict.fromkeys(str(s) for s, _, _ in triples if _key(str(s)) not in objects))
    if not any(_key(r) in golds for r in roots):
        return []
    return [r for r in roots if _key(r) not in golds]


def bridge_entities(question: Question, golds: set[str]) -> list[str]:
    """The entities a chain passes through (a triple's object that is another's subject: the
    director between a film and his mother), not the gold and not a date or number."""
    triples = [t for t in question.metadata.get("evidences") or [] if isinstance(t, (list, tuple)) and len(t) == 3]
    subjects = {_key(str(s)) for s, _, _ in triples}
    middle = dict.fromkeys(str(o) for _, _, o in triples if _key(str(o)) in subjects)
    return [m for m in middle if _key(m) not in golds and not any(c.isdigit() for c in m)]
