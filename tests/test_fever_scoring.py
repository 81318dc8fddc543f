"""FEVER scoring: the official scorer's examples (sheffieldnlp/fever-scorer tests, re-expressed),
its evidence precision/recall definitions, max_evidence, and paper 003's graded accuracy."""

from __future__ import annotations

import pytest

from provbench_plugins.datasets.fever.scoring import (
    NEI,
    Prediction,
    evidence_precision,
    evidence_recall,
    fever_score,
    graded_accuracy,
    normalize_label,
)


def nei(predicted: str | None) -> Prediction:
    return Prediction(NEI, predicted, [], [])


TWO_SENTENCE_SET = [[[None, None, "page1", 1], [None, None, "page2", 0]]]


def test_nei_scored_on_label_only():
    assert fever_score([nei(NEI), nei(NEI)]).strict == 1.0
    assert fever_score([nei("REFUTES"), nei("SUPPORTS")]).accuracy == 0.0
    half = fever_score([nei(NEI), nei("REFUTES")])
    assert (half.strict, half.accuracy) == (0.5, 0.5)


def test_strict_needs_a_whole_evidence_set():
    partial = Prediction("REFUTES", "REFUTES", TWO_SENTENCE_SET, [("page3", 2)])
    whole = Prediction("REFUTES", "REFUTES", TWO_SENTENCE_SET, [("page1", 1), ("page2", 0), ("page3", 2)])
    scores = fever_score([partial, whole])
    assert (scores.strict, scores.accuracy) == (0.5, 1.0)
    assert scores.recall == 0.5
    assert scores.precision == pytest.approx((0 + 2 / 3) / 2)
    assert scores.f1 == pytest.approx(2 * scores.precision * scores.recall / (scores.precision + scores.recall))


def test_max_evidence_cuts_predictions_after_five():
    late = [("x", i) for i in range(5)] + [("page1", 1), ("page2", 0)]
    p = Prediction("SUPPORTS", "SUPPORTS", TWO_SENTENCE_SET, late)
    assert fever_score([p]).strict == 0.0
    assert fever_score([p], max_evidence=None).strict == 1.0


def test_precision_without_predictions_is_one_and_nei_not_counted():
    p = Prediction("SUPPORTS", "SUPPORTS", TWO_SENTENCE_SET, [])
    assert evidence_precision(p) == (1.0, 1.0)
    assert evidence_recall(p) == (0.0, 1.0)
    assert evidence_precision(nei(NEI)) == (0.0, 0.0) and evidence_recall(nei(NEI)) == (0.0, 0.0)
    assert fever_score([nei(NEI)]).precision == 1.0  # no counted claims: the scorer's 1.0
    assert fever_score([nei(NEI)]).recall == 0.0


def test_wrong_label_is_never_strict_even_with_evidence():
    p = Prediction("SUPPORTS", "REFUTES", TWO_SENTENCE_SET, [("page1", 1), ("page2", 0)])
    scores = fever_score([p])
    assert scores.strict == 0.0 and scores.recall == 1.0


def test_graded_accuracy_and_label_spellings():
    assert graded_accuracy("SUPPORTS", "supports") == 1.0
    assert graded_accuracy("SUPPORTS", "REFUTES") == 0.0
    assert graded_accuracy("SUPPORTS", "I don't know.") == 0.3
    assert graded_accuracy("SUPPORTS", None) == 0.3  # an abstention
    assert graded_accuracy("SUPPORTS", "Not sure", idk_credit=0.0) == 0.0
    assert normalize_label("Not Enough Info") == NEI and normalize_label("nei") == NEI
    assert normalize_label("refuted") == "REFUTES" and normalize_label("maybe") is None


def test_predicted_evidence_is_the_citations_padded_with_the_sentences_read():
    """The official scorer takes the first five predicted sentences; a record's are its cited ones
    first, then the other sentences it read, in reading order (repeats and non-sentences dropped)."""
    from provbench.model import Trace
    from provbench_plugins.datasets.fever.metric import predicted_evidence

    trace = Trace(question_id="1", system="s", read_text_units=["s:A:0", "s:B:2", "p:A", "s:C:1"])
    trace.citations.text_units = ["s:C:1", "s:D:4"]
    assert predicted_evidence(trace) == [("C", 1), ("D", 4), ("A", 0), ("B", 2)]
    assert predicted_evidence(Trace(question_id="1", system="s", read_text_units=["s:A:0"])) == [("A", 0)]
    assert predicted_evidence(None) == []
