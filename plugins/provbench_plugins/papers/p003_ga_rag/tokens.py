"""Content tokens and meta-prefix stripping, for paper 003's token-level hallucination check
(section VI, "Hallucination guarding") and for tying an extracted triple to its sentence.

A token is a lower-cased run of letters and digits; a *content* token is one that is not an
English function word, not a word of the task's own vocabulary (the labels, "claim",
"evidence", ...) and not a bare citation number. Tokens are compared after a light plural fold
("towns" = "town", "born" unchanged), so inflection alone is not counted as invention.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")

FUNCTION_WORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each either else ever every few for from
further had has have having he her here hers herself him himself his how i if in into is it its itself
just may me might more most much must my myself neither no nor not now of off on once only or other
our ours ourselves out over own per same she should since so some such than that the their theirs them
themselves then there these they this those though through thus to too under until up upon very was we
were what when where whether which while who whom whose why will with within without would yet you your
yours yourself one ones s t don't doesn't didn't isn't aren't wasn't weren't can't cannot won't hasn't
haven't
""".split()
)

# Words of the prompt and the label set: using them is answering the task, not stating a fact.
TASK_WORDS = frozenset(
    """
claim claims evidence fact facts context passage passages graph information info statement statements
label supports support supported supporting refutes refute refuted refuting enough insufficient
sufficient true false correct incorrect verify verified know don based according given shown states
stated says said mentioned mention mentions indicates indicate provided line lines
""".split()
)

# Notes the pipeline itself puts before an answer (paper 003, section IX.C) and stock lead-ins:
# stripped before any token or faithfulness check of the explanation.
_META_NOTE = re.compile(r"^\s*\[[^\]]*\]\s*")
_LEAD_IN = re.compile(
    r"^\s*(?:based on|according to|given|from)\s+(?:the\s+)?"
    r"(?:provided\s+|given\s+|retrieved\s+|above\s+)?"
    r"(?:context|evidence|graph facts|facts|passages|information)\s*[,:]?\s*",
    re.IGNORECASE,
)
_CITATION = re.compile(r"\[\s*\d+(?:\s*[,;-]\s*\d+)*\s*\]")


def strip_meta(text: str) -> str:
    """The explanation without leading bracketed notes ("[Graph coverage low (4 facts)]"),
    stock lead-ins ("Based on the context, ...") and citation markers ("[2]")."""
    previous = None
    while previous != text:
        previous = text
        text = _LEAD_IN.sub("", _META_NOTE.sub("", text))
    return _CITATION.sub(" ", text).strip()


def fold(token: str) -> str:
    """Light plural fold: "towns" -> "town", "class" and "is" unchanged."""
    token = token.removesuffix("'s")
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def tokens(text: str) -> list[str]:
    return [fold(t) for t in _TOKEN.findall(text.lower())]


def is_content(token: str) -> bool:
    """``token`` as written (lower-cased, before :func:`fold`)."""
    if token.isdigit():
        return len(token) >= 3  # years and figures are content; "2" is mostly a stray citation number
    return not ({token, fold(token)} & (FUNCTION_WORDS | TASK_WORDS))


def content_tokens(text: str) -> list[str]:
    """Content tokens of ``text`` in order, folded, repeats kept (see the module docstring)."""
    return [fold(t) for t in _TOKEN.findall(text.lower()) if is_content(t)]


def unsupported_share(response: str, context: list[str]) -> tuple[float | None, list[str]]:
    """Share of the response's content tokens (after :func:`strip_meta`) found in none of the
    ``context`` texts, and those tokens; None when the response has no content token."""
    words = content_tokens(strip_meta(response))
    if not words:
        return None, []
    known = {t for text in context for t in tokens(text)}
    missing = [t for t in words if t not in known]
    return len(missing) / len(words), missing
