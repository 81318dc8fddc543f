"""Outcome metrics every run can report: accuracy, answer changes under interventions, accuracy
deltas, the official EM and F1, and the trajectory footprint (paper 000's Tables 1 and 2 are
built from these).

How records are read (correctness, failed and missing records, repeats) is in :mod:`.records`.
"""

from __future__ import annotations

from typing import Any, Mapping

from provbench.model import BASELINE
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results, own_index_reads

from .records import (
    FOOTPRINT_FIELDS,
    Tally,
    round6,
    all_questions,
    analysed_questions,
    arrow,
    cell_not_measurable,
    intervention_conditions,
    per_question_changes,
    per_question_correctness,
    per_question_official,
    stayed_correct_tally,
)


# -- metrics -----------------------------------------------------------------------------------


class Accuracy(Metric):
    """Accuracy per system and condition over the analysed questions, with counts."""

    name = "accuracy"

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        analysed = analysed_questions(results)
        for system in results.systems:
            for condition in results.conditions:
                if not results.select(system, condition, leaked=True):  # a cell left with no unit says so
                    continue
                _, tally = per_question_correctness(results, system, condition, analysed)
                detail: dict[str, Any] = tally.counts()
                if condition == BASELINE:
                    _, everything = per_question_correctness(results, system, condition, all_questions(results))
                    detail["all_questions"] = everything.counts() | {"value": round6(everything.value)}
                values.append(
                    MetricValue(
                        metric=self.name,
                        system=system,
                        condition=condition,
                        value=tally.value,
                        numerator=round6(tally.numerator),
                        denominator=tally.denominator,
                        detail=detail,
                    )
                )
        return values


class OfficialAnswerScore(Metric):
    """The mean x 100 of a per-record answer score the dataset loader gives (``em`` or ``f1``),
    as the official 2WikiMultihopQA / HotpotQA evaluation computes it: over every question (the
    baseline) or every analysed question (an intervention), a question with no scored prediction
    counting 0 (:func:`.records.per_question_official`). ``value`` is on the official 0-100 scale;
    ``numerator`` / ``denominator`` are the summed score and the question count."""

    score_name = ""

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                if not results.select(system, condition, leaked=True):  # a cell left with no unit says so
                    continue
                questions = all_questions(results) if condition == BASELINE else analysed_questions(results)
                _, tally = per_question_official(results, system, condition, questions, self.score_name)
                values.append(
                    MetricValue(
                        metric=self.name,
                        system=system,
                        condition=condition,
                        value=None if tally.value is None else round6(100 * tally.value),
                        numerator=round6(tally.numerator),
                        denominator=tally.denominator,
                        detail=tally.counts() | {"scale": "percent"},
                    )
                )
        return values


class ExactMatch(OfficialAnswerScore):
    """Official EM x 100 (2WikiMultihopQA / HotpotQA): normalised answer equals a gold answer or alias."""

    name = score_name = "em"


class TokenF1(OfficialAnswerScore):
    """Official answer F1 x 100 (2WikiMultihopQA / HotpotQA): token-bag F1, best over gold and aliases."""

    name = score_name = "f1"


class OutputChanged(Metric):
    """Share of analysed answers that differ from the baseline answer after an intervention,
    with originally-correct answers that stayed correct (Table 2's parentheses)."""

    name = "output-changed"

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        analysed = analysed_questions(results)
        for system in results.systems:
            for condition in intervention_conditions(results, system):
                outcomes, tally = per_question_changes(results, system, condition, analysed)
                kept = stayed_correct_tally(outcomes)
                unmeasured = cell_not_measurable(results, system, condition, analysed)
                detail = tally.counts() | {
                    "stayed_correct": round6(kept.numerator),
                    "originally_correct": kept.denominator,
                }
                note = unmeasured or tally.note()
                values.append(
                    MetricValue(
                        metric=self.name,
                        system=system,
                        condition=condition,
                        value=None if unmeasured else tally.value,
                        numerator=round6(tally.numerator),
                        denominator=tally.denominator,
                        detail=detail,
                        note=note,
                    )
                )
                values.append(
                    MetricValue(
                        metric="stayed-correct",
                        system=system,
                        condition=condition,
                        value=None if unmeasured else kept.value,
                        numerator=round6(kept.numerator),
                        denominator=kept.denominator,
                        note=note,
                        detail={"failed": tally.failed, "missing": tally.missing} | tally.left_out,
                    )
                )
        return values


class AccuracyDelta(Metric):
    """Accuracy after intervention minus baseline accuracy, on the questions both have."""

    name = "accuracy-delta"

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        analysed = analysed_questions(results)
        for system in results.systems:
            base, _ = per_question_correctness(results, system, BASELINE, analysed)
            for condition in intervention_conditions(results, system):
                after, tally = per_question_correctness(results, system, condition, analysed)
                paired = [q for q in analysed if q in base and q in after]
                value = delta_value(self.name, system, condition, base, after, paired, tally)
                unmeasured = cell_not_measurable(results, system, condition, analysed)
                if unmeasured:
                    value.value, value.note = None, unmeasured
                values.append(value)
        return values


def delta_value(
    metric: str,
    system: str,
    condition: str,
    base: Mapping[str, float],
    after: Mapping[str, float],
    paired: list[str],
    tally: Tally,
) -> MetricValue:
    before_sum = sum(base[q] for q in paired)
    after_sum = sum(after[q] for q in paired)
    n = len(paired)
    delta = (after_sum - before_sum) / n if n else None
    detail = {
        "baseline_correct": round6(before_sum),
        "condition_correct": round6(after_sum),
        "questions": n,
        "arrow": arrow(delta) if delta is not None else "",
        "failed": tally.failed,
        "missing": tally.missing,
        "unscored": tally.unscored,
    }
    return MetricValue(
        metric=metric,
        system=system,
        condition=condition,
        value=delta,
        numerator=round6(after_sum - before_sum),
        denominator=n,
        detail=detail | tally.left_out,
        note=tally.note(),
    )


class Footprint(Metric):
    """Table 1: mean retrieved/cited text units and visited/cited entities per answer."""

    name = "footprint"

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                records = results.select(system, condition)
                ran = [r for r in records if r.status == "ok" and r.trace is not None]
                # ids of an index of the system's own are not the knowledge base's: not a footprint of 0
                own = sum(1 for r in ran if own_index_reads(r.trace))
                traced = [r.trace.footprint() for r in ran if not own_index_reads(r.trace)]
                if not results.select(system, condition, leaked=True):
                    continue
                note = f"not measurable for {own} unit(s) that read an index of their own" if own else ""
                for field_name in FOOTPRINT_FIELDS:
                    total = sum(fp[field_name] for fp in traced)
                    values.append(
                        MetricValue(
                            metric=f"{self.name}.{field_name}",
                            system=system,
                            condition=condition,
                            value=total / len(traced) if traced else None,
                            numerator=total,
                            denominator=len(traced),
                            detail={"field": field_name, "failed": len(records) - len(ran), "own_index": own},
                            note=note,
                        )
                    )
        return values
