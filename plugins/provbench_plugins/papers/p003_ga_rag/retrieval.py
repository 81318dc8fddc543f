"""Paper 003's dense retriever (section III.1): the top-K *documents* (FEVER pages) for a claim.

The KB indexes sentences, so documents are ranked through them: the ``pool`` sentences most
similar to the claim (cosine, eq. 1) are grouped by their document (a text unit's
``document_id``, the page id in ``fever-wiki``), each document keeps its best sentence's rank
and similarity, and the first ``k`` documents are returned with every sentence of theirs this
view lets the system read (the page entity's text units, in page order), so extraction runs on
the document's text while the sentence ids stay available as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from provbench.kb.types import Hit, TextUnit
from provbench.model import Question, RetrievedItem, Trace

from provbench_plugins.datasets.fever.pages import evidence_of, title_of
from provbench_plugins.kb_builders.fever.builder import entity_id


@dataclass
class Document:
    id: str  # the page id (text units' document_id)
    rank: int  # r_i, from 1
    similarity: float  # sim(q, d_i): its best sentence's cosine
    hits: list[Hit] = field(default_factory=list)  # its retrieved sentences, best first
    units: list[TextUnit] = field(default_factory=list)  # its readable sentences, page order
    title: str = ""

    def sentence_text(self, unit: TextUnit) -> str:
        """A sentence without the ``Title: `` prefix the fever-wiki KB gives every unit."""
        prefix = f"{self.title}: "
        return unit.text[len(prefix) :] if self.title and unit.text.startswith(prefix) else unit.text

    @property
    def text(self) -> str:
        """The document as the extractor reads it: ``Title. sentence sentence ...``."""
        body = " ".join(self.sentence_text(u) for u in self.units)
        return f"{self.title}. {body}" if self.title else body


def rank_documents(hits: list[Hit], k: int) -> list[Document]:
    """Sentence hits (best first) grouped by document; the first ``k`` documents by best rank."""
    documents: dict[str, Document] = {}
    for hit in hits:
        doc_id = hit.name or hit.id
        if doc_id not in documents:
            if len(documents) == k:
                continue
            documents[doc_id] = Document(id=doc_id, rank=len(documents) + 1, similarity=hit.score)
        documents[doc_id].hits.append(hit)
    return list(documents.values())


def _line_order(unit_id: str) -> tuple[int, str]:
    pair = evidence_of(unit_id)
    return (pair[1], "") if pair else (0, unit_id)


def fill_document(view: Any, doc: Document, max_chars: int) -> None:
    """The document's readable sentences in page order, at most ``max_chars`` of text: the
    retrieved sentences first, then the others from the top of the page."""
    entity = view.entity(entity_id(doc.id))
    doc.title = entity.name if entity is not None else title_of(doc.id)
    retrieved = {h.id for h in doc.hits}
    ids = [*retrieved, *(view.text_units_of(entity.id) if entity is not None else [])]
    chosen, used = [], 0
    for unit in view.text_units(sorted(set(ids), key=lambda i: (i not in retrieved, _line_order(i)))):
        if chosen and used + len(unit.text) > max_chars:
            continue
        chosen.append(unit)
        used += len(unit.text)
    doc.units = sorted(chosen, key=lambda u: _line_order(u.id))


def retrieve_documents(
    view: Any, question: Question, k: int, pool: int, max_chars: int, trace: Trace
) -> list[Document]:
    """Top-k documents with their sentences; recorded as retrieved (the sentence hits), read
    (every sentence passed on: the hits in similarity order first, so FEVER's "first five
    predicted sentences" are the best-matching ones) and visited (the page entities)."""
    hits = view.search_text_units(question.question, k=max(pool, k))
    documents = rank_documents(hits, k)
    for doc in documents:
        fill_document(view, doc, max_chars)
        if view.entity(entity_id(doc.id)) is not None:
            trace.visit(entity_id(doc.id))
    passed_on = {u.id for doc in documents for u in doc.units}
    for hit in hits:
        if hit.id in passed_on:
            trace.retrieved.append(RetrievedItem(kind="text_unit", id=hit.id, score=hit.score))
            trace.read_text_unit(hit.id)
    for unit in (u for doc in documents for u in doc.units):
        trace.read_text_unit(unit.id)
    trace.add_step(
        "retrieval",
        tool="search_text_units",
        arguments={"query": question.question, "k": k, "pool": pool},
        result=[
            {
                "document": d.id,
                "rank": d.rank,
                "score": d.similarity,
                "hits": [h.id for h in d.hits],
                "sentences": [u.id for u in d.units],
            }
            for d in documents
        ],
    )
    return [d for d in documents if d.units]
