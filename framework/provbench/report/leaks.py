"""The report's leak-guard section and per-record view (:mod:`provbench.leakguard`).

Every run with graph-level interventions gets a "Leak guard" section next to the systems overview:
per system and condition, how many units were clean, leaked, had no effect or could not be checked,
and which statistics that makes unreadable. It stands for every paper's intervention results (paper
000's Table 2 marks its own cells too).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..leakguard import leak_counts, not_measurable
from ..model import RunRecord
from ..results.data import RunData
from .sections import Row, Section, Table, Text

STATUSES = ("clean", "leaked", "no-effect", "not-checkable")


def leak_section(run: RunData) -> Section | None:
    """Per system x condition: the leak guard's counts; None when no unit was checked."""
    counts = leak_counts(run.records)
    if not counts:
        return None
    rows = []
    for (system, condition), found in counts.items():
        verdict = not_measurable(run.select(system, condition, leaked=True)) or _effect_on_statistics(found, run)
        rows.append(Row(cells=[system, condition, *(str(found[s]) for s in STATUSES), verdict]))
    total = sum(counts.values(), Counter())
    table = Table(columns=["System", "Condition", "Clean", "Leaked", "No effect", "Not checkable", "Statistics"],
                  rows=rows, numeric_from=2, css_class="leaks", caption=(
                      "Each unit under a graph-level intervention, checked after it ran: leaked = ids or text its view "
                      "hides reached its trace or its LLM requests; no effect = the intervention hid what the baseline "
                      "read, yet every request equals the baseline's; not checkable = the guard had nothing to check "
                      "(no request through provbench's LLM client, and trace ids of the system's own store). "
                      "Question pages give the evidence."))
    blocks: list[Any] = [table]
    if total["leaked"] or total["no-effect"]:
        blocks.insert(0, Text(text=(
            f"Warning: {total['leaked']} intervention unit(s) leaked and {total['no-effect']} had no effect. "
            "Their systems read around the intervention's view (for example a store or index of their own): "
            "what the intervention hid still reached them, so their intervention results say nothing about "
            "what the answers depend on.")))
    return Section(id="leak-guard", title="Leak guard", blocks=blocks, order=12)


def _effect_on_statistics(found: Counter, run: RunData) -> str:
    if not found["leaked"]:
        return "all units counted"
    if run.include_leaked:
        return f"{found['leaked']} leaked unit(s) counted (leak_guard.include_leaked)"
    return f"{found['leaked']} leaked unit(s) left out"


def leak_summary(run: RunData, system: str) -> str:
    """A system's intervention units the guard flagged, for the systems overview ("–": none checked)."""
    found = sum((c for (s, _), c in leak_counts(run.records).items() if s == system), Counter())
    if not found:
        return "–"
    shown = ("leaked", "no-effect") if found["leaked"] or found["no-effect"] else ("clean", "not-checkable")
    return ", ".join(f"{found[s]} {s}" for s in shown if found[s])


def leak_view(record: RunRecord) -> dict[str, Any] | None:
    """A record's leak check for the question page."""
    check = record.leak_check
    if check is None:
        return None
    return {"status": check.status, "checks": check.checks, "notes": check.notes, "requests": check.requests,
            "evidence": [e.model_dump() for e in check.evidence]}
