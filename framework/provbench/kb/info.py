"""Reading a knowledge base's ``build_info.json`` for people: counts beside a paper's, then what the build did.

Builders on the shared blocks (``provbench_plugins.kb_builders.common.buildinfo``) write
``counts``, optionally ``paper`` (the published KB they follow: ``{"id", "title", "counts"}``),
``extraction``, ``communities``, ``llm`` and ``problems``; other builders' keys are shown as
they are. Used by ``provbench kb info`` and available to reports.
"""

from __future__ import annotations

from typing import Any

from .types import KBStats

COUNT_LABELS = {
    "questions": "questions",
    "documents": "paragraphs (documents)",
    "text_units": "text units",
    "entities": "entities",
    "relations": "relations",
    "communities": "communities",
}
SECTIONS = ("extraction", "communities", "llm")
SKIPPED = {"inputs", "options", "counts", "paper", "problems", *SECTIONS}


def count_rows(stats: KBStats | None, build_info: dict[str, Any]) -> list[tuple[str, int | None, int | None]]:
    """(label, this KB's count, the paper's count or None) for each count either side knows; with
    ``stats`` None (the KB is not open, as in a report) the counts the build recorded."""
    paper = (build_info.get("paper") or {}).get("counts", {})
    recorded = build_info.get("counts", {})
    rows = []
    for name, label in COUNT_LABELS.items():
        ours = getattr(stats, name, None)
        if ours is None:
            ours = recorded.get(name)
        if ours is None and name not in paper:
            continue
        rows.append((label, ours, paper.get(name)))
    return rows


def count_table(stats: KBStats | None, build_info: dict[str, Any], blank: str) -> tuple[list[str], list[list[str]]]:
    """:func:`count_rows` as text: (the paper's columns, or none; rows of label, this KB's count and,
    beside a paper, its count and the ratio), ``blank`` where a side has no count."""
    paper = build_info.get("paper") or {}
    paper_columns = [f"paper {paper.get('id', '')}".strip(), "ratio"] if paper else []
    rows = []
    for label, ours, theirs in count_rows(stats, build_info):
        row = [label, blank if ours is None else f"{ours:,}"]
        if paper:
            row += [
                blank if theirs is None else f"{theirs:,}",
                f"{ours / theirs:.2f}" if ours is not None and theirs else blank,
            ]
        rows.append(row)
    return paper_columns, rows


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_flat(v)}" for k, v in value.items() if v not in ({}, [], None))
    if isinstance(value, list):
        return "; ".join(_flat(v) for v in value)
    return str(value)


def detail_lines(build_info: dict[str, Any]) -> list[tuple[str, str]]:
    """(heading, text) lines: problems first, then extraction, communities, LLM calls, the rest;
    redacted (an older KB's build info may quote a provider's key in an error text)."""
    from ..secrets import Redactor

    build_info = Redactor.for_run().data(build_info)
    lines: list[tuple[str, str]] = []
    problems = build_info.get("problems")
    if problems is not None:
        lines += [("problem", p) for p in problems] or [("problems", "none")]
    for section in SECTIONS:
        if section in build_info:
            lines.append((section, _flat(build_info[section])))
    for key, value in build_info.items():
        if key not in SKIPPED:
            lines.append((key, _flat(value)))
    if "options" in build_info:
        lines.append(("options", _flat(build_info["options"])))
    return lines
