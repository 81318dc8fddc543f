"""Which column holds what: the suite's field mapping over defaults for common column names, and
typed reading of one field (text, a list, a letter) with errors naming row and field.

A list field (aliases, choices, supporting documents or sentences, a gold path or triples) may be a list (JSON,
Parquet, the hub), a JSON array written as text, or text split at ``|`` (a CSV cell: ``a|b|c``).
"""

from __future__ import annotations

import json
from typing import Any

from provbench.errors import UserError

#: provbench's field -> column names tried in order when the suite maps none (RAGAS, DeepEval,
#: promptfoo, inspect, HotpotQA-like and MCQ files use these)
DEFAULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "id": ("id", "qid", "_id", "question_id", "uid"),
    "question": ("question", "query", "user_input", "input", "prompt", "claim"),
    "answer": (
        "answer",
        "answers",
        "reference",
        "ground_truth",
        "expected_output",
        "expected",
        "target",
        "gold_answer",
        "label",
    ),
    "aliases": ("aliases", "answer_aliases", "other_answers", "alternative_answers"),
    "choices": ("choices", "options"),
    "correct": ("correct", "correct_option", "correct_letter", "answer_letter"),
    "supporting_documents": ("supporting_documents", "supporting_docs", "source_documents", "sources"),
    "supporting_sentences": (
        "supporting_sentences",
        "supporting_facts",
        "evidence_sentences",
        "evidence",
        "reference_contexts",
    ),
    "gold_path": ("gold_path", "entity_path"),
    "gold_triples": ("gold_triples", "triples", "evidence_triples"),
    "type": ("type", "question_type"),
    "category": ("category", "topic", "subject"),
}
LIST_SEPARATOR = "|"


def check_mapping(mapping: dict[str, str]) -> None:
    unknown = sorted(set(mapping) - set(DEFAULT_COLUMNS))
    if unknown:
        raise UserError(
            f"dataset loader 'qa': option 'fields' maps unknown field(s) {', '.join(unknown)} "
            f"(known: {', '.join(DEFAULT_COLUMNS)})"
        )


def resolve_columns(mapping: dict[str, str], columns: set[str]) -> dict[str, str]:
    """provbench field -> the file's column: the mapping's, else the first default the file has."""
    chosen = {}
    for field, candidates in DEFAULT_COLUMNS.items():
        if field in mapping:
            chosen[field] = mapping[field]
        else:
            found = next((c for c in candidates if c in columns), None)
            if found is not None and found not in chosen.values():
                chosen[field] = found
    return chosen


class Row:
    """One record with its columns resolved; every read names the record and the column."""

    def __init__(self, where: str, data: dict[str, Any], columns: dict[str, str]):
        self.where, self.data, self.columns = where, data, columns

    def has(self, field: str) -> bool:
        column = self.columns.get(field)
        value = self.data.get(column) if column else None
        return value is not None and value != "" and value != []

    def problem(self, field: str, message: str) -> UserError:
        column = self.columns.get(field, field)
        named = f"field {column!r}" + (f" ({field})" if column != field else "")
        return UserError(f"{self.where}: {named}: {message}")

    def text(self, field: str, required: bool = False) -> str:
        if not self.has(field):
            if required:
                if field not in self.columns:
                    tried = ", ".join(DEFAULT_COLUMNS[field])
                    raise UserError(
                        f"{self.where}: field {field!r} is missing (no column {tried}; map yours with "
                        f"the loader option fields: {{{field}: COLUMN}})"
                    )
                raise self.problem(field, "is empty")
            return ""
        value = self.data[self.columns[field]]
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.problem(field, f"must be text, got {type(value).__name__}")
        return str(value).strip()

    def values(self, field: str) -> list[Any]:
        """A list field's items (see the module docstring)."""
        if not self.has(field):
            return []
        value = self.data[self.columns[field]]
        if hasattr(value, "tolist"):  # numpy arrays from Parquet or the hub
            value = value.tolist()
        if isinstance(value, str):
            stripped = value.strip()
            if stripped.startswith("["):
                try:
                    value = json.loads(stripped)
                except json.JSONDecodeError as exc:
                    raise self.problem(field, f"looks like a JSON list but is not valid JSON: {exc.msg}") from None
            else:
                value = [part.strip() for part in stripped.split(LIST_SEPARATOR)]
        if not isinstance(value, (list, tuple)):
            value = [value]
        return [v for v in value if v not in (None, "")]

    def strings(self, field: str) -> list[str]:
        items = self.values(field)
        for n, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                raise self.problem(field, f"item {n + 1} must be text, got {type(item).__name__}")
        return [str(item).strip() for item in items if str(item).strip()]
