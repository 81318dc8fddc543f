"""The ``fever`` metric: FEVER's own measures for any system run on FEVER claims.

Per record: ``label_correct``, ``fever_strict`` (label right and, for SUPPORTS/REFUTES, a whole
gold evidence set among the predicted sentences), ``evidence_precision`` / ``evidence_recall``
(non-NEI claims only). Per system and condition: label accuracy, macro-F1 and per-class
precision/recall over the three labels (an abstention or failure is a wrong prediction of no
class), the confusion matrix, and the official FEVER score with evidence precision, recall and
F1 (:func:`.scoring.fever_score`, first ``max_evidence`` = 5 sentences).

A record's predicted evidence: the sentences behind what it cited, then the other sentences it
read, in order (text unit ids ``s:<page>:<line>`` of the ``fever-wiki`` KB). When the claims'
pages come from a BEIR corpus, whose sentence numbers are not FEVER's, the evidence measures
and the FEVER score are left out (None, with a note): only the label measures are meaningful.
"""

from __future__ import annotations

from typing import Any

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


def predicted_evidence(trace: Trace | None) -> list[tuple[str, int]]:
    if trace is None:
        return []
    ids = list(dict.fromkeys([*trace.citations.text_units, *trace.read_text_units]))
    return [pair for pair in map(evidence_of, ids) if pair is not None]


BEIR_NOTE = "pages from a BEIR corpus: its sentence numbers are not FEVER's lines, so evidence cannot be scored"
EVIDENCE_MEASURES = ("fever_strict", "evidence_precision", "evidence_recall")


def evidence_scorable(question: Question) -> bool:
    pages = question.metadata.get("pages")
    return not (pages and is_beir_corpus(pages))


def prediction(record: RunRecord, question: Question) -> Prediction:
    label = normalize_label(record.trace.answer) if record.status == "ok" and record.trace else None
    return Prediction(question.answer, label, official_evidence(question), predicted_evidence(record.trace))


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

    def __init__(self, max_evidence: int = 5) -> None:
        self.max_evidence = max_evidence

    def score(self, record: RunRecord, question: Question, context: MetricContext) -> dict[str, float | None]:
        if question.answer not in LABELS:
            return {}
        p = prediction(record, question)
        precision, counted = evidence_precision(p, self.max_evidence)
        recall, _ = evidence_recall(p, self.max_evidence)
        scores = {
            "label_correct": float(p.predicted_label == p.label),
            "fever_strict": float(strictly_correct(p, self.max_evidence)),
            "evidence_precision": precision if counted else None,
            "evidence_recall": recall if counted else None,
        }
        if not evidence_scorable(question):
            record.score_notes.update({k: BEIR_NOTE for k in EVIDENCE_MEASURES})
            scores.update({k: None for k in EVIDENCE_MEASURES})
        return scores

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
        preds = [prediction(r, questions[r.key.question_id]) for r in records]
        scores = fever_score(preds, self.max_evidence)
        classes, matrix = per_class([(p.label, p.predicted_label) for p in preds])
        f1s = [c["f1"] or 0.0 for c in classes.values() if c["support"]]
        n = len(preds)

        def value(metric: str, v: float | None, **extra: Any) -> MetricValue:
            return MetricValue(metric=f"fever.{metric}", system=system, condition=condition, value=v, **extra)

        labels = [
            value("label_accuracy", scores.accuracy, numerator=round(scores.accuracy * n), denominator=n),
            value("macro_f1", sum(f1s) / len(f1s) if f1s else None, detail={"per_class": classes}),
            value("confusion", None, detail={"matrix": matrix}, note="gold label -> predicted label"),
        ]
        if not all(evidence_scorable(questions[r.key.question_id]) for r in records):
            return labels + [
                value(m, None, note=BEIR_NOTE)
                for m in ("fever_score", "evidence_precision", "evidence_recall", "evidence_f1")
            ]
        return labels + [
            value("fever_score", scores.strict, numerator=round(scores.strict * n), denominator=n),
            value("evidence_precision", scores.precision),
            value("evidence_recall", scores.recall),
            value("evidence_f1", scores.f1),
        ]
