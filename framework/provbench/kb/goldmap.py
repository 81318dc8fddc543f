"""Gold evidence mapped onto a knowledge base: which ids hold what answers a question.

A question's gold (:mod:`provbench.gold`) is written in the dataset's terms: sentences of titled
documents, (subject, relation, object) triples by name, entity names. Scoring a trajectory against
it needs the knowledge base's ids, so :func:`map_gold` maps it, once per knowledge base (per open
store, in this process) and question:

* a **sentence** maps to the text units whose text contains it (whitespace and case ignored, as
  :func:`provbench.gold.normalize_text`): titles lead to documents and documents to text units
  only through the text itself, so any builder's chunking works. A sentence with no text, or one
  split across two text units, maps to nothing;
* an **entity name** maps to the entities of that name, case ignored (namesakes: all of them);
* a **triple** (a hop of the gold chain) maps to its two ends' entities and to the relations
  between them, in either direction, whose label is the triple's relation (``_`` and ``-`` read
  as spaces, case ignored). Where the knowledge base labels relations otherwise (an extraction
  that names relations freely), every relation between the two ends is taken and the hop is
  marked ``by_label=False``. A hop with an unknown end, or no relation between its ends, is
  unmapped.

Mapping is lossy by design and says how much it mapped (:meth:`MappedGold.coverage`); scores built
on it (:mod:`provbench.trajectory`) never count unmapped gold as a miss. The mapping reads the
knowledge base as built (pass the run's unfiltered view): an intervention hides gold, it does not
unmap it.
"""

from __future__ import annotations

import hashlib
import re
import threading
import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable

from ..gold import GoldSentence, GoldTriple, normalize_relation, normalize_text

if TYPE_CHECKING:
    from ..model import Question
    from .view import GraphView

_WORD = re.compile(r"\w+")
KINDS = ("entity", "relationship", "text_unit")


@dataclass(frozen=True)
class MappedSentence:
    sentence: GoldSentence
    text_units: tuple[str, ...]


@dataclass(frozen=True)
class MappedHop:
    """One gold triple: its ends' entities and the relations that carry it."""

    triple: GoldTriple
    subjects: tuple[str, ...]
    objects: tuple[str, ...]
    relations: tuple[str, ...]
    by_label: bool = True

    @property
    def mapped(self) -> bool:
        return bool(self.relations)

    def describe(self) -> str:
        t = self.triple
        return f"{t.subject} -[{t.relation}]-> {t.object}"


@dataclass(frozen=True)
class MappedGold:
    """A question's gold on one knowledge base. ``groups``: the sentence alternatives (indices into
    ``sentences``); ``hops``: the triples (one more alternative), a chain when ``ordered``;
    ``entities``: each gold entity name with the ids it maps to."""

    question_id: str
    sentences: tuple[MappedSentence, ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()
    hops: tuple[MappedHop, ...] = ()
    ordered: bool = False
    entities: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def ids(self, kind: str) -> frozenset[str]:
        """Every mapped id of a kind (``entity``, ``relationship``, ``text_unit``)."""
        if kind not in self._by_kind:
            raise ValueError(f"unknown gold kind {kind!r}; kinds are {', '.join(KINDS)}")
        return self._by_kind[kind]

    @cached_property
    def _by_kind(self) -> dict[str, frozenset[str]]:
        hop_ends = {i for h in self.hops if h.mapped for i in (*h.subjects, *h.objects)}
        return {
            "entity": frozenset({i for _, ids in self.entities for i in ids} | hop_ends),
            "relationship": frozenset(r for h in self.hops for r in h.relations),
            "text_unit": frozenset(t for s in self.sentences for t in s.text_units),
        }

    @property
    def any_mapped(self) -> bool:
        return any(self.ids(kind) for kind in KINDS)

    def coverage(self) -> dict[str, tuple[int, int]]:
        """(mapped, total) per kind of gold: sentences, triples, entities (names)."""
        return {
            "sentences": (sum(bool(s.text_units) for s in self.sentences), len(self.sentences)),
            "triples": (sum(h.mapped for h in self.hops), len(self.hops)),
            "entities": (sum(bool(ids) for _, ids in self.entities), len(self.entities)),
        }

    def group_units(self) -> list[list[MappedSentence]]:
        """Each sentence alternative's mapped sentences (alternatives with none left out)."""
        groups = self.groups or ((tuple(range(len(self.sentences))),) if self.sentences else ())
        found = [[self.sentences[i] for i in group if self.sentences[i].text_units] for group in groups]
        return [g for g in found if g]


# -- mapping ----------------------------------------------------------------------------------------


class _TextIndex:
    """Every text unit's normalised text, and which units hold each word (one scan of the store)."""

    def __init__(self, rows: Iterable[tuple[str, str]]) -> None:
        self.texts: dict[str, str] = {}
        self.by_word: dict[str, set[str]] = {}
        for unit, text in rows:
            normalized = normalize_text(text or "")
            self.texts[unit] = normalized
            for word in set(_WORD.findall(normalized)):
                self.by_word.setdefault(word, set()).add(unit)

    def holding(self, sentence: str) -> tuple[str, ...]:
        """Text units whose text contains ``sentence`` (normalised), in id order."""
        wanted = normalize_text(sentence)
        words = set(_WORD.findall(wanted))
        if not words:
            return ()
        postings = sorted((self.by_word.get(w, set()) for w in words), key=len)
        candidates = set.intersection(*postings[:2]) if len(postings) > 1 else postings[0]
        return tuple(sorted(u for u in candidates if wanted in self.texts[u]))


class _StoreMaps:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.text: _TextIndex | None = None
        self.questions: dict[str, MappedGold] = {}


_MAPS: "weakref.WeakKeyDictionary[Any, _StoreMaps]" = weakref.WeakKeyDictionary()
_MAPS_LOCK = threading.Lock()


def map_gold(view: "GraphView", question: "Question") -> MappedGold | None:
    """The question's gold on the view's knowledge base (None when the question has none); computed
    once per open store and question, then cached (a question's gold is part of its key)."""
    if question.gold is None or question.gold.empty and not question.gold.entities:
        return None
    store = view._store  # this package's own view internals
    with _MAPS_LOCK:
        maps = _MAPS.setdefault(store, _StoreMaps())
    key = hashlib.sha256(f"{question.id}\n{question.gold.model_dump_json()}".encode()).hexdigest()
    with maps.lock:
        if key not in maps.questions:
            if maps.text is None and question.gold.sentences:
                maps.text = _TextIndex(store.rows("MATCH (c:Chunk) RETURN c.id, c.text"))
            maps.questions[key] = _map(view, question, maps.text)
        return maps.questions[key]


def unmapped_items(gold: MappedGold) -> list[str]:
    """What of a question's gold the knowledge base does not hold, one short line per item."""
    lines = [
        f"sentence {s.sentence.text[:80]!r}"
        + (f" ({s.sentence.document})" if s.sentence.document else "")
        + " is in no text unit"
        for s in gold.sentences
        if not s.text_units
    ]
    lines += [f"hop {h.describe()} has no relation" for h in gold.hops if not h.mapped]
    lines += [f"entity {name!r} is not in the graph" for name, ids in gold.entities if not ids]
    return lines


def gold_mapping_report(view: "GraphView", questions: "Iterable[Question]") -> tuple[int, dict[str, list[str]]]:
    """(questions with gold, {question id: what of its gold is unmapped}) on the view's KB: what
    ``provbench run`` lists, so a question whose gold cannot be mapped is never dropped silently."""
    with_gold, unmapped = 0, {}
    for question in questions:
        gold = map_gold(view, question)
        if gold is None:
            continue
        with_gold += 1
        missing = unmapped_items(gold)
        if missing:
            unmapped[question.id] = missing
    return with_gold, unmapped


def _map(view: "GraphView", question: "Question", text: _TextIndex | None) -> MappedGold:
    gold = question.gold
    sentences = tuple(
        MappedSentence(s, text.holding(s.text) if text is not None and s.text.strip() else ()) for s in gold.sentences
    )
    names = list(dict.fromkeys([*gold.entities, *(n for t in gold.triples for n in (t.subject, t.object))]))
    named = _entities_named(view, names)
    hops = tuple(_hop(view, t, named) for t in gold.triples)
    return MappedGold(
        question_id=question.id,
        sentences=sentences,
        groups=tuple(tuple(g) for g in gold.sentence_groups),
        hops=hops,
        ordered=gold.ordered,
        entities=tuple((name, named.get(normalize_text(name), ())) for name in gold.entities),
    )


def _entities_named(view: "GraphView", names: list[str]) -> dict[str, tuple[str, ...]]:
    """Normalised name -> ids of the entities bearing it (one look-up per name: a knowledge base
    may also match an entity by another name it knows it by)."""
    return {normalize_text(name): tuple(e.id for e in view.entities_named([name])) for name in names}


def _hop(view: "GraphView", triple: GoldTriple, named: dict[str, tuple[str, ...]]) -> MappedHop:
    subjects = named.get(normalize_text(triple.subject), ())
    objects = set(named.get(normalize_text(triple.object), ()))
    between = [nb.relation for s in subjects for nb in view.neighbors(s) if nb.entity.id in objects]
    between = list({r.id: r for r in between}.values())
    label = normalize_relation(triple.relation)
    labelled = [r.id for r in between if normalize_relation(r.label) == label]
    relations = labelled or [r.id for r in between]
    return MappedHop(triple, subjects, tuple(sorted(objects)), tuple(relations), by_label=bool(labelled) or not between)


__all__ = ["KINDS", "MappedGold", "MappedHop", "MappedSentence", "gold_mapping_report", "map_gold", "unmapped_items"]
