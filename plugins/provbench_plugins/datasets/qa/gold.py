"""A ``qa`` question's gold evidence from the user's columns, in :mod:`provbench.gold`'s terms.

* ``supporting_sentences``: each item a sentence (text), or an object ``{document, text}``; all of
  them together are the evidence (one sentence group).
* ``supporting_documents``: names of documents (a relative path, a file name, its stem, or its
  title) in the folder the loader option ``documents`` names. A document stands for one gold
  sentence of its own: the first of its sentences that holds the answer (or an alias), else the
  one sharing the most words with the question and answer (a bridge document of a two-hop
  question names the bridge, not the answer). Sentences come from the same reader and splitter
  the ``documents`` builder chunks with, so they are found in its text units.
  A titled document is about the entity its title names (as the ``documents`` builder reads it):
  that name is a gold entity, so a control agent knows where to look.
* ``gold_path``: entity names in order (a chain through the graph), ``GoldEvidence.entities``
  (before the supporting documents' subjects).
* ``gold_triples``: (subject, relation, object) statements by name, each ``[s, r, o]`` or
  ``{subject, relation, object}`` (``provbench generate`` writes them for its chains); when each
  triple's object is the next one's subject they are a chain, in order (``GoldEvidence.ordered``).

The mapping onto a knowledge base (which text units hold those sentences, which entities bear
those names) is :mod:`provbench.kb.goldmap`'s, once per KB.
"""

from __future__ import annotations

import difflib

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from provbench.errors import UserError
from provbench.gold import GoldEvidence, GoldSentence, GoldTriple

from provbench_plugins.kb_builders.common.names import strip_qualifier

from .fields import Row

_WORD = re.compile(r"\w+")
_STOPWORDS = {
    "a",
    "an",
    "the",
    "of",
    "in",
    "on",
    "at",
    "to",
    "for",
    "by",
    "with",
    "and",
    "or",
    "is",
    "was",
    "are",
    "were",
    "be",
    "did",
    "does",
    "do",
    "which",
    "what",
    "who",
    "whom",
    "whose",
    "where",
    "when",
    "how",
    "that",
    "this",
    "it",
    "its",
    "he",
    "she",
    "his",
    "her",
    "they",
    "their",
    "same",
    "yes",
    "no",
}


@lru_cache(maxsize=8)
def document_index(source: str) -> dict[str, Any]:
    """Name (see the module docstring, case ignored) -> the documents of ``source`` bearing it."""
    from provbench_plugins.kb_builders.documents.readers import read_documents

    index: dict[str, list[Any]] = {}
    for doc in read_documents(source):
        for name in doc.names():
            index.setdefault(name, []).append(doc)
    return index


def gold_evidence(row: Row, answers: list[str], documents: str | None) -> GoldEvidence | None:
    sentences = [_sentence(row, item) for item in row.values("supporting_sentences")]
    names = row.strings("supporting_documents")
    if names and documents is None:
        raise row.problem(
            "supporting_documents",
            "names documents, but the loader option 'documents' (the folder "
            "of the documents) is not set, so they cannot be found",
        )
    subjects = []
    for name in names:
        doc = _document(row, name, documents or "")
        sentences.append(GoldSentence(document=doc.relative, text=gold_sentence(doc, row.text("question"), answers)))
        subjects.append(strip_qualifier(doc.title))
    path = row.strings("gold_path")
    triples = [_triple(row, n, item) for n, item in enumerate(row.values("gold_triples"), start=1)]
    if not sentences and not path and not triples:
        return None
    chain = len(triples) > 1 and all(a.object.casefold() == b.subject.casefold() for a, b in zip(triples, triples[1:]))
    return GoldEvidence(
        sentences=sentences,
        triples=triples,
        ordered=chain,
        entities=list(dict.fromkeys(e for e in [*path, *subjects] if e)),
    )


def _triple(row: Row, n: int, item: Any) -> GoldTriple:
    parts = [item.get(k) for k in ("subject", "relation", "object")] if isinstance(item, dict) else item
    if isinstance(parts, (list, tuple)) and len(parts) == 3 and all(isinstance(p, str) and p.strip() for p in parts):
        return GoldTriple(subject=parts[0].strip(), relation=parts[1].strip(), object=parts[2].strip())
    raise row.problem(
        "gold_triples",
        f"item {n} must be [subject, relation, object] or {{subject, relation, "
        f"object}}, each non-empty text; got {item!r}",
    )


def _sentence(row: Row, item: Any) -> GoldSentence:
    if isinstance(item, str):
        return GoldSentence(document="", text=item.strip())
    if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"].strip():
        return GoldSentence(document=str(item.get("document") or item.get("title") or ""), text=item["text"].strip())
    raise row.problem("supporting_sentences", f"each item must be a sentence or {{document, text}}, got {item!r}")


def _document(row: Row, name: str, documents: str) -> Any:
    try:
        found = document_index(documents).get(name.casefold(), [])
    except UserError as err:
        raise row.problem("supporting_documents", f"cannot read the documents: {err}") from None
    if not found:
        close = difflib.get_close_matches(name.casefold(), list(document_index(documents)), n=1)
        raise row.problem(
            "supporting_documents",
            f"no document named {name!r} in {documents}{f' (did you mean {close[0]!r}?)' if close else ''}; "
            "name one by its relative path, file name, file name without suffix, or title",
        )
    if len(found) > 1:
        raise row.problem(
            "supporting_documents",
            f"{name!r} names {len(found)} documents ({', '.join(d.relative for d in found)}); use its relative path",
        )
    return found[0]


def _stems(text: str) -> set[str]:
    """Content words, cut to five letters (a crude stem: "founder" and "founded" meet)."""
    return {w[:5] for w in _WORD.findall(text.casefold()) if w not in _STOPWORDS}


def gold_sentence(doc: Any, question: str, answers: list[str]) -> str:
    """The sentence of ``doc`` that stands for it as gold (module docstring): its title line left
    out, the first sentence holding the answer (unless the document is about the answer itself:
    then every sentence names it), else the one sharing the most words with question and answer
    beyond the title's own words; the earliest on a tie."""
    title = doc.title.casefold().strip()
    candidates = [s for s in doc.sentences if s.casefold().strip() != title] or list(doc.sentences)
    keys = [a.casefold() for a in answers if a.strip() and a.casefold() != title]
    wanted = _stems(" ".join([question, *answers])) - _stems(doc.title)
    return max(candidates, key=lambda s: (any(k in s.casefold() for k in keys), len(wanted & _stems(s))))


def resolve_documents(option: str | None, source: str | Path) -> str | None:
    """The ``documents`` option against the question file's folder (kept as given for a hub source)."""
    if option is None:
        return None
    path = Path(option).expanduser()
    if not path.is_absolute() and Path(str(source)).exists():
        path = Path(str(source)).resolve().parent / path
    return str(path)
