"""The authors' hallucination rate (``evaluate_hallucination_rate`` of their released
``eval_framework.py``), written from its description for Table I's row option
``hallucination: authors`` (docs/papers/p003.md). It differs from provbench's token-level rate
(:func:`.tokens.unsupported_share`) in every step, so the two are not interchangeable:

* one leading bracketed note ("[Graph coverage low (4 facts)]") is removed, nothing else;
* a hedged answer (any of :data:`HEDGES`, anywhere) scores 0.0, as does one without content word;
* the answer's words are split on whitespace, lower-cased and trimmed of ``.,!?;:"'``; words of
  one or two letters and :data:`COMMON` are skipped;
* the source words are the retrieved documents' text split on whitespace and lower-cased,
  punctuation left attached ("actor." is a source word);
* a word is supported when it is a source word, or shares a prefix relation with one: it starts
  with a source word longer than 3 letters, or a source word starts with it and it is longer than
  3 letters ("running" is supported by "run"? no: "run" has 3 letters; "films" by "film": yes).
"""

from __future__ import annotations

import re

HEDGES = (
    "i don't know",
    "not sure",
    "unclear",
    "cannot determine",
    "no information",
    "not mentioned",
    "based on context",
)
COMMON = frozenset(
    """
the a an is are was were be been being have has had do does did will would could should may might can of in to
for with on at by from as that this it or and but not yes no indeed however therefore
""".split()
)
_LEADING_NOTE = re.compile(r"^\[.*?\]\s*")
_TRIM = ".,!?;:\"'"


def supported(word: str, source: set[str]) -> bool:
    if word in source:
        return True
    return any((word.startswith(s) and len(s) > 3) or (s.startswith(word) and len(word) > 3) for s in source)


def authors_hallucination_rate(answer: str, documents: list[str]) -> float:
    """Share of the answer's content words supported by no retrieved document (0.0 when hedged)."""
    text = _LEADING_NOTE.sub("", answer, count=1).lower()
    if any(hedge in text for hedge in HEDGES):
        return 0.0
    source = set(" ".join(documents).lower().split())
    words = [w for w in (raw.strip(_TRIM) for raw in text.split()) if len(w) > 2 and w not in COMMON]
    if not words:
        return 0.0
    return sum(not supported(w, source) for w in words) / len(words)
