"""The planning loop's one prompt (the per-round synthesis call) and its reply schema."""

from __future__ import annotations

SYNTHESIZE_SYSTEM = (
    "You answer a question using only an evidence subgraph: concepts and the relations between "
    "them, each with its id in square brackets; a relation may show when it became valid and when "
    "it was recorded. Reply with one JSON object: "
    '{"answer": "...", "confidence": 0.0, "reason": "...", "supporting_concepts": [...], '
    '"supporting_relations": [...], "focus": "...", "relation_types": [...]}. '
    "answer: your best answer from the evidence: when the question lists options, exactly one of "
    "them; otherwise a short phrase (a concept name or value). "
    "confidence: the probability, from 0 to 1, that this answer is right given only this "
    "evidence; give a low value when the evidence does not contain the answer. "
    "reason: one sentence on how the evidence supports the answer. "
    "supporting_concepts and supporting_relations: the ids of the concepts and relations that "
    "support the answer (the subgraph that justifies it), not everything shown. "
    "focus: if the evidence is not enough, what to look for next, in a few words. "
    "relation_types: which of the listed relation types to follow next."
)
SUPPORTING_TEXTS = ' Also give "supporting_texts": the ids of the texts that support the answer.'

SYNTHESIZE_USER = (
    "Question: {question}\n"
    "Current focus (round {round} of {max_rounds}): {focus}\n\n"
    "## Concepts\n{concepts}\n\n"
    "## Relations\n{relations}\n\n"
    "Relation types you can follow next: {relation_types}"
)
CHOICES = "Options (answer with one of them): {choices}"
CONCEPT_LINE = "[{id}] {name} ({label}): {description}"
RELATION_LINE = "[{id}] {source} -[{label}]-> {target}{stamps}"
STAMP_WORDS = {"valid_from": "valid from", "recorded_at": "recorded", "invalidated_at": "invalidated from"}
TEXT_LINE = "[{id}] {text}"
NONE = "(none)"

MAX_ANSWER_CHARS = 100
MAX_REASON_CHARS = 200
MAX_FOCUS_CHARS = 100
MAX_RELATION_TYPES = 3
MAX_SUPPORT = 10  # ids of each kind in the supporting subgraph


def stamps_text(relation) -> str:
    """ " (valid from ..., recorded ...)" for the stamps a relation has; "" for none."""
    parts = [f"{words} {getattr(relation, name)}" for name, words in STAMP_WORDS.items() if getattr(relation, name)]
    return f" ({', '.join(parts)})" if parts else ""


def _ids(shown: list[str]) -> dict:
    """An array of ids chosen from those shown (an enum); empty when none were shown."""
    if not shown:
        return {"type": "array", "items": {"type": "string"}, "maxItems": 0}
    return {"type": "array", "items": {"type": "string", "enum": list(shown)}, "maxItems": MAX_SUPPORT}


def reply_schema(
    relation_types: list[str],
    choices: list[str] | None = None,
    concepts: list[str] = (),
    relations: list[str] = (),
    texts: list[str] = (),
) -> dict:
    """Bounded lengths, so a grammar-constrained reply closes its JSON before max_tokens cuts it;
    relation types are an enum of those the model may choose from (any string when none are
    known); the supporting subgraph is chosen from the ids shown (enums); a question with options
    (a multiple-choice item, a FEVER claim's three labels) is answered with one of them."""
    item = {"type": "string", "enum": relation_types} if relation_types else {"type": "string", "maxLength": 64}
    answer = {"type": "string", "enum": list(choices)} if choices else {"type": "string", "maxLength": MAX_ANSWER_CHARS}
    properties = {
        "answer": answer,
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
        "supporting_concepts": _ids(list(concepts)),
        "supporting_relations": _ids(list(relations)),
        "focus": {"type": "string", "maxLength": MAX_FOCUS_CHARS},
        "relation_types": {"type": "array", "items": item, "maxItems": MAX_RELATION_TYPES},
    }
    if texts:
        properties["supporting_texts"] = _ids(list(texts))
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
