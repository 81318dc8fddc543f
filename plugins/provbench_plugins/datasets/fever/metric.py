"""The ``fever`` metric: FEVER's own measures for any system run on FEVER claims.

Per record: ``label_correct``, ``fever_strict`` (label right and, for SUPPORTS/REFUTES, a whole
gold evidence set among the predicted sentences), ``evidence_precision`` / ``evidence_recall``
(non-NEI claims only). Per system and condition: label accuracy, macro-F1 and per-class
precision/recall over the three labels (an abstention or failure is a wrong prediction of no
class), the confusion matrix, and the official FEVER score with evidence precision, recall and
F1 (:func:`.scoring.fever_score`, first ``max_evidence`` = 5 sentences).

A record's predicted evidence (option ``predicted_evidence``): ``padded`` (default), the sentences
behind what it cited, then the other sentences it read, in order (text unit ids
``s:<page>:<line>`` of the ``fever-wiki`` KB); ``cited``, the cited sentences alone, the evidence
the system put forward, as the official scorer scores a submission (its measures are named with
``_cited``: ``fever.fever_score_cited``, ``evidence_recall_cited``, ...); ``both`` scores both
readings, side by side. The label measures do not depend on it. When the claims' pages come from
a BEIR corpus, whose sentence numbers are not FEVER's, the evidence measures and the FEVER score
are left out (None, with a note): only the label measures are meaningful.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import Question, RunRecord, Trace
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results

from .claim_records import official_evidence
from .pages import evidence_of, is_beir_corpus
from .scoring import (
    LABELS,
    Prediction,
    evidence_precision,
    evidence_recall,
    fever_score,
    normalize_label,
    strictly_correct,
)


# each reading of a record's predicted evidence, and the suffix of its measures' names
SUFFIXES = {"padded": "", "cited": "_cited"}
READINGS = {"padded": ("padded",), "cited": ("cited",), "both": ("padded", "cited")}


def predicted_evidence(trace: Trace | None, reading: str = "padded") -> list[tuple[str, int]]:
    """The (page, line) pairs a record submits: its cited sentences, padded (``padded``) with the
    other sentences it read."""
    if trace is None:
        return []
    read = trace.read_text_units if reading == "padded" else []
    ids = list(dict.fromkeys([*trace.citations.text_units, *read]))
    return [pair for pair in map(evidence_of, ids) if pair is not None]


BEIR_NOTE = "pages from a BEIR corpus: its sentence numbers are not FEVER's lines, so evidence cannot be scored"
EVIDENCE_MEASURES = ("fever_strict", "evidence_precision", "evidence_recall")
RUN_EVIDENCE_MEASURES = ("fever_score", "evidence_precision", "evidence_recall", "evidence_f1")


def evidence_scorable(question: Question) -> bool:
    pages = question.metadata.get("pages")
    return not (pages and is_beir_corpus(pages))


def predicted_label(record: RunRecord) -> str | None:
    """The label a record predicted; None when it abstained, failed or named no label."""
    return normalize_label(record.trace.answer) if record.status == "ok" and record.trace else None


def prediction(record: RunRecord, question: Question, reading: str = "padded") -> Prediction:
    return Prediction(
        question.answer, predicted_label(record), official_evidence(question), predicted_evidence(record.trace, reading)
    )


def per_class(
    pairs: list[tuple[str, str | None]],
) -> tuple[dict[str, dict[str, float | None]], dict[str, dict[str, int]]]:
    """Precision, recall and F1 per label, and the confusion matrix gold -> predicted."""
    columns = [*LABELS, "(none)"]
    matrix = {g: {p: 0 for p in columns} for g in LABELS}
    for gold, pred in pairs:
        matrix[gold][pred or "(none)"] += 1
    classes: dict[str, dict[str, float | None]] = {}
    for label in LABELS:
        tp = matrix[label][label]
        predicted = sum(matrix[g][label] for g in LABELS)
        actual = sum(matrix[label].values())
        p = tp / predicted if predicted else None
        r = tp / actual if actual else None
        f1 = 2 * p * r / (p + r) if p and r else (0.0 if p is not None and r is not None else None)
        classes[label] = {"precision": p, "recall": r, "f1": f1, "support": actual}
    return classes, matrix


class FeverMetric(Metric):
    """FEVER's measures: label accuracy, macro-F1, per-class P/R, FEVER score, evidence P/R/F1."""

    name = "fever"

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")

        max_evidence: int | None = Field(5, ge=1, description="predicted sentences scored (the scorer's 5); null: all")
        predicted_evidence: Literal["padded", "cited", "both"] = Field(
            "padded",
            description="padded: cited sentences, then the others read; cited: cited sentences only "
            "(measures named ..._cited); both: both readings",
        )

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.max_evidence = self.options.max_evidence
        self.readings = READINGS[self.options.predicted_evidence]

    def score(self, record: RunRecord, question: Question, context: MetricContext) -> dict[str, float | None]:
        if question.answer not in LABELS:
            return {}
        scores: dict[str, float | None] = {"label_correct": float(predicted_label(record) == question.answer)}
        for reading in self.readings:
            scores.update(self.evidence_scores(record, question, reading))
        return scores

    def evidence_scores(self, record: RunRecord, question: Question, reading: str) -> dict[str, float | None]:
        """The per-record evidence measures of one reading, None (with a note) on a BEIR corpus."""
        suffix = SUFFIXES[reading]
        names = [m + suffix for m in EVIDENCE_MEASURES]
        if not evidence_scorable(question):
            record.score_notes.update({k: BEIR_NOTE for k in names})
            return dict.fromkeys(names)
        p = prediction(record, question, reading)
        precision, counted = evidence_precision(p, self.max_evidence)
        recall, _ = evidence_recall(p, self.max_evidence)
        values = (
            float(strictly_correct(p, self.max_evidence)),
            precision if counted else None,
            recall if counted else None,
        )
        return dict(zip(names, values))

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                records = [
                    r
                    for r in results.select(system, condition)
                    if r.key.question_id in results.questions and results.questions[r.key.question_id].answer in LABELS
                ]
                if records:
                    values += self.summarise(records, results.questions, system, condition)
        return values

    def summarise(
        self, records: list[RunRecord], questions: dict[str, Question], system: str, condition: str
    ) -> list[MetricValue]:
        def value(metric: str, v: float | None, **extra: Any) -> MetricValue:
            return MetricValue(metric=f"fever.{metric}", system=system, condition=condition, value=v, **extra)

        preds = [prediction(r, questions[r.key.question_id]) for r in records]
        accuracy = fever_score(preds, self.max_evidence).accuracy
        classes, matrix = per_class([(p.label, p.predicted_label) for p in preds])
        f1s = [c["f1"] or 0.0 for c in classes.values() if c["support"]]
        n = len(preds)
        values = [
            value("label_accuracy", accuracy, numerator=round(accuracy * n), denominator=n),
            value("macro_f1", sum(f1s) / len(f1s) if f1s else None, detail={"per_class": classes}),
            value("confusion", None, detail={"matrix": matrix}, note="gold label -> predicted label"),
        ]
        scorable = all(evidence_scorable(questions[r.key.question_id]) for r in records)
        for reading in self.readings:
            suffix = SUFFIXES[reading]
            if not scorable:
                values += [value(m + suffix, None, note=BEIR_NOTE) for m in RUN_EVIDENCE_MEASURES]
                continue
            scores = fever_score(
                [prediction(r, questions[r.key.question_id], reading) for r in records], self.max_evidence
            )
            strict = value("fever_score" + suffix, scores.strict, numerator=round(scores.strict * n), denominator=n)
            values += [strict] + [
                value(m + suffix, v)
                for m, v in zip(RUN_EVIDENCE_MEASURES[1:], (scores.precision, scores.recall, scores.f1))
            ]
        return values
