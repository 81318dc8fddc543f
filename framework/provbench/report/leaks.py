"""The report's leak-guard section and per-record view (:mod:`provbench.leakguard`).

Every run with graph-level interventions gets a "Leak guard" section next to the systems overview:
per system and condition, how many units were clean, leaked, had no effect or could not be checked,
and which statistics that makes unreadable. It stands for every paper's intervention results (paper
000's Table 2 marks its own cells too).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..leakguard import leak_counts, own_index_lines
from ..plugin_api import left_out_note, not_measurable
from ..model import RunRecord
from ..results.data import RunData
from .sections import Row, Section, Table, Text

STATUSES = ("clean", "suspect", "leaked", "no-effect", "no-op", "not-checkable")


def leak_section(run: RunData) -> Section | None:
    """Per system x condition: the leak guard's counts; None when no unit was checked."""
    counts = leak_counts(run.records)
    if not counts:
        return None
    rows = []
    for (system, condition), found in counts.items():
        every = run.select(system, condition, leaked=True)
        verdict = not_measurable(every, run.include_leaked) or _effect_on_statistics(every, run)
        rows.append(Row(cells=[system, condition, *(str(found[s]) for s in STATUSES), verdict]))
    total = sum(counts.values(), Counter())
    table = Table(
        columns=[
            "System",
            "Condition",
            "Clean",
            "Suspect",
            "Leaked",
            "No effect",
            "No-op",
            "Not checkable",
            "Statistics",
        ],
        rows=rows,
        numeric_from=2,
        css_class="leaks",
        caption=(
            "Each unit under a graph-level intervention, checked after it ran: leaked = ids or text its view "
            "hides reached its trace, its citations (written without a model, or shown in a request) or "
            "its LLM requests; suspect = it cited a hidden id no request showed (a model may guess one; "
            "counted); no effect = hidden items reached the baseline's prompts, yet every request equals "
            "the baseline's; no-op = the intervention hid nothing; not checkable = no evidence either way "
            "(no id of the knowledge base in the trace and no request captured, a store of the system's "
            "own under a text ablation, or nodes read from an index of its own). Leaked, no-effect, no-op and not-checkable units are left out of "
            "every statistic. Question pages give the evidence; `provbench audit` re-checks it offline."
        ),
    )
    blocks: list[Any] = [table]
    if total["leaked"] or total["no-effect"]:
        blocks.insert(
            0,
            Text(
                text=(
                    f"Warning: {total['leaked']} intervention unit(s) leaked and {total['no-effect']} had no effect. "
                    "Their systems read around the intervention's view (for example a store or index of their own): "
                    "what the intervention hid still reached them, so their intervention results say nothing about "
                    "what the answers depend on."
                )
            ),
        )
    blocks[:0] = [Text(text=line.replace("warning:", "Warning:", 1)) for line in own_index_lines(run.records)]
    return Section(id="leak-guard", title="Leak guard", blocks=blocks, order=12)


def _effect_on_statistics(records: list[RunRecord], run: RunData) -> str:
    note = left_out_note(records, run.include_leaked)
    kept = (
        sum(r.leak_check is not None and r.leak_check.status == "leaked" for r in records) if run.include_leaked else 0
    )
    counted = f"{kept} leaked unit(s) counted (leak_guard.include_leaked)" if kept else ""
    return "; ".join(filter(None, (f"left out: {note}" if note else "", counted))) or "all units counted"


def leak_summary(run: RunData, system: str) -> str:
    """A system's intervention units the guard flagged, for the systems overview ("–": none checked)."""
    found = sum((c for (s, _), c in leak_counts(run.records).items() if s == system), Counter())
    if not found:
        return "–"
    return ", ".join(f"{found[s]} {s}" for s in STATUSES if found[s])


def leak_view(record: RunRecord) -> dict[str, Any] | None:
    """A record's leak check for the question page."""
    check = record.leak_check
    if check is None:
        return None
    return {
        "status": check.status,
        "checks": check.checks,
        "notes": check.notes,
        "requests": check.requests,
        "evidence": [e.model_dump() for e in check.evidence],
    }
