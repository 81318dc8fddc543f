"""Reading a concept graph from plain files: concepts and edges, each a CSV or JSON-lines file.

Concepts (one per row / line)
    ``id`` (required, unique), ``name`` (required), ``kind`` (optional semantic type, e.g.
    "concept", "technique"), ``description`` (optional), ``aliases`` (optional: a JSON list,
    or in CSV a ``|``-separated string).
Edges
    ``source``, ``relation``, ``target`` (required; source and target are concept ids),
    ``id`` (optional, unique; default: the row number), the bi-temporal stamps ``valid_from``
    (true from), ``recorded_at`` (in the graph from) and ``invalidated_at`` (optional ISO dates or
    timestamps, with or without a time zone: one without is UTC; an edge is kept after its
    ``invalidated_at`` but inactive from then, see :mod:`provbench.kb.temporal`),
    ``description`` (optional).

The file kind follows the suffix: ``.csv`` or ``.jsonl`` / ``.ndjson``. Every problem is reported
with the file, the line and the field.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from provbench.errors import UserError
from provbench.jsonlines import JsonLineError, input_errors, read_json_lines
from provbench.kb.temporal import InstantError, parse_instant


class ConceptFileError(UserError):
    """A concept or edge file is missing, malformed or inconsistent."""


@dataclass(frozen=True)
class Concept:
    id: str
    name: str
    kind: str = "concept"
    description: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConceptEdge:
    id: str
    source: str
    relation: str
    target: str
    valid_from: str | None = None
    invalidated_at: str | None = None
    description: str = ""
    recorded_at: str | None = None


def read_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) pairs of a CSV (header line 1) or JSON-lines file."""
    if not path.is_file():
        raise ConceptFileError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        with input_errors(path), path.open(encoding="utf-8", newline="") as handle:
            yield from _csv_rows(path, handle)
    elif suffix in (".jsonl", ".ndjson"):
        try:
            yield from read_json_lines(path)
        except JsonLineError as err:
            raise ConceptFileError(str(err)) from None
    else:
        raise ConceptFileError(f"{path}: unknown file kind {suffix!r} (use .csv or .jsonl)")


def _csv_rows(path: Path, handle: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV file with their first line; a broken quote or a row with more fields than
    the header is an error naming the line (the csv module would run on, or drop the extras)."""
    reader = csv.DictReader(handle, strict=True)
    start = 2  # line 1 is the header
    try:
        for row in reader:
            if None in row:
                raise ConceptFileError(
                    f"{path}:{start}: more fields than the header names "
                    f"({len(row[None])} extra); quote values that contain a comma"
                )
            yield start, {k.strip(): v for k, v in row.items() if k}
            start = reader.line_num + 1
    except csv.Error as exc:
        raise ConceptFileError(f"{path}:{start}: broken CSV ({exc}); check the quotes from this line on") from None


def text_field(path: Path, line: int, row: dict[str, Any], name: str, required: bool = False) -> str:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ConceptFileError(f"{path}:{line}: field {name!r} is required")
        return ""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise ConceptFileError(f"{path}:{line}: field {name!r} must be text, got {type(value).__name__}")
    return str(value).strip()


def timestamp_field(path: Path, line: int, row: dict[str, Any], name: str) -> str | None:
    text = text_field(path, line, row, name)
    if not text:
        return None
    try:
        parse_instant(text)
    except InstantError:
        raise ConceptFileError(
            f"{path}:{line}: field {name!r} must be an ISO date or timestamp, got {text!r}"
        ) from None
    return text


def aliases_field(path: Path, line: int, row: dict[str, Any]) -> tuple[str, ...]:
    value = row.get("aliases")
    if value in (None, ""):
        return ()
    if isinstance(value, str):
        value = value.split("|")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConceptFileError(f"{path}:{line}: field 'aliases' must be a list of strings or 'a|b' text")
    return tuple(v.strip() for v in value if v.strip())


def read_concepts(path: Path) -> list[Concept]:
    concepts: dict[str, Concept] = {}
    for line, row in read_rows(path):
        cid = text_field(path, line, row, "id", required=True)
        if cid in concepts:
            raise ConceptFileError(f"{path}:{line}: field 'id': concept {cid!r} is defined twice")
        concepts[cid] = Concept(
            id=cid,
            name=text_field(path, line, row, "name", required=True),
            kind=text_field(path, line, row, "kind") or "concept",
            description=text_field(path, line, row, "description"),
            aliases=aliases_field(path, line, row),
        )
    if not concepts:
        raise ConceptFileError(f"{path}: no concepts")
    return list(concepts.values())


def read_edges(path: Path, concept_ids: set[str]) -> list[ConceptEdge]:
    edges: dict[str, ConceptEdge] = {}
    for number, (line, row) in enumerate(read_rows(path)):
        ends = {}
        for end in ("source", "target"):
            ends[end] = text_field(path, line, row, end, required=True)
            if ends[end] not in concept_ids:
                raise ConceptFileError(f"{path}:{line}: field {end!r}: unknown concept id {ends[end]!r}")
        eid = text_field(path, line, row, "id") or str(number)
        if eid in edges:
            raise ConceptFileError(f"{path}:{line}: field 'id': edge {eid!r} is defined twice")
        stamps = {
            name: timestamp_field(path, line, row, name) for name in ("valid_from", "recorded_at", "invalidated_at")
        }
        if (
            stamps["valid_from"]
            and stamps["invalidated_at"]
            and parse_instant(stamps["invalidated_at"]) < parse_instant(stamps["valid_from"])
        ):
            raise ConceptFileError(f"{path}:{line}: field 'invalidated_at' is before 'valid_from'")
        edges[eid] = ConceptEdge(
            id=eid,
            source=ends["source"],
            target=ends["target"],
            relation=text_field(path, line, row, "relation", required=True),
            description=text_field(path, line, row, "description"),
            **stamps,
        )
    return list(edges.values())
