"""Abstention, calibration and cost: metrics for every system that abstains or states a confidence.

Outcomes of one record (a question answered by a system under a condition)
    *answered*: ``status == "ok"``, ``outcome == "answered"`` and an answer; *abstained*:
    ``outcome == "abstained"`` (a deliberate abstention, never an empty answer); everything else
    (failed runs, exhausted budgets) is *neither*, so coverage + abstention rate + that share = 1.

``abstention.*`` (per system and condition, over its records)
    coverage               answered / all records
    rate                   abstained / all records
    selective_accuracy     mean correctness of the answered records
    accuracy_abstain_wrong sum of the answered records' correctness / all records (an abstention
                           scores 0 here, even on a question that has no answer)
    correct_abstention     abstained / questions the dataset marks unanswerable
                           (``question.metadata["answerable"] is False``); no value when none is
    answerable_abstained   abstained / answerable questions (over-abstention)
``calibration.*`` (baseline records that state a confidence)
    Each record gives a pair (stated confidence, correctness of its *candidate* answer): its
    answer, or for an abstention the answer it held back (``artifacts["candidate_answer"]``,
    scored with the dataset loader); an abstention without a candidate gives no pair.
    ece   expected calibration error over ``bins`` equal-width bins of [0, 1] (bin i holds
          i/bins <= confidence < (i+1)/bins, the edges compared as the floats i/bins, so 0.29 is
          in bin 29 of 100; a confidence of exactly 1 falls in the last bin): sum over bins of
          n_b / N * |accuracy_b - confidence_b|;
          ``detail["bins"]`` holds each bin (the reliability diagram)
    aurc  area under the risk-coverage curve: pairs sorted by confidence, highest first; after
          each group of equal confidences, coverage = m / N and risk = 1 - mean correctness of
          the m pairs so far; AURC = sum over groups of (group size / N) * risk (without ties,
          the mean of the N risks); ``detail["curve"]`` holds the (coverage, risk) points
``cost.*`` (per system and condition, records with a trace)
    llm_calls, concepts_examined (visited entities), tokens: means per question.
"""

from __future__ import annotations

from bisect import bisect_right
from statistics import fmean
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import BASELINE, Question, RunRecord
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results, correctness

from .records import round6

Pair = tuple[float, float]  # (stated confidence, correctness in [0, 1])


# -- formulas ----------------------------------------------------------------------------------


def reliability_bins(pairs: list[Pair], bins: int) -> list[dict[str, Any]]:
    """Equal-width bins of [0, 1] with their counts, mean confidence and mean correctness."""
    grouped: list[list[Pair]] = [[] for _ in range(bins)]
    edges = [i / bins for i in range(1, bins)]  # int(0.29 * 100) is 28: compare with the edges instead
    for confidence, correct in pairs:
        grouped[bisect_right(edges, confidence)].append((confidence, correct))
    return [
        {
            "lower": i / bins,
            "upper": (i + 1) / bins,
            "n": len(g),
            "confidence": fmean(c for c, _ in g) if g else None,
            "accuracy": fmean(a for _, a in g) if g else None,
        }
        for i, g in enumerate(grouped)
    ]


def expected_calibration_error(pairs: list[Pair], bins: int = 10) -> float | None:
    if not pairs:
        return None
    return sum(
        b["n"] / len(pairs) * abs(b["accuracy"] - b["confidence"]) for b in reliability_bins(pairs, bins) if b["n"]
    )


def risk_coverage_curve(pairs: list[Pair]) -> list[Pair]:
    """(coverage, risk) after each group of equal confidences, most confident first."""
    ordered = sorted(pairs, key=lambda p: -p[0])
    curve, total, i = [], 0.0, 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][0] == ordered[i][0]:
            total += ordered[j][1]
            j += 1
        curve.append((j / len(ordered), 1.0 - total / j))
        i = j
    return curve


def aurc(pairs: list[Pair]) -> float | None:
    if not pairs:
        return None
    area, previous = 0.0, 0.0
    for coverage, risk in risk_coverage_curve(pairs):
        area += (coverage - previous) * risk
        previous = coverage
    return area


# -- reading records ---------------------------------------------------------------------------


def answered(record: RunRecord) -> bool:
    t = record.trace
    return record.status == "ok" and t is not None and t.outcome == "answered" and t.answer is not None


def abstained(record: RunRecord) -> bool:
    return record.status == "ok" and record.trace is not None and record.trace.outcome == "abstained"


def unanswerable(question: Question | None) -> bool:
    return question is not None and question.metadata.get("answerable") is False


def confidence_pair(record: RunRecord, question: Question | None, context: MetricContext | None) -> Pair | None:
    """(confidence, correctness of the candidate answer), or None (see the module docstring)."""
    t = record.trace
    if record.status != "ok" or t is None or t.confidence is None:
        return None
    if answered(record):
        value = correctness(record)
        return None if value is None else (t.confidence, value)
    candidate = t.artifacts.get("candidate_answer") if abstained(record) else None
    loader = context.loader if context is not None else None
    if not isinstance(candidate, str) or question is None or loader is None:
        return None
    score = loader.score_answer(question, candidate).get("accuracy")
    return None if score is None else (t.confidence, min(1.0, max(0.0, float(score))))


def _value(metric: str, system: str, condition: str, num: float | None, den: int, **detail: Any) -> MetricValue:
    value = None if not den or num is None else num / den
    note = "" if den else "no records to count"
    return MetricValue(
        metric=metric,
        system=system,
        condition=condition,
        value=round6(value),
        numerator=round6(num),
        denominator=den,
        detail=detail,
        note=note,
    )


# -- metrics -----------------------------------------------------------------------------------


class Abstention(Metric):
    """Coverage, abstention rate, selective accuracy, accuracy with abstention as wrong, and
    correct abstention on questions the dataset marks unanswerable."""

    name = "abstention"

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                records = results.select(system, condition)
                if records:
                    values += self.for_records(system, condition, records, results.questions)
        return values

    def for_records(
        self, system: str, condition: str, records: list[RunRecord], questions: dict[str, Question]
    ) -> list[MetricValue]:
        n, done = len(records), [r for r in records if answered(r)]
        held = [r for r in records if abstained(r)]
        right = sum(correctness(r) or 0.0 for r in done)
        counts = {"records": n, "answered": len(done), "abstained": len(held), "neither": n - len(done) - len(held)}
        marked = [r for r in records if unanswerable(questions.get(r.key.question_id))]
        answerable = [r for r in records if not unanswerable(questions.get(r.key.question_id))]
        m = f"{self.name}."
        values = [
            _value(m + "coverage", system, condition, len(done), n, **counts),
            _value(m + "rate", system, condition, len(held), n, **counts),
            _value(m + "selective_accuracy", system, condition, round6(right), len(done), **counts),
            _value(m + "accuracy_abstain_wrong", system, condition, round6(right), n, **counts),
            _value(m + "answerable_abstained", system, condition, sum(map(abstained, answerable)), len(answerable)),
        ]
        correct_abstention = _value(
            m + "correct_abstention", system, condition, sum(map(abstained, marked)), len(marked)
        )
        if not marked:
            correct_abstention.note = "the dataset marks no question unanswerable"
        return values + [correct_abstention]


class CalibrationOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bins: int = Field(10, ge=1, le=1000, description="equal-width confidence bins of the ECE")


class Calibration(Metric):
    """Expected calibration error (with its bin count) and AURC from stated confidences."""

    name = "calibration"
    Options = CalibrationOptions

    @property
    def bins(self) -> int:
        return self.options.bins

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            records = results.select(system, BASELINE)
            if not records:
                continue
            pairs = [
                p
                for p in (confidence_pair(r, results.questions.get(r.key.question_id), context) for r in records)
                if p is not None
            ]
            counts = {
                "records": len(records),
                "with_confidence": len(pairs),
                "without": len(records) - len(pairs),
                "bins": self.bins,
            }
            note = "" if pairs else "no record states a confidence"
            values.append(
                MetricValue(
                    metric="calibration.ece",
                    system=system,
                    value=round6(expected_calibration_error(pairs, self.bins)),
                    denominator=len(pairs),
                    note=note,
                    detail=counts | {"reliability": [_rounded(b) for b in reliability_bins(pairs, self.bins)]},
                )
            )
            values.append(
                MetricValue(
                    metric="calibration.aurc",
                    system=system,
                    value=round6(aurc(pairs)),
                    denominator=len(pairs),
                    note=note,
                    detail=counts | {"curve": [[round6(c), round6(r)] for c, r in risk_coverage_curve(pairs)]},
                )
            )
        return values


class Cost(Metric):
    """LLM calls, concepts examined (visited entities) and tokens per question."""

    name = "cost"

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                traces = [r.trace for r in results.select(system, condition) if r.trace is not None]
                if not traces:
                    continue
                for field, counts in (
                    ("llm_calls", [len(t.llm_calls) for t in traces]),
                    ("concepts_examined", [len(t.visited_entities) for t in traces]),
                    ("tokens", [t.tokens for t in traces]),
                ):
                    values.append(
                        _value(
                            f"cost.{field}",
                            system,
                            condition,
                            sum(counts),
                            len(counts),
                            min=min(counts),
                            max=max(counts),
                        )
                    )
        return values


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: round6(v) if isinstance(v, float) else v for k, v in row.items()}


def selective_metrics() -> Iterable[type[Metric]]:
    return (Abstention, Calibration, Cost)
