"""A user's documents as text: a folder or glob of .txt, .md, .html/.htm and .pdf files, read by
LlamaIndex's ``SimpleDirectoryReader`` with readers of our own for HTML (the standard library's
parser) and PDF (``pypdf``): ``llama-index-readers-file`` needs pandas < 3 and cannot be installed
beside provbench's pinned pandas.

Each file becomes one :class:`SourceDocument`: its path, a title (a Markdown ``# heading``, an HTML
``<title>`` or first ``<h1>``, a PDF's title metadata; none for plain text) and its text split into
sentences with their character offsets in that text (:func:`sentence_spans`), which is what the
builder chunks and what a question's supporting documents are matched against. The ``qa`` loader
reads supporting documents through the same functions, so both see one text.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from provbench.errors import UserError

SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*\n|\n(?=\s*(?:#|[-*+] |\d+[.)] ))")
_MD_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.M)
_MD_MARKUP = re.compile(r"^\s{0,3}#{1,6}\s+|^\s*[-*+]\s+|[*_`]{1,3}(?=\S)|(?<=\S)[*_`]{1,3}", re.M)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


class DocumentError(UserError):
    """A document cannot be read, or a documents source names no document."""


@dataclass(frozen=True)
class SourceDocument:
    path: str  # absolute
    relative: str  # to the folder (or the glob's fixed part) the user named
    title: str
    text: str
    spans: tuple[tuple[int, int], ...]  # each sentence's (start, end) in ``text``

    @property
    def sentences(self) -> tuple[str, ...]:
        return tuple(self.text[a:b] for a, b in self.spans)

    def names(self) -> set[str]:
        """What a question may call this document by: relative path, file name, stem, title."""
        path = Path(self.relative)
        return {n.casefold() for n in (self.relative, path.name, path.stem, self.title) if n}


def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Sentences of ``text`` as (start, end) offsets: ends of sentences, blank lines, and the start
    of a heading or list item split; white space at either end of a sentence is left out."""
    spans, start = [], 0
    for match in [*_SENTENCE_END.finditer(text), None]:
        end = match.start() if match else len(text)
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
        start = match.end() if match else end
    return tuple(spans)


# -- readers ------------------------------------------------------------------------------------


class _HTMLText(HTMLParser):
    """Visible text of an HTML page (scripts and styles left out), blocks on their own lines."""

    BLOCKS = {
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "section",
        "article",
        "title",
        "blockquote",
        "pre",
        "table",
        "ul",
        "ol",
        "dd",
        "dt",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.h1 = ""
        self._stack: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style", "noscript"):
            self._skip += 1
        self._stack.append(tag)
        if tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "noscript"):
            self._skip = max(0, self._skip - 1)
        if tag in self._stack:
            del self._stack[len(self._stack) - 1 - self._stack[::-1].index(tag) :]
        if tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        current = self._stack[-1] if self._stack else ""
        if current == "title":
            self.title += data
            return  # the title is metadata, not body text
        if current == "h1" and not self.h1:
            self.h1 = data.strip()
        self.parts.append(data)


def _tidy(text: str) -> str:
    """Spaces inside lines collapsed, at most one blank line between blocks."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_text(raw: str) -> tuple[str, str]:
    """(title, text) of an HTML page."""
    parser = _HTMLText()
    parser.feed(raw)
    parser.close()
    return " ".join(parser.title.split()) or parser.h1, _tidy("".join(parser.parts))


def markdown_text(raw: str) -> tuple[str, str]:
    """(title, text) of a Markdown file: its first ``#`` heading, its text without markup."""
    heading = _MD_HEADING.search(raw)
    text = _MD_MARKUP.sub("", _MD_LINK.sub(r"\1", raw))
    return (heading.group(1).strip() if heading else ""), _tidy(text)


def pdf_text(path: Path) -> tuple[str, str]:
    """(title, text) of a PDF through pypdf: its title metadata, its pages' text."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:  # pragma: no cover - pypdf is a dependency
        raise DocumentError(f"{path}: reading PDF needs pypdf (pip install pypdf)") from None
    try:
        reader = PdfReader(str(path))
        title = (reader.metadata.title if reader.metadata else None) or ""
        text = "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except (PdfReadError, OSError, ValueError) as exc:
        raise DocumentError(f"{path}: not a readable PDF: {exc}") from None
    return str(title).strip(), _tidy(text)


def read_text_file(path: Path) -> tuple[str, str]:
    """(title, text) of a .txt, .md, .html or .pdf file."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        return pdf_text(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{path}: not UTF-8 text (byte {exc.start}): save it as UTF-8") from None
    if suffix in (".html", ".htm"):
        return html_text(raw)
    if suffix in (".md", ".markdown"):
        return markdown_text(raw)
    return "", _tidy(raw)


def llama_reader() -> Any:
    """A LlamaIndex ``BaseReader`` over :func:`read_text_file` (title in the document's metadata)."""
    from llama_index.core import Document
    from llama_index.core.readers.base import BaseReader

    class ProvbenchFileReader(BaseReader):
        def load_data(self, file: Path, extra_info: dict | None = None, **_: Any) -> list[Document]:
            title, text = read_text_file(Path(file))
            return [Document(text=text, metadata={**(extra_info or {}), "title": title})]

    return ProvbenchFileReader()


# -- sources ------------------------------------------------------------------------------------


def document_files(source: str | Path) -> tuple[Path, list[Path]]:
    """(root, files): a folder's documents (recursively), or a glob's matches; sorted, so the
    knowledge base never depends on the file system's order."""
    text = str(source)
    if any(ch in text for ch in "*?["):
        fixed = Path(text.split("*")[0].split("?")[0].split("[")[0])
        root = fixed if text.endswith(("/", "\\")) or fixed.is_dir() else fixed.parent
        files = [Path(p) for p in glob.glob(text, recursive=True)]
    else:
        root = Path(text)
        if not root.is_dir():
            raise DocumentError(f"{root}: no such folder of documents (give a folder or a glob such as docs/*.md)")
        files = [p for p in root.rglob("*")]
    files = sorted(p.resolve() for p in files if p.is_file() and p.suffix.lower() in SUFFIXES)
    if not files:
        raise DocumentError(f"{source}: no documents ({', '.join(SUFFIXES)}) found")
    return root.resolve(), files


def read_documents(source: str | Path) -> list[SourceDocument]:
    """Every document of ``source`` (folder or glob) through ``SimpleDirectoryReader``."""
    from llama_index.core import SimpleDirectoryReader

    root, files = document_files(source)
    reader = llama_reader()
    try:
        loaded = SimpleDirectoryReader(
            input_files=[str(f) for f in files],
            file_extractor={s: reader for s in SUFFIXES},
            raise_on_error=True,
            filename_as_id=True,
        ).load_data(show_progress=False)
    except Exception as exc:  # it wraps a reader's error in a bare "Error loading file"
        if isinstance(exc.__cause__, DocumentError):
            raise exc.__cause__ from None
        raise
    documents = []
    for doc in loaded:
        path = Path(doc.metadata.get("file_path", "")).resolve()
        if not doc.text.strip():
            raise DocumentError(f"{path}: no text could be read from it (a scanned PDF? an empty file?)")
        relative = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        documents.append(
            SourceDocument(
                path=str(path),
                relative=relative,
                title=doc.metadata.get("title") or "",
                text=doc.text,
                spans=sentence_spans(doc.text),
            )
        )
    return sorted(documents, key=lambda d: d.relative)
