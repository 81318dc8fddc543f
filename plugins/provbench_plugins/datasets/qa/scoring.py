"""How a ``qa`` question's answer is scored, by its answer type (``Question.metadata["answer_type"]``).

``text``    free text, by 2WikiMultiHopQA's rule (:mod:`provbench_plugins.datasets.twowiki.scoring`):
            ``accuracy`` (the answer or an alias as a whole-token span of a short reply that neither
            hedges nor negates it), and the official ``em`` and ``f1``, best over answer and aliases.
``yes-no``  the same rule on a gold "yes" or "no" (the opposite verdict is always wrong).
``choice``  multiple choice: ``answer`` is the correct option's letter (A, B, ...); a reply is right
            when it is that option's text (case, spacing and end punctuation aside) or names that
            letter ("C", "C.", "(C)", "Answer: C", "C. text").
``label``   one of a label set (e.g. SUPPORTS / REFUTES / NOT ENOUGH INFO): right when the reply,
            normalised, is the gold label or names it and no other label.
"""

from __future__ import annotations

import re
import string

from provbench.model import Question

from ..twowiki.scoring import normalize_answer, score as text_score

ANSWER_TYPES = ("text", "yes-no", "choice", "label")
LETTERS = string.ascii_uppercase
_LETTER = re.compile(
    r"^\s*(?:(?i:(?:the\s+)?(?:correct\s+)?(?:answer|option)(?:\s+is)?)\s*[:\-]?\s*)?"
    r"[\(\[]?([A-Z])(?:[\)\]\.:,]|\s*$)"
)
_EDGE = " \t\n.,;:!?\"'`*"


def option_key(text: str) -> str:
    return " ".join(text.strip(_EDGE).casefold().split())


def chosen_letter(prediction: str, choices: list[str]) -> str | None:
    """The option a reply names: an option's exact text first, else a letter written as one."""
    texts = {option_key(text): LETTERS[i] for i, text in enumerate(choices)}
    if option_key(prediction) in texts:
        return texts[option_key(prediction)]
    match = _LETTER.match(prediction)
    if match and LETTERS.index(match.group(1)) < len(choices):
        return match.group(1)
    return None


def chosen_label(prediction: str, labels: list[str]) -> str | None:
    """The one label a reply names (the whole reply, or a single label inside it)."""
    reply = normalize_answer(prediction)
    keys = {normalize_answer(label): label for label in labels}
    if reply in keys:
        return keys[reply]
    named = [label for key, label in keys.items() if key and re.search(rf"(?<!\w){re.escape(key)}(?!\w)", reply)]
    # a label inside another ("not enough info" holds no other here, but "true" is in "not true")
    named = [n for n in named if not any(n != m and normalize_answer(n) in normalize_answer(m) for m in named)]
    return named[0] if len(named) == 1 else None


def score_answer(question: Question, prediction: str | None) -> dict[str, float]:
    kind = question.metadata.get("answer_type", "text")
    if kind == "choice":
        right = prediction is not None and chosen_letter(prediction, question.choices or []) == question.answer
        return {"accuracy": float(right)}
    if kind == "label":
        labels = question.metadata.get("labels") or [question.answer]
        right = prediction is not None and chosen_label(prediction, labels) == question.answer
        return {"accuracy": float(right)}
    return text_score(prediction, [question.answer, *question.aliases])
