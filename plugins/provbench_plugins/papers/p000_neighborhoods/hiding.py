"""What paper 000's ablations hide, and the one text rule they share (see :mod:`.interventions`).

:func:`label_entities` splits a baseline's entities into cited, visited-but-uncited and the rest;
a :class:`HidePlan` holds the id sets a condition hands to ``view.hide``; :class:`Lookup`
memoises the reads a plan makes of the unmodified view; :func:`text_hidden_with` is the text
rule (an entity's text goes with it, minus the evidence a condition keeps; metadata that quotes
hidden text goes too).
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Literal

from provbench.model import Trace

if TYPE_CHECKING:
    from provbench.kb import GraphView

EntityLabel = Literal["cited", "visited-uncited", "not-visited"]


# -- labelling ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntityLabels:
    """Paper 000's three groups for one question. ``cited`` wins over ``visited``."""

    cited: frozenset[str]
    visited: frozenset[str]

    @property
    def visited_uncited(self) -> frozenset[str]:
        return self.visited - self.cited

    @property
    def cited_unvisited(self) -> frozenset[str]:
        return self.cited - self.visited

    def label(self, entity_id: str) -> EntityLabel:
        if entity_id in self.cited:
            return "cited"
        if entity_id in self.visited:
            return "visited-uncited"
        return "not-visited"


def label_entities(trace: Trace) -> EntityLabels:
    """Label the entities of one baseline trace (cited, visited-but-uncited, the rest)."""
    return EntityLabels(cited=frozenset(trace.citations.entities), visited=frozenset(trace.visited_entities))


# -- what to hide ------------------------------------------------------------------------------


@dataclass
class HidePlan:
    """The id sets handed to ``view.hide``, plus notes on what the plan had to decide."""

    entities: frozenset[str] = frozenset()
    text_units: frozenset[str] = frozenset()
    hide_metadata_of: frozenset[str] = frozenset()
    keep_communities: frozenset[str] = frozenset()  # cited reports that stay readable whatever their members
    notes: list[str] = field(default_factory=list)

    def as_kwargs(self) -> dict[str, frozenset[str]]:
        return {
            "entities": self.entities,
            "text_units": self.text_units,
            "hide_metadata_of": self.hide_metadata_of,
            "keep_communities": self.keep_communities,
        }

    def summary(self) -> dict[str, Any]:
        return {
            "entities": len(self.entities),
            "text_units": len(self.text_units),
            "hide_metadata_of": len(self.hide_metadata_of),
            "keep_communities": len(self.keep_communities),
            "notes": list(self.notes),
        }


class Lookup:
    """Memoised reads of the unmodified view: entity -> text units (all linked, and its own) and
    description, text unit -> entities and text.

    One per view object (:func:`lookup_for`), shared by every question: the isolation ablations
    read every entity once for the first question and from memory afterwards.
    """

    def __init__(self, view: "GraphView") -> None:
        self.view = view
        self._entity_tus: dict[str, tuple[str, ...] | None] = {}
        self._own_tus: dict[str, tuple[str, ...]] = {}
        self._descriptions: dict[str, str] = {}
        self._tu_entities: dict[str, tuple[str, ...]] = {}
        self._texts: dict[str, str] = {}

    def exists(self, entity_id: str) -> bool:
        return self.text_units_of(entity_id) is not None

    def text_units_of(self, entity_id: str) -> tuple[str, ...] | None:
        if entity_id not in self._entity_tus:
            entity = self.view.entity(entity_id)
            self._entity_tus[entity_id] = None if entity is None else tuple(entity.text_unit_ids)
            self._own_tus[entity_id] = () if entity is None else tuple(entity.own_text_unit_ids)
            self._descriptions[entity_id] = "" if entity is None else entity.description
        return self._entity_tus[entity_id]

    def own_text_units_of(self, entity_id: str) -> tuple[str, ...]:
        """The text units of the entity's own documents, as its builder declared them (may be none)."""
        self.text_units_of(entity_id)
        return self._own_tus[entity_id]

    def description_of(self, entity_id: str) -> str:
        self.text_units_of(entity_id)
        return self._descriptions[entity_id]

    def entities_of(self, tu_id: str) -> tuple[str, ...]:
        if tu_id not in self._tu_entities:
            unit = self.view.text_unit(tu_id)
            self._tu_entities[tu_id] = () if unit is None else tuple(unit.entity_ids)
            self._texts[tu_id] = "" if unit is None else unit.text
        return self._tu_entities[tu_id]

    def text_of(self, tu_id: str) -> str:
        self.entities_of(tu_id)
        return self._texts[tu_id]

    def text_units_of_all(self, entity_ids: Iterable[str]) -> set[str]:
        units: set[str] = set()
        for entity_id in entity_ids:
            units.update(self.text_units_of(entity_id) or ())
        return units

    def own_text_units_of_all(self, entity_ids: Iterable[str]) -> set[str]:
        return {unit for entity_id in entity_ids for unit in self.own_text_units_of(entity_id)}


_LOOKUPS: "weakref.WeakKeyDictionary[Any, dict[Any, Lookup]]" = weakref.WeakKeyDictionary()
_LOOKUPS_LOCK = threading.Lock()


def lookup_for(view: "GraphView") -> Lookup:
    """The memo for this view's store and filter: views created apart over one store share it."""
    store = getattr(view, "_store", view)
    with _LOOKUPS_LOCK:
        per_filter = _LOOKUPS.setdefault(store, {})
        return per_filter.setdefault(view.hidden, Lookup(view))


def text_hidden_with(
    lookup: Lookup, entities: Iterable[str], keep_units: Iterable[str] = (), kept: Iterable[str] = ()
) -> tuple[frozenset[str], frozenset[str]]:
    """The one text rule of every ablation: what goes with ``entities``.

    Returns (text units, entities whose metadata goes): every text unit linked to any of
    ``entities`` except ``keep_units`` (the evidence a condition keeps), and
    :func:`quoting_metadata` of those text units, ``entities`` and ``kept`` spared.
    """
    entities = set(entities)
    units = frozenset(lookup.text_units_of_all(entities) - set(keep_units))
    return units, quoting_metadata(lookup, units, entities | set(kept))


def shared_with_kept(lookup: Lookup, removed: Iterable[str]) -> set[str]:
    """The text units of ``removed`` that some entity outside ``removed`` also links."""
    removed = set(removed)
    return {tu for tu in lookup.text_units_of_all(removed) if not set(lookup.entities_of(tu)) <= removed}


def quoting_metadata(lookup: Lookup, hidden_units: frozenset[str], spared: Iterable[str] = ()) -> frozenset[str]:
    """The entities linked to a hidden text unit whose description quotes a sentence of one of
    their own hidden text units (:func:`quotes`), except ``spared`` ones: their metadata would
    show the hidden text."""
    spared = set(spared)
    linked = {e for tu in hidden_units for e in lookup.entities_of(tu) if e not in spared}
    return frozenset(
        e
        for e in linked
        if quotes(
            lookup.description_of(e), [lookup.text_of(t) for t in lookup.text_units_of(e) or () if t in hidden_units]
        )
    )


MIN_QUOTE_WORDS = 4  # shorter shared phrases ("A film.") are not quotations
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def quotes(description: str, texts: Iterable[str]) -> bool:
    """True when the description holds a sentence of one of ``texts``, or one of its own sentences
    is in one of them (whitespace and case ignored; sentences of fewer than MIN_QUOTE_WORDS words
    do not count)."""
    own = [s for s in map(_folded, _SENTENCE_END.split(description)) if len(s.split()) >= MIN_QUOTE_WORDS]
    if not own:
        return False
    whole = _folded(description)
    for text in map(_folded, texts):
        theirs = [s for s in _SENTENCE_END.split(text) if len(s.split()) >= MIN_QUOTE_WORDS]
        if any(s in text for s in own) or any(s in whole for s in theirs):
            return True
    return False


def cited_text(lookup: Lookup, baseline: Trace, cited: frozenset[str]) -> set[str]:
    """The evidence every condition but cited removal keeps: the baseline's cited text units and the
    (known) cited entities' own text. Another entity's paragraph that merely names a cited entity is
    not kept: it is usually a visited-but-uncited neighbour's own text, which Study 3 must take."""
    return set(baseline.citations.text_units) | lookup.own_text_units_of_all(cited)


def cited_reports(lookup: Lookup, baseline: Trace) -> frozenset[str]:
    """The community reports the baseline cited and the view knows: readable in every condition
    but cited removal."""
    return frozenset(c for c in baseline.citations.communities if lookup.view.community(c) is not None)


def own_text_note(lookup: Lookup, targeted: Iterable[str], hidden_units: Iterable[str], what: str) -> str:
    """How many of the targeted entities' own text units a plan leaves readable (the aim: 0; a
    cited text unit is the one exception the conditions make)."""
    own = lookup.own_text_units_of_all(targeted)
    readable = own - set(hidden_units)
    return f"{what}: {len(readable)} of their {len(own)} own text unit(s) still readable"


def known(lookup: Lookup, entity_ids: Iterable[str]) -> tuple[frozenset[str], int]:
    """The ids the view knows, and how many it did not."""
    ids = set(entity_ids)
    present = frozenset(e for e in ids if lookup.exists(e))
    return present, len(ids) - len(present)
