"""Reading a medical corpus into chunks, and a ready-made triple list into triples.

Chunks: a ``.jsonl`` file as MedRAG ships StatPearls (``id``, ``title``, ``content`` or
``contents``, and the source file in ``source``/``source_file``/``file``; when absent, the id's
part before its last "_" plus ".jsonl", as StatPearls ids are "<article>_<n>"), or a ``.txt`` file
or a directory of ``.txt``/``.md`` files cut into chunks of about ``chunk_chars`` characters at
paragraph breaks (the file name is the source).

With ``chunking="authors"`` the corpus is first read as documents (a jsonl's chunks joined per
source file, titled; each text file whole) and cut as the authors' ``Chunker.py`` does: LangChain's
``RecursiveCharacterTextSplitter`` (paragraph, line, word, character breaks), 600 characters with
100 overlapping, each chunk's id the sha256 of its text (a repeated text is kept once).

Triples: a CSV in the form the paper's authors publish their graph (``Entity1, Label1,
Relationship, Entity2, Label2, SourceFilename, ChunkID``) or a jsonl with those keys. The
authors' ChunkID is the sha256 of the chunk's text: :func:`match_chunk_ids` maps a ChunkID that
is no corpus record id but the digest of a chunk's text onto that chunk.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from provbench.errors import UserError
from provbench.jsonlines import read_json_lines


@dataclass(frozen=True)
class Chunk:
    id: str
    title: str
    text: str
    source: str  # the file the chunk came from (shown as the "article source")


class Triple(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    head: str = Field(alias="Entity1", min_length=1)
    head_label: str = Field(alias="Label1", default="Unknown")
    relation: str = Field(alias="Relationship", min_length=1)
    tail: str = Field(alias="Entity2", min_length=1)
    tail_label: str = Field(alias="Label2", default="Unknown")
    source: str = Field(alias="SourceFilename", default="")
    chunk_id: str = Field(alias="ChunkID", default="")

    @field_validator("head_label", "tail_label")
    @classmethod
    def _clean_label(cls, value: str) -> str:
        return value.strip().replace("*", "")  # as the authors read their labels ("Diseases**")


class _ChunkRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    title: str = ""
    content: str | None = None
    contents: str | None = None
    source: str | None = None
    source_file: str | None = None
    file: str | None = None


def _located(where: str, record: str, exc: ValidationError) -> UserError:
    error = exc.errors()[0]
    field = ".".join(str(p) for p in error["loc"]) or "(record)"
    return UserError(f"{where}: record {record}: field {field}: {error['msg']}")


def read_chunks(source: Path, chunk_chars: int = 1200, chunking: str = "paragraphs") -> list[Chunk]:
    """The corpus's chunks as given (jsonl) or cut at paragraph breaks (text), or with
    ``chunking="authors"`` re-cut by the authors' rule (module docstring)."""
    chunks = _read_chunks(source, chunk_chars)
    return authors_chunks(chunks, titled=source.suffix.lower() == ".jsonl") if chunking == "authors" else chunks


def _read_chunks(source: Path, chunk_chars: int) -> list[Chunk]:
    if source.is_dir():
        files = sorted(p for p in source.rglob("*") if p.suffix.lower() in {".txt", ".md"})
        if not files:
            raise UserError(f"{source}: no .txt or .md files to read as a corpus")
        return [c for f in files for c in split_text_file(f, chunk_chars)]
    if not source.is_file():
        raise UserError(f"corpus not found: {source}")
    if source.suffix.lower() != ".jsonl":
        return split_text_file(source, chunk_chars)
    chunks = []
    for number, raw in read_json_lines(source):
        try:
            record = _ChunkRecord.model_validate(raw)
        except ValidationError as exc:
            raise _located(f"{source}:{number}", f"#{number}", exc) from None
        text = record.content if record.content is not None else record.contents
        if not text or not text.strip():
            raise UserError(f"{source}:{number}: record {record.id!r}: field content: missing or empty")
        origin = record.source or record.source_file or record.file or record.id.rsplit("_", 1)[0] + ".jsonl"
        chunks.append(Chunk(record.id, record.title, text.strip(), origin))
    return chunks


AUTHORS_CHUNK_CHARS, AUTHORS_OVERLAP = 600, 100


def authors_chunks(chunks: list[Chunk], titled: bool) -> list[Chunk]:
    """``chunks`` joined back into their documents (per source file, in order; ``titled``: after
    the first chunk's title, as the authors joined title, abstract and body) and re-cut by the
    authors' rule: 600/100 recursive splits, sha256 ids."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=AUTHORS_CHUNK_CHARS,
        chunk_overlap=AUTHORS_OVERLAP,
        separators=["\n\n", "\n", " ", ""],
        length_function=len,
    )
    documents: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        documents.setdefault(chunk.source, []).append(chunk)
    found: dict[str, Chunk] = {}
    for source, parts in documents.items():
        title = parts[0].title
        text = "\n\n".join(([title] if titled and title else []) + [c.text for c in parts])
        for piece in splitter.split_text(text):
            found.setdefault(text_digest(piece), Chunk(text_digest(piece), title, piece, source))
    return list(found.values())


def split_text_file(path: Path, chunk_chars: int) -> list[Chunk]:
    paragraphs = [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    chunks, current = [], ""
    for paragraph in paragraphs:
        if current and len(current) + len(paragraph) > chunk_chars:
            chunks.append(current)
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        chunks.append(current)
    return [Chunk(f"{path.stem}_{i}", path.stem, text, path.name) for i, text in enumerate(chunks)]


def read_triples(path: Path) -> list[Triple]:
    if not path.is_file():
        raise UserError(f"triples file not found: {path}")
    if path.suffix.lower() == ".jsonl":
        rows = read_json_lines(path)
    else:
        with path.open(encoding="utf-8", newline="") as f:
            rows = list(enumerate(csv.DictReader(f), 2))  # line 1 is the header
    triples = []
    for number, raw in rows:
        try:
            triples.append(Triple.model_validate(raw))
        except ValidationError as exc:
            raise _located(f"{path}:{number}", f"#{number}", exc) from None
    return triples


def text_digest(text: str) -> str:
    """The authors' chunk id: sha256 of the chunk text (UTF-8), hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def match_chunk_ids(triples: list[Triple], chunks: list[Chunk]) -> list[Triple]:
    """Triples whose ChunkID is no corpus record id but the sha256 of a chunk's text get that
    chunk's id; the rest are returned unchanged (an unknown id stays unknown, for the caller to
    report). SourceFilename is kept as read."""
    ids = {c.id for c in chunks}
    by_digest: dict[str, str] | None = None
    matched = []
    for t in triples:
        if t.chunk_id and t.chunk_id not in ids:
            if by_digest is None:  # digests only when some id needs them
                by_digest = {text_digest(c.text): c.id for c in chunks}
            if t.chunk_id.lower() in by_digest:
                t = t.model_copy(update={"chunk_id": by_digest[t.chunk_id.lower()]})
        matched.append(t)
    return matched


def relation_sources(triples: list[Triple]) -> dict[str, str]:
    """Relation id (``rel:<n>``, as the builder numbers them) -> the triple's SourceFilename,
    where it names one."""
    return {f"rel:{n}": t.source for n, t in enumerate(triples) if t.source}
