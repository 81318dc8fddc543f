"""Paper 002's context measure: how much of what a system was shown lies on the gold chain.

The article's case against one-shot GraphRAG is a noisy context ("tangled with unrelated related
edges"); the loop's case is a focused one. For a question whose loader provides a gold chain
(``Question.gold.entities``, e.g. curriculum-mini), with *shown* = the concepts the system put
before the model (``trace.visited_entities``: the loop's examined concepts, one-shot GraphRAG's
context entities) and *chain* = the gold chain's concepts found in the knowledge base by name or
alias (a gold name the KB lacks is left out, never counted as missed):

``context_precision``  |shown ∩ chain| / |shown|   (0 when nothing was shown)
``gold_chain_shown``   |shown ∩ chain| / |chain|

Questions without a gold chain (unanswerable ones) get neither. ``aggregate`` gives the mean of
each per system and condition, with the number of records behind it.

``stale-answer``: for a question whose loader records the answer it had before an edge was
invalidated (``metadata["stale_answer"]``, curriculum-mini's stale questions), ``stale_answer``
is 1 when the answer names that old concept (the loader's concept-id scoring), else 0; an
abstention names nothing. Its mean per system and condition is the share of stale answers: near 0
on the current graph, near 1 under ``as-of`` a time before the revision.
"""

from __future__ import annotations

from statistics import fmean

from provbench.model import Question, RunRecord
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results

SCORES = ("context_precision", "gold_chain_shown")


class ContextPrecision(Metric):
    """Share of the shown concepts on the gold chain, and share of the chain shown."""

    name = "context-precision"

    def score(self, record: RunRecord, question: Question | None, context: MetricContext) -> dict[str, float]:
        gold = question.gold if question is not None else None
        if record.trace is None or gold is None or not gold.entities or context.view is None:
            return {}
        chain = {e.id for e in context.view.entities_named(gold.entities)}
        if not chain:
            return {}
        shown = set(record.trace.visited_entities)
        on_chain = len(shown & chain)
        return {"context_precision": on_chain / len(shown) if shown else 0.0, "gold_chain_shown": on_chain / len(chain)}

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        return means(results, SCORES)


class StaleAnswer(Metric):
    """1 when the answer names the concept the question's answer was before its revision."""

    name = "stale-answer"

    def score(self, record: RunRecord, question: Question | None, context: MetricContext) -> dict[str, float]:
        from provbench_plugins.datasets.curriculum.scoring import concept_names

        stale = question.metadata.get("stale_answer") if question is not None else None
        if record.trace is None or not stale or "concept_graph" not in question.metadata:
            return {}
        names = concept_names(question.metadata["concept_graph"]["concepts"])
        said = record.trace.answer if record.trace.outcome == "answered" else None
        return {"stale_answer": float(said is not None and names.concept_of(said) == names.concept_of(stale))}

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        return means(results, ("stale_answer",))


def means(results: Results, names: tuple[str, ...]) -> list[MetricValue]:
    """The mean of each score per system and condition, over the records that have it."""
    values = []
    for system in results.systems:
        for condition in results.conditions:
            records = results.select(system, condition)
            for name in names:
                scored = [r.scores[name] for r in records if r.scores.get(name) is not None]
                if scored:
                    values.append(
                        MetricValue(
                            metric=name,
                            system=system,
                            condition=condition,
                            value=round(fmean(scored), 6),
                            denominator=len(scored),
                        )
                    )
    return values
