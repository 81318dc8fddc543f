"""The ``documents`` builder: a knowledge base from a folder (or glob) of the user's .txt, .md, .html
and .pdf files, with no code.

1. **Reuse.** A finished KB built from the same files (their text), options and model is reused.
2. **Read** every document (:mod:`.readers`: ``SimpleDirectoryReader`` with HTML and PDF readers of
   our own), with its title and sentences.
3. **Chunk** into text units (the shared SentenceSplitter chunking), each with its provenance: file
   path and character offsets (``sources.json``, :mod:`provbench.kb.sources`), which reports link to.
4. **Entities and relations**: every titled document's subject is an entity; the suite's model
   extracts entities and relations from every text unit (up to ``max_extractions``) with the
   project's extraction block (default) or LlamaIndex's ``SchemaLLMPathExtractor`` /
   ``DynamicLLMPathExtractor`` (option ``extractor``); names must occur in their text unit.
5. **Entity resolution**: names merge case-, space- and Unicode-insensitively; a title's "(...)"
   qualifier is dropped. **Own text**: a titled document's text units are its subject's own text,
   an untitled one's are the own text of the entities extracted from them (:mod:`.corpus`); then every
   entity is linked to every text unit naming it. Descriptions name types and relation labels only.
6. **Communities** (Leiden) and their LLM summaries, then **embeddings**, as for every builder.

Where the documents are: the option ``source`` (a folder or glob, relative to the working
directory), else the folder the ``qa`` loader's ``documents`` option named for the questions.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from provbench import hookimpl
from provbench.errors import UserError
from provbench.kb.sources import write_sources
from provbench.model import Question
from provbench.plugin_api import KBBuilder

from ..common.buildinfo import fingerprint, kb_counts, reuse_existing, standard_info
from ..common.communities import summarize_communities
from ..common.extraction import ExtractionCounts, extract_into
from ..common.graph import Graph, link_mentions, to_records
from ..common.llm_calls import LLMTally, effective_workers
from ..common.options import CommonBuildOptions
from ..common.writing import finish, write_kb
from ..twowiki.gold import describe_entities
from .corpus import TITLE_ORIGIN, add_title_entities, chunk_corpus, declare_own_text
from .readers import DocumentError, SourceDocument, read_documents

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.llm import LLMClient

BUILDER_NAME = "documents"
VERSION = 1
ENTITY_TYPES = ("PERSON", "ORGANIZATION", "PLACE", "EVENT", "WORK", "PRODUCT", "CONCEPT", "DATE", "OTHER")
TYPE_PRIORITY = ENTITY_TYPES[:-1]


class DocumentsOptions(CommonBuildOptions):
    """:class:`CommonBuildOptions` (chunking, extraction caps, communities) and:"""

    source: str | None = Field(
        None, description="folder or glob of .txt/.md/.html/.pdf files (default: the qa loader's documents option)"
    )
    extractor: Literal["provbench", "llamaindex-schema", "llamaindex-dynamic"] = Field(
        "provbench",
        description="the project's extraction block, or LlamaIndex's SchemaLLMPathExtractor / DynamicLLMPathExtractor",
    )
    entity_types: tuple[str, ...] = Field(ENTITY_TYPES, min_length=1, description="types extraction may assign")
    max_extractions: int | None = Field(None, ge=0, description="text units sent to the LLM; None = all")
    chunk_size: int = Field(256, ge=8, le=8192, description="text-unit budget in tokens (SentenceSplitter)")


class DocumentsBuilder(KBBuilder):
    """A knowledge base from your own documents (.txt, .md, .html, .pdf): chunks, extraction, communities."""

    name = BUILDER_NAME
    Options = DocumentsOptions

    def expected_llm_calls(self, questions: list[Question]) -> float | None:
        """One extraction per text unit (the documents are read and chunked here, no LLM) and the
        capped summaries."""
        opts = self.options
        try:
            documents = read_documents(documents_source(questions, opts))
        except DocumentError as err:
            raise UserError(f"kb builder {BUILDER_NAME!r}: {err}") from None
        corpus, _ = chunk_corpus(documents, opts.chunk_size, opts.chunk_overlap)
        return opts.llm_call_bound(len(corpus.text_units))

    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        return build_knowledge_base(questions, Path(kb_dir), llm, self.build_options(options))


def documents_source(questions: list[Question], opts: DocumentsOptions) -> str:
    declared = next((q.metadata["documents"] for q in questions if q.metadata.get("documents")), None)
    source = opts.source or declared
    if not source:
        raise UserError(
            f"kb builder {BUILDER_NAME!r}: give the option 'source' (a folder or glob of documents), or "
            "the qa loader's option 'documents'"
        )
    return str(source)


def build_knowledge_base(
    questions: list[Question], kb_dir: Path, llm: "LLMClient", opts: DocumentsOptions
) -> "KnowledgeBase":
    source = documents_source(questions, opts)
    try:
        documents = read_documents(source)
    except DocumentError as err:
        raise UserError(f"kb builder {BUILDER_NAME!r}: {err}") from None
    content = [[d.relative, d.title, d.text] for d in documents]
    inputs = fingerprint(f"{BUILDER_NAME}/v{VERSION}", llm.model_id, opts.fingerprint_fields(), content)
    existing = reuse_existing(kb_dir, inputs, opts.overwrite)
    if existing is not None:
        return existing
    started = time.monotonic()
    workers = effective_workers(opts.max_workers, llm)
    corpus, sources = chunk_corpus(documents, opts.chunk_size, opts.chunk_overlap)
    graph = Graph()
    titles = add_title_entities(graph, corpus)
    tally = LLMTally()
    extraction = extract(graph, corpus, llm, opts, tally, workers)
    own_text = declare_own_text(graph, corpus)
    link_mentions(graph, corpus)
    describe_entities(graph)
    units, entities, relations = to_records(graph, corpus, TYPE_PRIORITY)
    kb = write_kb(kb_dir, units, entities, relations)
    write_sources(kb_dir, sources)
    summaries = summarize_communities(
        kb, graph, llm, opts.community_settings(), opts.summary_settings(), tally, workers, TYPE_PRIORITY
    )
    tally.raise_if_all_failed(BUILDER_NAME, llm.model_id, closing=kb)
    info = standard_info(
        builder=BUILDER_NAME,
        inputs={**inputs, "source": source},
        model=llm.model_id,
        options=opts.model_dump(),
        counts=kb_counts(
            units, entities, relations, len(documents), questions=len(questions), communities=summaries.communities
        ),
        extraction=extraction,
        communities=summaries,
        llm=tally,
        files=file_kinds(documents),
        title_entities=titles,
        own_text_links=own_text,
        chunk_fallbacks=corpus.chunk_fallbacks,
        entities={
            "total": len(entities),
            "titles": graph.count(TITLE_ORIGIN)[0],
            "extracted": graph.count("extracted")[0],
        },
        extractor=opts.extractor,
        llm_workers=workers,
    )
    finish(kb, info, started, opts.ann_min_vectors)
    return kb


def extract(
    graph: Graph, corpus: Any, llm: "LLMClient", opts: DocumentsOptions, tally: LLMTally, workers: int
) -> ExtractionCounts:
    if not opts.extract:
        return ExtractionCounts()
    units = list(corpus.text_units.values())[: opts.max_extractions]
    settings = opts.extraction_settings(tuple(opts.entity_types))
    if opts.extractor == "provbench":
        return extract_into(
            graph, units, lambda tu: corpus.documents[tu.document_id].title, llm, settings, tally, workers
        )
    from .llamaindex_extraction import extract_with_llamaindex

    return extract_with_llamaindex(opts.extractor, graph, units, llm, settings, tally, workers)


def file_kinds(documents: list[SourceDocument]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for doc in documents:
        suffix = Path(doc.path).suffix.lower().lstrip(".")
        kinds[suffix] = kinds.get(suffix, 0) + 1
    return kinds


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: DocumentsBuilder}
