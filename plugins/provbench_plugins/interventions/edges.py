"""Edge invalidation: the graph's invalidate-not-delete step as a graph-level intervention.

The knowledge base stays as built; the intervention returns a view in which some relations are
*invalidated* (``GraphView.invalidate``): no neighbour, path, relation or subgraph query returns
them, exactly like edges stored with ``invalidated_at`` set. It works for every system, because
every system reads the graph through its view.

* ``invalidate-used-edges``: the edges the baseline *used*: the relationships it retrieved or was
  shown (``trace.retrieved`` of kind "relationship"), cited, or walked in an evidence path. Ids
  the view does not know (hallucinated citations) are ignored.
* ``invalidate-random-edges``: as many edges, drawn at random from the active edges the baseline
  did not use (a control of the same size); re-drawn ``repeats`` times. When fewer unused edges
  remain, it draws them all and the pair is unmatched: the report's "control sizes" section
  (:mod:`.report`) lists those questions.

A baseline that used no edge has nothing to invalidate: its run sees the unchanged graph, and
``artifacts["hidden_by_intervention"]`` shows an empty set.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import Question, Trace
from provbench.plugin_api import Intervention

if TYPE_CHECKING:
    from provbench.kb import GraphView


def used_relations(trace: Trace) -> list[str]:
    """Relationship ids the trace retrieved, cited or walked, in first-seen order."""
    ids = [r.id for r in trace.retrieved if r.kind == "relationship"]
    ids += trace.citations.relationships
    ids += [rid for path in trace.paths for rid in path.relations]
    return list(dict.fromkeys(ids))


def known_used_relations(view: "GraphView", trace: Trace) -> list[str]:
    return [rid for rid in used_relations(trace) if view.relation(rid) is not None]


class InvalidateUsedEdges(Intervention):
    """Invalidate the edges the baseline used (retrieved, cited or walked)."""

    name = "invalidate-used-edges"
    level = "graph"
    needs = ("relations",)

    def make_view(
        self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random, **kwargs: Any
    ) -> "GraphView":
        return view.invalidate(known_used_relations(view, baseline))


class RandomEdgesOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repeats: int = Field(3, ge=1, le=100, description="random draws per question, averaged")


class RandomDraw(Intervention):
    """A graph-level intervention drawn at random, ``repeats`` times per question."""

    level = "graph"
    Options = RandomEdgesOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.repeats = self.options.repeats  # the runner plans this many units per question


class InvalidateRandomEdges(RandomDraw):
    """Invalidate as many random edges as the baseline used, drawn from the edges it did not use."""

    name = "invalidate-random-edges"
    needs = ("relations",)

    def make_view(
        self, view: "GraphView", question: Question, baseline: Trace, rng: random.Random, **kwargs: Any
    ) -> "GraphView":
        used = known_used_relations(view, baseline)
        pool = sorted(set(view.relation_ids()) - set(used))
        return view.invalidate(rng.sample(pool, min(len(used), len(pool))))
