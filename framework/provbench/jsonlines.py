"""Reading JSON-lines files record by record, with errors that name the file and the line.

Dataset loaders and KB builders read multi-GB ``.jsonl`` files (FEVER's wiki-pages dump, a
corpus of chunks), so :func:`read_json_lines` streams: one line in memory at a time, a ``.gz``
file decompressed on the fly. Every problem is reported as ``<file>:<line>: <problem>``, the
form a loader uses for its own field errors (``located(path, line)``), so a user sees where to
look whatever went wrong.

A third-party loader uses it the same way the built-in ones do::

    for line, record in read_json_lines(path):
        try:
            item = MyRecord.model_validate(record)
        except ValidationError as exc:
            raise UserError(f"{located(path, line)}: field ...") from None
"""

from __future__ import annotations

import gzip
import json
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Callable, Iterator

from .errors import UserError


class JsonLineError(UserError):
    """A line of a JSON-lines file is not valid JSON (or not the object it must be)."""

    def __init__(self, path: Path | str, line: int, problem: str) -> None:
        super().__init__(f"{located(path, line)}: {problem}")
        self.path, self.line, self.problem = Path(path), line, problem


def located(path: Path | str, line: int) -> str:
    """Where a record is: ``<file>:<line>`` (line numbers start at 1)."""
    return f"{path}:{line}"


def open_text(path: Path | str) -> IO[str]:
    """A text file, decompressed as it is read when its name ends in ``.gz``."""
    path = Path(path)
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def parse_json_line(path: Path | str, number: int, text: str, objects: bool = True) -> Any:
    """One line's JSON value; a :class:`JsonLineError` when it is invalid (or, with ``objects``, not an object)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonLineError(path, number, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise JsonLineError(path, number, "JSON nested too deeply to read") from None
    if objects and not isinstance(value, dict):
        raise JsonLineError(path, number, f"expected a JSON object, got {type(value).__name__}")
    return value


def read_json_lines(
    path: Path | str,
    *,
    objects: bool = True,
    keep: Callable[[str], bool] | None = None,
    problems: list[str] | None = None,
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of ``path``, streamed.

    ``objects``: every line must hold a JSON object (the usual record). ``keep``: a cheap test of
    the raw line; lines it rejects are skipped without being parsed (how a reader picks a few
    pages from a large dump). ``problems``: when given, a bad line is noted there and skipped
    instead of raising (how ``provbench data info`` lists several at once).
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    with open_text(path) as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip() or (keep is not None and not keep(text)):
                continue
            try:
                yield number, parse_json_line(path, number, text, objects)
            except JsonLineError as err:
                if problems is None:
                    raise
                problems.append(str(err))


TEXT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".txt", ".yaml", ".yml", ".gz")


def first_non_utf8(path: Path) -> tuple[Path, int, int] | None:
    """(file, line, column) of the first byte of ``path`` (or of a text file directly in it, for a
    folder) that is not UTF-8; None if all is. Streams line by line."""
    files = [path] if path.is_file() else sorted(p for p in path.glob("*") if p.suffix.lower() in TEXT_SUFFIXES)
    for file in files:
        opener = gzip.open if file.suffix.lower() == ".gz" else open
        with opener(file, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    return file, number, exc.start + 1
    return None


@contextmanager
def input_errors(path: Path | str) -> Iterator[None]:
    """Turn what a reader of the input file (or folder) ``path`` may raise on bad bytes into a
    :class:`UserError` that says where: text that is not UTF-8 (file, line, column), JSON nested
    too deeply for Python, a file that is not the Parquet its name says."""
    path = Path(path)
    try:
        yield
    except UnicodeDecodeError as exc:
        found = first_non_utf8(path) if path.exists() else None
        where = f"{located(found[0], found[1])}, column {found[2]}" if found else str(path)
        raise UserError(
            f"{where}: not UTF-8 text ({exc.reason}, byte {exc.object[exc.start : exc.start + 1]!r}); "
            "save the file as UTF-8"
        ) from None
    except RecursionError:
        raise UserError(f"{path}: nested too deeply to read (JSON or YAML nesting beyond Python's limit)") from None
    except Exception as exc:
        if path.suffix.lower() == ".parquet" and type(exc).__module__.startswith("pyarrow"):  # ArrowInvalid
            raise UserError(f"{path}: not a readable Parquet file: {exc}") from None
        raise
