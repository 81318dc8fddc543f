"""FEVER's Wikipedia pages: the official ``wiki-pages/*.jsonl`` dump and BEIR-style corpora.

A page id is the Wikipedia title with ``_`` for spaces and PTB escapes (``-LRB-`` for "(",
``-RRB-`` for ")", ...); :func:`title_of` turns it back into a readable title and
:func:`page_key` gives the form evidence is compared in (the raw id, as the official scorer does).
``lines`` holds one ``N<TAB>sentence<TAB>anchor<TAB>target...`` entry per sentence; anchor text can
itself contain a newline, so a new entry starts only at a line beginning with ``digits<TAB>``.

Dumps are multi-GB: :func:`iter_pages` streams them record by record, and :func:`read_pages`
keeps only the pages a caller asks for (by id or by a predicate on the id), parsing only those.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator

from provbench.errors import UserError
from provbench.jsonlines import located, read_json_lines

PTB_ESCAPES = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "-COLON-": ":"}
_ESCAPE = re.compile("|".join(map(re.escape, PTB_ESCAPES)))
_ENTRY_START = re.compile(r"^(\d+)\t", flags=re.MULTILINE)
_ID_PREFIX = re.compile(r'^\s*\{\s*"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: PTB_ESCAPES[m.group(0)], text)


def title_of(page_id: str) -> str:
    """ "Soul_Food_-LRB-film-RRB-" -> "Soul Food (film)"."""
    return unescape(page_id).replace("_", " ")


def page_id_of(title: str) -> str:
    """The inverse of :func:`title_of`: a readable title as FEVER's page id."""
    reverse = {v: k for k, v in PTB_ESCAPES.items() if k != "-COLON-"}
    return "".join(reverse.get(ch, ch) for ch in title.replace(" ", "_"))


def bare_title(page_id: str) -> str:
    """Lower-case title without its parenthesised disambiguation: how a claim names the page."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title_of(page_id)).lower().strip()


def sentence_id(page_id: str, line: int) -> str:
    """A sentence's text unit id in a fever-wiki KB: ``s:<page id>:<line>``."""
    return f"s:{page_id}:{line}"


def evidence_of(text_unit_id: str) -> tuple[str, int] | None:
    """The FEVER evidence pair (page, line) of a sentence text unit id; None for other ids."""
    if not text_unit_id.startswith("s:"):
        return None
    page, _, line = text_unit_id[2:].rpartition(":")
    return (page, int(line)) if page and line.isdigit() else None


@dataclass(frozen=True)
class Sentence:
    line: int
    text: str
    links: tuple[tuple[str, str], ...] = ()  # (anchor text, target title)


@dataclass
class Page:
    id: str
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def title(self) -> str:
        return title_of(self.id)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)


def parse_lines(lines: str) -> list[Sentence]:
    """``lines`` as sentences; empty sentences (FEVER keeps their numbers) are dropped."""
    starts = list(_ENTRY_START.finditer(lines))
    sentences = []
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(lines)
        fields = lines[match.end() : end].rstrip("\n").split("\t")
        text = unescape(fields[0]).strip()
        if not text:
            continue
        pairs = [f.replace("\n", " ").strip() for f in fields[1:]]
        links = tuple((pairs[j], pairs[j + 1]) for j in range(0, len(pairs) - 1, 2) if pairs[j] and pairs[j + 1])
        sentences.append(Sentence(int(match.group(1)), text, links))
    return sentences


def page_files(source: str | Path) -> list[Path]:
    """A pages jsonl file, or every ``*.jsonl`` / ``*.jsonl.gz`` in a ``wiki-pages/`` directory, in name order."""
    path = Path(source)
    if path.is_dir():
        files = sorted([*path.glob("*.jsonl"), *path.glob("*.jsonl.gz")])
        if not files:
            raise UserError(f"{path}: no *.jsonl (or *.jsonl.gz) page files in this directory")
        return files
    if not path.is_file():
        raise UserError(f"{path}: no such pages file or directory")
    return [path]


def iter_raw(source: str | Path, wanted: Callable[[str], bool] | None = None) -> Iterator[tuple[Path, int, dict]]:
    """(file, line number, record) for each record whose id passes ``wanted``; the id is read
    from the line's start without parsing the whole record when the line allows it."""

    def keep(line: str) -> bool:
        prefix = _ID_PREFIX.match(line)
        return prefix is None or wanted(json.loads(f'"{prefix.group(1)}"'))

    for path in page_files(source):
        for number, record in read_json_lines(path, keep=keep if wanted is not None else None):
            yield path, number, record


def page_from_record(path: Path, number: int, record: dict) -> Page | None:
    """An official wiki-pages record or a BEIR corpus record as a Page (None for an empty id)."""
    if "_id" in record:  # BEIR: one passage per record, split into sentences on ". "
        page_id = _field(path, number, record, "title", str) or _field(path, number, record, "_id", str)
        text = _field(path, number, record, "text", str)
        parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text) if p.strip()]
        return Page(page_id_of(page_id) if " " in page_id else page_id, [Sentence(i, p) for i, p in enumerate(parts)])
    page_id = _field(path, number, record, "id", str)
    if not page_id:
        return None
    lines = _field(path, number, record, "lines", str)
    return Page(page_id, parse_lines(lines))


def _field(path: Path, number: int, record: dict, name: str, kind: type):
    if name not in record:
        raise UserError(f"{located(path, number)}: field {name!r} is missing")
    value = record[name]
    if not isinstance(value, kind):
        raise UserError(
            f"{located(path, number)}: field {name!r} must be a {kind.__name__}, got {type(value).__name__}"
        )
    return value


def iter_pages(source: str | Path, wanted: Callable[[str], bool] | None = None) -> Iterator[Page]:
    """Pages of a dump in file order, streamed; only those whose id passes ``wanted``."""
    for path, number, record in iter_raw(source, wanted):
        page = page_from_record(path, number, record)
        if page is not None and (wanted is None or wanted(page.id)):
            yield page


def read_pages(
    source: str | Path, ids: Iterable[str] | None = None, also: Callable[[str], bool] | None = None
) -> dict[str, Page]:
    """The pages with the given ids plus those ``also`` accepts; every page when both are None."""
    wanted_ids = set(ids) if ids is not None else None
    if wanted_ids is None and also is None:
        return {p.id: p for p in iter_pages(source)}

    def wanted(page_id: str) -> bool:
        return (wanted_ids is not None and page_id in wanted_ids) or (also is not None and also(page_id))

    return {p.id: p for p in iter_pages(source, wanted)}


STOPWORDS = frozenset(
    "a an and are as at be by for from has had have he her his in is it its of on or she "
    "that the their there they this to was were which who with".split()
)


def title_matcher(claims: Iterable[str], max_words: int = 8) -> Callable[[str], bool]:
    """Accepts a page whose bare title occurs as a word n-gram of some claim (FEVER's usual
    candidate-document step, by exact title match): the retrieval candidates of a claim set.
    One-word n-grams that are stopwords (pages "The", "Is") are left out."""
    grams: set[str] = set()
    for claim in claims:
        words = re.findall(r"[\w'&.-]+", claim.lower())
        words = [w.rstrip(".") for w in words]
        for n in range(1, max_words + 1):
            grams.update(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
    grams -= STOPWORDS
    return lambda page_id: bare_title(page_id) in grams


@lru_cache(maxsize=64)
def is_beir_corpus(source: str | Path) -> bool:
    """True when ``source`` is a BEIR ``corpus.jsonl`` (records with ``_id``): its pages are split
    into sentences here, on punctuation, so their numbers are not FEVER's ``lines`` and evidence
    pairs ``[page, line]`` cannot be compared with the gold ones. False for wiki-pages or a
    missing source."""
    try:
        files = page_files(source)
    except UserError:
        return False
    with files[0].open(encoding="utf-8") as handle:
        first = next((line for line in handle if line.strip()), "")
    try:
        record = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and "_id" in record
