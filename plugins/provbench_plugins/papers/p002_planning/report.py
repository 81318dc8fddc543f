"""Paper 002's report section: each planning-loop configuration's rounds, cost, coverage and
accuracy, and for a sweep the accuracy/coverage trade-off per frontier cap.

Computed from the baseline records of the suite's ``planning-loop`` systems (any label), so it
needs no metric to be enabled; the general abstention and calibration sections sit beside it.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from provbench.plugin_api import correctness
from provbench.report.data import RunData
from provbench.report.sections import LineChart, Section, Table

from .loop import PlanningOptions

SYSTEM_NAMES = ("planning-loop",)


def sections(run: RunData) -> list[Section]:
    keys = run.uses("systems", SYSTEM_NAMES)
    rows = [summary(run, key) for key in keys]
    rows = [r for r in rows if r is not None]
    if not rows:
        return []
    table = Table(
        columns=["System", "Bar", "Frontier cap", "Max rounds", "Questions", "Coverage", "Selective accuracy",
                 "Accuracy (abstain = wrong)", "LLM calls / q", "Concepts / q", "Answered by round 2"],
        rows=[[r["key"], f"{r['bar']:.2f}", r["cap"], r["rounds"], r["n"], _share(r["coverage"]),
               _share(r["selective"]), _share(r["overall"]), f"{r['calls']:.2f}", f"{r['concepts']:.1f}",
               _share(r["early"])] for r in rows],
        caption="Baseline records of each planning-loop configuration. Answered by round 2: share of the answered "
                "questions that cleared the bar in round 1 or 2 (the paper's early exit).")
    blocks: list[Any] = [table]
    if len(rows) > 1:
        blocks.append(tradeoff_chart(rows))
    return [Section(id="p002-planning", title="Planning loop: rounds, cost and the accuracy/coverage trade-off",
                    intro="Paper 002's confidence-gated loop: answer at the confidence bar, else abstain after "
                          "the last round.", blocks=blocks, order=45)]


def summary(run: RunData, key: str) -> dict[str, Any] | None:
    records = [r for r in run.select(key) if r.trace is not None]
    if not records:
        return None
    options = PlanningOptions(**_options(run, key))
    answered = [r for r in records if r.status == "ok" and r.trace.outcome == "answered" and r.trace.answer]
    right = [correctness(r) or 0.0 for r in answered]
    early = [r for r in answered if len(r.trace.artifacts.get("rounds", [])) <= 2]
    return {"key": key, "bar": options.confidence_bar, "cap": options.frontier_cap, "rounds": options.max_rounds,
            "n": len(records), "coverage": len(answered) / len(records),
            "selective": fmean(right) if right else None, "overall": sum(right) / len(records),
            "calls": fmean(len(r.trace.llm_calls) for r in records),
            "concepts": fmean(len(r.trace.visited_entities) for r in records),
            "early": len(early) / len(answered) if answered else None}


def tradeoff_chart(rows: list[dict[str, Any]]) -> LineChart:
    """Per frontier cap, (coverage, accuracy with abstention as wrong) as the bar rises."""
    series: dict[str, list[tuple[float, float]]] = {}
    for r in sorted(rows, key=lambda r: (r["cap"], r["bar"])):
        series.setdefault(f"cap {r['cap']}", []).append((r["coverage"], r["overall"]))
    return LineChart(title="Accuracy against coverage", series=series, xlabel="coverage",
                     ylabel="accuracy (abstain = wrong)",
                     caption="One point per confidence bar; a higher bar moves left (fewer answers).")


def _options(run: RunData, key: str) -> dict[str, Any]:
    for ref in run.suite.get("systems", []):
        if isinstance(ref, dict) and (ref.get("label") or ref.get("name")) == key:
            return dict(ref.get("options") or {})
    return {}


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
