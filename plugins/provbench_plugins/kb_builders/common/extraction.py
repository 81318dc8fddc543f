"""LLM extraction of entities and relations from text units, validated against the text.

:func:`extract_into` sends each chosen text unit to the model with a JSON schema (item caps from
:class:`ExtractionSettings`), validates every item and keeps what the text supports: entity
names and relation ends must occur in the text unit (else they count as hallucinated), generic
phrases ("the film") are dropped, items beyond the caps are dropped and counted. A reply cut
off by ``max_tokens`` keeps its complete items (pydantic's partial JSON).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import from_json

from provbench.kb.types import TextUnit

from . import prompts as P
from .chunking import Corpus
from .graph import EntityDraft, Graph
from .llm_calls import LLMTally, run_calls
from .matcher import MentionMatcher, mention_pattern
from .names import GENERIC_NAME, UNKNOWN_TYPE, normalize_name

if TYPE_CHECKING:
    from provbench.llm import LLMClient

PURPOSE = "kb-extract"


@dataclass(frozen=True)
class ExtractionSettings:
    max_entities: int = 12  # per text unit, in the reply schema and enforced on the reply
    max_relations: int = 10
    max_tokens: int = 640
    seed: int = 0
    entity_types: tuple[str, ...] = P.ENTITY_TYPES

    @property
    def schema(self) -> dict[str, Any]:
        return P.extraction_schema(self.max_entities, self.max_relations, self.entity_types)


class ExtractedEntity(BaseModel):
    model_config = ConfigDict(strict=True)
    name: str = Field(min_length=1, max_length=100)
    type: str = Field(UNKNOWN_TYPE, max_length=40)


class ExtractedRelation(BaseModel):
    model_config = ConfigDict(strict=True)
    source: str = Field(min_length=1, max_length=100)
    relation: str = Field(min_length=1, max_length=60)
    target: str = Field(min_length=1, max_length=100)


@dataclass
class ExtractionCounts:
    text_units: int = 0
    failed_calls: int = 0  # calls that failed for good (the text unit adds nothing)
    invalid_outputs: int = 0  # replies that were not a JSON object of the schema's shape
    invalid_items: int = 0  # items failing validation (wrong types, missing fields, too long)
    hallucinated_items: int = 0  # entity names (or relation ends) not found in the text unit
    over_cap_items: int = 0  # items beyond max_entities / max_relations (a model ignoring the schema)
    entities_added: int = 0
    relations_added: int = 0


def choose_extraction_units(corpus: Corpus, graph: Graph, candidates: list[str], limit: int | None) -> list[str]:
    """``candidates`` ranked by how many graph entities they mention (most first), then corpus order.

    One pass over the candidates' text with a :class:`MentionMatcher`, whatever the graph's size.
    """
    if limit == 0:
        return []
    matcher = MentionMatcher(d.name for d in graph.entities.values())
    order = {tu: i for i, tu in enumerate(corpus.text_units)}
    counts = {tu: len(matcher.names_in(corpus.text_units[tu].text)) for tu in candidates}
    ranked = sorted(candidates, key=lambda tu: (-counts[tu], order[tu]))
    return ranked if limit is None else ranked[:limit]


_INVALID = object()  # the call succeeded, its reply is unusable


def call_extraction(llm: "LLMClient", title: str, text: str, settings: ExtractionSettings, tally: LLMTally) -> Any:
    """The reply's data, ``None`` when the call failed (counted), or the invalid-reply marker."""
    resp = tally.chat(
        llm,
        P.extraction_messages(title, text, settings.entity_types),
        PURPOSE,
        schema=settings.schema,
        max_tokens=settings.max_tokens,
        temperature=0.0,
        seed=settings.seed,
    )
    if resp is None:
        return None
    if resp.data is not None:
        return resp.data
    salvaged = salvage_truncated(resp.text)
    if salvaged is None:
        return _INVALID
    tally.note_salvaged()
    return salvaged


def salvage_truncated(text: str | None) -> dict[str, Any] | None:
    """The complete part of a JSON object cut off by max_tokens (small models pad and repeat)."""
    if not text or not text.lstrip().startswith("{"):
        return None
    try:
        data = from_json(text.strip(), allow_partial=True)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _valid_items(data: Any, key: str, model: type[BaseModel], cap: int, counts: ExtractionCounts) -> list[Any]:
    items = data.get(key, [])
    if not isinstance(items, list):
        counts.invalid_items += 1
        return []
    counts.over_cap_items += max(0, len(items) - cap)
    valid = []
    for item in items[:cap]:
        try:
            valid.append(model.model_validate(item))
        except ValidationError:
            counts.invalid_items += 1
    return valid


def apply_extraction(
    graph: Graph, tu: TextUnit, data: Any, counts: ExtractionCounts, settings: ExtractionSettings = ExtractionSettings()
) -> None:
    """Keep what the text supports: entity names and relation ends must occur in the text unit."""
    if not isinstance(data, dict):
        counts.invalid_outputs += 1
        return
    entities = _valid_items(data, "entities", ExtractedEntity, settings.max_entities, counts)
    relations = _valid_items(data, "relations", ExtractedRelation, settings.max_relations, counts)
    types: dict[str, str] = {}
    for item in entities:
        if _usable(item.name, tu, counts):
            type_ = item.type.strip().upper()
            types[normalize_name(item.name)] = type_ if type_ in settings.entity_types else UNKNOWN_TYPE
            _link_extracted(graph, item.name, types[normalize_name(item.name)], tu, counts)
    for item in relations:
        if normalize_name(item.source) == normalize_name(item.target):
            counts.invalid_items += 1  # a self-loop says nothing
        elif _usable(item.source, tu, counts) and _usable(item.target, tu, counts):
            source = _link_extracted(graph, item.source, types.get(normalize_name(item.source)), tu, counts)
            target = _link_extracted(graph, item.target, types.get(normalize_name(item.target)), tu, counts)
            label = " ".join(item.relation.lower().split())
            counts.relations_added += graph.relate(source, label, target, "extracted", tu.id)


def _usable(name: str, tu: TextUnit, counts: ExtractionCounts) -> bool:
    """A name the text unit contains and that is a name (counted when not)."""
    if GENERIC_NAME.match(name.strip()):
        counts.invalid_items += 1  # "the film", "his wife": not a name
        return False
    if mention_pattern(name).search(tu.text) is None:
        counts.hallucinated_items += 1
        return False
    return True


def spelling_in(text: str, name: str) -> str:
    """How ``text`` spells ``name`` (the model may change its case)."""
    match = mention_pattern(name).search(text)
    return " ".join(match.group(0).split()) if match else name


def _link_extracted(graph: Graph, name: str, type_: str | None, tu: TextUnit, counts: ExtractionCounts) -> EntityDraft:
    is_new = graph.find(name) is None
    draft = graph.entity(spelling_in(tu.text, name), "extracted")
    if draft.origin == "extracted" and type_:  # a seed (gold) entity keeps the type its relations imply
        draft.types.append(type_)
    draft.text_unit_ids.add(tu.id)
    counts.entities_added += is_new
    return draft


def extract_into(
    graph: Graph,
    units: list[TextUnit],
    title_of: Callable[[TextUnit], str],
    llm: "LLMClient",
    settings: ExtractionSettings,
    tally: LLMTally,
    workers: int,
) -> ExtractionCounts:
    """Extract from ``units`` (concurrently) and apply the replies in input order."""
    counts = ExtractionCounts(text_units=len(units))
    replies = run_calls(
        lambda tu: call_extraction(llm, title_of(tu), tu.text, settings, tally), units, workers, "extracting entities"
    )
    for tu, data in zip(units, replies):
        if data is None:
            counts.failed_calls += 1
        else:
            apply_extraction(graph, tu, None if data is _INVALID else data, counts, settings)
    return counts
