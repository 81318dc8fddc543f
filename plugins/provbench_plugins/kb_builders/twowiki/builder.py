"""Paper 000's knowledge base from 2WikiMultiHopQA questions (section 2.1), as a KB-builder plugin.

Built from the shared blocks in :mod:`provbench_plugins.kb_builders.common`; the 2Wiki parts are
reading questions and merging paragraphs (:mod:`.questions`) and the gold graph (:mod:`.gold`).
The build, step by step:

1. **Reuse.** A finished KB at ``kb_dir`` built from the same inputs (question content, options,
   model id, builder version) is opened and returned: no rebuild, no LLM call. A finished KB
   built from other inputs, a KB of another builder version included, is an error naming what
   differs (both versions, for a version change): ``overwrite=True`` replaces it, nothing else
   does, since a rebuild may pay for an API build again. A directory without the completion
   marker is an interrupted build: the files provbench wrote there are deleted and it is built
   again (the LLM cache makes that cheap); a directory holding anything else is refused.
2. **Corpus.** Gold and distractor paragraphs of all questions are merged into unique paragraphs
   (same title and text = one paragraph), each chunked into text units by LlamaIndex's
   ``SentenceSplitter``; each sentence is mapped to the text unit holding most of it, so
   supporting facts ``[title, sentence id]`` can be located.
3. **Gold graph.** Every evidence triple gives two entities (merged by normalised name) and one
   relation, linked to the text unit of the supporting-fact sentence (:func:`.gold.supporting_text_unit`).
4. **Enrichment.** The LLM extracts entities and relations from distractor text units (those
   mentioning most gold entities first), at most ``max_entities_per_unit`` /
   ``max_relations_per_unit`` each; names must occur in the text unit.
5. **Links and descriptions.** Every entity is linked to every text unit naming it (one
   Aho-Corasick pass) and to every text unit of its own paragraph (the article titled by its
   name, declared as its own text: :func:`.gold.link_own_paragraphs`), so removing it takes its
   whole paragraph and isolating it keeps that paragraph, not others naming it. Its
   description comes from its type and its relations' labels (:func:`.gold.describe_entities`):
   it quotes no text unit and names no other entity (an extracted label that names one is shown as
   "extracted relation"). Document ids are opaque digests.
6. **Communities.** Hierarchical Leiden over the largest connected component by default (the
   options offer flat Leiden, every component, the resolution and levels); the largest get an
   LLM-written title and summary, the others a member list (counted in build info).
7. ``kb.finalize(build_info)`` embeds the indices (batched, with a progress bar) and marks the KB complete.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provbench import hookimpl
from provbench.errors import UserError
from provbench.model import Question
from provbench.plugin_api import KBBuilder, parse_options as plugin_options

from ..common.buildinfo import fingerprint as input_fingerprint, kb_counts, reuse_existing, standard_info
from ..common.communities import summarize_communities
from ..common.extraction import choose_extraction_units, extract_into, ExtractionCounts
from ..common.graph import Graph, link_mentions, to_records
from ..common.llm_calls import LLMTally, effective_workers
from ..common.options import CommonBuildOptions
from ..common.writing import finish, write_kb
from .gold import TYPE_PRIORITY, add_gold_graph, describe_entities, link_own_paragraphs
from .questions import QuestionData, TwoWikiCorpus, build_corpus, read_question

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.llm import LLMClient

BUILDER_NAME = "2wiki-paper000"
BUILDER_VERSION = 5  # bump when the algorithm changes: old KBs then no longer match

#: the knowledge base paper 000 reports (section 2.1), printed beside ours by ``kb info``
PAPER = {
    "id": "000",
    "title": "Why Neighborhoods Matter (paper 000), section 2.1",
    "counts": {
        "questions": 30,
        "documents": 275,
        "text_units": 318,
        "entities": 1815,
        "relations": 1692,
        "communities": 7,
    },
}


class BuildOptions(CommonBuildOptions):
    """Options of the builder (a suite's ``kb.options``); see :class:`CommonBuildOptions`."""


def parse_options(options: dict[str, Any]) -> BuildOptions:
    return plugin_options(BuildOptions, options, f"kb builder {BUILDER_NAME!r}")


def fingerprint(questions: list[QuestionData], options: BuildOptions, model_id: str) -> dict[str, Any]:
    content = [
        [q.id, [[p.title, p.sentences] for p in q.paragraphs], q.supporting_facts, q.evidences]
        for q in sorted(questions, key=lambda q: q.id)
    ]
    ids = hashlib.sha256("\n".join(sorted(q.id for q in questions)).encode()).hexdigest()
    return input_fingerprint(
        f"{BUILDER_NAME}/v{BUILDER_VERSION}", model_id, options.fingerprint_fields(), content, question_ids=ids
    )


def enrich_graph(
    graph: Graph, corpus: TwoWikiCorpus, llm: "LLMClient", options: BuildOptions, tally: LLMTally, workers: int
) -> ExtractionCounts:
    if not options.extract:
        return ExtractionCounts()
    distractors = [tu for tu in corpus.text_units if tu not in corpus.supporting_units]
    chosen = choose_extraction_units(corpus, graph, distractors, options.max_extractions)
    return extract_into(
        graph,
        [corpus.text_units[tu] for tu in chosen],
        lambda tu: corpus.documents[tu.document_id].title,
        llm,
        options.extraction_settings(),
        tally,
        workers,
    )


def build_knowledge_base(
    questions: list[Question], kb_dir: Path, llm: "LLMClient", options: BuildOptions
) -> "KnowledgeBase":
    """Reuse the finished KB at ``kb_dir`` or build it (see the module docstring)."""
    if not questions:
        raise UserError(f"kb builder {BUILDER_NAME!r}: no questions to build a knowledge base from")
    data = [read_question(q) for q in questions]
    inputs = fingerprint(data, options, llm.model_id)
    kb_dir = Path(kb_dir)
    existing = reuse_existing(kb_dir, inputs, options.overwrite)
    if existing is not None:
        return existing

    started = time.monotonic()
    workers = effective_workers(options.max_workers, llm)
    corpus = build_corpus(data, options)
    graph = Graph()
    add_gold_graph(graph, corpus, data)
    tally = LLMTally()
    extraction = enrich_graph(graph, corpus, llm, options, tally, workers)
    link_mentions(graph, corpus)
    own_paragraph_links = link_own_paragraphs(graph, corpus)
    describe_entities(graph)
    units, entities, relations = to_records(graph, corpus, TYPE_PRIORITY)

    kb = write_kb(kb_dir, units, entities, relations)
    summaries = summarize_communities(
        kb, graph, llm, options.community_settings(), options.summary_settings(), tally, workers, TYPE_PRIORITY
    )
    tally.raise_if_all_failed(BUILDER_NAME, llm.model_id, closing=kb)
    gold_entities, gold_relations = graph.count("gold")
    info = standard_info(
        builder=BUILDER_NAME,
        inputs=inputs,
        model=llm.model_id,
        options=options.model_dump(),
        paper=PAPER,
        counts=kb_counts(
            units, entities, relations, len(corpus.documents), questions=len(data), communities=summaries.communities
        ),
        extraction=extraction,
        communities=summaries,
        llm=tally,
        questions=len(data),
        paragraphs=len(corpus.documents),
        text_units=len(units),
        supporting_text_units=len(corpus.supporting_units),
        chunk_fallbacks=corpus.chunk_fallbacks,
        own_paragraph_links=own_paragraph_links,
        entities={"total": len(entities), "gold": gold_entities, "extracted": len(entities) - gold_entities},
        relations={"total": len(relations), "gold": gold_relations, "extracted": len(relations) - gold_relations},
        llm_workers=workers,
    )
    finish(kb, info, started, options.ann_min_vectors)
    return kb


class TwoWikiKBBuilder(KBBuilder):
    """Paper 000's 2WikiMultiHopQA knowledge base: evidence triples, LLM enrichment, Leiden communities."""

    name = BUILDER_NAME
    Options = BuildOptions

    def expected_llm_calls(self, questions: list[Question]) -> float | None:
        return self.options.llm_call_bound()

    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        return build_knowledge_base(questions, Path(kb_dir), llm, self.build_options(options))


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: TwoWikiKBBuilder}
