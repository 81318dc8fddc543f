"""Report section of the edge-invalidation interventions: random controls smaller than their treatment.

``invalidate-random-edges`` invalidates as many edges as the baseline used, drawn from the active
edges it did not use. When fewer remain (a system that examined most of a small graph), the
control is smaller than the treatment and the pair does not compare like with like. The section
lists, per system, the questions whose control drew fewer edges than ``invalidate-used-edges``
invalidated, from the counts each record keeps in ``artifacts["hidden_by_intervention"]``.
"""

from __future__ import annotations

from provbench.model import RunRecord
from provbench.results.data import RunData
from provbench.report.sections import Section, Table


def control_size_sections(run: RunData) -> list[Section]:
    treatments = run.uses("interventions", ["invalidate-used-edges"])
    controls = run.uses("interventions", ["invalidate-random-edges"])
    if not treatments or not controls:
        return []
    rows = [row for system in run.systems if (row := _row(run, system, treatments[0], controls))]
    if not rows:
        return []
    table = Table(
        columns=["System", "Pairs", "Control smaller", "Questions (edges drawn / edges used)"],
        rows=rows,
        numeric_from=1,
        caption="A pair is a question's invalidate-used-edges record and one "
        "invalidate-random-edges record of the same system.",
    )
    return [
        Section(
            id="edge-control-size",
            title="Edge invalidation: control sizes",
            blocks=[table],
            order=58,
            intro="The random-edge control should hide as many edges as the treatment; where the graph had "
            "too few unused edges left, it hid fewer, and the comparison of that pair is not like for "
            "like.",
        )
    ]


def _row(run: RunData, system: str, treatment: str, controls: list[str]) -> list[str] | None:
    used = {r.key.question_id: _hidden(r) for r in run.select(system, treatment) if r.trace is not None}
    pairs, smaller = 0, []
    for control in controls:
        for record in run.select(system, control):
            if record.trace is None or record.key.question_id not in used:
                continue
            pairs += 1
            drawn, wanted = _hidden(record), used[record.key.question_id]
            if drawn < wanted:
                smaller.append(f"{record.key.question_id} ({drawn}/{wanted})")
    if not pairs:
        return None
    return [system, str(pairs), str(len(smaller)), ", ".join(smaller) or "–"]


def _hidden(record: RunRecord) -> int:
    summary = record.trace.artifacts.get("hidden_by_intervention") or {}
    return int((summary.get("invalidated") or {}).get("count", 0))
