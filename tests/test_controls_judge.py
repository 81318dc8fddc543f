"""The control judge answers the reference metrics' ragas prompts by rule (docs/metric-validity.md,
"RAGAS judged by rule"): FactualCorrectness' claims and verdicts, ContextPrecisionWithReference's
usefulness verdict per item, ContextRecall's attribution per reference claim and
ContextEntityRecall's entity lists. Each test runs the real ragas 0.4.3 metric through provbench's
adapter; only the replies come from the rule."""

from __future__ import annotations

import asyncio
import json

import jsonschema
import pytest

from judge_helpers import Recording
from provbench.controls.judge import judge_reply
from provbench.llm import LLMClient
from provbench_plugins.metrics.ragas_faithfulness import make_ragas_llm
from provbench_plugins.metrics.ragas_reference import answered

QUESTION = "Who is the mother of the director of film Glass Harbor?"
FILM = "Glass Harbor is a 1987 drama film. The film was directed by Orin Vale."
MOTHER = "Orin Vale is a director. He is the son of the painter Mira Vale."
PORT = "Dunmere is a port town."
REFERENCE = answered(QUESTION, "Mira Vale")


def scored(metric_class, **inputs) -> tuple[float, Recording]:
    """The metric's value with the control judge, every reply checked against the request's schema."""
    backend = Recording()
    metric = metric_class(llm=make_ragas_llm(LLMClient(backend, max_attempts=1)))
    value = asyncio.run(metric.ascore(**inputs)).value
    for request, reply in backend.exchanges:
        jsonschema.validate(json.loads(reply["text"]), request["schema"])
    return value, backend


def replies(backend: Recording) -> list[dict]:
    return [json.loads(reply["text"]) for _, reply in backend.exchanges]


def correctness(answer: str) -> tuple[float, Recording]:
    from ragas.metrics.collections import FactualCorrectness

    return scored(FactualCorrectness, response=answered(QUESTION, answer), reference=REFERENCE)


def test_answer_correctness_matches_the_answer_phrase_both_ways():
    value, backend = correctness("Mira Vale")
    assert value == 1.0
    claims = replies(backend)[0]["claims"]
    assert claims == [f'The answer to "{QUESTION}" is Mira Vale.']
    # a wrong name, and a phrase of the question itself, are claims the reference does not support
    assert correctness("Orin Vale")[0] == 0.0
    assert correctness("Glass Harbor")[0] == 0.0


def test_only_the_reference_answer_states_a_fact_not_its_question():
    from ragas.metrics.collections import FactualCorrectness

    question = "Which film came out first, The Engine of Udal or Amber Tide?"
    reference = answered(question, "The Engine of Udal")  # four words: a sentence claim as it stands
    value, backend = scored(FactualCorrectness, response=answered(question, "The Engine"), reference=reference)
    verdicts = [r["statements"][0]["verdict"] for r in replies(backend)[1::2]]
    assert verdicts == [1, 0]  # "Engine" is in the reference's answer; "Udal" only in the response's question
    assert value == pytest.approx(0.67)  # right in part: precision 1, recall 0


def test_an_answer_of_function_words_is_not_supported_by_default():
    # "Who" has no content term: the phrase itself must be the reference's answer, not vacuously supported
    value, backend = correctness("Who")
    assert value == 0.0
    assert "Not in the context: Who." in replies(backend)[1]["statements"][0]["reason"]


def test_context_precision_marks_items_naming_the_answer_or_the_question():
    from ragas.metrics.collections import ContextPrecisionWithReference

    inputs = {"user_input": QUESTION, "reference": REFERENCE}
    value, backend = scored(ContextPrecisionWithReference, retrieved_contexts=[PORT, FILM, MOTHER], **inputs)
    assert [r["verdict"] for r in replies(backend)] == [0, 1, 1]
    assert value == pytest.approx((1 / 2 + 2 / 3) / 2)  # the useful items ranked second and third
    assert scored(ContextPrecisionWithReference, retrieved_contexts=[FILM, MOTHER, PORT], **inputs)[0] == pytest.approx(
        1
    )


def test_context_recall_attributes_reference_claims_by_their_names():
    from ragas.metrics.collections import ContextRecall

    value, backend = scored(ContextRecall, user_input=QUESTION, reference=f"{FILM} {MOTHER}", retrieved_contexts=[FILM])
    attributed = {c["statement"]: c["attributed"] for c in replies(backend)[0]["classifications"]}
    assert attributed == {
        "Glass Harbor is a 1987 drama film.": 1,
        "The film was directed by Orin Vale.": 1,
        "Orin Vale is a director.": 1,
        "He is the son of the painter Mira Vale.": 0,
    }
    assert value == 0.75
    # a graph states the sentence as a relation: its names are there, its wording is not checked
    as_relation = "Orin Vale ->[MOTHER]-> Mira Vale"
    assert scored(ContextRecall, user_input=QUESTION, reference=MOTHER, retrieved_contexts=[as_relation])[0] == 1.0


def test_context_entity_recall_compares_names_and_numbers():
    from ragas.metrics.collections import ContextEntityRecall

    value, backend = scored(ContextEntityRecall, reference=f"{FILM} {MOTHER}", retrieved_contexts=[FILM, PORT])
    reference_entities, context_entities = (r["entities"] for r in replies(backend))
    assert reference_entities == ["Glass Harbor", "1987", "Orin Vale", "Mira Vale"]
    assert context_entities == ["Glass Harbor", "1987", "Orin Vale", "Dunmere"]
    assert value == pytest.approx(0.75)
    possessive = scored(ContextEntityRecall, reference=MOTHER, retrieved_contexts=["Orin Vale's mother is Mira Vale."])
    assert possessive[0] == pytest.approx(1.0)


def test_requests_that_are_no_ragas_prompt_get_no_judgement():
    entities = {"type": "object", "properties": {"entities": {"type": "array", "items": {"type": "string"}}}}
    extraction = [{"role": "user", "content": f"List the entities of this text.\n{FILM}"}]
    assert judge_reply(extraction, entities) is None  # a KB builder's extraction is the behaviour's to answer
    asked_otherwise = [{"role": "user", "content": 'input: {"text": "Glass Harbor", "language": "en"}'}]
    assert judge_reply(asked_otherwise, entities) is None  # ragas' schema, not its input
