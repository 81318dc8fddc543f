"""A question page's drawing of a trajectory against the question's gold chain.

One row per step, one column per gold item (the hops of the gold chain in order, then the gold
sentences): ● where the step first showed the item, ○ where it showed it again. Rows that touched
gold are highlighted; wasted retrieval steps are marked; for each leave-one-step-out condition of the
run a column says whether leaving that step out changed the answer (the critical steps). Gold the
knowledge base does not hold is listed, greyed, and never counts as a miss.
"""

from __future__ import annotations

import json
from typing import Any

from ..kb.goldmap import MappedGold, map_gold
from ..model import Question, RunRecord
from ..results.rules import is_leaked
from ..trajectory import StepGold, left_out_step, score_trajectory

MAX_ARGUMENTS_CHARS = 80


def gold_view(
    question: Question | None, record: RunRecord, others: list[RunRecord], view: Any
) -> dict[str, Any] | None:
    """The drawing of ``record``'s trajectory (a baseline) for the template, or None when there is
    nothing to draw against (no gold, no knowledge base, no trace). ``others``: the question's
    records of the same system (its leave-one-step-out units among them)."""
    if question is None or question.gold is None or view is None or record.trace is None:
        return None
    gold = map_gold(view, question)
    if gold is None:
        return None
    score = score_trajectory(record.trace, gold)
    by_index = {s.index: s for s in score.steps}
    columns = _columns(gold)
    critical = _critical(others)
    seen: set[tuple[str, int]] = set()
    rows = [_row(step, by_index.get(step.index), columns, critical, seen) for step in record.trace.steps]
    return {
        "columns": columns,
        "rows": rows,
        "conditions": list(critical),
        "summary": _summary(score, critical),
        "mapped": gold.any_mapped,
    }


def _columns(gold: MappedGold) -> list[dict[str, Any]]:
    columns = [
        {
            "kind": "hop",
            "number": n,
            "label": hop.describe(),
            "ids": ", ".join(hop.relations),
            "mapped": hop.mapped,
            "note": "" if hop.by_label else "by its ends: the knowledge base labels it otherwise",
        }
        for n, hop in enumerate(gold.hops)
    ]
    columns += [
        {
            "kind": "sentence",
            "number": n,
            "label": f"{s.sentence.document} #{s.sentence.index}"
            if s.sentence.index is not None
            else s.sentence.document,
            "ids": ", ".join(s.text_units),
            "mapped": bool(s.text_units),
            "note": s.sentence.text,
        }
        for n, s in enumerate(gold.sentences)
    ]
    return columns


def _critical(others: list[RunRecord]) -> dict[str, dict[int, str]]:
    """Leave-one-step-out condition -> step -> what leaving it out did."""
    found: dict[str, dict[int, str]] = {}
    for record in others:
        step = left_out_step(record)
        if step is None:
            continue
        if record.status == "failed":
            mark = "failed"
        elif is_leaked(record):
            mark = "leaked"
        else:
            mark = "changed" if record.scores.get("output_changed") == 1.0 else "unchanged"
        found.setdefault(record.key.condition, {})[step] = mark
    return found


def _row(
    step: Any,
    gold: StepGold | None,
    columns: list[dict[str, Any]],
    critical: dict[str, dict[int, str]],
    seen: set[tuple[str, int]],
) -> dict[str, Any]:
    """One step's row; ``seen`` (updated) holds the gold items earlier steps showed."""
    cells = []
    for column in columns:
        item = (column["kind"], column["number"])
        touched = gold is not None and column["number"] in (gold.hops if column["kind"] == "hop" else gold.sentences)
        cells.append("" if not touched else ("○" if item in seen else "●"))
        if touched:
            seen.add(item)
    arguments = json.dumps(step.arguments, ensure_ascii=False) if step.arguments else ""
    return {
        "index": step.index,
        "tool": step.tool or step.kind,
        "cells": cells,
        "arguments": arguments if len(arguments) <= MAX_ARGUMENTS_CHARS else arguments[:MAX_ARGUMENTS_CHARS] + "…",
        "gold": bool(gold and gold.touches_gold),
        "wasted": bool(gold and gold.wasted),
        "completes": bool(gold and gold.completes),
        "entities": sorted(gold.gold.get("entity", ())) if gold else [],
        "critical": [critical[c].get(step.index, "") for c in critical],
    }


def _summary(score: Any, critical: dict[str, dict[int, str]]) -> str:
    parts = []
    if score.path.total:
        parts.append(f"gold-path coverage {score.path.hits}/{score.path.total}")
    parts.append(
        "gold evidence complete after step " + str(score.first_complete_step)
        if score.first_complete_step is not None
        else "gold evidence never complete"
    )
    if score.wasted.total:
        parts.append(f"{score.wasted.hits} of {score.wasted.total} retrieval step(s) wasted")
    for condition, steps in critical.items():
        changed = sorted(s for s, mark in steps.items() if mark == "changed")
        parts.append(
            f"{condition}: critical step(s) {', '.join(map(str, changed))}"
            if changed
            else f"{condition}: no single step critical"
        )
    return "; ".join(parts)
