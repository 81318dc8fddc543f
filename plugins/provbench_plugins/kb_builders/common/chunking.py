"""Text units: documents of sentences chunked by LlamaIndex's SentenceSplitter.

A builder hands :func:`chunk_documents` its documents (id, title, sentences); each becomes one or
more text units ``tu:<n>`` numbered in document order, and each sentence is mapped to the text
unit holding most of it, so a dataset's sentence-level annotations (2Wiki's supporting facts,
FEVER's evidence sentences) can be located in the knowledge base.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from provbench.kb.types import TextUnit


@dataclass
class Document:
    id: str
    title: str
    sentences: tuple[str, ...]
    text_unit_ids: list[str] = field(default_factory=list)


@dataclass
class Corpus:
    documents: dict[str, Document] = field(default_factory=dict)
    text_units: dict[str, TextUnit] = field(default_factory=dict)  # entity_ids filled in by to_records
    sentence_unit: dict[tuple[str, int], str] = field(default_factory=dict)  # (doc id, sentence id) -> tu id
    chunk_fallbacks: int = 0  # documents chunked by whole sentences because the splitter's chunks were not found

    def texts(self) -> dict[str, str]:
        return {tu_id: tu.text for tu_id, tu in self.text_units.items()}


def sentence_spans(sentences: tuple[str, ...]) -> tuple[str, list[tuple[int, int] | None]]:
    """The document text (sentences joined by a space) and each sentence's character span."""
    parts: list[str] = []
    spans: list[tuple[int, int] | None] = []
    cursor = 0
    for sentence in sentences:
        s = sentence.strip()
        if not s:
            spans.append(None)
            continue
        if parts:
            cursor += 1
        spans.append((cursor, cursor + len(s)))
        parts.append(s)
        cursor += len(s)
    return " ".join(parts), spans


def _locate_chunks(text: str, chunks: list[str]) -> list[tuple[int, int]] | None:
    """Character spans of the splitter's chunks in ``text``; None if one cannot be found."""
    spans, cursor = [], 0
    for chunk in chunks:
        start = text.find(chunk, cursor)
        if start < 0:
            start = text.find(chunk)
            if start < 0:
                return None
        spans.append((start, start + len(chunk)))
        cursor = start + 1
    return spans


def _pack_sentences(spans: list[tuple[int, int] | None], budget_chars: int) -> list[tuple[int, int]]:
    """Fallback chunking: whole sentences packed up to a character budget."""
    chunks: list[tuple[int, int]] = []
    for span in filter(None, spans):
        if chunks and span[1] - chunks[-1][0] <= budget_chars:
            chunks[-1] = (chunks[-1][0], span[1])
        else:
            chunks.append(span)
    return chunks


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


class Chunker:
    """LlamaIndex's SentenceSplitter, plus the sentence -> chunk mapping sentence annotations need."""

    def __init__(self, chunk_size: int, chunk_overlap: int):
        from llama_index.core.node_parser import SentenceSplitter  # heavy: import when building

        self.splitter = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
        self.budget_chars = chunk_size * 4  # fallback only: about four characters a token
        self.fallbacks = 0

    def chunk(self, sentences: tuple[str, ...]) -> tuple[list[str], dict[int, int]]:
        """Chunk texts and {sentence id: index of the chunk holding most of it}."""
        text, spans = sentence_spans(sentences)
        if not text:
            return [], {}
        chunk_spans = _locate_chunks(text, self.splitter.split_text(text))
        if not chunk_spans:
            self.fallbacks += 1
            chunk_spans = _pack_sentences(spans, self.budget_chars)
        owner = {
            sid: max(range(len(chunk_spans)), key=lambda i: _overlap(span, chunk_spans[i]))
            for sid, span in enumerate(spans)
            if span is not None
        }
        return [text[a:b] for a, b in chunk_spans], owner


def chunk_documents(corpus: Corpus, chunk_size: int, chunk_overlap: int) -> Corpus:
    """Fill ``corpus.text_units`` and ``sentence_unit`` from its documents, in document order."""
    chunker = Chunker(chunk_size, chunk_overlap)
    for doc in corpus.documents.values():
        texts, owner = chunker.chunk(doc.sentences)
        first = len(corpus.text_units)
        for i, text in enumerate(texts):
            tu_id = f"tu:{first + i}"
            corpus.text_units[tu_id] = TextUnit(id=tu_id, text=text, document_id=doc.id)
            doc.text_unit_ids.append(tu_id)
        for sid, index in owner.items():
            corpus.sentence_unit[(doc.id, sid)] = f"tu:{first + index}"
    corpus.chunk_fallbacks += chunker.fallbacks
    return corpus
