"""Paper 000's knowledge base from 2WikiMultiHopQA questions (section 2.1), as a KB-builder plugin.

The build, step by step:

1. **Reuse.** A finished KB at ``kb_dir`` whose ``build_info["inputs"]["fingerprint"]`` matches this build's
   inputs (question content, options, model id, builder version) is opened and returned: no
   rebuild, no LLM call. A finished KB built from other inputs is an error (pass
   ``overwrite=True`` to replace it); the runner keys KB directories by a hash of the inputs,
   so this only happens when someone points two builds at one directory. A directory without
   the completion marker is an interrupted build: it is deleted and built again from scratch.
   The LLM layer caches replies on disk, so a rebuild after a crash costs little.
2. **Corpus.** Gold and distractor paragraphs of all questions are merged into unique paragraphs
   (same title and same text = one paragraph). Each is a document (id ``doc:<slug of title>``)
   chunked into text units by LlamaIndex's ``SentenceSplitter`` (``chunk_size`` tokens). Each
   2Wiki sentence is mapped to the text unit holding most of it, so supporting facts
   ``[title, sentence id]`` can be located.
3. **Gold graph.** Every evidence triple ``[subject, relation, object]`` gives two entities
   (merged by normalised name) and one relation labelled with the 2Wiki relation, linked to
   the text unit of the supporting-fact sentence of the subject's paragraph (see
   :func:`supporting_text_unit` for the fallbacks). Entity types come from the relation
   (:data:`SUBJECT_TYPES`, :data:`OBJECT_TYPES`).
4. **Enrichment.** An LLM extracts entities and relations from distractor text units (text units
   holding no supporting fact), with a JSON schema. Each item is validated; invalid items and
   names that do not occur in the text unit (hallucinations) are dropped and counted. A reply
   cut off by ``extraction_max_tokens`` keeps its complete items (pydantic's partial JSON).
5. **Communities.** Leiden communities (``kb.detect_communities``) get an LLM-written title and
   summary, or a deterministic one listing their members when the reply is invalid.
6. ``kb.finalize(build_info)`` builds the embedding indices and marks the KB complete.

Entities are linked to every text unit that mentions their name as a whole word
(case-insensitive); the same test filters hallucinated extractions.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import from_json

from provbench import hookimpl
from provbench.errors import UserError
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.locks import kb_build_lock
from provbench.model import Question
from provbench.plugin_api import KBBuilder, parse_options as plugin_options

from . import prompts as P
from provbench_plugins.datasets.twowiki.selection import mention_pattern

if TYPE_CHECKING:
    from provbench.kb import KnowledgeBase
    from provbench.llm import LLMClient

log = logging.getLogger(__name__)

BUILDER_NAME = "2wiki-paper000"
BUILDER_VERSION = 1  # bump when the algorithm changes: old KBs then no longer match

# ---------------------------------------------------------------------------------------------
# entity types inferred from 2Wiki relations

_PERSON_SUBJECT = (
    "date of birth", "date of death", "place of birth", "place of death", "place of burial",
    "father", "mother", "spouse", "child", "sibling", "country of citizenship", "educated at",
    "occupation", "award received", "cause of death", "employer", "doctoral advisor", "student of",
)
_PERSON_OBJECT = (
    "director", "screenwriter", "cast member", "producer", "performer", "composer", "lyrics by",
    "editor", "creator", "presenter", "father", "mother", "spouse", "child", "sibling",
    "founded by", "doctoral advisor", "student of",
)
_PLACE_OBJECT = (
    "place of birth", "place of death", "place of burial", "country", "country of citizenship",
    "country of origin", "located in the administrative territorial entity", "headquarters location",
)

#: type of a relation's subject. Films: subjects of film-crew relations; other works: subjects
#: of publication date and music/publishing relations.
SUBJECT_TYPES: dict[str, str] = {
    **{r: "PERSON" for r in _PERSON_SUBJECT},
    **{r: "FILM" for r in ("director", "screenwriter", "cast member", "producer")},
    **{r: "WORK" for r in ("publication date", "performer", "composer", "lyrics by", "record label", "publisher")},
    **{r: "ORGANIZATION" for r in ("founded by", "inception", "headquarters location")},
}
#: type of a relation's object.
OBJECT_TYPES: dict[str, str] = {
    **{r: "PERSON" for r in _PERSON_OBJECT},
    **{r: "DATE" for r in ("date of birth", "date of death", "publication date", "inception")},
    **{r: "PLACE" for r in _PLACE_OBJECT},
    **{r: "ORGANIZATION" for r in ("educated at", "employer", "record label", "publisher", "manufacturer")},
    "occupation": "OCCUPATION",
    "award received": "AWARD",
    "cause of death": "CAUSE",
}
#: when an entity collects several types, the first in this order wins.
TYPE_PRIORITY = ("PERSON", "FILM", "WORK", "ORGANIZATION", "PLACE", "DATE", "OCCUPATION", "AWARD", "CAUSE")
UNKNOWN_TYPE = "OTHER"


def pick_type(types: Iterable[str]) -> str:
    found = set(types)
    for candidate in TYPE_PRIORITY:
        if candidate in found:
            return candidate
    specific = sorted(found - {UNKNOWN_TYPE})
    return specific[0] if specific else UNKNOWN_TYPE


# ---------------------------------------------------------------------------------------------
# options


class BuildOptions(BaseModel):
    """Options of the builder (a suite's ``kb.options``); every one but the last two changes the KB."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_size: int = Field(200, ge=8, le=8192, description="text-unit budget in tokens (SentenceSplitter)")
    chunk_overlap: int = Field(0, ge=0, description="tokens shared by consecutive text units")
    extract: bool = Field(True, description="enrich the graph with LLM extraction from distractor text units")
    max_extractions: int | None = Field(
        40, ge=0,
        description="distractor text units sent to the LLM (those mentioning most gold entities first); "
        "None = all. Bounds the build time: 2-10 s per text unit with the embedded model on 2 cores",
    )
    extraction_max_tokens: int = Field(160, ge=16, le=4096)
    summarize: bool = Field(True, description="write community summaries with the LLM")
    max_summaries: int | None = Field(
        40, ge=0, description="largest communities summarised by the LLM; the rest get a deterministic summary",
    )
    summary_max_tokens: int = Field(160, ge=16, le=4096)
    seed: int = 0
    max_workers: int = Field(2, ge=1, le=64, description="concurrent LLM calls (does not change the KB)")
    overwrite: bool = Field(False, description="replace a finished KB built from other inputs")

    @field_validator("chunk_overlap")
    @classmethod
    def _overlap_below_size(cls, value: int, info: Any) -> int:
        size = info.data.get("chunk_size", 200)
        if value >= size:
            raise ValueError(f"chunk_overlap ({value}) must be smaller than chunk_size ({size})")
        return value

    def fingerprint_fields(self) -> dict[str, Any]:
        return self.model_dump(exclude={"max_workers", "overwrite"})


def parse_options(options: dict[str, Any]) -> BuildOptions:
    return plugin_options(BuildOptions, options, f"kb builder {BUILDER_NAME!r}")


# ---------------------------------------------------------------------------------------------
# names and ids


def normalize_name(name: str) -> str:
    """The merge key of an entity: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def strip_qualifier(title: str) -> str:
    """'Polish-Russian War (film)' -> 'Polish-Russian War': 2Wiki titles carry qualifiers the triples lack."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", title).strip()


def slug(text: str) -> str:
    words = re.sub(r"[^\w]+", "-", normalize_name(text)).strip("-_")
    return words or hashlib.sha1(text.encode()).hexdigest()[:10]


def entity_id(name: str) -> str:
    return f"ent:{slug(name)}"


# ---------------------------------------------------------------------------------------------
# reading questions (the "2wiki" loader's metadata: context, supporting_facts, evidences)


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
        raise UserError(f"question {question_id!r}: metadata.context item {title!r} needs a title and a list of sentences")
    return Paragraph(title, tuple(sentences))


def _triple(question_id: str, item: Any) -> tuple[str, str, str]:
    if isinstance(item, dict):
        item = [item.get("subject"), item.get("relation"), item.get("object")]
    if not (isinstance(item, (list, tuple)) and len(item) == 3 and all(isinstance(x, str) and x.strip() for x in item)):
        raise UserError(f"question {question_id!r}: metadata.evidences item {item!r:.80} is not [subject, relation, object]")
    subject, relation, obj = (" ".join(x.split()) for x in item)
    return subject, relation, obj


def _fact(question_id: str, item: Any) -> tuple[str, int]:
    if isinstance(item, dict):
        item = [item.get("title"), item.get("sent_id")]
    if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], int)):
        raise UserError(f"question {question_id!r}: metadata.supporting_facts item {item!r:.80} is not [title, sent_id]")
    return item[0], item[1]


def read_question(question: Question) -> QuestionData:
    return QuestionData(
        id=question.id,
        paragraphs=tuple(_paragraph(question.id, p) for p in _field(question, "context")),
        supporting_facts=tuple(_fact(question.id, f) for f in _field(question, "supporting_facts")),
        evidences=tuple(_triple(question.id, t) for t in _field(question, "evidences")),
    )


# ---------------------------------------------------------------------------------------------
# corpus: unique paragraphs -> documents -> text units


@dataclass
class Document:
    id: str
    title: str
    sentences: tuple[str, ...]
    text_unit_ids: list[str] = field(default_factory=list)


@dataclass
class Corpus:
    documents: dict[str, Document] = field(default_factory=dict)
    text_units: dict[str, TextUnit] = field(default_factory=dict)  # entity_ids filled in later
    sentence_unit: dict[tuple[str, int], str] = field(default_factory=dict)  # (doc id, sentence id) -> tu id
    question_docs: dict[str, dict[str, str]] = field(default_factory=dict)  # question id -> title -> doc id
    supporting_units: set[str] = field(default_factory=set)
    chunk_fallbacks: int = 0

    def doc_of(self, question_id: str, title: str) -> Document | None:
        docs = self.question_docs.get(question_id, {})
        doc_id = docs.get(title)
        if doc_id is None:  # tolerate case and qualifier differences between facts and titles
            key = normalize_name(title)
            doc_id = next((d for t, d in docs.items() if normalize_name(t) == key), None)
            if doc_id is None:
                doc_id = next((d for t, d in docs.items() if normalize_name(strip_qualifier(t)) == key), None)
        return self.documents.get(doc_id) if doc_id else None


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
                doc_id = f"doc:{slug(p.title)}"
                if doc_id in documents:  # same title, other text: a stable suffix from the text
                    doc_id += "~" + hashlib.sha1(text.encode()).hexdigest()[:8]
                by_content[key] = doc_id
                documents[doc_id] = Document(doc_id, p.title, p.sentences)
            titles.setdefault(p.title, doc_id)
    return documents, question_docs


def _sentence_spans(sentences: tuple[str, ...]) -> tuple[str, list[tuple[int, int] | None]]:
    """The paragraph text (sentences joined by a space) and each sentence's character span."""
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


def _pack_sentences(text: str, spans: list[tuple[int, int] | None], budget_chars: int) -> list[tuple[int, int]]:
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
    """LlamaIndex's SentenceSplitter, plus the sentence -> chunk mapping 2Wiki facts need."""

    def __init__(self, chunk_size: int, chunk_overlap: int):
        from llama_index.core.node_parser import SentenceSplitter  # heavy: import when building

        self.splitter = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
        self.budget_chars = chunk_size * 4  # fallback only: about four characters a token
        self.fallbacks = 0

    def chunk(self, sentences: tuple[str, ...]) -> tuple[list[str], dict[int, int]]:
        """Chunk texts and {sentence id: index of the chunk holding most of it}."""
        text, spans = _sentence_spans(sentences)
        if not text:
            return [], {}
        chunk_spans = _locate_chunks(text, self.splitter.split_text(text))
        if not chunk_spans:
            self.fallbacks += 1
            chunk_spans = _pack_sentences(text, spans, self.budget_chars)
        owner = {
            sid: max(range(len(chunk_spans)), key=lambda i: _overlap(span, chunk_spans[i]))
            for sid, span in enumerate(spans)
            if span is not None
        }
        return [text[a:b] for a, b in chunk_spans], owner


def build_corpus(questions: list[QuestionData], options: BuildOptions) -> Corpus:
    documents, question_docs = merge_paragraphs(questions)
    corpus = Corpus(documents=documents, question_docs=question_docs)
    chunker = Chunker(options.chunk_size, options.chunk_overlap)
    for doc in documents.values():
        texts, owner = chunker.chunk(doc.sentences)
        first = len(corpus.text_units)
        for i, text in enumerate(texts):
            tu_id = f"tu:{first + i}"
            corpus.text_units[tu_id] = TextUnit(id=tu_id, text=text, document_id=doc.id)
            doc.text_unit_ids.append(tu_id)
        for sid, index in owner.items():
            corpus.sentence_unit[(doc.id, sid)] = f"tu:{first + index}"
    corpus.chunk_fallbacks = chunker.fallbacks
    for q in questions:
        for title, sid in q.supporting_facts:
            doc = corpus.doc_of(q.id, title)
            tu_id = corpus.sentence_unit.get((doc.id, sid)) if doc else None
            if tu_id:
                corpus.supporting_units.add(tu_id)
    return corpus


# ---------------------------------------------------------------------------------------------
# graph drafts


@dataclass
class EntityDraft:
    id: str
    name: str
    origin: str  # "gold" or "extracted"
    types: list[str] = field(default_factory=list)
    description: str = ""
    text_unit_ids: set[str] = field(default_factory=set)


@dataclass
class RelationDraft:
    source: str
    label: str
    target: str
    origin: str
    text_unit_id: str | None


@dataclass
class Graph:
    entities: dict[str, EntityDraft] = field(default_factory=dict)  # normalised name -> draft
    relations: dict[tuple[str, str, str], RelationDraft] = field(default_factory=dict)
    _ids: set[str] = field(default_factory=set)

    def entity(self, name: str, origin: str, type_: str | None = None) -> EntityDraft:
        key = normalize_name(name)
        draft = self.entities.get(key)
        if draft is None:
            draft = EntityDraft(self._unique_id(name), " ".join(name.split()), origin)
            self.entities[key] = draft
        if type_:
            draft.types.append(type_)
        return draft

    def find(self, name: str) -> EntityDraft | None:
        return self.entities.get(normalize_name(name))

    def relate(self, source: EntityDraft, label: str, target: EntityDraft, origin: str, tu_id: str | None) -> bool:
        key = (source.id, label, target.id)
        if key in self.relations:
            return False
        self.relations[key] = RelationDraft(source.id, label, target.id, origin, tu_id)
        return True

    def _unique_id(self, name: str) -> str:
        candidate = entity_id(name)
        if candidate in self._ids:  # two names with one slug ("A-B" and "A B"): keep both apart
            candidate += "~" + hashlib.sha1(normalize_name(name).encode()).hexdigest()[:6]
        self._ids.add(candidate)
        return candidate


def supporting_text_unit(corpus: Corpus, q: QuestionData, subject: str, obj: str) -> str | None:
    """The text unit that supports ``subject -relation-> obj`` in question ``q``.

    1. the supporting-fact sentence of the subject's paragraph (the one mentioning the object
       when the paragraph has several);
    2. else a text unit of that question mentioning both names;
    3. else the subject paragraph's text unit mentioning the object, or its first text unit.
    """
    doc = corpus.doc_of(q.id, subject)
    object_pattern = mention_pattern(obj)
    if doc is not None:
        facts = [corpus.sentence_unit.get((doc.id, sid)) for title, sid in q.supporting_facts
                 if corpus.doc_of(q.id, title) is doc]
        facts = [tu for tu in facts if tu]
        mentioning = [tu for tu in facts if object_pattern.search(corpus.text_units[tu].text)]
        if mentioning or facts:
            return (mentioning or facts)[0]
    subject_pattern = mention_pattern(subject)
    for doc_id in dict.fromkeys(corpus.question_docs.get(q.id, {}).values()):
        for tu_id in corpus.documents[doc_id].text_unit_ids:
            text = corpus.text_units[tu_id].text
            if subject_pattern.search(text) and object_pattern.search(text):
                return tu_id
    if doc is not None and doc.text_unit_ids:
        return next((tu for tu in doc.text_unit_ids if object_pattern.search(corpus.text_units[tu].text)),
                    doc.text_unit_ids[0])
    return None


def add_gold_graph(graph: Graph, corpus: Corpus, questions: list[QuestionData]) -> None:
    for q in questions:
        for subject, relation, obj in q.evidences:
            label = relation.strip()
            source = graph.entity(subject, "gold", SUBJECT_TYPES.get(label.lower()))
            target = graph.entity(obj, "gold", OBJECT_TYPES.get(label.lower()))
            tu_id = supporting_text_unit(corpus, q, subject, obj)
            if tu_id:  # the supporting text unit mentions both ends (the KB links it to both too)
                source.text_unit_ids.add(tu_id)
                target.text_unit_ids.add(tu_id)
            graph.relate(source, label, target, "gold", tu_id)


# ---------------------------------------------------------------------------------------------
# LLM extraction from distractor text units


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
class LLMTally:
    """What the builder's LLM calls cost and how often the model misbehaved."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    salvaged: int = 0  # replies cut off by max_tokens whose complete items were kept
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)

    def record(self, resp: Any) -> None:
        self.calls += 1
        self.cached += bool(getattr(resp, "cached", False))
        self.prompt_tokens += getattr(resp, "prompt_tokens", 0) or 0
        self.completion_tokens += getattr(resp, "completion_tokens", 0) or 0

    def fail(self, purpose: str, exc: Exception) -> None:
        self.calls += 1
        self.failed += 1
        if len(self.errors) < 5:
            self.errors.append(f"{purpose}: {type(exc).__name__}: {exc}"[:300])


@dataclass
class ExtractionCounts:
    text_units: int = 0
    invalid_outputs: int = 0  # replies that were not a JSON object of the schema's shape
    invalid_items: int = 0  # items failing validation (wrong types, missing fields, too long)
    hallucinated_items: int = 0  # entity names (or relation ends) not found in the text unit
    entities_added: int = 0
    relations_added: int = 0


def choose_extraction_units(corpus: Corpus, graph: Graph, limit: int | None) -> list[str]:
    """Distractor text units, those mentioning most gold entities first, then in corpus order."""
    candidates = [tu for tu in corpus.text_units if tu not in corpus.supporting_units]
    patterns = [mention_pattern(e.name) for e in graph.entities.values()]

    def gold_mentions(tu_id: str) -> int:
        text = corpus.text_units[tu_id].text
        return sum(1 for p in patterns if p.search(text))

    ranked = sorted(candidates, key=lambda tu: (-gold_mentions(tu), int(tu.split(":")[1])))
    return ranked if limit is None else ranked[:limit]


def _call_extraction(llm: "LLMClient", title: str, text: str, options: BuildOptions, tally: LLMTally) -> Any:
    try:
        resp = llm.chat(P.extraction_messages(title, text), schema=P.EXTRACTION_SCHEMA,
                        max_tokens=options.extraction_max_tokens, temperature=0.0, seed=options.seed,
                        purpose="kb-extract")
    except Exception as exc:  # a failing call must not end the build; it is counted
        tally.fail("kb-extract", exc)
        return None
    tally.record(resp)
    if resp.data is not None:
        return resp.data
    salvaged = salvage_truncated(resp.text)
    if salvaged is None:
        return _InvalidReply
    tally.salvaged += 1
    return salvaged


_InvalidReply = object()


def salvage_truncated(text: str | None) -> dict[str, Any] | None:
    """The complete part of a JSON object cut off by max_tokens (tiny models pad and repeat)."""
    if not text or not text.lstrip().startswith("{"):
        return None
    try:
        data = from_json(text.strip(), allow_partial=True)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _valid_items(data: Any, key: str, model: type[BaseModel], counts: ExtractionCounts) -> list[Any]:
    items = data.get(key, [])
    if not isinstance(items, list):
        counts.invalid_items += 1
        return []
    valid = []
    for item in items:
        try:
            valid.append(model.model_validate(item))
        except ValidationError:
            counts.invalid_items += 1
    return valid


#: a determiner and a lower-case word ("the film", "his wife"): tiny models return these as entities
GENERIC_NAME = re.compile(r"(?i:the|a|an|this|that|these|his|her|its|their)\s+[a-z][\w-]*$")


def apply_extraction(graph: Graph, tu: TextUnit, data: Any, counts: ExtractionCounts) -> None:
    """Keep what the text supports: entity names and relation ends must occur in the text unit."""
    if not isinstance(data, dict):
        counts.invalid_outputs += 1
        return
    entities = _valid_items(data, "entities", ExtractedEntity, counts)
    relations = _valid_items(data, "relations", ExtractedRelation, counts)
    types: dict[str, str] = {}
    for item in entities:
        if _usable(item.name, tu, counts):
            type_ = item.type.strip().upper()
            types[normalize_name(item.name)] = type_ if type_ in P.ENTITY_TYPES else UNKNOWN_TYPE
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
    if draft.origin == "extracted" and type_:  # a gold entity keeps the type its relations imply
        draft.types.append(type_)
    draft.text_unit_ids.add(tu.id)
    counts.entities_added += is_new
    return draft


def enrich_graph(graph: Graph, corpus: Corpus, llm: "LLMClient", options: BuildOptions,
                 tally: LLMTally) -> ExtractionCounts:
    counts = ExtractionCounts()
    if not options.extract:
        return counts
    units = [corpus.text_units[tu] for tu in choose_extraction_units(corpus, graph, options.max_extractions)]
    counts.text_units = len(units)

    def extract(tu: TextUnit) -> Any:
        return _call_extraction(llm, corpus.documents[tu.document_id].title, tu.text, options, tally)

    with ThreadPoolExecutor(max_workers=options.max_workers) as pool:
        replies = list(pool.map(extract, units))  # in input order: the graph does not depend on timing
    for tu, data in zip(units, replies):
        if data is not None:  # None: the call failed (counted in the tally)
            apply_extraction(graph, tu, None if data is _InvalidReply else data, counts)
    return counts


# ---------------------------------------------------------------------------------------------
# links, descriptions, records


def link_mentions(graph: Graph, corpus: Corpus) -> None:
    """Link each entity to every text unit that mentions it."""
    for draft in graph.entities.values():
        pattern = mention_pattern(draft.name)
        draft.text_unit_ids.update(tu.id for tu in corpus.text_units.values() if pattern.search(tu.text))


def describe_entities(graph: Graph, corpus: Corpus) -> None:
    """First sentence of the entity's own paragraph; else the first sentence that mentions it."""
    own: dict[str, Document] = {}
    for doc in corpus.documents.values():
        for key in (normalize_name(doc.title), normalize_name(strip_qualifier(doc.title))):
            own.setdefault(key, doc)
    for key, draft in graph.entities.items():
        doc = own.get(key)
        first = next((s.strip() for s in doc.sentences if s.strip()), "") if doc else ""
        draft.description = first or _first_mention(draft, corpus)


def _first_mention(draft: EntityDraft, corpus: Corpus) -> str:
    pattern = mention_pattern(draft.name)
    for tu_id in sorted(draft.text_unit_ids, key=lambda t: int(t.split(":")[1])):
        for sentence in re.split(r"(?<=[.!?])\s+", corpus.text_units[tu_id].text):
            if pattern.search(sentence):
                return sentence[:300]
    return ""


def to_records(graph: Graph, corpus: Corpus) -> tuple[list[TextUnit], list[Entity], list[Relation]]:
    entities = [
        Entity(id=d.id, name=d.name, label=pick_type(d.types), description=d.description,
               text_unit_ids=tuple(sorted(d.text_unit_ids, key=lambda t: int(t.split(":")[1]))))
        for d in graph.entities.values()
    ]
    per_unit: dict[str, list[str]] = {tu: [] for tu in corpus.text_units}
    for e in entities:
        for tu in e.text_unit_ids:
            per_unit[tu].append(e.id)
    units = [tu.model_copy(update={"entity_ids": tuple(per_unit[tu.id])}) for tu in corpus.text_units.values()]
    relations = [
        Relation(id=f"rel:{i}", source=r.source, target=r.target, label=r.label, text_unit_id=r.text_unit_id)
        for i, r in enumerate(graph.relations.values())
    ]
    return units, entities, relations


# ---------------------------------------------------------------------------------------------
# community summaries


def fallback_summary(names: list[str], relations: list[str]) -> tuple[str, str]:
    """A deterministic title and summary listing the members (used when the LLM gives none)."""
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    title = "Community of " + ", ".join(names[:3]) + (" and others" if len(names) > 3 else "")
    summary = f"Entities: {shown}."
    if relations:
        summary += " Relations: " + "; ".join(relations[:5]) + "."
    return title[:120], summary


class Summary(BaseModel):
    model_config = ConfigDict(str_strip_whitespace=True)  # a blank title is no title
    title: str = Field(min_length=1, max_length=200)
    summary: str = Field(min_length=1, max_length=2000)


@dataclass
class SummaryCounts:
    communities: int = 0
    by_llm: int = 0
    fallback_invalid: int = 0  # the LLM call failed or its reply was invalid
    deterministic: int = 0  # not sent to the LLM (summarize off or beyond max_summaries)


def summarize_communities(kb: "KnowledgeBase", graph: Graph, llm: "LLMClient", options: BuildOptions,
                          tally: LLMTally) -> SummaryCounts:
    communities = kb.detect_communities(seed=options.seed)
    counts = SummaryCounts(communities=len(communities))
    by_id = {d.id: d for d in graph.entities.values()}
    ranked = sorted(communities, key=lambda c: (-len(c.entity_ids), c.id))
    budget = 0 if not options.summarize else (len(ranked) if options.max_summaries is None else options.max_summaries)
    prompts = {c.id: _community_lines(c.entity_ids, by_id, graph) for c in ranked}
    to_llm = [c.id for c in ranked[:budget]]

    def ask(cid: str) -> Summary | None:
        entity_lines, relation_lines = prompts[cid]
        try:
            resp = llm.chat(P.summary_messages(entity_lines, relation_lines), schema=P.SUMMARY_SCHEMA,
                            max_tokens=options.summary_max_tokens, temperature=0.0, seed=options.seed,
                            purpose="kb-community-summary")
        except Exception as exc:  # counted; the community gets the deterministic summary
            tally.fail("kb-community-summary", exc)
            return None
        tally.record(resp)
        try:
            return Summary.model_validate(resp.data)
        except ValidationError:
            return None

    with ThreadPoolExecutor(max_workers=options.max_workers) as pool:
        answers = dict(zip(to_llm, pool.map(ask, to_llm)))
    summaries: dict[str, tuple[str, str]] = {}
    for c in ranked:
        answer = answers.get(c.id)
        if answer is not None:
            counts.by_llm += 1
            summaries[c.id] = (answer.title, answer.summary)
            continue
        counts.fallback_invalid += c.id in answers
        counts.deterministic += c.id not in answers
        names = [by_id[e].name for e in c.entity_ids if e in by_id]
        summaries[c.id] = fallback_summary(names, prompts[c.id][1])
    kb.set_community_summaries(summaries)
    return counts


def _community_lines(entity_ids: Iterable[str], by_id: dict[str, EntityDraft], graph: Graph,
                     max_entities: int = 15, max_relations: int = 12) -> tuple[list[str], list[str]]:
    """Short prompt lines: the best-linked members first, and relations inside the community."""
    members = sorted((by_id[e] for e in entity_ids if e in by_id), key=lambda d: (-len(d.text_unit_ids), d.name))
    inside = {d.id for d in members}
    entity_lines = [f"{d.name} ({pick_type(d.types)}): {d.description[:100]}".rstrip(": ")
                    for d in members[:max_entities]]
    relation_lines = [f"{by_id[r.source].name} -{r.label}-> {by_id[r.target].name}"
                      for r in graph.relations.values() if r.source in inside and r.target in inside]
    return entity_lines, relation_lines[:max_relations]


# ---------------------------------------------------------------------------------------------
# reuse, fingerprint, build


def fingerprint(questions: list[QuestionData], options: BuildOptions, model_id: str) -> dict[str, Any]:
    content = json.dumps([[q.id, [[p.title, p.sentences] for p in q.paragraphs], q.supporting_facts, q.evidences]
                          for q in sorted(questions, key=lambda q: q.id)], ensure_ascii=False)
    parts = {
        "builder": f"{BUILDER_NAME}/v{BUILDER_VERSION}",
        "model": model_id,
        "options": options.fingerprint_fields(),
        "question_ids": hashlib.sha256("\n".join(sorted(q.id for q in questions)).encode()).hexdigest(),
        "content": hashlib.sha256(content.encode()).hexdigest(),
    }
    parts["fingerprint"] = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return parts


def reuse_existing(kb_dir: Path, expected: dict[str, Any], options: BuildOptions) -> "KnowledgeBase | None":
    """The finished KB at ``kb_dir`` if it was built from the same inputs; None if there is none."""
    from provbench.kb import KnowledgeBase

    if not kb_dir.exists():
        return None
    if not KnowledgeBase.is_complete(kb_dir):
        _remove_partial(kb_dir)
        return None
    kb = KnowledgeBase.open(kb_dir)
    found = (kb.build_info or {}).get("inputs", {})
    if found.get("fingerprint") == expected["fingerprint"]:
        return kb
    kb.close()
    differing = [k for k in ("builder", "model", "options", "question_ids", "content") if found.get(k) != expected[k]]
    if not options.overwrite:
        raise UserError(
            f"knowledge base at {kb_dir} was built from other inputs ({', '.join(differing) or 'unknown'} differ); "
            "use another directory or the builder option overwrite=true"
        )
    log.warning("replacing knowledge base at %s (%s differ)", kb_dir, ", ".join(differing))
    shutil.rmtree(kb_dir)
    return None


# files a knowledge base writes from its first moment (provbench.kb.store): proof that a
# directory without the completion marker is an interrupted build we may delete
_KB_FILES = ("kb.json", "graph.kuzu")


def _remove_partial(kb_dir: Path) -> None:
    if kb_dir.is_dir() and any(kb_dir.iterdir()) and not any((kb_dir / f).exists() for f in _KB_FILES):
        raise UserError(f"{kb_dir} is not empty and holds no knowledge base; refusing to delete it: "
                        "choose an empty or new directory for the knowledge base")
    log.warning("knowledge base at %s is incomplete (an interrupted build?): building it again", kb_dir)
    if kb_dir.is_dir():
        shutil.rmtree(kb_dir)
    else:
        raise UserError(f"{kb_dir} is a file, not a knowledge-base directory")


def build_knowledge_base(questions: list[Question], kb_dir: Path, llm: "LLMClient",
                         options: BuildOptions) -> "KnowledgeBase":
    """Reuse the finished KB at ``kb_dir`` or build it (see the module docstring)."""
    from provbench.kb import KnowledgeBase

    if not questions:
        raise UserError(f"kb builder {BUILDER_NAME!r}: no questions to build a knowledge base from")
    data = [read_question(q) for q in questions]
    inputs = fingerprint(data, options, llm.model_id)
    kb_dir = Path(kb_dir)
    existing = reuse_existing(kb_dir, inputs, options)
    if existing is not None:
        return existing

    started = time.monotonic()
    corpus = build_corpus(data, options)
    graph = Graph()
    add_gold_graph(graph, corpus, data)
    gold_entities, gold_relations = len(graph.entities), len(graph.relations)
    tally = LLMTally()
    extraction = enrich_graph(graph, corpus, llm, options, tally)
    link_mentions(graph, corpus)
    describe_entities(graph, corpus)
    units, entities, relations = to_records(graph, corpus)

    kb = KnowledgeBase.create(kb_dir)
    kb.add_text_units(units)
    kb.add_entities(entities)
    kb.add_relations(relations)
    summaries = summarize_communities(kb, graph, llm, options, tally)
    if tally.calls and tally.failed == tally.calls:  # a broken model, not a flaky call: do not mark complete
        kb.close()
        raise UserError(f"kb builder {BUILDER_NAME!r}: every LLM call to {llm.model_id!r} failed; first: {tally.errors[0]}")
    info = {
        "builder": BUILDER_NAME,
        "inputs": inputs,
        "model": llm.model_id,
        "options": options.model_dump(),
        "questions": len(data),
        "paragraphs": len(corpus.documents),
        "text_units": len(corpus.text_units),
        "supporting_text_units": len(corpus.supporting_units),
        "chunk_fallbacks": corpus.chunk_fallbacks,
        "entities": {"total": len(entities), "gold": gold_entities, "extracted": len(entities) - gold_entities},
        "relations": {"total": len(relations), "gold": gold_relations, "extracted": len(relations) - gold_relations},
        "extraction": vars(extraction),
        "communities": vars(summaries),
        "llm": {"calls": tally.calls, "cache_hits": tally.cached, "failed": tally.failed,
                "truncated_salvaged": tally.salvaged,
                "prompt_tokens": tally.prompt_tokens, "completion_tokens": tally.completion_tokens,
                "errors": tally.errors},
    }
    info["duration_s"] = round(time.monotonic() - started, 2)  # up to finalize: embedding the indices follows
    kb.finalize(info)
    return kb


class TwoWikiKBBuilder(KBBuilder):
    """Paper 000's 2WikiMultiHopQA knowledge base: evidence triples, LLM enrichment, Leiden communities."""

    name = BUILDER_NAME
    Options = BuildOptions

    def __init__(self, **options: Any):
        self.options = parse_options(options)

    def build(self, questions: list[Question], kb_dir: Path, llm: "LLMClient", **options: Any) -> "KnowledgeBase":
        merged = parse_options({**self.options.model_dump(exclude_unset=True), **options})
        with kb_build_lock(kb_dir):  # a second process waits for this build, then reuses it
            return build_knowledge_base(questions, Path(kb_dir), llm, merged)


@hookimpl
def provbench_register_kb_builders():
    return {BUILDER_NAME: TwoWikiKBBuilder}
