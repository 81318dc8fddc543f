"""A user's documents as a chunked corpus, each text unit with its provenance, and which entities
each document's text belongs to.

Chunking is the shared one (:class:`..common.chunking.Chunker`, LlamaIndex's SentenceSplitter over a
document's sentences): each sentence goes to the text unit holding most of it, so a text unit's
character span in its document is that of the sentences it holds.

Own text (paper 000's ablations read it: removing an entity takes its own text, isolating it keeps
that text): a titled document is about the entity its title names, and all of its text units are
that entity's own text; an untitled document's text units are the own text of the entities
extracted from each of them.
"""

from __future__ import annotations

from typing import Any

from provbench.kb.types import TextUnit

from ..common.chunking import Chunker, Corpus, Document
from ..common.graph import Graph
from ..common.names import strip_qualifier
from ..twowiki.gold import link_own_paragraphs
from .readers import SourceDocument

TITLE_ORIGIN = "title"


def chunk_corpus(
    documents: list[SourceDocument], chunk_size: int, chunk_overlap: int
) -> tuple[Corpus, dict[str, dict[str, Any]]]:
    """The corpus (documents ``doc:<n>``, text units ``tu:<n>``) and each text unit's source."""
    chunker = Chunker(chunk_size, chunk_overlap)
    corpus, sources = Corpus(), {}
    for n, source in enumerate(documents):
        doc = Document(id=f"doc:{n}", title=source.title, sentences=source.sentences)
        corpus.documents[doc.id] = doc
        texts, owner = chunker.chunk(doc.sentences)
        first = len(corpus.text_units)
        for i, text in enumerate(texts):
            tu_id = f"tu:{first + i}"
            corpus.text_units[tu_id] = TextUnit(id=tu_id, text=text, document_id=doc.id)
            doc.text_unit_ids.append(tu_id)
            held = [source.spans[s] for s, chunk in owner.items() if chunk == i]
            sources[tu_id] = {
                "document": doc.id,
                "path": source.path,
                "file": source.relative,
                "start": min(a for a, _ in held) if held else None,
                "end": max(b for _, b in held) if held else None,
            }
        for sid, index in owner.items():
            corpus.sentence_unit[(doc.id, sid)] = f"tu:{first + index}"
    corpus.chunk_fallbacks += chunker.fallbacks
    return corpus, sources


def add_title_entities(graph: Graph, corpus: Corpus) -> int:
    """Every titled document's subject as an entity (its title without a "(...)" qualifier)."""
    added = 0
    for doc in corpus.documents.values():
        name = strip_qualifier(doc.title)
        if name and graph.find(name) is None:
            graph.entity(name, TITLE_ORIGIN)
            added += 1
    return added


def declare_own_text(graph: Graph, corpus: Corpus) -> dict[str, int]:
    """Own text, as the module docstring says; call after extraction and before mention linking,
    while an entity's text units are those it was extracted from. Returns the links per kind."""
    untitled = {tu for doc in corpus.documents.values() if not doc.title for tu in doc.text_unit_ids}
    extracted = 0
    for draft in graph.entities.values():
        mine = draft.text_unit_ids & untitled
        extracted += len(mine)
        draft.own_text_unit_ids |= mine
    titled = link_own_paragraphs(graph, corpus)  # titles match entity names (qualifiers aside)
    return {"titled_documents": titled, "untitled_documents": extracted}
