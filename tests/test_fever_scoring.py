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


def fever_record(qid: str, label: str, cited: list[str], read: list[str]):
    from provbench.model import BASELINE, RunRecord, Trace, UnitKey

    trace = Trace(question_id=qid, system="s", answer=label, read_text_units=read)
    trace.citations.text_units = cited
    return RunRecord(key=UnitKey(question_id=qid, system="s", condition=BASELINE), trace=trace)


def fever_claim(qid: str, label: str, evidence: list[list[tuple[str, int]]]):
    from provbench.model import Question

    return Question(id=qid, question="c", answer=label, metadata={"evidence": [list(map(list, g)) for g in evidence]})


def test_cited_evidence_is_scored_as_the_submission_the_official_scorer_reads():
    """``predicted_evidence: cited`` submits the cited sentences alone (first five): the official
    scorer's definitions on hand-made records, worked out by hand, beside the padded reading."""
    from provbench.plugin_api import MetricContext, Results
    from provbench_plugins.datasets.fever.metric import FeverMetric

    claims = [
        fever_claim("1", "SUPPORTS", [[("Ann", 0), ("Veel", 1)]]),  # one group of two sentences
        fever_claim("2", "REFUTES", [[("Bob", 2)], [("Cal", 0)]]),  # two groups of one
        fever_claim("3", NEI, []),
        fever_claim("4", "SUPPORTS", [[("Dan", 3)]]),
        fever_claim("5", "SUPPORTS", [[("Eve", 0)]]),
    ]
    records = [
        fever_record("1", "SUPPORTS", ["s:Ann:0"], ["s:Veel:1", "s:Ann:1"]),  # half the group cited
        fever_record("2", "REFUTES", ["s:Cal:0", "s:Zed:4"], ["s:Bob:2"]),  # a whole group cited
        fever_record("3", NEI, ["s:Ann:0"], []),  # NEI: the label alone counts
        fever_record("4", "SUPPORTS", [], ["s:Dan:3"]),  # read, never cited
        fever_record("5", "SUPPORTS", [f"s:X:{i}" for i in range(5)] + ["s:Eve:0"], []),  # gold cited sixth
    ]
    results = Results(records=records, questions={q.id: q for q in claims})
    metric = FeverMetric(predicted_evidence="both")
    per_record = [metric.score(r, q, MetricContext()) for r, q in zip(records, claims)]
    # cited: strict 0/1/1/0/0; precision over non-NEI 1, 1/2, 1 (nothing submitted), 0; recall 0/1/0/0
    assert [s["fever_strict_cited"] for s in per_record] == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert [s["evidence_precision_cited"] for s in per_record] == [1.0, 0.5, None, 1.0, 0.0]
    assert [s["evidence_recall_cited"] for s in per_record] == [0.0, 1.0, None, 0.0, 0.0]
    # padded: the sentences read fill the group of claims 1 and 4
    assert [s["fever_strict"] for s in per_record] == [1.0, 1.0, 1.0, 1.0, 0.0]
    assert [s["evidence_recall"] for s in per_record] == [1.0, 1.0, None, 1.0, 0.0]
    values = {v.metric: v.value for v in metric.aggregate(results)}
    assert values["fever.fever_score_cited"] == pytest.approx(2 / 5)
    assert values["fever.evidence_precision_cited"] == pytest.approx((1 + 0.5 + 1 + 0) / 4)
    assert values["fever.evidence_recall_cited"] == pytest.approx(1 / 4)
    assert values["fever.evidence_f1_cited"] == pytest.approx(2 * 0.625 * 0.25 / (0.625 + 0.25))
    assert values["fever.fever_score"] == pytest.approx(4 / 5)
    assert values["fever.evidence_precision"] == pytest.approx((2 / 3 + 2 / 3 + 1 + 0) / 4)
    assert values["fever.label_accuracy"] == 1.0
    alone = {v.metric for v in FeverMetric(predicted_evidence="cited").aggregate(results)}
    assert "fever.fever_score_cited" in alone and "fever.fever_score" not in alone
    default = {v.metric for v in FeverMetric().aggregate(results)}
    assert "fever.fever_score" in default and not any(m.endswith("_cited") for m in default)


def test_an_unknown_evidence_reading_is_refused_naming_the_option():
    from provbench.errors import PluginError
    from provbench_plugins.datasets.fever.metric import FeverMetric

    with pytest.raises(PluginError, match="predicted_evidence='quoted'.*known options: max_evidence"):
        FeverMetric(predicted_evidence="quoted")
