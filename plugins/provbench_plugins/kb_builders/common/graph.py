"""The graph a builder drafts before writing it: entities merged by name, relations deduplicated.

Typical use: add seed entities and relations (a dataset's gold triples), enrich with LLM
extraction (:mod:`.extraction`), then :func:`link_mentions` links every entity to every text
unit naming it, and :func:`to_records` turns the draft into the knowledge base's records.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from provbench.kb import natural_key
from provbench.kb.types import Entity, Relation, TextUnit

from .chunking import Corpus
from .matcher import MentionMatcher
from .names import entity_id, normalize_name, pick_type


@dataclass
class EntityDraft:
    id: str
    name: str
    origin: str  # where it came from first, e.g. "gold" or "extracted"
    types: list[str] = field(default_factory=list)
    description: str = ""
    text_unit_ids: set[str] = field(default_factory=set)
    own_text_unit_ids: set[str] = field(default_factory=set)  # of its own documents (also in text_unit_ids)


@dataclass
class RelationDraft:
    source: str
    label: str
    target: str
    origin: str
    text_unit_id: str | None


@dataclass
class Graph:
    entities: dict[str, EntityDraft] = field(default_factory=dict)  # normalised name -> draft
    relations: dict[tuple[str, str, str], RelationDraft] = field(default_factory=dict)
    _ids: set[str] = field(default_factory=set)

    def entity(self, name: str, origin: str, type_: str | None = None) -> EntityDraft:
        """The entity named ``name`` (merged by :func:`normalize_name`), created if new."""
        key = normalize_name(name)
        draft = self.entities.get(key)
        if draft is None:
            draft = EntityDraft(self._unique_id(name), " ".join(name.split()), origin)
            self.entities[key] = draft
        if type_:
            draft.types.append(type_)
        return draft

    def find(self, name: str) -> EntityDraft | None:
        return self.entities.get(normalize_name(name))

    def relate(self, source: EntityDraft, label: str, target: EntityDraft, origin: str, tu_id: str | None) -> bool:
        """Add ``source -label-> target`` unless present; True when added."""
        key = (source.id, label, target.id)
        if key in self.relations:
            return False
        self.relations[key] = RelationDraft(source.id, label, target.id, origin, tu_id)
        return True

    def count(self, origin: str) -> tuple[int, int]:
        """(entities, relations) of one origin."""
        return (
            sum(d.origin == origin for d in self.entities.values()),
            sum(r.origin == origin for r in self.relations.values()),
        )

    def _unique_id(self, name: str) -> str:
        candidate = entity_id(name)
        if candidate in self._ids:  # two names with one slug ("A-B" and "A B"): keep both apart
            candidate += "~" + hashlib.sha1(normalize_name(name).encode()).hexdigest()[:6]
        self._ids.add(candidate)
        return candidate


def link_mentions(graph: Graph, corpus: Corpus) -> None:
    """Link each entity to every text unit that mentions its name (one pass over the text)."""
    by_name: dict[str, list[EntityDraft]] = {}
    for draft in graph.entities.values():
        by_name.setdefault(draft.name, []).append(draft)
    for name, units in MentionMatcher(by_name).link(corpus.texts()).items():
        for draft in by_name[name]:
            draft.text_unit_ids.update(units)


def to_records(
    graph: Graph, corpus: Corpus, type_priority: tuple[str, ...] = ()
) -> tuple[list[TextUnit], list[Entity], list[Relation]]:
    """Text units (with their entity ids), entities and relations ``rel:<n>`` in draft order."""
    entities = [
        Entity(
            id=d.id,
            name=d.name,
            label=pick_type(d.types, type_priority),
            description=d.description,
            text_unit_ids=tuple(sorted(d.text_unit_ids, key=natural_key)),
            own_text_unit_ids=tuple(sorted(d.own_text_unit_ids, key=natural_key)),
        )
        for d in graph.entities.values()
    ]
    per_unit: dict[str, list[str]] = {tu: [] for tu in corpus.text_units}
    for e in entities:
        for tu in e.text_unit_ids:
            per_unit[tu].append(e.id)
    units = [tu.model_copy(update={"entity_ids": tuple(per_unit[tu.id])}) for tu in corpus.text_units.values()]
    relations = [
        Relation(id=f"rel:{i}", source=r.source, target=r.target, label=r.label, text_unit_id=r.text_unit_id)
        for i, r in enumerate(graph.relations.values())
    ]
    return units, entities, relations
