"""Prompts of the KGRAG-Ex system (paper 001, section 3 and Fig. 2)."""

from __future__ import annotations

from provbench.agents import lettered_choices
from provbench.agents.base import OPTION_LETTERS

LETTERS = tuple(OPTION_LETTERS)

# Section 3: the query becomes (Entity, Relationship, Entity) triplets, in the form the KG holds.
TRIPLET_SYSTEM = (
    "You read a medical question and restate what it says as knowledge-graph triplets: "
    "(subject, relation, object), where subject and object are medical entities it mentions "
    "(diseases, symptoms, treatments, body parts, tests, risk factors, drugs), each a short noun "
    "phrase in the question's own words, and the relation a short verb phrase. Reply with JSON only."
)
TRIPLET_USER = "Question: {question}"

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


def triplet_schema(max_triplets: int) -> dict:
    phrase = {"type": "string", "maxLength": 60}
    triplet = {"type": "object", "properties": {"subject": phrase, "relation": phrase, "object": phrase},
               "required": ["subject", "relation", "object"], "additionalProperties": False}
    return {"type": "object", "properties": {"triplets": {"type": "array", "maxItems": max_triplets, "items": triplet}},
            "required": ["triplets"], "additionalProperties": False}


def answer_schema(n_choices: int) -> dict:
    return {"type": "object", "properties": {"answer": {"type": "string", "enum": list(LETTERS[:n_choices])}},
            "required": ["answer"], "additionalProperties": False}
