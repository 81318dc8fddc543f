"""``gold-trajectory``: every trajectory against its question's gold evidence, and which steps mattered.

Any dataset whose loader fills ``Question.gold`` (``DatasetLoader.provides_gold``) gets these scores;
the definitions are :mod:`provbench.trajectory`'s and docs/provenance.md's (section 7).

Per record (``record.scores``, for the conditions the ``conditions`` option names, the baseline by
default): ``gold.<stage>.<kind>.recall`` / ``.precision``, ``gold.path_coverage``,
``gold.first_complete_step``, ``gold.wasted_steps``; only the scores the question's mapped gold
defines. A leave-one-step-out record also gets ``gold.left_out.gold_items``: how many of the items
its left-out step first showed are gold.

Per run (``metrics.json``), per system and condition, micro-averaged over its records:
``gold-trajectory.<stage>.<kind>.recall`` / ``.precision``, ``.path_coverage``, ``.complete`` (share
of trajectories whose gold evidence got complete), ``.first_complete_step`` (its mean over those),
``.wasted_steps`` (share of retrieval steps wasted); ``gold-trajectory.mapping`` (system "all"):
how much of the gold the knowledge base holds; and for each leave-one-step-out condition
``gold-trajectory.single_step_dependence`` (share of questions whose answer changes when one step is
left out) and ``gold-trajectory.critical_step`` (the step most often critical).
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.kb.goldmap import MappedGold, map_gold, unmapped_items
from provbench.model import BASELINE, Question, RunRecord
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results, own_index_reads
from provbench.trajectory import Ratio, TrajectoryScore, left_out_step, score_trajectory

from .dependence import GOLD_ITEMS, step_conditions, step_dependence

PREFIX = "gold-trajectory"
ALL_SYSTEMS = "all"


class GoldTrajectoryOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conditions: list[str] | Literal["all"] = Field(
        default_factory=lambda: [BASELINE], description="run conditions whose trajectories are scored"
    )


class GoldTrajectory(Metric):
    """Recall and precision of gold in what a system retrieved, visited and cited; gold-path coverage;
    the first step with complete evidence; wasted steps; and which single steps the answers depend on."""

    name = "gold-trajectory"
    Options = GoldTrajectoryOptions

    def scored(self, condition: str) -> bool:
        return self.options.conditions == "all" or condition in self.options.conditions

    def score(self, record: RunRecord, question: Question, context: MetricContext) -> dict[str, float | None]:
        gold = _gold(question, context)
        if gold is None:
            return {}
        out = {}
        step = left_out_step(record)
        if step is not None:
            hidden = record.variant.data.get("hidden", {})
            out[GOLD_ITEMS] = float(
                sum(
                    len(set(ids) & gold.ids(kind))
                    for kind, ids in hidden.items()
                    if kind in ("entity", "relationship", "text_unit")
                )
            )
        if (
            record.trace is not None
            and record.status == "ok"
            and self.scored(record.key.condition)
            and not own_index_reads(record.trace)
        ):
            out.update(score_trajectory(record.trace, gold).scores())
        return out

    def aggregate(self, results: Results, context: MetricContext) -> list[MetricValue]:
        if context.view is None:
            return []
        golds = {qid: _gold(q, context) for qid, q in results.questions.items()}
        values = [mapping_value(golds)]
        for system in results.systems:
            for condition in results.conditions:
                if self.scored(condition):
                    values += self.trajectory_values(results, system, condition, golds)
        for system, condition in step_conditions(results.every_record()):
            values += dependence_values(results.select(system, condition), system, condition)
        return values

    def trajectory_values(
        self, results: Results, system: str, condition: str, golds: dict[str, MappedGold | None]
    ) -> list[MetricValue]:
        scores: list[TrajectoryScore] = []
        own = 0  # units that read an index of their own: its nodes are no gold id, not a recall of 0
        for record in results.select(system, condition):
            gold = golds.get(record.key.question_id)
            if record.status != "ok" or record.trace is None or gold is None or not gold.any_mapped:
                continue
            if condition != BASELINE and record.key.question_id in results.excluded:
                continue
            if own_index_reads(record.trace):
                own += 1
                continue
            scores.append(score_trajectory(record.trace, gold))
        if not scores:
            return [own_index_value(system, condition, own)] if own else []
        value = lambda name, ratio, **kw: _ratio_value(name, system, condition, ratio, **kw)  # noqa: E731 - a one-line closure
        out = []
        for stage, kind in dict.fromkeys(key for s in scores for key in s.recall):
            out.append(value(f"{stage}.{kind}.recall", _sum(s.recall.get((stage, kind)) for s in scores)))
            if any((stage, kind) in s.precision for s in scores):
                out.append(value(f"{stage}.{kind}.precision", _sum(s.precision.get((stage, kind)) for s in scores)))
        out.append(value("path_coverage", _sum(s.path for s in scores)))
        complete = [s.first_complete_step for s in scores if s.first_complete_step is not None]
        out.append(value("complete", Ratio(len(complete), len(scores))))
        out.append(
            MetricValue(
                metric=f"{PREFIX}.first_complete_step",
                system=system,
                condition=condition,
                value=round(fmean(complete), 6) if complete else None,
                denominator=len(complete),
                detail={"steps": sorted(complete)},
                note="" if complete else "no trajectory's gold evidence got complete",
            )
        )
        out.append(value("wasted_steps", _sum(s.wasted for s in scores), unit="retrieval steps"))
        return out


def own_index_value(system: str, condition: str, units: int) -> MetricValue:
    return MetricValue(
        metric=f"{PREFIX}.path_coverage",
        system=system,
        condition=condition,
        value=None,
        denominator=0,
        detail={"own_index": units},
        note=f"not measurable: {units} unit(s) read an index of their own, whose nodes are no knowledge-base id",
    )


def _gold(question: Question, context: MetricContext) -> MappedGold | None:
    if context.view is None or question.gold is None:
        return None
    return map_gold(context.view, question)


def _sum(ratios: Any) -> Ratio:
    found = [r for r in ratios if r is not None]
    return Ratio(sum(r.hits for r in found), sum(r.total for r in found))


def _ratio_value(name: str, system: str, condition: str, ratio: Ratio, unit: str = "") -> MetricValue:
    note = "" if ratio.total else f"nothing to count{f' ({unit})' if unit else ''}"
    return MetricValue(
        metric=f"{PREFIX}.{name}",
        system=system,
        condition=condition,
        value=None if ratio.value is None else round(ratio.value, 6),
        numerator=ratio.hits,
        denominator=ratio.total,
        note=note,
    )


def mapping_value(golds: dict[str, MappedGold | None]) -> MetricValue:
    """How much of the questions' gold the knowledge base holds (mapped / total per kind)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    with_gold = [g for g in golds.values() if g is not None]
    for gold in with_gold:
        for kind, (mapped, total) in gold.coverage().items():
            totals[kind][0] += mapped
            totals[kind][1] += total
    by_endpoints = sum(1 for g in with_gold for h in g.hops if h.mapped and not h.by_label)
    mapped, total = sum(t[0] for t in totals.values()), sum(t[1] for t in totals.values())
    detail = {kind: {"mapped": m, "total": t} for kind, (m, t) in totals.items() if t}
    detail.update(
        {
            "questions": len(golds),
            "questions_with_gold": len(with_gold),
            "questions_with_mapped_gold": sum(g.any_mapped for g in with_gold),
            "triples_mapped_by_endpoints": by_endpoints,
            "unmapped": {qid: unmapped_items(g) for qid, g in golds.items() if g is not None and unmapped_items(g)},
        }
    )
    return MetricValue(
        metric=f"{PREFIX}.mapping",
        system=ALL_SYSTEMS,
        value=round(mapped / total, 6) if total else None,
        numerator=mapped,
        denominator=total,
        detail=detail,
        note="" if total else "no question of this run has gold evidence",
    )


def dependence_values(records: list[RunRecord], system: str, condition: str) -> list[MetricValue]:
    dep = step_dependence(records)
    most = dep.most_critical()
    detail = {
        "units": dep.units,
        "changed": dep.changed,
        "failed": dep.failed,
        "critical_positions": dep.position_counts(),
        "left_out_with_gold": {
            f"{'gold' if g else 'no gold'}, {'changed' if c else 'unchanged'}": n
            for (g, c), n in sorted(dep.with_gold.items())
        },
    }
    return [
        MetricValue(
            metric=f"{PREFIX}.single_step_dependence",
            system=system,
            condition=condition,
            value=round(dep.dependent / dep.questions, 6) if dep.questions else None,
            numerator=dep.dependent,
            denominator=dep.questions,
            detail=detail,
            note="" if dep.questions else "no leave-one-step-out unit ran",
        ),
        MetricValue(
            metric=f"{PREFIX}.critical_step",
            system=system,
            condition=condition,
            value=None if most is None else float(most[0]),
            denominator=dep.questions,
            detail={"critical_positions": dep.position_counts(), "questions": None if most is None else most[1]},
            note="no step was critical"
            if most is None
            else f"step {most[0]} was critical for {most[1]} of {dep.questions} question(s)",
        ),
    ]
