"""The six graph ablations of paper 000 (section 2.3) as graph-level interventions.

Every intervention starts from one question's baseline trace and labels each entity
``cited``, ``visited-uncited`` or ``not-visited`` (:func:`label_entities`). From those labels
it builds a :class:`HidePlan` (sets of ids to hide, and notes on what it decided) and applies it
with ``view.hide(...)``: the result is a new view over the same store, so nothing is copied and
a fresh system run against it cannot see what the plan hides. ``plan(view, question, baseline,
rng)`` is public: it says exactly what a condition hides for one question.

The text rule (:func:`text_hidden_with`; docs/provenance.md has the table)
    * Removing or masking an entity takes its text with it: every text unit linked to it
      becomes unreadable ...
    * ... except the cited evidence (:func:`cited_text`), which every condition but cited
      removal keeps: the baseline's cited text units and the cited entities' *own* text
      (``Entity.own_text_unit_ids``: the text units of the entity's own paragraph or page, as
      its builder declares them) and nothing else of theirs, so another entity's paragraph that
      merely names a cited entity is hidden: under the isolations "only the cited evidence" is
      left, and Study 3 takes a visited-but-uncited entity's own paragraph although it names the
      cited entity it neighbours. A knowledge base whose builder declares no own text keeps the
      cited text units only. With ``shared_text: hide`` the
      isolations hide a text unit as soon as any non-cited entity is linked to it, so a cited
      entity's own paragraph goes when it names a date, a place or a relative. The paper says
      both that "access to text units attached to non-cited entities is blocked" and that the
      agent "can only read text units from cited entities"; ``keep`` reads the second sentence
      as the rule for a cited entity's own text (Table 2's caption names the reading a run used).
    * Cited removal hides every text unit linked to a cited entity and every cited text unit
      (the notes say how many cited text units it hid, and how many of them were linked to no
      cited entity).
    * A kept entity whose description quotes a sentence of one of its own hidden text units shows
      no label or description (``hide_metadata_of``), except under text-only isolation, whose
      entities keep their metadata as the paper says. The 2wiki-paper000 builder writes
      descriptions that quote no text, so there nothing is hidden this way; other knowledge
      bases may quote.
    Consequences: full isolation and text-only isolation hide the same text units and differ
    in structure and metadata. Entity removal hides exactly what entity text mask hides, plus
    the entities themselves: removal ⊇ mask, as section 2.3 designs the pair ("fully removing the
    entities" against "only restricting access to the text"). The paper's Table 2 reports the
    reverse in 3 of 4 systems (it credits the mask's hidden metadata), so under this design a run
    where the mask changes more can only come from noise or metadata. ``text: orphaned`` on
    entity removal is the other reading: it hides only the text no kept entity links.

Community reports describing a removed or masked entity (one of their members) are not readable
or searchable: the view hides them (see :mod:`provbench.kb.view`); a record's
``artifacts["hidden_by_intervention"]["communities"]`` counts them. The reports the baseline
cited stay readable in every condition but cited removal (``keep_communities``, counted beside).
Every plan's last note says how many of its targets' own text units stayed readable.

Cited ids the knowledge base does not know (hallucinated citations) are ignored and counted in
the plan's notes; random removal matches the size of the *known* cited set.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import Question, Trace
from provbench.plugin_api import Intervention

from .hiding import EntityLabel, known, quotes  # noqa: F401 (re-exported)
from .hiding import (
    EntityLabels,
    HidePlan,
    Lookup,
    cited_reports,
    cited_text,
    label_entities,
    lookup_for,
    own_text_note,
    quoting_metadata,
    shared_with_kept,
    text_hidden_with,
)

if TYPE_CHECKING:
    from provbench.kb import GraphView


# -- options ---------------------------------------------------------------------------------

SharedText = Literal["keep", "hide"]


class IsolationOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    shared_text: SharedText = Field(
        "keep",
        description="a cited entity's own text unit that is also linked to a non-cited entity: keep (readable) or hide",
    )


class EntityRemovalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    text: Literal["linked", "orphaned"] = Field(
        "linked",
        description="the removed entities' text: linked (every unit linked to one, as entity text mask hides) "
        "or orphaned (only units no kept entity links)",
    )


class RandomRemovalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    repeats: int = Field(3, ge=1, le=100, description="random draws per question, averaged")
    hops: int = Field(2, ge=0, le=4, description="pool: entities within this many hops of the trajectory")
    search_k: int = Field(20, ge=0, le=1000, description="pool: top entity hits for the question text")
    draw: Literal["not-visited-first", "uniform"] = Field(
        "not-visited-first",
        description="not-visited-first (visited-but-uncited entities only when nothing else is left) or "
        "uniform over the non-cited pool, visited-but-uncited included (the paper's wording)",
    )


# -- the six ablations -------------------------------------------------------------------------


class GraphAblation(Intervention):
    """Base: subclasses implement :meth:`plan`; :meth:`make_view` applies it."""

    level = "graph"

    def make_view(self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random) -> "GraphView":
        plan = self.plan(view, question, baseline, rng)
        return view.hide(**plan.as_kwargs()).noted(plan.notes)

    def plan(self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random) -> HidePlan:
        raise NotImplementedError


class Removal(GraphAblation):
    """Base of the ablations that remove entities, and with them their text (:func:`text_hidden_with`)."""

    def removal_plan(
        self,
        lookup: Lookup,
        removed: frozenset[str],
        baseline: Trace,
        cited: frozenset[str],
        notes: list[str],
        keep_units: Iterable[str] | None = None,
    ) -> HidePlan:
        """Remove ``removed`` with their text, keeping the cited evidence (``keep_units``, default
        :func:`cited_text`) and the cited reports."""
        keep = cited_text(lookup, baseline, cited) if keep_units is None else keep_units
        units, quoting = text_hidden_with(lookup, removed, keep, cited)
        notes = notes + [own_text_note(lookup, removed, units, f"{len(removed)} removed entities")]
        return HidePlan(
            entities=removed,
            text_units=units,
            hide_metadata_of=quoting,
            keep_communities=cited_reports(lookup, baseline),
            notes=notes,
        )


def _unknown_note(count: int) -> list[str]:
    return [f"{count} cited entity id(s) not in the knowledge base were ignored"] if count else []


class Isolation(GraphAblation):
    """Base of the two isolations: what a non-cited entity's text is, under ``shared_text``."""

    Options = IsolationOptions

    def isolated_text(
        self, lookup: Lookup, view: "GraphView", baseline: Trace, cited: frozenset[str]
    ) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """(the non-cited entities, the text units that stay readable, the hidden text units): a
        cited entity's text that only names it (another entity's paragraph) is not its own."""
        others = frozenset(e for e in view.entity_ids() if e not in cited)  # O(graph): once per question
        keep = (
            cited_text(lookup, baseline, cited)
            if self.options.shared_text == "keep"
            else set(baseline.citations.text_units)
        )
        return others, frozenset(keep), frozenset(lookup.text_units_of_all(others) - keep)


class FullIsolation(Isolation, Removal):
    """Study 1: every entity except the baseline's cited ones is removed, with its text."""

    name = "full-isolation"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        cited, unknown = known(lookup, label_entities(baseline).cited)
        removed, keep, _ = self.isolated_text(lookup, view, baseline, cited)
        notes = _unknown_note(unknown) + ([] if cited else ["baseline cited no known entity: every entity removed"])
        return self.removal_plan(lookup, removed, baseline, cited, notes, keep_units=keep)


class TextOnlyIsolation(Isolation):
    """Study 1: nothing removed; the text of non-cited entities unreadable (as in full isolation),
    their metadata and the graph's structure visible."""

    name = "text-only-isolation"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        cited, unknown = known(lookup, label_entities(baseline).cited)
        others, _, hidden = self.isolated_text(lookup, view, baseline, cited)
        notes = _unknown_note(unknown) + [own_text_note(lookup, others, hidden, f"{len(others)} non-cited entities")]
        return HidePlan(
            text_units=hidden,
            keep_communities=cited_reports(lookup, baseline),  # metadata stays, as the paper says
            notes=notes,
        )


class CitedRemoval(Removal):
    """Study 2: every entity the baseline cited is removed, with its text, and every text unit the
    baseline cited is hidden (the notes say how many, and how many of them no cited entity holds)."""

    name = "cited-removal"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        cited, unknown = known(lookup, label_entities(baseline).cited)
        notes = _unknown_note(unknown) + ([] if cited else ["baseline cited no known entity: no entity removed"])
        cited_units = set(baseline.citations.text_units)
        with_entities, _ = text_hidden_with(lookup, cited)
        extra = cited_units - with_entities
        units = with_entities | extra
        if cited_units:
            notes.append(
                f"hides the baseline's {len(cited_units)} cited text unit(s); {len(extra)} of them "
                "linked to no cited entity"
            )
        notes.append(own_text_note(lookup, cited, units, f"{len(cited)} removed entities"))
        return HidePlan(
            entities=cited, text_units=units, hide_metadata_of=quoting_metadata(lookup, units, cited), notes=notes
        )


class RandomRemoval(Removal):
    """Study 2 control: as many non-cited, plausibly retrievable entities as were cited, at random,
    not-visited ones first (:meth:`draw`); the cited entities' text stays readable.

    Plausibly retrievable: within ``hops`` hops of an entity the baseline visited or cited, or
    among the top ``search_k`` entity hits for the question text. Visited-but-uncited entities
    (what Study 3 removes) are drawn only when no not-visited entity is left; every tier beyond
    the first is noted in the plan. ``draw: uniform`` samples the whole non-cited pool instead,
    visited-but-uncited entities included, as the paper words it. The last-but-one note gives the
    share of drawn entities that were on the trajectory (visited).
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
        draw = self.draw_uniform if self.options.draw == "uniform" else self.draw
        chosen = draw(view, lookup, question, labels, cited, rng, notes)
        on_trajectory = len(set(chosen) & labels.visited)
        notes.append(f"{on_trajectory} of {len(chosen)} drawn entities were on the trajectory (visited)")
        return self.removal_plan(lookup, frozenset(chosen), baseline, cited, notes)

    def draw_uniform(self, view, lookup, question, labels, cited, rng, notes) -> list[str]:
        """As many entities as were cited, uniformly from the non-cited pool (visited ones too), topped
        up from the rest of the graph when the pool is too small."""
        pool = sorted(self.candidate_pool(view, lookup, question, labels) - cited)
        chosen = rng.sample(pool, min(len(cited), len(pool)))
        wanted = len(cited) - len(chosen)
        if wanted > 0:
            rest = sorted(e for e in set(view.entity_ids()) - cited - set(pool) if lookup.exists(e))
            chosen += rng.sample(rest, min(wanted, len(rest)))
            notes.append(f"plausibly retrievable entities: {len(pool)}; {len(chosen) - len(pool)} drawn from the rest")
        return chosen

    def draw(
        self,
        view: "GraphView",
        lookup: Lookup,
        question: Question,
        labels: EntityLabels,
        cited: frozenset[str],
        rng: random.Random,
        notes: list[str],
    ) -> list[str]:
        """As many entities as were cited, from three tiers in turn: plausibly retrievable and not
        visited; the rest of the graph not visited; visited but not cited (Study 3's target, last)."""
        pool = self.candidate_pool(view, lookup, question, labels) - cited
        chosen = rng.sample(sorted(pool - labels.visited), min(len(cited), len(pool - labels.visited)))
        for tier, members in (
            ("the rest of the graph", lambda: set(view.entity_ids()) - cited - pool - labels.visited),
            ("the visited-but-uncited entities", lambda: labels.visited - cited),
        ):
            wanted = len(cited) - len(chosen)
            if wanted <= 0:
                break
            candidates = sorted(e for e in members() if e not in chosen and lookup.exists(e))
            extra = rng.sample(candidates, min(wanted, len(candidates)))
            notes.append(
                f"plausibly retrievable, not-visited entities: {len(pool - labels.visited)}; "
                f"{len(extra)} drawn from {tier}"
            )
            chosen += extra
        return chosen

    def candidate_pool(self, view: "GraphView", lookup: Lookup, question: Question, labels: EntityLabels) -> set[str]:
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
    """Study 3: visited-but-uncited entities are removed; the cited entities' text stays readable.

    ``text: orphaned`` reads section 2.3's "removing entities or restricting access to their linked
    text units" as two different operations: the entities and their edges go, but only the text
    units no kept entity links are hidden, so a unit shared with a kept neighbour stays readable
    (removal then no longer hides all that entity text mask hides, as the paper's Table 2 suggests).
    """

    name = "entity-removal"

    Options = EntityRemovalOptions

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        removed, _ = known(lookup, label_entities(baseline).visited_uncited)
        cited, _ = known(lookup, label_entities(baseline).cited)
        keep = cited_text(lookup, baseline, cited)
        if self.options.text == "orphaned":
            keep |= shared_with_kept(lookup, removed)
        return self.removal_plan(lookup, removed, baseline, cited, [], keep_units=keep)


class EntityTextMask(GraphAblation):
    """Study 3: visited-but-uncited entities stay, but their text units and metadata are hidden;
    the cited entities' text stays readable."""

    name = "entity-text-mask"

    def plan(self, view, question, baseline, rng) -> HidePlan:
        lookup = lookup_for(view)
        masked, _ = known(lookup, label_entities(baseline).visited_uncited)
        cited, _ = known(lookup, label_entities(baseline).cited)
        units, quoting = text_hidden_with(lookup, masked, cited_text(lookup, baseline, cited), cited)
        return HidePlan(
            text_units=units,
            hide_metadata_of=masked | quoting,
            keep_communities=cited_reports(lookup, baseline),
            notes=[own_text_note(lookup, masked, units, f"{len(masked)} masked entities")],
        )


ABLATIONS = (FullIsolation, TextOnlyIsolation, CitedRemoval, RandomRemoval, EntityRemoval, EntityTextMask)
