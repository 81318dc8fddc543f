"""Prompts and JSON schemas of the 2Wiki knowledge-base builder (paper 000, section 2.1).

Kept short on purpose: the embedded model reads about 240 prompt tokens a second, and the
builder sends one extraction prompt per distractor text unit and one summary prompt per
community. The schemas constrain the model's output (llama.cpp turns them into a grammar);
the builder still validates every item, because a grammar does not make a tiny model right.
The item caps (4 entities, 3 relations, names of at most 60 characters) keep most replies
within the builder's 160-token budget (a tiny model fills every slot, repeating itself); the
builder keeps the complete items of a reply that max_tokens cut off.
"""

from __future__ import annotations

from typing import Any

# Entity types the extractor may use. "OTHER" catches the rest.
ENTITY_TYPES = ("PERSON", "FILM", "WORK", "PLACE", "ORGANIZATION", "DATE", "OTHER")

# The first words of each system prompt also tell a scripted test backend which prompt it got.
EXTRACTION_SYSTEM = (
    "Extract a knowledge graph from the text. Return JSON with 'entities' (each: a name copied "
    "exactly from the text, once, and its type: PERSON, FILM, WORK, PLACE, ORGANIZATION, DATE or "
    "OTHER) and 'relations' (each: source, relation, target, where source and target are entity "
    "names). Use only names that appear in the text."
)

SUMMARY_SYSTEM = (
    "Summarise a community of a knowledge graph. Return JSON with a short 'title' and a "
    "'summary' of one to three sentences that uses only the facts listed."
)

_NAME = {"type": "string", "minLength": 1, "maxLength": 60}

EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {"name": _NAME, "type": {"type": "string", "enum": list(ENTITY_TYPES)}},
                "required": ["name", "type"],
            },
        },
        "relations": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {
                    "source": _NAME,
                    "relation": {"type": "string", "minLength": 1, "maxLength": 40},
                    "target": _NAME,
                },
                "required": ["source", "relation", "target"],
            },
        },
    },
    "required": ["entities", "relations"],
}

SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 80},
        "summary": {"type": "string", "minLength": 1, "maxLength": 400},
    },
    "required": ["title", "summary"],
}


def extraction_messages(title: str, text: str) -> list[dict[str, str]]:
    """One text unit to extract from; the paragraph title hints at its main entity."""
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM},
        {"role": "user", "content": f"Title: {title}\nText: {text}"},
    ]


def summary_messages(entities: list[str], relations: list[str]) -> list[dict[str, str]]:
    """A community as lines of entities ("name (TYPE): description") and relations."""
    lines = ["Entities:", *(f"- {e}" for e in entities)]
    if relations:
        lines += ["Relations:", *(f"- {r}" for r in relations)]
    return [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": "\n".join(lines)},
    ]
