"""A paper package written outside provbench, as a third party would: a dataset loader with
graded scoring, a system that answers from a path and can abstain, an enumerated context-level
intervention (remove node k of the path), a metric over graded scores and abstentions, and a
report section. It uses only provbench's public API."""

from __future__ import annotations

import json
from pathlib import Path

from provbench import hookimpl
from provbench.model import EvidencePath, Question, Trace
from provbench.plugin_api import DatasetLoader, Intervention, Metric, MetricValue, System, Variant, correctness
from provbench.report.sections import BarChart, Row, Section, Table, Text

PROVBENCH_NAMESPACE = "toypaper"
UNSURE = "I don't know"


class PathQuestions(DatasetLoader):
    """A JSON list of questions whose metadata carries a path of names."""

    name = "path-questions"

    def load(self, source, *, limit=None, seed=0, sample=False, **options):
        items = [Question.model_validate(x) for x in json.loads(Path(source).read_text())]
        return items[:limit] if limit else items

    def score_answer(self, question, prediction):
        if prediction is None:
            return {"accuracy": 0.0}
        if prediction == UNSURE:
            return {"accuracy": 0.3}  # partial credit for an honest "I don't know"
        return {"accuracy": float(self.normalize(prediction) == self.normalize(question.answer))}


class PathReader(System):
    """Answers with the last node of the question's path; abstains when there is no path."""

    name = "path-reader"
    supports_resume = True

    def run(self, question, env):
        trace = Trace(question_id=question.id, system=self.name)
        nodes = list(question.metadata.get("path", []))
        if nodes:
            trace.paths.append(EvidencePath(id="path:0", entities=nodes, description=" -> ".join(nodes)))
        trace.artifacts["path"] = nodes
        return self.answer(question, env, trace, nodes)

    def resume(self, question, env, perturbed):
        trace = Trace(question_id=question.id, system=self.name, artifacts=dict(perturbed.artifacts))
        return self.answer(question, env, trace, list(perturbed.artifacts.get("path", [])))

    def answer(self, question, env, trace, nodes):
        if not nodes:
            trace.outcome = "abstained"
            return trace
        resp = env.llm.chat([{"role": "user", "content": "path: " + " > ".join(nodes)}], purpose="answer", trace=trace)
        trace.answer = resp.text
        trace.citations.paths = [p.id for p in trace.paths]
        return trace


class DropNode(Intervention):
    """Removes one node of the baseline path: one variant per node."""

    name = "drop-node"
    level = "context"

    def variants(self, question, baseline, rng):
        nodes = baseline.artifacts.get("path", [])
        return [
            Variant(id=f"node:{i}", description=f"remove node {i} ({node})", data={"index": i})
            for i, node in enumerate(nodes)
        ]

    def perturb(self, question, baseline, rng, variant=None, **kwargs):
        nodes = list(baseline.artifacts.get("path", []))
        del nodes[variant.data["index"]]
        baseline.artifacts["path"] = nodes
        return baseline


class GradedCoverage(Metric):
    """Mean graded correctness over answered questions, and the abstention rate, per system."""

    name = "graded-coverage"

    def aggregate(self, results, context):
        values = []
        for system in results.systems:
            records = results.select(system)
            answered = [r for r in records if r.trace is not None and not r.trace.abstained]
            graded = [correctness(r) or 0.0 for r in answered]
            values.append(
                MetricValue(
                    metric="selective-accuracy",
                    system=system,
                    value=sum(graded) / len(graded) if graded else None,
                    numerator=sum(graded),
                    denominator=len(graded),
                )
            )
            values.append(
                MetricValue(
                    metric="abstention-rate",
                    system=system,
                    value=(len(records) - len(answered)) / len(records) if records else None,
                    numerator=len(records) - len(answered),
                    denominator=len(records),
                )
            )
        return values


def influence_section(run):
    rows, changed = [], {}
    for record in run.records:
        if record.variant is not None:
            flipped = record.scores.get("output_changed")
            rows.append(
                Row(cells=[record.key.question_id, record.variant.description, "changed" if flipped else "same"])
            )
            changed.setdefault(record.variant.id, []).append(flipped or 0.0)
    if not rows:
        return []
    chart = BarChart(
        title="Answers changed per removed node",
        categories=sorted(changed),
        series={"path-reader": [sum(v) / len(v) for _, v in sorted(changed.items())]},
    )
    return [
        Section(
            id="toy-influence",
            title="Toy paper: node influence",
            order=50,
            intro="Which removed path node changed the answer <b>(escaped)</b>.",
            blocks=[
                Table(columns=["Question", "Variant", "Answer"], rows=rows, numeric_from=3, css_class="toy-influence"),
                chart,
                Text(text="One unit per node."),
            ],
        )
    ]


@hookimpl
def provbench_register_dataset_loaders():
    return {"path-questions": PathQuestions}


@hookimpl
def provbench_register_systems():
    return {"path-reader": PathReader}


@hookimpl
def provbench_register_interventions():
    return {"drop-node": DropNode}


@hookimpl
def provbench_register_metrics():
    return {"graded-coverage": GradedCoverage}


@hookimpl
def provbench_report_sections(run):
    return influence_section(run)
