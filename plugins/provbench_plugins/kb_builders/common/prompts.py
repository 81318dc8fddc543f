"""Prompts and JSON schemas of LLM graph extraction and community summaries.

Short on purpose: a small local model reads a few hundred prompt tokens a second, and a build
sends one extraction prompt per text unit and one summary prompt per community. The schemas
constrain the reply (llama.cpp turns them into a grammar; hosted models get them as a response
format); the builder still validates every item. The item caps are options
(:func:`extraction_schema`): a tiny model fills every slot, so small caps keep its replies short,
while a capable model needs room for a paragraph's real density (paper 000's KB averages about
six entities and five relations per text unit).
"""

from __future__ import annotations

from typing import Any

# Entity types the extractor may use. "OTHER" catches the rest.
ENTITY_TYPES = ("PERSON", "FILM", "WORK", "PLACE", "ORGANIZATION", "DATE", "OTHER")

# The first words of each system prompt also tell a scripted test backend which prompt it got.
EXTRACTION_SYSTEM = (
    "Extract a knowledge graph from the text. Return JSON with 'entities' (each: a name copied "
    "exactly from the text, once, and its type: {types}) and 'relations' (each: source, relation, "
    "target, where source and target are entity names). Use only names that appear in the text."
)

SUMMARY_SYSTEM = (
    "Summarise a community of a knowledge graph. Return JSON with a short 'title' and a "
    "'summary' of one to three sentences that uses only the facts listed."
)

NAME_MAX_CHARS = 60


def _types_phrase(types: tuple[str, ...]) -> str:
    return ", ".join(types[:-1]) + " or " + types[-1] if len(types) > 1 else types[0]


def extraction_system(entity_types: tuple[str, ...] = ENTITY_TYPES) -> str:
    return EXTRACTION_SYSTEM.format(types=_types_phrase(entity_types))


def extraction_schema(
    max_entities: int = 12, max_relations: int = 10, entity_types: tuple[str, ...] = ENTITY_TYPES
) -> dict[str, Any]:
    """The reply schema: at most ``max_entities`` entities and ``max_relations`` relations."""
    name = {"type": "string", "minLength": 1, "maxLength": NAME_MAX_CHARS}
    return {
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "maxItems": max_entities,
                "items": {
                    "type": "object",
                    "properties": {"name": name, "type": {"type": "string", "enum": list(entity_types)}},
                    "required": ["name", "type"],
                },
            },
            "relations": {
                "type": "array",
                "maxItems": max_relations,
                "items": {
                    "type": "object",
                    "properties": {
                        "source": name,
                        "relation": {"type": "string", "minLength": 1, "maxLength": 40},
                        "target": name,
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


def extraction_messages(title: str, text: str, entity_types: tuple[str, ...] = ENTITY_TYPES) -> list[dict[str, str]]:
    """One text unit to extract from; the document title hints at its main entity."""
    return [
        {"role": "system", "content": extraction_system(entity_types)},
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
