"""The ``property-graph`` builder: a knowledge base from a graph the user already built with LlamaIndex.

The option ``source`` names a Kùzu database written by LlamaIndex's ``KuzuPropertyGraphStore``, a
LadybugDB database of ``LadybugPropertyGraphStore`` (``store: ladybug``), or the storage folder of a
persisted ``SimplePropertyGraphStore`` (:mod:`.sources`: copied or only read, never written to).
What maps:

- a chunk (``ChunkNode``) becomes a text unit of the document its ``file_name`` / ``file_path``
  names (so a question's supporting documents map onto it), else of its ``ref_doc_id``; the
  document's title (metadata ``title``, else a heading line opening its first chunk) names
  the entity it is about, as in the ``documents`` builder;
- an entity (``EntityNode``) becomes an entity (merged by name as every builder merges), linked to
  the chunks its ``triplet_source_id`` names; own text and mention links as the ``documents`` builder;
- an entity-to-entity relation becomes a relation, sourced from its ``triplet_source_id`` chunk; an
  entity-to-chunk relation links the entity to that text unit.

Everything else (chunk-to-chunk relations, nodes of other kinds, chunks without text) is counted
by reason under ``unmapped`` in the build info, which ``provbench kb info`` lists. Views search
with the KB's query vectors, so the store's own chunk vectors are kept only when a sample shows
they come from the KB's embedding model (the stores do not record which made them: :mod:`.vectors`);
otherwise, and for everything else, the KB's model embeds. Communities and summaries follow as for
every builder.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from provbench import hookimpl
from provbench.errors import UserError
from provbench.kb.graphstore import INDEX_TEXT_UNITS
from provbench.kb.types import TextUnit
from provbench.model import Question
from provbench.plugin_api import KBBuilder

from ..common.buildinfo import file_digests, fingerprint, kb_counts, reuse_existing, standard_info
from ..common.chunking import Corpus, Document
from ..common.communities import summarize_communities
from ..common.graph import Graph, link_mentions, to_records
from ..common.llm_calls import LLMTally, effective_workers
from ..common.options import CommonBuildOptions
from ..common.writing import finish, write_kb
from ..documents.corpus import add_title_entities, declare_own_text
from ..twowiki.gold import describe_entities
from .sources import STORES, detect_store, read_graph
from .vectors import reusable_vectors, stored_vector

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.llm import LLMClient

BUILDER_NAME = "property-graph"
VERSION = 1
ORIGIN = "imported"


class ImportOptions(CommonBuildOptions):
    """:class:`CommonBuildOptions` (communities, embeddings) and:"""

    source: str = Field(
        description="the graph: a Kùzu/LadybugDB database file or folder, or a "
        "SimplePropertyGraphStore storage folder (relative to the working directory)"
    )
    store: Literal["auto", *STORES] = Field(
        "auto", description="which LlamaIndex store wrote it (auto: a storage folder is 'simple', anything else 'kuzu')"
    )
    reuse_vectors: bool = Field(
        True,
        description="keep the store's chunk vectors when a sample shows they come "
        "from the KB's embedding model (false: always embed again)",
    )


class PropertyGraphImport(KBBuilder):
    """A knowledge base from a LlamaIndex property graph you already have (Kùzu, LadybugDB, persisted)."""

    name = BUILDER_NAME
    Options = ImportOptions

    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        return import_graph(questions, Path(kb_dir), llm, self.build_options(options))


def import_graph(questions: list[Question], kb_dir: Path, llm: "LLMClient", opts: ImportOptions) -> "KnowledgeBase":
    source = Path(opts.source).expanduser().resolve()
    store = detect_store(source) if opts.store == "auto" else opts.store
    files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
    inputs = fingerprint(f"{BUILDER_NAME}/v{VERSION}", llm.model_id, opts.fingerprint_fields(), file_digests(files))
    existing = reuse_existing(kb_dir, inputs, opts.overwrite)
    if existing is not None:
        return existing
    started = time.monotonic()
    with read_graph(source, store) as (nodes, triplets):
        corpus, graph, unmapped, stored = map_graph(nodes, triplets)
    if not corpus.text_units:
        raise UserError(
            f"kb builder {BUILDER_NAME!r}: {source} holds no chunk with text, so nothing could be "
            f"grounded in it (read {len(nodes)} node(s); unmapped: {dict(unmapped) or 'none'})"
        )
    titles = add_title_entities(graph, corpus)
    own_text = declare_own_text(graph, corpus)
    link_mentions(graph, corpus)
    describe_entities(graph)
    units, entities, relations = to_records(graph, corpus)
    kb = write_kb(kb_dir, units, entities, relations)
    known, vectors = (
        reusable_vectors({u.id: u.text for u in units}, stored)
        if opts.reuse_vectors
        else ({}, "re-embedded with the KB's model (option reuse_vectors: false)")
    )
    tally = LLMTally()
    workers = effective_workers(opts.max_workers, llm)
    summaries = summarize_communities(
        kb, graph, llm, opts.community_settings(), opts.summary_settings(), tally, workers
    )
    info = standard_info(
        builder=BUILDER_NAME,
        inputs={**inputs, "source": str(source), "store": store},
        model=llm.model_id,
        options=opts.model_dump(),
        counts=kb_counts(
            units,
            entities,
            relations,
            len(corpus.documents),
            questions=len(questions),
            communities=summaries.communities,
        ),
        extraction=None,
        communities=summaries,
        llm=tally,
        own_text_links=own_text,
        title_entities=titles,
        unmapped=dict(sorted(unmapped.items())),
        vectors=vectors,
        llm_workers=workers,
    )
    finish(kb, info, started, opts.ann_min_vectors, {INDEX_TEXT_UNITS: known})
    return kb


def map_graph(
    nodes: list[Any], triplets: list[tuple[Any, Any, Any]]
) -> tuple[Corpus, Graph, Counter, dict[str, list[float]]]:
    """The store's nodes and triplets as a corpus and a draft graph; what did not map, counted by
    reason; the store's own vector of each text unit that has one."""
    from llama_index.core.graph_stores.types import ChunkNode, EntityNode

    corpus, graph, unmapped = Corpus(), Graph(), Counter()
    chunk_unit: dict[str, str] = {}
    stored: dict[str, list[float]] = {}
    for node in nodes:
        if isinstance(node, ChunkNode):
            add_chunk(corpus, chunk_unit, node, unmapped)
            vector = stored_vector(node) if node.id in chunk_unit else None
            if vector is not None:
                stored[chunk_unit[node.id]] = vector
    entity_of = {}
    for node in nodes:
        if isinstance(node, EntityNode) and _placeholder(node):
            unmapped["placeholder node of an id outside the graph (e.g. ImplicitPathExtractor's source document)"] += 1
        elif isinstance(node, EntityNode):
            draft = graph.entity(node.name, ORIGIN, node.label if node.label != "entity" else None)
            draft.text_unit_ids |= {chunk_unit[s] for s in _sources(node) if s in chunk_unit}
            entity_of[node.id] = draft
        elif not isinstance(node, ChunkNode):
            unmapped[f"node of kind {type(node).__name__}"] += 1
    for head, relation, tail in triplets:
        source, target = entity_of.get(head.id), entity_of.get(tail.id)
        unit = next((chunk_unit[s] for s in _sources(relation) if s in chunk_unit), None)
        if source and target:
            graph.relate(source, relation.label, target, ORIGIN, unit)
            source.text_unit_ids |= {unit} - {None}
            target.text_unit_ids |= {unit} - {None}
        elif (source or target) and (head.id in chunk_unit or tail.id in chunk_unit):
            (source or target).text_unit_ids.add(chunk_unit.get(head.id) or chunk_unit[tail.id])
        else:
            unmapped[f"relation {relation.label!r} between chunks or unknown nodes"] += 1
    return corpus, graph, unmapped, stored


def add_chunk(corpus: Corpus, chunk_unit: dict[str, str], node: Any, unmapped: Counter) -> None:
    if not (node.text or "").strip():
        unmapped["chunk without text"] += 1
        return
    props = node.properties or {}
    doc_id = str(props.get("file_name") or props.get("file_path") or props.get("ref_doc_id") or "unknown document")
    document = corpus.documents.setdefault(doc_id, Document(id=doc_id, title=_title(props, node.text), sentences=()))
    unit_id = f"tu:{len(corpus.text_units)}"
    corpus.text_units[unit_id] = TextUnit(id=unit_id, text=node.text, document_id=doc_id)
    document.text_unit_ids.append(unit_id)
    chunk_unit[node.id] = unit_id


def _placeholder(node: Any) -> bool:
    """LlamaIndex's stand-in for a node it does not hold: an untyped entity whose name is an id, with no properties."""
    return node.label == "entity" and node.name == node.id and not node.properties


def _title(props: dict, text: str) -> str:
    """The document's title: its metadata's (the Kùzu store keeps none), else a heading opening its first
    chunk: a Markdown ``# line``, or a short line without final punctuation standing alone before a blank line."""
    lines = text.strip().splitlines()
    first = lines[0].strip()
    alone = len(lines) > 1 and not lines[1].strip() and len(first) <= 100 and not first.endswith((".", "!", "?", ":"))
    heading = first.lstrip("#").strip() if first.startswith("# ") or alone else ""
    return str(props.get("title") or props.get("document_title") or heading)


def _sources(item: Any) -> list[str]:
    source = (getattr(item, "properties", None) or {}).get("triplet_source_id")
    return [source] if source else []


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: PropertyGraphImport}
