"""Rows of a plain question file, each with where it is: JSON lines, a JSON array, CSV/TSV, Parquet,
or a Hugging Face dataset id or local dataset folder (through ``datasets``, the ``hub`` extra).

Where a row is, for error messages: ``<file>:<line>`` for JSON lines and CSV (the line its record
starts on; line 1 of a CSV is its header), ``<file>, record <n>`` (from 1) for a JSON array,
Parquet and the hub.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Iterator

from provbench.errors import UserError
from provbench.jsonlines import JsonLineError, located, read_json_lines

FILE_KINDS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
}


def file_kind(source: str | Path) -> str | None:
    """``jsonl``, ``json``, ``csv``, ``tsv``, ``parquet``, ``hub`` (an ``owner/name`` id or a local
    dataset folder), or None."""
    path = Path(str(source))
    name = path.name.lower()
    kind = FILE_KINDS.get(Path(name.removesuffix(".gz")).suffix)
    if kind and (kind == "jsonl" or not name.endswith(".gz")):  # JSON lines may be gzipped
        return kind
    if path.is_dir():  # a local dataset folder, read as the hub reads it (``datasets.load_dataset(folder)``)
        return "hub"
    parts = str(source).split("/")
    return "hub" if len(parts) == 2 and all(parts) and not path.exists() else None


def read_rows(
    source: str | Path, split: str = "train", config: str | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row) for every record of ``source``."""
    kind = file_kind(source)
    if kind is None:
        raise UserError(
            f"{source}: unknown question file kind (use .jsonl, .json, .csv, .tsv, .parquet, "
            "or a Hugging Face dataset id such as owner/name)"
        )
    if kind == "hub":
        from ..hub import load_split

        for n, row in enumerate(load_split(str(source), split, config), start=1):
            yield f"{source} ({split}), record {n}", dict(row)
        return
    path = Path(source)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    yield from {"jsonl": _jsonl, "json": _json, "csv": _csv, "tsv": _csv, "parquet": _parquet}[kind](path)


def _jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        for line, row in read_json_lines(path):
            yield located(path, line), row
    except JsonLineError as err:
        raise UserError(str(err)) from None


def _json(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if isinstance(data, dict):  # {"data": [...]} or {"questions": [...]}
        data = next((data[k] for k in ("data", "questions", "rows", "examples") if isinstance(data.get(k), list)), data)
    if not isinstance(data, list):
        raise UserError(f'{path}: expected a JSON array of question objects (or {{"data": [...]}})')
    for n, row in enumerate(data, start=1):
        if not isinstance(row, dict):
            raise UserError(f"{path}, record {n}: expected an object, got {type(row).__name__}")
        yield f"{path}, record {n}", row


def _csv(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
            start = 2
            for row in reader:
                if None in row:
                    raise UserError(f"{path}:{start}: more values than the header has columns")
                yield located(path, start), {k.strip(): v for k, v in row.items() if k and k.strip()}
                start = reader.line_num + 1
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start}): save it as UTF-8") from None
    except csv.Error as exc:
        raise UserError(f"{path}: not valid CSV: {exc}") from None


def _parquet(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(f"{path}: not a readable Parquet file: {exc}") from None
    for n, row in enumerate(table.to_pylist(), start=1):
        yield f"{path}, record {n}", row
