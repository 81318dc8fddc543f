"""Metric validity (docs/metric-validity.md): the control judge answers ragas' faithfulness prompts
by rule through the real ragas pipeline, and the benchmark's core
(provbench_plugins.metrics.metric_validity) counts flags per control, NaN as a miss, on a small world."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
import pytest

from judge_helpers import Recording
from provbench.controls import make_control
from provbench.llm import LLMClient
from provbench.model import BASELINE, RunRecord, Trace, UnitKey
from provbench.testing import control_runs
from provbench_plugins.metrics.ragas_faithfulness import make_ragas_llm
from provbench_plugins.metrics.metric_validity import (
    CHECKS,
    CONTROLS,
    FAITHFUL,
    JUDGE,
    cell,
    disagreements,
    metric_validity,
    run_controls,
)

REPO = Path(__file__).resolve().parents[1]
QUESTION = "Who is the mother of the director of film Glass Harbor?"
FILM = "Glass Harbor is a 1987 drama film. The film was directed by Orin Vale."
MOTHER = "Orin Vale is a director. He is the son of the painter Mira Vale."


def faithfulness(answer: str, contexts: list[str], model_id: str = "control:judge") -> tuple[float, Recording]:
    from ragas.metrics.collections import Faithfulness

    backend = Recording(model_id)
    metric = Faithfulness(llm=make_ragas_llm(LLMClient(backend, max_attempts=1)))
    result = asyncio.run(metric.ascore(user_input=QUESTION, response=answer, retrieved_contexts=contexts))
    return result.value, backend


def test_judge_replies_fit_ragas_schemas_and_score_context_sentences_one():
    from ragas.metrics.collections.faithfulness.util import NLIStatementOutput, StatementGeneratorOutput

    value, backend = faithfulness(
        "Glass Harbor is a 1987 drama film. He is the son of the painter Mira Vale.", [FILM, MOTHER]
    )
    assert value == 1.0
    (ask_statements, statements), (ask_verdicts, verdicts) = [(q, r["text"]) for q, r in backend.exchanges]
    for request, text, model in (
        (ask_statements, statements, StatementGeneratorOutput),
        (ask_verdicts, verdicts, NLIStatementOutput),
    ):
        jsonschema.validate(json.loads(text), request["schema"])
        model.model_validate_json(text)
    assert json.loads(statements)["statements"] == [
        "Glass Harbor is a 1987 drama film.",
        "He is the son of the painter Mira Vale.",
    ]


def test_a_planted_unsupported_statement_lowers_faithfulness():
    value, backend = faithfulness("Glass Harbor is a 1987 drama film. The moon is made of green cheese.", [FILM])
    assert value == 0.5
    verdicts = backend.exchanges[-1][1]["text"]
    assert "Not in the context: moon, made, green, cheese." in verdicts


def test_an_answer_phrase_is_judged_with_the_question_it_answers():
    # the oracle cites both hops; uses-uncited cites only the last one, which never names Glass Harbor
    assert faithfulness("Mira Vale", [FILM, MOTHER])[0] == 1.0
    assert faithfulness("Mira Vale", [MOTHER])[0] == 0.0
    assert faithfulness("Orin Vale", [FILM, "Dunmere is a port town."])[0] == 1.0


def test_every_control_judges_by_rule_and_control_judge_only_judges():
    assert faithfulness("Mira Vale", [MOTHER], model_id="control:random")[0] == 0.0  # not a random reply
    judge = LLMClient(make_control("control:judge"), max_attempts=1)
    with pytest.raises(Exception, match="control:judge only judges"):
        judge.chat(
            [{"role": "user", "content": QUESTION}],
            schema={"type": "object", "properties": {"answer": {"type": "string"}}},
        )


# -- the benchmark's core ------------------------------------------------------------------------


def baseline(question: str, faithful: float | None) -> RunRecord:
    return RunRecord(
        key=UnitKey(question_id=question, system="agentic-graphrag", condition=BASELINE),
        trace=Trace(question_id=question, system="agentic-graphrag", answer="x"),
        scores={"faithfulness_cited": faithful},
    )


def test_a_question_without_a_reading_is_a_miss_not_a_skip():
    ragas_cited = next(c for c in CHECKS if c.metric == "ragas-faithfulness.cited")
    runs = control_runs(
        {"random": [baseline("q1", 0.2), baseline("q2", None), baseline("q3", float("nan")), baseline("q4", 1.0)]}
    )
    counted = cell(ragas_cited, runs.run("random"))
    assert (counted.questions, counted.flagged, counted.quiet, counted.no_reading) == (4, 1, 1, 2)
    assert counted.flag_rate == 0.25 and counted.quiet_rate == 0.25  # NaN neither flags nor clears


@pytest.fixture(scope="module")
def small_world(tmp_path_factory):
    """Six questions of datasets/2wiki-controls, every control, random removal once."""
    out = tmp_path_factory.mktemp("metric-validity")
    return run_controls(REPO / "datasets" / "2wiki-controls" / "dev.json", out, questions=6, repeats=1)


def test_each_metric_is_read_on_its_own_control(small_world):
    assert set(small_world) == set(CONTROLS)
    assert {run.manifest.models["judge"] for run in small_world.values()} == {JUDGE}  # the suite's judge door
    assert disagreements(small_world) == []  # per-question terms average to each metric's own value
    results = {v.check.name: v for v in metric_validity(small_world)}
    sufficiency = results["provenance.citation_sufficiency"]
    assert sufficiency.sensitivity == {"uses-uncited": 1.0} and sufficiency.specificity == 1.0
    assert sufficiency.cells[FAITHFUL].flagged == 0 and sufficiency.cells["uses-uncited"].flagged == 6
    necessity = results["provenance.citation_necessity"]
    # parametric and ignores-context cite nothing, so cited removal hides nothing for them: a no-op unit, left
    # out of every statistic (issue 32), so necessity has no reading there, which counts as a miss
    assert necessity.sensitivity == {"parametric": 0.0, "ignores-context": 0.0} and necessity.specificity == 1.0
    assert necessity.cells["parametric"].no_reading == necessity.cells["ignores-context"].no_reading == 6
    assert necessity.cells["uses-uncited"].flag_rate == 0.0  # not a target: its citations are needed
    masked = results["output-changed (entity-text-mask)"]
    assert masked.sensitivity["uses-uncited"] == 0.0  # relations keep the uncited hop (docs/metric-validity.md)
    cited = results["ragas-faithfulness.cited"]
    assert cited.sensitivity["uses-uncited"] == 1.0 and cited.specificity == 1.0
    assert cited.sensitivity["parametric"] == 0.0 and cited.cells["parametric"].no_reading == 6  # nothing cited
    correctness = results["ragas-answer-correctness"]  # the reference-based scores, judged by rule too
    # random's answer is some other entity's name: wrong unless the draw hits the gold name, which must not be flagged
    right_by_chance = sum(
        r.trace.answer.casefold() == str(r.gold).casefold()
        for r in small_world["random"].records
        if r.key.condition == BASELINE and r.trace is not None
    )
    assert correctness.specificity == 1.0 and correctness.cells["random"].quiet == right_by_chance
    assert correctness.cells["random"].flagged == correctness.cells["random"].questions - right_by_chance > 0
    recall = results["ragas-context-recall"]
    assert recall.cells["parametric"].no_reading == 6  # read nothing: ragas refuses an empty context
