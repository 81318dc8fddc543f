"""Reading 2Wiki questions (the "2wiki" loader's metadata) and merging their paragraphs into a corpus.

The metadata fields are ``context`` ([title, sentences] pairs), ``supporting_facts``
([title, sentence id]) and ``evidences`` ([subject, relation, object]); bad records are a
:class:`UserError` naming the question and field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from provbench.errors import UserError
from provbench.model import Question

from ..common.chunking import Corpus, Document, chunk_documents
from ..common.names import normalize_name, strip_qualifier


@dataclass(frozen=True)
class Paragraph:
    title: str
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class QuestionData:
    id: str
    paragraphs: tuple[Paragraph, ...]
    supporting_facts: tuple[tuple[str, int], ...]
    evidences: tuple[tuple[str, str, str], ...]


def _field(question: Question, name: str) -> list[Any]:
    value = question.metadata.get(name)
    if isinstance(value, str):  # some mirrors store these as JSON text
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise UserError(f"question {question.id!r}: metadata.{name} is text but not JSON") from None
    if not isinstance(value, list):
        raise UserError(
            f"question {question.id!r}: metadata.{name} must be a list (2Wiki format), got {type(value).__name__}"
        )
    return value


def _paragraph(question_id: str, item: Any) -> Paragraph:
    if isinstance(item, dict):
        title, sentences = item.get("title"), item.get("sentences")
    elif isinstance(item, (list, tuple)) and len(item) == 2:
        title, sentences = item
    else:
        raise UserError(f"question {question_id!r}: metadata.context item {item!r:.80} is not [title, sentences]")
    if not isinstance(title, str) or not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
        raise UserError(
            f"question {question_id!r}: metadata.context item {title!r} needs a title and a list of sentences"
        )
    return Paragraph(title, tuple(sentences))


def _triple(question_id: str, item: Any) -> tuple[str, str, str]:
    if isinstance(item, dict):
        item = [item.get("subject"), item.get("relation"), item.get("object")]
    if not (isinstance(item, (list, tuple)) and len(item) == 3 and all(isinstance(x, str) and x.strip() for x in item)):
        raise UserError(
            f"question {question_id!r}: metadata.evidences item {item!r:.80} is not [subject, relation, object]"
        )
    subject, relation, obj = (" ".join(x.split()) for x in item)
    return subject, relation, obj


def _fact(question_id: str, item: Any) -> tuple[str, int]:
    if isinstance(item, dict):
        item = [item.get("title"), item.get("sent_id")]
    if not (
        isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], int)
    ):
        raise UserError(
            f"question {question_id!r}: metadata.supporting_facts item {item!r:.80} is not [title, sent_id]"
        )
    return item[0], item[1]


def read_question(question: Question) -> QuestionData:
    return QuestionData(
        id=question.id,
        paragraphs=tuple(_paragraph(question.id, p) for p in _field(question, "context")),
        supporting_facts=tuple(_fact(question.id, f) for f in _field(question, "supporting_facts")),
        evidences=tuple(_triple(question.id, t) for t in _field(question, "evidences")),
    )


@dataclass
class TwoWikiCorpus(Corpus):
    question_docs: dict[str, dict[str, str]] = field(default_factory=dict)  # question id -> title -> doc id
    supporting_units: set[str] = field(default_factory=set)

    def doc_of(self, question_id: str, title: str) -> Document | None:
        docs = self.question_docs.get(question_id, {})
        doc_id = docs.get(title)
        if doc_id is None:  # tolerate case and qualifier differences between facts and titles
            key = normalize_name(title)
            doc_id = next((d for t, d in docs.items() if normalize_name(t) == key), None)
            if doc_id is None:
                doc_id = next((d for t, d in docs.items() if normalize_name(strip_qualifier(t)) == key), None)
        return self.documents.get(doc_id) if doc_id else None


def document_id(title_key: str, text: str) -> str:
    """Opaque and stable: a digest of the paragraph's title and text. A document id is shown to
    systems (beside a text unit, in search hits) and must not spell out an entity's name, which
    an ablation may have removed."""
    return "doc:" + hashlib.sha1(f"{title_key}\n{text}".encode()).hexdigest()[:12]


def merge_paragraphs(questions: list[QuestionData]) -> tuple[dict[str, Document], dict[str, dict[str, str]]]:
    """Unique paragraphs (same title and text) as documents; and each question's title -> doc id."""
    by_content: dict[tuple[str, str], str] = {}
    documents: dict[str, Document] = {}
    question_docs: dict[str, dict[str, str]] = {}
    for q in questions:
        titles = question_docs.setdefault(q.id, {})
        for p in q.paragraphs:
            text = " ".join(s.strip() for s in p.sentences if s.strip())
            if not text:
                continue  # an empty paragraph has nothing to chunk or cite
            key = (normalize_name(p.title), text)
            doc_id = by_content.get(key)
            if doc_id is None:
                doc_id = document_id(*key)
                if doc_id in documents:
                    raise UserError(f"2Wiki paragraphs {p.title!r} and {documents[doc_id].title!r}: one document id")
                by_content[key] = doc_id
                documents[doc_id] = Document(doc_id, p.title, p.sentences)
            titles.setdefault(p.title, doc_id)
    return documents, question_docs


def build_corpus(questions: list[QuestionData], options: Any) -> TwoWikiCorpus:
    """Unique paragraphs chunked into text units; supporting-fact sentences located."""
    documents, question_docs = merge_paragraphs(questions)
    corpus = TwoWikiCorpus(documents=documents, question_docs=question_docs)
    chunk_documents(corpus, options.chunk_size, options.chunk_overlap)
    for q in questions:
        for title, sid in q.supporting_facts:
            doc = corpus.doc_of(q.id, title)
            tu_id = corpus.sentence_unit.get((doc.id, sid)) if doc else None
            if tu_id:
                corpus.supporting_units.add(tu_id)
    return corpus
