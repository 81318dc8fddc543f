"""Prompts of the KGRAG-Ex system (paper 001, section 3 and Fig. 2)."""

from __future__ import annotations

from provbench.agents import lettered_choices

LETTERS = ("A", "B", "C", "D", "E", "F")

ENTITY_SYSTEM = (
    "You read a medical question and list the medical entities it mentions (diseases, symptoms, "
    "treatments, body parts, tests, risk factors, drugs), each as a short noun phrase in the "
    "question's own words. Reply with JSON only."
)
ENTITY_USER = "Question: {question}"

PARAGRAPH_SYSTEM = (
    "You are a medical instructor. Given a chain of relations between medical concepts, write a "
    "short, clear paragraph that explains the connections to a student. A concept or relation "
    "written as __ is unknown: do not guess it. Reply with the paragraph only."
)
PARAGRAPH_USER = "Relation chain:\n{chain}"
# Without an LLM (option paragraphs: template), each triplet line becomes one plain sentence.
TEMPLATE_SENTENCE = "{head} {relation} {tail}."

ANSWER_SYSTEM = (
    "You are a medical assistant. Answer the multiple-choice question using the knowledge-graph "
    "paragraphs and the passages given. Reply with JSON: the letter of the best option."
)
ANSWER_USER = "Knowledge-graph paragraphs:\n{paragraphs}\n\nPassages:\n{passages}\n\nQuestion: {question}\nOptions:\n{options}"
PASSAGE = "[{id}] {text}"
NOTHING = "(none)"


def options_text(choices: list[str]) -> str:
    return lettered_choices(choices, sep="\n")


def entity_schema(max_entities: int) -> dict:
    return {"type": "object", "properties": {"entities": {
        "type": "array", "maxItems": max_entities, "items": {"type": "string", "maxLength": 60}}},
        "required": ["entities"], "additionalProperties": False}


def answer_schema(n_choices: int) -> dict:
    return {"type": "object", "properties": {"answer": {"type": "string", "enum": list(LETTERS[:n_choices])}},
            "required": ["answer"], "additionalProperties": False}
