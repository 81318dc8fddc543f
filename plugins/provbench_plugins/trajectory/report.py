"""The report's "Trajectory against gold" section, from the ``gold-trajectory`` metric's values.

Per system at baseline: gold-path coverage, how often and how early the gold evidence got complete,
wasted steps, and beside them, for each leave-one-step-out condition the run has, the share of
answers that depend on a single step and the step most often critical; then recall and precision of
the gold per stage (retrieved, visited or read, cited) and kind; and how much of the gold the
knowledge base holds. Each question's page draws its trajectories against the gold chain.
"""

from __future__ import annotations

from typing import Any

from provbench.model import BASELINE
from provbench.results.data import RunData
from provbench.report.sections import Cell, Row, Section, Table, Text
from provbench.trajectory import STAGE_KINDS

from .metric import ALL_SYSTEMS, PREFIX

STAGE_WORDS = {"retrieved": "retrieved", "visited": "visited / read", "cited": "cited"}
KIND_WORDS = {"entity": "entities", "relationship": "relations", "text_unit": "text units", "sentence": "sentences"}


def trajectory_section(run: RunData) -> list[Section]:
    values = {
        (v["metric"].removeprefix(PREFIX + "."), v["system"], v["condition"]): v
        for v in run.metric_values(prefix=PREFIX + ".")
    }
    if not values:
        return []
    mapping = values.get(("mapping", ALL_SYSTEMS, BASELINE))
    blocks: list[Any] = [Text(text=mapping_text(mapping))]
    unmapped = ((mapping or {}).get("detail") or {}).get("unmapped") or {}
    if unmapped:  # listed, never dropped silently: these questions' gold scores count only what mapped
        blocks.append(
            Table(
                columns=["Question", "Gold the knowledge base does not hold"],
                numeric_from=2,
                rows=[[qid, "; ".join(items)] for qid, items in unmapped.items()],
                css_class="trajectory-unmapped",
            )
        )
    systems = [s for s in run.systems if any(k[1] == s for k in values)]
    if systems:
        blocks += [summary_table(values, systems), recall_table(values, systems)]
    return [
        Section(
            id="trajectory-gold",
            title="Trajectory against gold",
            blocks=blocks,
            order=62,
            intro=(
                "Each trajectory scored against its question's gold evidence mapped onto the knowledge base "
                "(definitions: docs/provenance.md, section 7). Gold the knowledge base does not hold never counts as "
                "a miss. Each question's page draws the trajectories against the gold chain."
            ),
        )
    ]


def mapping_text(v: dict[str, Any] | None) -> str:
    if v is None or not v.get("denominator"):
        return "No question of this run has gold evidence the knowledge base could map."
    d = v.get("detail") or {}
    parts = [f"{d[k]['mapped']}/{d[k]['total']} {k}" for k in ("sentences", "triples", "entities") if k in d]
    endpoints = d.get("triples_mapped_by_endpoints", 0)
    return (
        f"Gold mapped onto the knowledge base: {', '.join(parts)} ({100 * v['value']:.0f}% of the gold items; "
        f"{d.get('questions_with_mapped_gold', 0)} of {d.get('questions', 0)} questions have some)."
        + (
            f" {endpoints} triple(s) mapped by their ends only: the knowledge base labels that relation otherwise."
            if endpoints
            else ""
        )
    )


def _cell(v: dict[str, Any] | None, percent: bool = True) -> Cell:
    if v is None:
        return Cell(note="not in this run")
    if v.get("value") is None:
        return Cell(note=v.get("note", ""))
    counts = (
        f"{v['numerator']:g}/{v['denominator']:g}" if v.get("numerator") is not None and v.get("denominator") else ""
    )
    text = f"{100 * v['value']:.0f}%" if percent else f"{v['value']:.2f}"
    return Cell(text=text, counts=counts, note=v.get("note", ""))


def summary_table(values: dict, systems: list[str]) -> Table:
    step_conditions = list(dict.fromkeys(k[2] for k in values if k[0] == "single_step_dependence"))
    columns = ["System", "Path coverage", "Evidence complete", "First complete step", "Wasted steps"]
    for condition in step_conditions:
        columns += [f"Single-step dependence ({condition})", f"Most often critical step ({condition})"]
    rows = []
    for system in systems:
        get = lambda name, condition=BASELINE: values.get((name, system, condition))  # noqa: E731, B023 - this row's look-up, used before the loop moves on
        first = get("first_complete_step")
        cells = [
            system,
            _cell(get("path_coverage")),
            _cell(get("complete")),
            Cell(text=f"{first['value']:.1f}", counts=f"n={first['denominator']:g}")
            if first and first.get("value") is not None
            else _cell(first),
            _cell(get("wasted_steps")),
        ]
        for condition in step_conditions:
            critical = get("critical_step", condition)
            cells += [
                _cell(get("single_step_dependence", condition)),
                Cell(text=f"step {critical['value']:g}", note=critical.get("note", ""))
                if critical and critical.get("value") is not None
                else _cell(critical),
            ]
        rows.append(Row(cells=cells))
    return Table(
        columns=columns,
        rows=rows,
        css_class="trajectory-gold",
        caption=(
            "Baseline trajectories. Path coverage: gold triples (hops) whose relation the trajectory retrieved, "
            "over the mapped ones. Evidence complete: trajectories after which one gold alternative was complete; "
            "first complete step: its mean step index (as on the question pages). Wasted steps: retrieval steps "
            "that showed no gold and led to no step that did. Single-step dependence: questions whose answer "
            "changes when one step is left out (its results hidden from then on, the run resumed from there); "
            "the most often critical step is the step index whose removal changed the most answers."
        ),
    )


def recall_table(values: dict, systems: list[str]) -> Table:
    rows = []
    for stage, kinds in STAGE_KINDS.items():
        for kind in kinds:
            recall = [values.get((f"{stage}.{kind}.recall", s, BASELINE)) for s in systems]
            if not any(recall):
                continue
            cells = [STAGE_WORDS[stage], KIND_WORDS[kind]]
            for system, r in zip(systems, recall):
                p = values.get((f"{stage}.{kind}.precision", system, BASELINE))
                rc = _cell(r)
                text = f"R {rc.text}" + (f" · P {_cell(p).text}" if p is not None else "")
                counts = rc.counts + (f" · {_cell(p).counts}" if p is not None and _cell(p).counts else "")
                cells.append(Cell(text=text, counts=counts, note=rc.note))
            rows.append(Row(cells=cells))
    return Table(
        columns=["Stage", "Gold kind", *systems],
        rows=rows,
        numeric_from=2,
        css_class="trajectory-recall",
        caption=(
            "Recall (R: mapped gold items the stage holds) and precision (P: the stage's items that "
            "are gold), micro-averaged over baseline trajectories. Sentences count once a text unit "
            "holding them is in the stage."
        ),
    )
