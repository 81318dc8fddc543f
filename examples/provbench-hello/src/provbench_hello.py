"""An example provbench plugin: one system and one metric, registered through hooks."""

from pydantic import BaseModel, Field

from provbench import hookimpl
from provbench.model import Trace
from provbench.plugin_api import Metric, MetricValue, Results, System


class NearestEntity(System):
    """Answers with the name of the entity most similar to the question (no LLM)."""

    class Options(BaseModel):  # a suite's `options:`, validated when the suite loads
        k: int = Field(1, ge=1, le=50, description="entity hits to retrieve")

    def run(self, question, env):
        trace = Trace(question_id=question.id, system=self.name or "nearest-entity")
        hits = env.view.search_entities(question.question, k=self.options.k)
        trace.add_step(
            "retrieval", tool="search_entities", arguments={"query": question.question}, result=[hit.id for hit in hits]
        )
        if not hits:
            trace.outcome = "abstained"
            return trace
        trace.visit(hits[0].id)
        trace.answer = hits[0].name
        trace.citations.entities.append(hits[0].id)
        return trace


class AnswerLength(Metric):
    """Mean answer length in words per system and condition."""

    def aggregate(self, results: Results, context=None):
        values = []
        for system in results.systems:
            for condition in results.conditions:
                answers = [r.trace.answer or "" for r in results.select(system, condition) if r.trace]
                if answers:
                    total = sum(len(a.split()) for a in answers)
                    values.append(
                        MetricValue(
                            metric="answer-length",
                            system=system,
                            condition=condition,
                            value=total / len(answers),
                            numerator=total,
                            denominator=len(answers),
                        )
                    )
        return values


@hookimpl
def provbench_register_systems():
    return {"nearest-entity": NearestEntity}


@hookimpl
def provbench_register_metrics():
    return {"answer-length": AnswerLength}
