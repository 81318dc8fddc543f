"""The planning loop's one prompt (the per-round synthesis call) and its reply schema."""

from __future__ import annotations

SYNTHESIZE_SYSTEM = (
    "You answer a question using only an evidence subgraph: concepts and the relations between "
    "them, each with its id in square brackets. Reply with one JSON object: "
    '{"answer": "...", "confidence": 0.0, "focus": "...", "relation_types": [...]}. '
    "answer: your best answer from the evidence: when the question lists options, exactly one of "
    "them; otherwise a short phrase (a concept name or value). "
    "confidence: the probability, from 0 to 1, that this answer is right given only this "
    "evidence; give a low value when the evidence does not contain the answer. "
    "focus: if the evidence is not enough, what to look for next, in a few words. "
    "relation_types: which of the listed relation types to follow next."
)

SYNTHESIZE_USER = (
    "Question: {question}\n"
    "Current focus (round {round} of {max_rounds}): {focus}\n\n"
    "## Concepts\n{concepts}\n\n"
    "## Relations\n{relations}\n\n"
    "Relation types you can follow next: {relation_types}"
)
CHOICES = "Options (answer with one of them): {choices}"
CONCEPT_LINE = "[{id}] {name} ({label}): {description}"
RELATION_LINE = "[{id}] {source} -[{label}]-> {target}"
TEXT_LINE = "[{id}] {text}"
NONE = "(none)"

MAX_ANSWER_CHARS = 100
MAX_FOCUS_CHARS = 100
MAX_RELATION_TYPES = 3


def reply_schema(relation_types: list[str], choices: list[str] | None = None) -> dict:
    """Bounded lengths, so a grammar-constrained reply closes its JSON before max_tokens cuts it;
    relation types are an enum of those the model may choose from (any string when none are known);
    a question with options (a multiple-choice item, a FEVER claim's three labels) is answered
    with one of them."""
    item = {"type": "string", "enum": relation_types} if relation_types else {"type": "string", "maxLength": 64}
    answer = {"type": "string", "enum": list(choices)} if choices else {"type": "string", "maxLength": MAX_ANSWER_CHARS}
    return {
        "type": "object",
        "properties": {
            "answer": answer,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "focus": {"type": "string", "maxLength": MAX_FOCUS_CHARS},
            "relation_types": {"type": "array", "items": item, "maxItems": MAX_RELATION_TYPES},
        },
        "required": ["answer", "confidence", "focus", "relation_types"],
        "additionalProperties": False,
    }
