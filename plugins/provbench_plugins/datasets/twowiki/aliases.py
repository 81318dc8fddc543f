"""``id_aliases.json`` of 2WikiMultihopQA's data_ids release: the answers the official evaluation
also accepts.

The file is JSON lines, one Wikidata entity a line: ``{"Q_id": "Q30", "aliases": ["USA", ...],
"demonyms": ["American", ...]}``. The official script (``2wikimultihop_evaluate_v1.1.py``) accepts,
for a question whose ``answer_id`` has a line with any alias or demonym, every one of them beside
the answer; :func:`read_id_aliases` gives that list per id.
"""

from __future__ import annotations

from pathlib import Path

from provbench.errors import UserError
from provbench.jsonlines import located, read_json_lines


def resolve_aliases_path(source: str | Path, option: str) -> Path:
    """``option`` as given when absolute, else relative to the dataset file's folder (or the
    working directory for a hub id)."""
    path = Path(option).expanduser()
    if not path.is_absolute() and Path(source).is_file():
        path = Path(source).parent / path
    if not path.is_file():
        raise UserError(
            f"dataset_loader '2wiki': option id_aliases: {path} does not exist "
            "(a relative path is read from the dataset file's folder)"
        )
    return path


def read_id_aliases(path: Path) -> dict[str, list[str]]:
    """``{Q_id: aliases then demonyms, duplicates dropped}`` for every id that has any."""
    table: dict[str, list[str]] = {}
    for line, record in read_json_lines(path):
        q_id = record.get("Q_id")
        if not isinstance(q_id, str) or not q_id:
            raise UserError(f"{located(path, line)}: field Q_id must be a non-empty string, got {q_id!r}")
        names: list[str] = []
        for field in ("aliases", "demonyms"):
            value = record.get(field, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UserError(f"{located(path, line)}: field {field} of {q_id} must be a list of strings")
            names += value
        if names:
            table[q_id] = list(dict.fromkeys(names))
    return table
