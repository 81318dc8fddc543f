"""Ragas' reference-based scores (answer correctness, context precision / recall / entity recall)
through provbench's LLM layer, against a scripted judge and the tiny KB.

Each test scripts the judge's replies in the order ragas asks for them and checks both what ragas
made of them and what the judge was shown (the reference text and the read evidence).
"""

from __future__ import annotations

import pytest

from interventions_helpers import A, B, ablation_kb, ablation_view  # noqa: F401 (fixtures)
from judge_helpers import judge, prompt_of
from provbench.errors import UserError
from provbench.gold import GoldEvidence, GoldSentence, GoldTriple
from provbench.model import BASELINE, Question, RunRecord, Trace, UnitKey
from provbench.plugin_api import MetricContext, Results
from provbench.registry import default_registry
from provbench_plugins.metrics.ragas_reference import (
    RagasAnswerCorrectness,
    RagasContextEntityRecall,
    RagasContextPrecision,
    RagasContextRecall,
    reference_answer,
    reference_evidence,
)

GOLD_SENTENCE = "Ann Lee directed Blue River in 1990."
QUESTION = Question(
    id="q1",
    question="Who directed Blue River?",
    answer="Ann Lee",
    gold=GoldEvidence(sentences=[GoldSentence(document="Blue River", index=0, text=GOLD_SENTENCE)]),
)
ANSWER_REFERENCE = "Question: Who directed Blue River? Answer: Ann Lee."
UNIT_TEXT = "Dune Studio has its offices in East Haven."  # tu:4, read first
ANN_TEXT = "Ann Lee (person): Film director born in Oslo."  # entity A, visited second


def record(answer: str | None = "Ann Lee directed it.", status: str = "ok") -> RunRecord:
    trace = Trace(question_id="q1", system="agentic", answer=answer, visited_entities=[A, B], read_text_units=["tu:4"])
    return RunRecord(
        key=UnitKey(question_id="q1", system="agentic", condition=BASELINE),
        status=status,
        trace=None if status == "failed" else trace,
    )


def claims(*texts: str) -> dict:
    return {"claims": list(texts)}


def verdicts(*flags: int) -> dict:
    return {"statements": [{"statement": f"s{i}", "reason": "because", "verdict": f} for i, f in enumerate(flags)]}


def test_answer_correctness_is_f1_of_claims_both_ways(ablation_view):
    # the answer's one claim is supported; of the reference's two claims, one is in the answer
    llm, backend = judge([claims("Ann Lee directed it."), verdicts(1), claims("Ann Lee", "directed"), verdicts(1, 0)])
    rec = record()
    scores = RagasAnswerCorrectness().score(rec, QUESTION, MetricContext(llm=llm, view=ablation_view))
    assert scores == {"answer_correctness": 0.67}  # tp 1, fp 0, fn 1
    assert rec.score_notes == {}
    assert len(backend.calls) == 4
    # the answer reaches ragas with its question, as the reference does: a bare phrase is a claim too
    assert "Question: Who directed Blue River? Answer: Ann Lee directed it." in prompt_of(backend.calls[0])
    assert ANSWER_REFERENCE in prompt_of(backend.calls[1])  # the answer's claims judged against the reference
    assert ANSWER_REFERENCE in prompt_of(backend.calls[2])  # the reference broken into claims
    assert GOLD_SENTENCE not in prompt_of(backend.calls[1])


def test_answer_correctness_wrong_answer_scores_zero(ablation_view):
    llm, _ = judge([claims("Cara Stone directed it."), verdicts(0), claims("Ann Lee directed it."), verdicts(0)])
    scores = RagasAnswerCorrectness().score(record("Cara Stone."), QUESTION, MetricContext(llm=llm, view=ablation_view))
    assert scores == {"answer_correctness": 0.0}


def test_context_precision_judges_each_read_item_in_order(ablation_view):
    llm, backend = judge([{"reason": "r", "verdict": v} for v in (0, 1, 0)])
    scores = RagasContextPrecision().score(record(), QUESTION, MetricContext(llm=llm, view=ablation_view))
    assert scores["context_precision"] == pytest.approx(0.5)  # the useful item ranked second
    assert len(backend.calls) == 3  # tu:4, then entities A and B
    assert UNIT_TEXT in prompt_of(backend.calls[0]) and ANN_TEXT in prompt_of(backend.calls[1])
    assert all(ANSWER_REFERENCE in prompt_of(call) for call in backend.calls)


def test_context_recall_uses_the_gold_supporting_facts(ablation_view):
    classified = {
        "classifications": [
            {"statement": "s", "reason": "r", "attributed": 1},
            {"statement": "t", "reason": "r", "attributed": 0},
        ]
    }
    llm, backend = judge([classified])
    scores = RagasContextRecall().score(record(), QUESTION, MetricContext(llm=llm, view=ablation_view))
    assert scores == {"context_recall": 0.5}
    prompt = prompt_of(backend.calls[0])
    assert GOLD_SENTENCE in prompt and UNIT_TEXT in prompt and ANN_TEXT in prompt
    assert ANSWER_REFERENCE not in prompt


def test_context_entity_recall_compares_reference_and_read_entities(ablation_view):
    llm, backend = judge([{"entities": ["Ann Lee", "Blue River", "1990"]}, {"entities": ["Ann Lee", "Oslo"]}])
    scores = RagasContextEntityRecall().score(record(), QUESTION, MetricContext(llm=llm, view=ablation_view))
    assert scores["context_entity_recall"] == pytest.approx(1 / 3)
    assert GOLD_SENTENCE in prompt_of(backend.calls[0])
    assert ANN_TEXT in prompt_of(backend.calls[1]) and GOLD_SENTENCE not in prompt_of(backend.calls[1])


def test_context_scores_need_no_answer_but_correctness_does(ablation_view):
    llm, backend = judge([{"classifications": [{"statement": "s", "reason": "r", "attributed": 1}]}])
    context = MetricContext(llm=llm, view=ablation_view)
    rec = record(answer=None)
    assert RagasAnswerCorrectness().score(rec, QUESTION, context) == {"answer_correctness": None}
    assert rec.score_notes["answer_correctness"].startswith("no answer")
    assert RagasContextRecall().score(rec, QUESTION, context) == {"context_recall": 1.0}
    assert len(backend.calls) == 1


def test_unscorable_records_are_noted_without_calls(ablation_view):
    llm, backend = judge([])
    context = MetricContext(llm=llm, view=ablation_view)
    failed = record(status="failed")
    assert RagasContextRecall().score(failed, QUESTION, context) == {"context_recall": None}
    assert failed.score_notes["context_recall"] == "run failed: no trace"
    no_reference = QUESTION.model_copy(update={"answer": "", "gold": None})
    rec = record()
    assert RagasContextPrecision().score(rec, no_reference, context) == {"context_precision": None}
    assert "no reference answer" in rec.score_notes["context_precision"]
    nothing_read = record()
    nothing_read.trace.visited_entities, nothing_read.trace.read_text_units = [], []
    assert RagasContextEntityRecall().score(nothing_read, QUESTION, context) == {"context_entity_recall": None}
    assert backend.calls == []


def test_bad_judge_reply_is_a_note_not_a_crash(ablation_view):
    llm, _ = judge([{"unexpected": 1}])
    rec = record()
    assert RagasContextRecall().score(rec, QUESTION, MetricContext(llm=llm, view=ablation_view)) == {
        "context_recall": None
    }
    assert rec.score_notes["context_recall"].startswith("ragas failed: JudgeOutputError")


def test_references_per_kind_of_question():
    choice = Question(id="m", question="Which vitamin?", answer="B", choices=["A1", "C2", "D3", "K4"], aliases=["C2"])
    assert reference_answer(choice) == "Question: Which vitamin? Answer: B (C2)."
    triples = Question(
        id="t",
        question="q",
        answer="x",
        gold=GoldEvidence(triples=[GoldTriple(subject="Algebra", relation="PREREQUISITE_OF", object="Calculus")]),
    )
    assert reference_evidence(triples) == "Algebra prerequisite of Calculus."
    assert reference_evidence(QUESTION) == GOLD_SENTENCE
    assert reference_evidence(Question(id="n", question="q", answer="Ann")) == "Question: q Answer: Ann."


def test_aggregate_means_scored_and_counts_missing():
    def scored(qid: str, value: float | None) -> RunRecord:
        rec = RunRecord(
            key=UnitKey(question_id=qid, system="s", condition=BASELINE), status="ok", scores={"context_recall": value}
        )
        if value is None:
            rec.score_notes["context_recall"] = "no trajectory evidence text to judge"
        return rec

    results = Results(records=[scored("a", 1.0), scored("b", 0.5), scored("c", None)], questions={})
    [value] = RagasContextRecall().aggregate(results)
    assert (value.metric, value.value, value.denominator) == ("ragas-context-recall", 0.75, 2)
    assert value.detail["missing_reasons"] == {"no trajectory evidence text to judge": 1}


def test_registered_under_names_a_suite_can_use():
    registry = default_registry()
    for name in (
        "ragas-answer-correctness",
        "ragas-context-precision",
        "ragas-context-recall",
        "ragas-context-entity-recall",
    ):
        assert registry.get("metric", name).factory().name == name


def test_bad_mode_is_refused():
    with pytest.raises(UserError, match="ragas-answer-correctness"):
        RagasAnswerCorrectness(mode="accuracy")


def test_judged_scores_are_declared_and_sent_to_phoenix_as_llm():
    from pathlib import Path

    from provbench.model import RunManifest
    from provbench.phoenix import score_annotations
    from provbench.results.data import RunData

    registry = default_registry()
    declared = {
        k
        for m in ("ragas-answer-correctness", "ragas-faithfulness", "table1")
        for k in registry.get("metric", m).factory.judged_scores
    }
    assert {"answer_correctness", "faithfulness_cited", "coherence"} <= declared
    assert registry.get("metric", "accuracy").factory.judged_scores == ()
    rec = record()
    rec.scores = {"accuracy": 1.0, "context_recall": 0.5}
    manifest = RunManifest(run_id="r1", suite_name="s", judged_scores=["context_recall"])
    kinds = {a["name"]: a["annotator_kind"] for a in score_annotations(RunData(Path("."), manifest, {}, [rec], {}))}
    assert kinds == {"accuracy": "CODE", "context_recall": "LLM"}
