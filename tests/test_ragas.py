"""RAGAS faithfulness through provbench's LLM layer, against a scripted judge and the tiny KB.

Ragas' Faithfulness makes two judge calls per score: statements from the answer, then one
verdict per statement. Each test scripts those replies and checks what ragas made of them.
"""

from __future__ import annotations

import pytest

from interventions_helpers import A, B, ablation_kb, ablation_view  # noqa: F401 (fixtures)
from judge_helpers import judge, prompt_of
from provbench.errors import UserError
from provbench.model import BASELINE, Citations, Question, RunRecord, Trace, UnitKey
from provbench.plugin_api import MetricContext, Results
from provbench_plugins.metrics.ragas_faithfulness import (
    RagasFaithfulness,
    cited_items,
    evidence_texts,
    inline_refs,
    trajectory_items,
)


@pytest.fixture()
def view(ablation_view):
    return ablation_view


@pytest.fixture()
def parts(view):
    """From tests/interventions_helpers.py: A is cited, B visited, tu:4 read, rel:1 is A directed B."""
    return {
        "cited": view.entity(A),
        "visited": view.entity(B),
        "unit": view.text_unit("tu:4"),
        "relation": view.relation("rel:1"),
    }


QUESTION = Question(id="q1", question="Who directed the film?", answer="Ann")


def statements(*texts: str) -> dict:
    return {"statements": list(texts)}


def verdicts(*flags: int) -> dict:
    return {"statements": [{"statement": f"s{i}", "reason": "because", "verdict": f} for i, f in enumerate(flags)]}


def record(
    parts, answer: str | None = "Ann directed it.", condition: str = BASELINE, cited: bool = True, status: str = "ok"
) -> RunRecord:
    cited_entity, visited = parts["cited"], parts["visited"]
    trace = Trace(
        question_id="q1",
        system="agentic",
        answer=answer,
        visited_entities=[cited_entity.id, visited.id],
        read_text_units=[parts["unit"].id],
        citations=Citations(entities=[cited_entity.id] if cited else []),
    )
    return RunRecord(
        key=UnitKey(question_id="q1", system="agentic", condition=condition),
        status=status,
        trace=None if status == "failed" else trace,
    )


def test_scores_against_cited_and_trajectory_evidence(view, parts):
    llm, backend = judge([statements("a", "b"), verdicts(1, 1), statements("a", "b"), verdicts(1, 0)])
    rec = record(parts)
    scores = RagasFaithfulness().score(rec, QUESTION, MetricContext(llm=llm, view=view))
    assert scores == {"faithfulness_cited": 1.0, "faithfulness_trajectory": 0.5}
    assert rec.score_notes == {}
    assert len(backend.calls) == 4
    cited_prompt, trajectory_prompt = prompt_of(backend.calls[1]), prompt_of(backend.calls[3])
    assert "Ann Lee (person): Film director born in Oslo." in cited_prompt
    assert "Dune Studio has its offices in East Haven." not in cited_prompt
    assert "Blue River" not in cited_prompt
    assert "Dune Studio has its offices in East Haven." in trajectory_prompt
    assert "Blue River (film): A 1990 drama film." in trajectory_prompt
    assert "Ann directed it." in prompt_of(backend.calls[0])


def test_nan_from_ragas_is_recorded_not_averaged(view, parts):
    llm, backend = judge([statements(), statements("a"), verdicts(1)])
    rec = record(parts)
    scores = RagasFaithfulness().score(rec, QUESTION, MetricContext(llm=llm, view=view))
    assert scores == {"faithfulness_cited": None, "faithfulness_trajectory": 1.0}
    assert "NaN" in rec.score_notes["faithfulness_cited"]
    assert len(backend.calls) == 3  # no verdict call when there are no statements


def test_bad_judge_output_and_llm_failure_are_recorded(view, parts):
    llm, _ = judge(["this is not json", RuntimeError("judge is down")] * 4)
    rec = record(parts)
    scores = RagasFaithfulness().score(rec, QUESTION, MetricContext(llm=llm, view=view))
    assert scores == {"faithfulness_cited": None, "faithfulness_trajectory": None}
    assert rec.score_notes["faithfulness_cited"].startswith("ragas failed")
    assert rec.score_notes["faithfulness_trajectory"].startswith("ragas failed")


def test_unscorable_records_make_no_calls(view, parts):
    llm, backend = judge([])
    metric, context = RagasFaithfulness(), MetricContext(llm=llm, view=view)
    no_answer = record(parts, answer=None)
    assert metric.score(no_answer, QUESTION, context) == {"faithfulness_cited": None, "faithfulness_trajectory": None}
    assert no_answer.score_notes["faithfulness_cited"].startswith("no answer")
    failed = record(parts, status="failed")
    metric.score(failed, QUESTION, context)
    assert failed.score_notes["faithfulness_trajectory"] == "run failed: no trace"
    no_judge = record(parts)
    metric.score(no_judge, QUESTION, MetricContext(llm=None, view=view))
    assert "no judge LLM" in no_judge.score_notes["faithfulness_cited"]
    assert backend.calls == []
    assert metric.score(record(parts, condition="cited-removal"), QUESTION, context) == {}


def test_no_cited_evidence_is_a_reason_not_a_zero(view, parts):
    llm, _ = judge([statements("a"), verdicts(0)])
    rec = record(parts, cited=False)
    scores = RagasFaithfulness().score(rec, QUESTION, MetricContext(llm=llm, view=view))
    assert scores == {"faithfulness_cited": None, "faithfulness_trajectory": 0.0}
    assert rec.score_notes["faithfulness_cited"] == "no cited evidence text to judge against"


def test_evidence_texts_render_every_kind(view, parts):
    relation = parts["relation"]
    trace = Trace(
        question_id="q",
        system="s",
        citations=Citations(
            entities=[parts["cited"].id, "ent:no-such-entity"],
            text_units=[parts["unit"].id],
            relationships=[relation.id],
        ),
    )
    texts = evidence_texts(view, cited_items(trace))
    assert texts == [
        "Dune Studio has its offices in East Haven.",
        "Ann Lee (person): Film director born in Oslo.",
        "Ann Lee directed Blue River.",
    ]  # the unknown entity is skipped
    trajectory = Trace(question_id="q", system="s", read_text_units=[parts["unit"].id, parts["unit"].id])
    assert evidence_texts(view, trajectory_items(trajectory)) == [parts["unit"].text]


def test_context_cap_truncates_and_notes(view, parts):
    llm, backend = judge([statements("a"), verdicts(1)] * 2)
    rec = record(parts)
    RagasFaithfulness(max_context_chars=64).score(rec, QUESTION, MetricContext(llm=llm, view=view))
    assert "truncated to 64" in rec.score_notes["faithfulness_trajectory"]


def test_aggregate_counts_missing_scores():
    def rec(qid, cited, note=None):
        r = RunRecord(
            key=UnitKey(question_id=qid, system="s"),
            scores={"faithfulness_cited": cited, "faithfulness_trajectory": 1.0},
        )
        if note:
            r.score_notes["faithfulness_cited"] = note
        return r

    records = [
        rec("a", 1.0),
        rec("b", 0.5),
        rec("c", None, "ragas returned NaN (no statements)"),
        rec("d", None, "ragas failed: JudgeOutputError: bad"),
    ]
    values = {v.metric: v for v in RagasFaithfulness().aggregate(Results(records=records, questions={}))}
    cited = values["ragas-faithfulness.cited"]
    assert (cited.value, cited.numerator, cited.denominator) == (0.75, 1.5, 2)
    assert cited.detail == {
        "scored": 2,
        "missing": 2,
        "missing_reasons": {"ragas returned NaN": 1, "ragas failed: JudgeOutputError": 1},
    }
    assert values["ragas-faithfulness.trajectory"].value == 1.0


@pytest.mark.parametrize(
    "options", [{"conditions": "baseline"}, {"conditions": [1]}, {"max_tokens": 8}, {"max_context_chars": True}]
)
def test_bad_options_are_named(options):
    with pytest.raises(UserError, match="ragas-faithfulness"):
        RagasFaithfulness(**options)


def test_inline_refs_resolves_defs():
    from ragas.metrics.collections.faithfulness.util import NLIStatementOutput

    schema = inline_refs(NLIStatementOutput.model_json_schema())
    assert "$defs" not in str(schema) and "$ref" not in str(schema)
    assert schema["properties"]["statements"]["items"]["properties"]["verdict"]["type"] == "integer"


def test_scoring_works_inside_a_running_event_loop(view, parts):
    import asyncio

    llm, _ = judge([statements("a"), verdicts(1), statements("a"), verdicts(1)])

    async def caller():  # e.g. a runner that is itself async
        return RagasFaithfulness().score(record(parts), QUESTION, MetricContext(llm=llm, view=view))

    assert asyncio.run(caller()) == {"faithfulness_cited": 1.0, "faithfulness_trajectory": 1.0}


def test_a_statements_reply_that_is_not_json_is_asked_once_per_record(view, parts):
    """Both scores ask for the same statements; a reply cut off at max_tokens is neither cached nor
    re-asked by the client, so the second score takes the first one's instead of spending the budget again."""
    cut_off = '{"statements": ["Ann directed it.", "Ann directed it.", "Ann dir'
    llm, backend = judge([cut_off, statements("a"), verdicts(1)])
    rec = record(parts)
    scores = RagasFaithfulness().score(rec, QUESTION, MetricContext(llm=llm, view=view))
    assert scores == {"faithfulness_cited": None, "faithfulness_trajectory": None}
    assert rec.score_notes["faithfulness_cited"] == rec.score_notes["faithfulness_trajectory"]
    assert "not JSON for StatementGeneratorOutput" in rec.score_notes["faithfulness_cited"]
    assert len(backend.calls) == 1
    again = record(parts)  # another record's scoring asks afresh
    assert RagasFaithfulness().score(again, QUESTION, MetricContext(llm=llm, view=view))["faithfulness_cited"] == 1.0
