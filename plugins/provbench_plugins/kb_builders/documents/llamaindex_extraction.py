"""Extraction with LlamaIndex's own extractors (``SchemaLLMPathExtractor`` / ``DynamicLLMPathExtractor``),
the ``documents`` builder's alternative to the project's extraction block (option ``extractor``).

They call ``structured_predict`` on the LLM; :class:`provbench.integrations.llamaindex.ProvbenchLLM`
passes the pydantic schema to the client, so the model gets a grammar (llama.cpp), a response
format (litellm) or an instance of the schema (``schema-following``). Their triples go through
the same validation as the block's (:func:`..common.extraction.apply_extraction`: names must occur
in the text unit, generic phrases and self-loops dropped), so the two are compared on equal terms
(docs/kb-builders.md gives the measurement and the choice).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..common.extraction import ExtractionCounts, ExtractionSettings, apply_extraction
from ..common.graph import Graph
from ..common.llm_calls import LLMTally

if TYPE_CHECKING:
    from provbench.kb.types import TextUnit
    from provbench.llm import LLMClient

PURPOSE = "kb-extract"


def make_extractor(kind: str, llm: Any, settings: ExtractionSettings, workers: int) -> Any:
    from llama_index.core.indices.property_graph import DynamicLLMPathExtractor, SchemaLLMPathExtractor

    types = list(settings.entity_types)
    if kind == "llamaindex-schema":
        return SchemaLLMPathExtractor(
            llm=llm,
            possible_entities=types,
            strict=False,
            num_workers=workers,
            max_triplets_per_chunk=settings.max_relations,
        )
    return DynamicLLMPathExtractor(
        llm=llm, allowed_entity_types=types, num_workers=workers, max_triplets_per_chunk=settings.max_relations
    )


def extract_with_llamaindex(
    kind: str,
    graph: Graph,
    units: list["TextUnit"],
    client: "LLMClient",
    settings: ExtractionSettings,
    tally: LLMTally,
    workers: int,
) -> ExtractionCounts:
    """Run LlamaIndex's extractor ``kind`` over ``units`` and apply its triples as the block would."""
    from llama_index.core.graph_stores.types import KG_NODES_KEY, KG_RELATIONS_KEY
    from llama_index.core.schema import TextNode

    from provbench.integrations.llamaindex import llamaindex_llm

    counts = ExtractionCounts(text_units=len(units))
    llm = llamaindex_llm(client, purpose=PURPOSE, max_tokens=settings.max_tokens, temperature=0.0, seed=settings.seed)
    extractor = make_extractor(kind, llm, settings, workers)
    for unit in units:
        node = TextNode(id_=unit.id, text=unit.text)
        try:
            [done] = extractor([node], show_progress=False)
        except Exception as exc:  # noqa: BLE001 - a failing unit is counted, as the block counts it
            tally.fail(PURPOSE, exc)
            counts.failed_calls += 1
            continue
        tally.record(None, PURPOSE)
        entities = [
            {"name": n.name, "type": str(getattr(n, "label", "") or "")}
            for n in done.metadata.get(KG_NODES_KEY, [])
            if hasattr(n, "name")
        ]
        relations = [
            {"source": r.source_id, "relation": r.label, "target": r.target_id}
            for r in done.metadata.get(KG_RELATIONS_KEY, [])
        ]
        apply_extraction(graph, unit, {"entities": entities, "relations": relations}, counts, settings)
    return counts
