"""Which concept an answer names, by the dataset's concept and alias list.

Names, aliases and answers are compared *normalised*: case folded, hyphens, underscores and
slashes read as spaces, other punctuation dropped, a leading article dropped, a plural "s" dropped
from each word ("Fine-Tuning", "fine tuning" and "the fine-tuning" are one name; "embedding"
names Embeddings). An answer names a concept when

1. the whole answer is that concept's name or one of its aliases; else
2. it negates nothing ("not GraphRAG", "no prerequisite" name none), and the concepts whose names
   occur in it as whole-word runs, leaving out a run that lies inside a longer matched run
   ("GraphRAG" inside "Agentic GraphRAG", "prompting" inside "Few-Shot Prompting"), come down to
   exactly one concept.

Otherwise (no concept, or several) the answer names none: an answer listing two concepts does
not name either.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from provbench_plugins.kb_builders.concepts.files import read_concepts

_SEPARATORS = re.compile(r"[-_/]+")
_PUNCTUATION = re.compile(r"[^\w\s]+")
_ARTICLES = ("the ", "a ", "an ")
MAX_NAME_WORDS = 12
NEGATIONS = frozenset({"not", "no", "neither", "nor", "never", "none", "cannot", "isn", "aren", "doesn"})


def normalize_name(text: str) -> str:
    text = _PUNCTUATION.sub(" ", _SEPARATORS.sub(" ", text.casefold()))
    text = " ".join(_singular(word) for word in text.split())
    for article in _ARTICLES:
        if text.startswith(article) and len(text) > len(article):
            return text[len(article) :]
    return text


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


class ConceptNames:
    """The concept ids of a concept file, by normalised name and alias."""

    def __init__(self, names: dict[str, str | None]):
        self.by_name = names  # normalised name -> concept id (None: two concepts share the name)

    @classmethod
    def from_pairs(cls, pairs: list[tuple[str, str]]) -> "ConceptNames":
        names: dict[str, str | None] = {}
        for concept_id, name in pairs:
            key = normalize_name(name)
            if key:
                names[key] = concept_id if names.get(key, concept_id) == concept_id else None
        return cls(names)

    def concept_of(self, answer: str | None) -> str | None:
        """The id of the one concept ``answer`` names (module docstring), else None."""
        text = normalize_name(answer or "")
        if not text:
            return None
        if text in self.by_name:
            return self.by_name[text]
        words = text.split()
        if NEGATIONS.intersection(words):
            return None  # "not GraphRAG" does not name GraphRAG
        found = [
            (start, end, self.by_name[run])
            for start in range(len(words))
            for end in range(start + 1, min(len(words), start + MAX_NAME_WORDS) + 1)
            if (run := " ".join(words[start:end])) in self.by_name
        ]
        outer = {
            cid
            for start, end, cid in found
            if not any(s <= start and end <= e and (s, e) != (start, end) for s, e, _ in found)
        }
        return outer.pop() if len(outer) == 1 and None not in outer else None


def concept_names(concepts_path: str) -> ConceptNames:
    """The name index of a concept file (read once per version of the file)."""
    stat = Path(concepts_path).stat()
    return _concept_names(concepts_path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _concept_names(concepts_path: str, mtime_ns: int, size: int) -> ConceptNames:
    concepts = read_concepts(Path(concepts_path))
    return ConceptNames.from_pairs([(c.id, name) for c in concepts for name in (c.name, *c.aliases)])
