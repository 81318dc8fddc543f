"""Abstention, calibration and cost metrics against hand-computed values; "output changed" with abstentions."""

from __future__ import annotations

import pytest

from provbench.model import BASELINE, LLMCall, Question, RunRecord, Trace, UnitKey
from provbench.plugin_api import MetricContext, Results, compared_output
from provbench.testing import QuestionsJsonLoader  # scores by the answer text: these questions have no concept graph
from provbench_plugins.datasets.curriculum.loader import CurriculumLoader
from provbench_plugins.metrics.records import compare
from provbench_plugins.metrics.selective import (
    Abstention,
    Calibration,
    Cost,
    aurc,
    expected_calibration_error,
    reliability_bins,
    risk_coverage_curve,
)

# (confidence, correctness), most confident first: risks after k = 1..5 are 0, 0, 1/3, 1/4, 2/5
PAIRS = [(0.9, 1.0), (0.8, 1.0), (0.6, 0.0), (0.3, 1.0), (0.2, 0.0)]


def test_ece_with_five_bins_by_hand():
    # bins of width 0.2: [0.8, 1.0] holds 0.9 and 0.8 (mean 0.85, accuracy 1): 2/5 * 0.15 = 0.06
    # [0.6, 0.8) holds 0.6 (accuracy 0): 1/5 * 0.6 = 0.12; [0.2, 0.4) holds 0.3 and 0.2
    # (mean 0.25, accuracy 0.5): 2/5 * 0.25 = 0.10; total 0.28
    assert expected_calibration_error(PAIRS, bins=5) == pytest.approx(0.28)
    assert [b["n"] for b in reliability_bins(PAIRS, 5)] == [0, 2, 0, 1, 2]


def test_ece_with_ten_bins_by_hand():
    # one pair per bin: mean of |correct - confidence| = (0.1 + 0.2 + 0.6 + 0.7 + 0.2) / 5
    assert expected_calibration_error(PAIRS, bins=10) == pytest.approx(0.36)


def test_ece_puts_confidence_one_in_the_last_bin_and_empty_is_none():
    assert expected_calibration_error([(1.0, 1.0), (0.0, 0.0)], bins=10) == pytest.approx(0.0)
    assert expected_calibration_error([], bins=10) is None


def test_aurc_by_hand():
    assert aurc(PAIRS) == pytest.approx((0 + 0 + 1 / 3 + 1 / 4 + 2 / 5) / 5)
    assert risk_coverage_curve(PAIRS)[-1] == pytest.approx((1.0, 0.4))


def test_aurc_groups_tied_confidences():
    # 0.9 twice (one right): coverage 2/3, risk 1/2; then 0.5 (right): coverage 1, risk 1/3
    pairs = [(0.9, 1.0), (0.9, 0.0), (0.5, 1.0)]
    assert [c for c, _ in risk_coverage_curve(pairs)] == pytest.approx([2 / 3, 1.0])
    assert [r for _, r in risk_coverage_curve(pairs)] == pytest.approx([0.5, 1 / 3])
    assert aurc(pairs) == pytest.approx(2 / 3 * 0.5 + 1 / 3 * 1 / 3)


def record(
    qid,
    outcome="answered",
    answer=None,
    confidence=None,
    accuracy=None,
    status="ok",
    calls=0,
    visited=(),
    candidate=None,
    condition=BASELINE,
):
    trace = Trace(
        question_id=qid,
        system="s",
        outcome=outcome,
        answer=answer,
        confidence=confidence,
        visited_entities=list(visited),
        llm_calls=[LLMCall(model="m")] * calls,
    )
    if candidate is not None:
        trace.artifacts["candidate_answer"] = candidate
    scores = {} if accuracy is None else {"accuracy": accuracy}
    return RunRecord(
        key=UnitKey(question_id=qid, system="s", condition=condition), status=status, trace=trace, scores=scores
    )


@pytest.fixture
def results():
    questions = {
        "q1": Question(id="q1", question="?", answer="Gold"),
        "q2": Question(id="q2", question="?", answer="Gold"),
        "q3": Question(id="q3", question="?", answer="Gold"),
        "q4": Question(id="q4", question="?", answer="", metadata={"answerable": False}),
        "q5": Question(id="q5", question="?", answer="Gold"),
    }
    records = [
        record("q1", answer="Gold", confidence=0.9, accuracy=1.0, calls=1, visited=("a", "b")),
        record("q2", answer="Lead", confidence=0.6, accuracy=0.0, calls=2, visited=("a",)),
        record("q3", outcome="abstained", confidence=0.3, candidate="Gold", accuracy=0.0, calls=4, visited="abcd"),
        record("q4", outcome="abstained", confidence=0.2, accuracy=1.0, calls=4),
        record("q5", outcome="failed", status="failed", calls=1),
    ]
    return Results(records=records, questions=questions, loader=QuestionsJsonLoader())


def values(metric_values):
    return {v.metric: v for v in metric_values}


def test_abstention_values_by_hand(results):
    got = values(Abstention().aggregate(results, MetricContext()))
    assert got["abstention.coverage"].value == pytest.approx(2 / 5)
    assert got["abstention.rate"].value == pytest.approx(2 / 5)
    assert got["abstention.selective_accuracy"].value == pytest.approx(1 / 2)
    assert got["abstention.accuracy_abstain_wrong"].value == pytest.approx(1 / 5)
    assert got["abstention.correct_abstention"].value == 1.0  # q4 is unanswerable and was abstained on
    assert got["abstention.answerable_abstained"].value == pytest.approx(1 / 4)
    assert got["abstention.coverage"].detail["neither"] == 1


def test_correct_abstention_has_no_value_when_nothing_is_unanswerable(results):
    results.questions["q4"] = Question(id="q4", question="?", answer="x")
    got = values(Abstention().aggregate(results, MetricContext()))
    assert (
        got["abstention.correct_abstention"].value is None
        and "marks no question" in got["abstention.correct_abstention"].note
    )


def test_calibration_scores_the_held_back_answer(results):
    got = values(Calibration(bins=10).aggregate(results, MetricContext(loader=QuestionsJsonLoader())))
    # pairs: q1 (0.9, 1), q2 (0.6, 0), q3 (0.3, candidate "Gold" -> 1); q4 has no candidate, q5 failed
    assert got["calibration.ece"].denominator == 3
    assert got["calibration.ece"].value == pytest.approx((0.1 + 0.6 + 0.7) / 3, abs=1e-6)
    assert got["calibration.aurc"].value == pytest.approx((0 + 1 / 2 + 1 / 3) / 3, abs=1e-6)
    assert got["calibration.ece"].detail["bins"] == 10


def test_cost_means(results):
    got = values(Cost().aggregate(results, MetricContext()))
    assert got["cost.llm_calls"].value == pytest.approx(12 / 5)
    assert got["cost.concepts_examined"].value == pytest.approx(7 / 5)


def test_an_abstention_is_not_an_empty_answer():
    norm = CurriculumLoader().normalize
    abstained = Trace(question_id="q", system="s", outcome="abstained")
    empty = Trace(question_id="q", system="s", outcome="budget_exhausted")
    answered = Trace(question_id="q", system="s", answer="The Gold")
    assert compared_output(abstained, norm) != compared_output(empty, norm)
    assert compared_output(abstained, norm) == compared_output(abstained.model_copy(), norm)
    assert compared_output(answered, norm) == compared_output(Trace(question_id="q", system="s", answer="gold"), norm)
    base = record("q", outcome="abstained")
    assert compare(base, [record("q", answer="Gold", condition="x")], norm).changed == 1.0
    assert compare(base, [record("q", outcome="abstained", condition="x")], norm).changed == 0.0


def test_ece_bins_confidences_on_their_edges_by_value():
    # int(0.29 * 100) == 28 and int(0.57 * 100) == 56: each confidence must land in its own bin
    for confidence, expected in ((0.29, 29), (0.57, 57), (0.58, 58), (0.3, 30), (0.0, 0), (1.0, 99)):
        counts = [b["n"] for b in reliability_bins([(confidence, 1.0)], 100)]
        assert counts.index(1) == expected, confidence
    assert [b["n"] for b in reliability_bins([(0.7, 1.0), (0.1, 0.0)], 10)] == [0, 1, 0, 0, 0, 0, 0, 1, 0, 0]


def test_abstention_table_shows_over_abstention():
    from provbench_plugins.metrics.selective_report import ABSTENTION_COLUMNS

    assert ("abstention.answerable_abstained", "Abstained on answerable") in ABSTENTION_COLUMNS
