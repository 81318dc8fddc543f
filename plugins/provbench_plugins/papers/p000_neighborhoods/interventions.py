"""The six graph ablations of paper 000 (section 2.3) as graph-level interventions.

Every intervention starts from one question's baseline trace and labels each entity
``cited``, ``visited-uncited`` or ``not-visited`` (:func:`label_entities`). From those labels
it builds a :class:`HidePlan` (sets of ids to hide) and applies it with ``view.hide(...)``:
the result is a new view over the same store, so nothing is copied and a fresh system run
against it cannot see what the plan hides.

Decisions (see docs/provenance.md for the full rationale)
    * One text rule, applied by every ablation (:func:`text_hidden_with`): removing or masking
      an entity takes its text with it, i.e. *every* text unit linked to it becomes unreadable,
      including a text unit it shares with a kept entity (that entity loses the text unit too).
      The only exception is the evidence a condition keeps on purpose: the baseline's cited
      text units stay readable in every condition except cited removal (whose point is to take
      the cited evidence away; there a cited text unit goes when it is linked to a removed entity).
      An entity description is a sentence of the entity's text units, so the kept entities that
      share a hidden text unit lose their metadata (label and description) too, except the cited
      entities a condition keeps, and except under text-only isolation, whose non-cited entities
      keep their metadata as the paper specifies.
      Consequences: full isolation and text-only isolation hide the same text units and differ
      in structure and metadata; entity removal hides exactly what entity text mask hides, plus
      the entities themselves, so the paper's ordering of each pair holds by construction.
    * Community reports describing a removed or masked entity (one of their members) are not
      readable or searchable: the view hides them (see :mod:`provbench.kb.view`).
    * Cited ids the knowledge base does not know (hallucinated citations) are ignored and
      counted in the plan's notes; random removal matches the size of the *known* cited set.
"""

from __future__ import annotations

import random
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import Question, Trace
from provbench.plugin_api import Intervention

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
    return EntityLabels(cited=frozenset(trace.citations.entities),
                        visited=frozenset(trace.visited_entities))


# -- what to hide ------------------------------------------------------------------------------

@dataclass
class HidePlan:
    """The id sets handed to ``view.hide``, plus notes on what the plan had to decide."""

    entities: frozenset[str] = frozenset()
    text_units: frozenset[str] = frozenset()
    hide_metadata_of: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)

    def as_kwargs(self) -> dict[str, frozenset[str]]:
        return {"entities": self.entities, "text_units": self.text_units,
                "hide_metadata_of": self.hide_metadata_of}

    def summary(self) -> dict[str, Any]:
        return {"entities": len(self.entities), "text_units": len(self.text_units),
                "hide_metadata_of": len(self.hide_metadata_of), "notes": list(self.notes)}


class _Lookup:
    """Memoised reads of the unmodified view: entity -> text units, text unit -> entities.

    One per view object (:func:`lookup_for`), shared by every question: the isolation ablations
    read every entity once for the first question and from memory afterwards.
    """

    def __init__(self, view: "GraphView") -> None:
        self.view = view
        self._entity_tus: dict[str, tuple[str, ...] | None] = {}
        self._tu_entities: dict[str, tuple[str, ...]] = {}

    def exists(self, entity_id: str) -> bool:
        return self.text_units_of(entity_id) is not None

    def text_units_of(self, entity_id: str) -> tuple[str, ...] | None:
        if entity_id not in self._entity_tus:
            entity = self.view.entity(entity_id)
            self._entity_tus[entity_id] = None if entity is None else tuple(entity.text_unit_ids)
        return self._entity_tus[entity_id]

    def entities_of(self, tu_id: str) -> tuple[str, ...]:
        if tu_id not in self._tu_entities:
            unit = self.view.text_unit(tu_id)
            self._tu_entities[tu_id] = () if unit is None else tuple(unit.entity_ids)
        return self._tu_entities[tu_id]

    def text_units_of_all(self, entity_ids: Iterable[str]) -> set[str]:
        units: set[str] = set()
        for entity_id in entity_ids:
            units.update(self.text_units_of(entity_id) or ())
        return units


_LOOKUPS: "weakref.WeakKeyDictionary[Any, dict[Any, _Lookup]]" = weakref.WeakKeyDictionary()
_LOOKUPS_LOCK = threading.Lock()


def lookup_for(view: "GraphView") -> _Lookup:
    """The memo for this view's store and filter: views created apart over one store share it."""
    store = getattr(view, "_store", view)
    with _LOOKUPS_LOCK:
        per_filter = _LOOKUPS.setdefault(store, {})
        return per_filter.setdefault(view.hidden, _Lookup(view))


def text_hidden_with(lookup: _Lookup, entities: Iterable[str], keep_units: Iterable[str] = (),
                     protected: Iterable[str] = ()) -> tuple[frozenset[str], frozenset[str]]:
    """The one text rule of every ablation: what goes with ``entities``.

    Returns (text units, entities whose metadata goes): every text unit linked to any of
    ``entities`` except ``keep_units`` (the cited text units a condition keeps), and the other
    entities linked to those text units, except ``protected`` ones (the cited entities a
    condition keeps): their descriptions are sentences of the hidden text.
    """
    entities = set(entities)
    units = frozenset(lookup.text_units_of_all(entities) - set(keep_units))
    spared = entities | set(protected)
    sharing = frozenset(e for tu in units for e in lookup.entities_of(tu) if e not in spared)
    return units, sharing


def known(lookup: _Lookup, entity_ids: Iterable[str]) -> tuple[frozenset[str], int]:
    """The ids the view knows, and how many it did not."""
    ids = set(entity_ids)
    present = frozenset(e for e in ids if lookup.exists(e))
    return present, len(ids) - len(present)


# -- options ---------------------------------------------------------------------------------

class RandomRemovalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    repeats: int = Field(3, ge=1, le=100, description="random draws per question, averaged")
    hops: int = Field(2, ge=0, le=4, description="pool: entities within this many hops of the trajectory")
    search_k: int = Field(20, ge=0, le=1000, description="pool: top entity hits for the question text")


# -- the six ablations -------------------------------------------------------------------------

class GraphAblation(Intervention):
    """Base: subclasses implement :meth:`plan`; :meth:`make_view` applies it."""

    level = "graph"

    def make_view(self, view: "GraphView", question: Question, baseline: Trace,
                  rng: random.Random) -> "GraphView":
        return view.hide(**self.plan(view, question, baseline, rng).as_kwargs())

    def plan(self, view: "GraphView", question: Question, baseline: Trace,
             rng: random.Random) -> HidePlan:
        raise NotImplementedError


class Removal(GraphAblation):
    """Base of the ablations that remove entities, and with them their text (:func:`text_hidden_with`)."""

    def removal_plan(self, lookup: _Lookup, removed: frozenset[str], keep_units: Iterable[str],
                     protected: Iterable[str], notes: list[str]) -> HidePlan:
        units, sharing = text_hidden_with(lookup, removed, keep_units, protected)
        return HidePlan(entities=removed, text_units=units, hide_metadata_of=sharing, notes=notes)


def _unknown_note(count: int) -> list[str]:
    return [f"{count} cited entity id(s) not in the knowledge base were ignored"] if count else []


class FullIsolation(Removal):
    """Study 1: every entity except the baseline's cited ones is removed."""

    name = "full-isolation"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        cited, unknown = known(lookup, label_entities(baseline).cited)
        removed = frozenset(e for e in view.entity_ids() if e not in cited)  # O(graph): once per question
        notes = _unknown_note(unknown) + ([] if cited else ["baseline cited no known entity: every entity removed"])
        return self.removal_plan(lookup, removed, baseline.citations.text_units, cited, notes)


class TextOnlyIsolation(GraphAblation):
    """Study 1: nothing removed; the text of non-cited entities unreadable (as in full isolation),
    their metadata and the graph's structure visible."""

    name = "text-only-isolation"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        cited, unknown = known(lookup, label_entities(baseline).cited)
        others = [e for e in view.entity_ids() if e not in cited]
        units, _ = text_hidden_with(lookup, others, baseline.citations.text_units, cited)
        return HidePlan(text_units=units, notes=_unknown_note(unknown))  # metadata stays, as the paper says


class CitedRemoval(Removal):
    """Study 2: every entity the baseline cited is removed, with its text (cited text units included)."""

    name = "cited-removal"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        cited, unknown = known(lookup, label_entities(baseline).cited)
        notes = _unknown_note(unknown) + ([] if cited else ["baseline cited no known entity: nothing removed"])
        return self.removal_plan(lookup, cited, (), (), notes)


class RandomRemoval(Removal):
    """Study 2 control: as many non-cited, plausibly retrievable entities as were cited, at random.

    Plausibly retrievable: within ``hops`` hops of an entity the baseline visited or cited, or
    among the top ``search_k`` entity hits for the question text. If that pool is smaller than
    the cited set, the rest is drawn from the remaining non-cited entities (noted in the plan).
    """

    name = "random-removal"

    Options = RandomRemovalOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.repeats = self.options.repeats  # the runner plans this many units per question

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        labels = label_entities(baseline)
        cited, unknown = known(lookup, labels.cited)
        notes = _unknown_note(unknown)
        pool = sorted(self.candidate_pool(view, lookup, question, labels) - cited)
        chosen = rng.sample(pool, min(len(cited), len(pool)))
        if len(chosen) < len(cited):
            rest = sorted(set(view.entity_ids()) - cited - set(pool))
            extra = rng.sample(rest, min(len(cited) - len(chosen), len(rest)))
            notes.append(f"pool of plausibly retrievable entities had {len(pool)}; "
                         f"{len(extra)} drawn from the rest of the graph")
            chosen += extra
        return self.removal_plan(lookup, frozenset(chosen), baseline.citations.text_units, cited, notes)

    def candidate_pool(self, view: "GraphView", lookup: _Lookup, question: Question,
                       labels: EntityLabels) -> set[str]:
        """Entities near the baseline's trajectory or similar to the question."""
        frontier = {e for e in labels.visited | labels.cited if lookup.exists(e)}
        pool = set(frontier)
        for _ in range(self.options.hops):
            frontier = {n.entity.id for e in frontier for n in view.neighbors(e)} - pool
            pool |= frontier
        if self.options.search_k:
            pool.update(hit.id for hit in view.search_entities(question.question, k=self.options.search_k))
        return pool


class EntityRemoval(Removal):
    """Study 3: visited-but-uncited entities are removed."""

    name = "entity-removal"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        removed, _ = known(lookup, label_entities(baseline).visited_uncited)
        cited, _ = known(lookup, label_entities(baseline).cited)
        return self.removal_plan(lookup, removed, baseline.citations.text_units, cited, [])


class EntityTextMask(GraphAblation):
    """Study 3: visited-but-uncited entities stay, but their text units and metadata are hidden."""

    name = "entity-text-mask"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        masked, _ = known(lookup, label_entities(baseline).visited_uncited)
        cited, _ = known(lookup, label_entities(baseline).cited)
        units, sharing = text_hidden_with(lookup, masked, baseline.citations.text_units, cited)
        return HidePlan(text_units=units, hide_metadata_of=masked | sharing)


ABLATIONS = (FullIsolation, TextOnlyIsolation, CitedRemoval, RandomRemoval, EntityRemoval, EntityTextMask)
