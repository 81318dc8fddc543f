"""Paper 002's report section: each planning-loop configuration's rounds, cost, coverage and
accuracy, and for a sweep the accuracy/coverage trade-off per frontier cap.

Computed from the baseline records of the suite's ``planning-loop`` systems (any label), so it
needs no metric to be enabled; the general abstention and calibration sections sit beside it.
*Accuracy* is the dataset loader's graded correctness over every question, so a right abstention
(an unanswerable question) earns what the loader gives it; *accuracy (abstain = wrong)* counts
every abstention as 0, the strict reading.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from provbench.plugin_api import correctness
from provbench.report.data import RunData, ref_key
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
        columns=["System", "Bar", "Frontier cap", "Max rounds", "Questions", "Coverage", "Accuracy",
                 "Selective accuracy", "Accuracy (abstain = wrong)", "LLM calls / q", "Concepts / q",
                 "Answered by round 2"],
        rows=[[r["key"], f"{r['bar']:.2f}", r["cap"], r["rounds"], r["n"], _share(r["coverage"]), _share(r["graded"]),
               _share(r["selective"]), _share(r["overall"]), f"{r['calls']:.2f}", f"{r['concepts']:.1f}",
               _share(r["early"])] for r in rows],
        caption="Baseline records of each planning-loop configuration. Accuracy: the dataset's graded correctness "
                "of every question, a right abstention included; selective accuracy: of the answered ones. "
                "Answered by round 2: share of the answered questions that cleared the bar by round 2 "
                "(the paper's early exit).")
    blocks: list[Any] = [table]
    if len(rows) > 1:
        blocks += tradeoff_charts(rows)
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
    scored = [c for c in map(correctness, records) if c is not None]
    early = [r for r in answered if len(r.trace.artifacts.get("rounds", [])) <= 2]
    return {"key": key, "bar": options.confidence_bar, "cap": options.frontier_cap, "rounds": options.max_rounds,
            "n": len(records), "coverage": len(answered) / len(records), "graded": fmean(scored) if scored else None,
            "selective": fmean(right) if right else None, "overall": sum(right) / len(records),
            "calls": fmean(len(r.trace.llm_calls) for r in records),
            "concepts": fmean(len(r.trace.visited_entities) for r in records),
            "early": len(early) / len(answered) if answered else None}


def tradeoff_charts(rows: list[dict[str, Any]]) -> list[LineChart]:
    """Per frontier cap, (coverage, accuracy) as the bar rises: the graded accuracy, which credits a
    right abstention (the paper's point: abstaining prevents a hallucinated answer), then the strict one."""
    graded = _series(rows, "graded")
    strict = _series(rows, "overall")
    caption = "One point per confidence bar; a higher bar moves left (fewer answers)."
    charts = [LineChart(title="Accuracy against coverage (abstain = wrong)", series=strict, xlabel="coverage",
                        ylabel="accuracy, every abstention counted as 0", caption=caption)]
    if graded:
        charts.insert(0, LineChart(title="Accuracy against coverage", series=graded, xlabel="coverage",
                                   ylabel="accuracy (dataset's grading: a right abstention earns its credit)",
                                   caption=caption))
    return charts


def _series(rows: list[dict[str, Any]], measure: str) -> dict[str, list[tuple[float, float]]]:
    series: dict[str, list[tuple[float, float]]] = {}
    for r in sorted(rows, key=lambda r: (r["cap"], r["bar"])):
        if r[measure] is not None:
            series.setdefault(f"cap {r['cap']}", []).append((r["coverage"], r[measure]))
    return series


def _options(run: RunData, key: str) -> dict[str, Any]:
    """The options of the suite's system whose record key is ``key`` (the suite's own key rule)."""
    for ref in run.suite.get("systems", []):
        if ref_key(ref) == key:
            return dict(ref.get("options") or {}) if isinstance(ref, dict) else {}
    return {}


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"
