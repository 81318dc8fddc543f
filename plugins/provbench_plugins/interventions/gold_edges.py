"""Edge invalidation on or off a question's gold chain, and the graph as of a time: interventions
for every system, for datasets whose loader provides a gold chain (``Question.gold.triples``,
e.g. curriculum-mini).

* ``invalidate-gold-edge`` (enumerated): one variant per edge of the gold chain, invalidating
  that edge only (found in the knowledge base as below; a variant whose edge the knowledge base
  lacks hides nothing). If the system's answer rests on the chain, every variant should change it.
* ``invalidate-off-chain-edge``: one edge the baseline used (retrieved, cited or walked) that is
  not on the gold chain, drawn at random (``repeats``): the same size as one variant of the above,
  the control that should change nothing. A baseline that used no edge at all runs no unit (nothing
  to perturb); one whose used edges all lie on the chain hides nothing, and its trace says so
  (``hidden_by_intervention`` lists no invalidated edge; a warning names the question): a claim
  must leave such a unit out, since a control that hides nothing would pass for one that changed
  nothing (paper 002's ``gold-edge-changes-answer`` does).
* ``as-of``: the graph as it stood at ``time`` (``GraphView.as_of``): edges invalidated later are
  active again, edges recorded later are not there yet (a stale-edge question's old answer).

Gold triples name concepts as the dataset writes them; an edge is found by its subject's name (or
alias), its relation label and its object's name (or alias).
"""

from __future__ import annotations

import logging
import random
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from provbench.gold import GoldEvidence
from provbench.kb.temporal import InstantError, parse_instant
from provbench.model import Question, Trace
from provbench.plugin_api import Intervention, Variant

from .edges import RandomDraw, RandomEdgesOptions, known_used_relations, used_relations

if TYPE_CHECKING:
    from provbench.kb import GraphView

log = logging.getLogger(__name__)


def gold_relations(view: "GraphView", gold: GoldEvidence | None) -> list[tuple[str, str]]:
    """(relation id, "subject -[relation]-> object") for each gold triple the view holds, in order."""
    found: dict[str, str] = {}
    for triple in gold.triples if gold is not None else []:
        wanted = triple.object.casefold()
        for subject in view.entities_named([triple.subject]):
            for nb in view.neighbors(subject.id, direction="out", relation_types=[triple.relation]):
                if wanted in {n.casefold() for n in (nb.entity.name, *nb.entity.aliases)}:
                    found.setdefault(nb.relation.id, f"{triple.subject} -[{triple.relation}]-> {triple.object}")
    return list(found.items())


class InvalidateGoldEdge(Intervention):
    """One variant per gold-chain edge: that edge invalidated."""

    name = "invalidate-gold-edge"
    level = "graph"
    needs = ("relations",)

    def variants(self, question: Question, baseline: Trace, rng: random.Random) -> list[Variant]:
        triples = question.gold.triples if question.gold is not None else []
        return [
            Variant(
                id=f"gold:{number}",
                description=f"invalidate the gold edge {t.subject} -[{t.relation}]-> {t.object}",
                data={"triple": number},
            )
            for number, t in enumerate(triples)
        ]

    def make_view(
        self,
        view: "GraphView",
        question: Question,
        baseline: Trace,
        rng: random.Random,
        variant: Variant | None = None,
        **kwargs: Any,
    ) -> "GraphView":
        """The variant's triple found in the view and invalidated (nothing when the KB lacks it)."""
        if variant is None or question.gold is None:
            return view.invalidate([])
        triple = question.gold.triples[variant.data["triple"]]
        return view.invalidate([rid for rid, _ in gold_relations(view, GoldEvidence(triples=[triple]))])


class OffChainOptions(RandomEdgesOptions):
    repeats: int = Field(1, ge=1, le=100, description="random draws per question, averaged")


class InvalidateOffChainEdge(RandomDraw):
    """One edge the baseline used that is not on the gold chain, invalidated (a control)."""

    name = "invalidate-off-chain-edge"
    needs = ("relations",)
    Options = OffChainOptions

    def variants(self, question: Question, baseline: Trace, rng: random.Random) -> list[Variant] | None:
        return [] if not used_relations(baseline) else None  # [] : no unit for a baseline that used no edge

    def make_view(
        self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random, **kwargs: Any
    ) -> "GraphView":
        on_chain = {rid for rid, _ in gold_relations(view, question.gold)}
        pool = [rid for rid in known_used_relations(view, baseline) if rid not in on_chain]
        if not pool:
            log.warning(
                "%s: question %r: the baseline used no edge off the gold chain; nothing is invalidated",
                self.name,
                question.id,
            )
        return view.invalidate(rng.sample(pool, 1) if pool else [])


class AsOfOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time: str = Field(description="an ISO date or timestamp: the graph as it stood then")

    @field_validator("time")
    @classmethod
    def _an_instant(cls, value: str) -> str:
        try:
            parse_instant(value)
        except InstantError as err:
            raise ValueError(str(err)) from None
        return value


class AsOf(Intervention):
    """The graph as it stood at ``time``: what was true and recorded then, before later invalidations."""

    name = "as-of"
    level = "graph"
    Options = AsOfOptions

    def make_view(
        self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random, **kwargs: Any
    ) -> "GraphView":
        return view.as_of(self.options.time)
