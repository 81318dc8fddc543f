"""Records a graph view hands to systems. Plain, frozen, JSON-friendly."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Entity(_Frozen):
    """A node. ``aliases``: other names it goes by (matched like the name by ``entities_named``);
    ``text_unit_ids``: every text unit linked to the entity (naming it, or its own);
    ``own_text_unit_ids``: those of its own documents (the article about it, every chunk of it),
    as its builder declared them; empty when the builder declares none."""

    id: str
    name: str
    label: str = ""
    description: str = ""
    text_unit_ids: tuple[str, ...] = ()
    community_ids: tuple[str, ...] = ()
    own_text_unit_ids: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


class Relation(_Frozen):
    """A directed, labelled edge with optional bi-temporal stamps (ISO dates or timestamps):
    ``valid_from`` (true from), ``recorded_at`` (in the graph from), ``invalidated_at``
    (invalidated instead of deleted). Views return only the edges active at their time
    (:mod:`provbench.kb.temporal`), with their stamps."""

    id: str
    source: str
    target: str
    label: str
    text_unit_id: str | None = None
    valid_from: str | None = None
    invalidated_at: str | None = None
    recorded_at: str | None = None


class TextUnit(_Frozen):
    id: str
    text: str
    document_id: str
    entity_ids: tuple[str, ...] = ()


class Community(_Frozen):
    id: str
    title: str = ""
    summary: str = ""
    entity_ids: tuple[str, ...] = ()
    level: int = 0


class Hit(_Frozen):
    """A similarity-search result: the id, its display name, and the cosine score."""

    kind: Literal["entity", "text_unit", "community"]
    id: str
    name: str
    score: float


class Neighbor(_Frozen):
    relation: Relation
    direction: Literal["out", "in"]
    entity: Entity


class Path(_Frozen):
    """Alternating entity ids and relations: entities[i] -relations[i]- entities[i+1]."""

    entities: tuple[str, ...]
    relations: tuple[Relation, ...] = Field(default=())


class KBStats(_Frozen):
    documents: int
    text_units: int
    entities: int
    relations: int
    communities: int
