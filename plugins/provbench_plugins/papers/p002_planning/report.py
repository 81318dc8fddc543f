"""Paper 002's report section: each planning-loop configuration's rounds, cost, coverage and
accuracy; every system's accuracy per hop count and a paired test against the loop
(:mod:`.comparison`); for a sweep the accuracy/coverage trade-off per frontier cap.

Computed from the baseline records of the suite's systems, so it needs no metric to be enabled;
the general abstention and calibration sections sit beside it. Shares count over *every* baseline
record of a configuration, as the ``abstention.*`` metrics do (a failed run is neither answered
nor abstained). *Accuracy* is the dataset loader's graded correctness (a failed run 0), so a right
abstention (an unanswerable question) earns what the loader gives it; *accuracy (abstain =
wrong)* counts every abstention as 0, the strict reading. *Abstained on answerable* leaves out
the questions where abstaining is intended (unanswerable, and ``too-deep``: beyond the round
budget). *Answered by the exit round*: share of the answered questions that cleared the bar by
the configuration's first exit round (``exit_from_round``, the paper's round 2; round 1 for a
one-round configuration, which may answer in its only round).
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from provbench.plugin_api import correctness
from provbench.results.data import RunData, ref_key
from provbench.report.sections import BarChart, LineChart, Section, Table
from provbench.results.stats import per_question

from provbench_plugins.metrics.selective import abstained, answered, unanswerable
from .comparison import accuracy_table, hop_groups, paired_table
from .loop import PlanningOptions

SYSTEM_NAMES = ("planning-loop",)


def sections(run: RunData) -> list[Section]:
    keys = run.uses("systems", SYSTEM_NAMES)
    rows = [summary(run, key) for key in keys]
    rows = [r for r in rows if r is not None]
    if not rows:
        return []
    blocks: list[Any] = [configuration_table(rows)]
    systems = run.systems
    blocks += [accuracy_table(run, systems), hop_chart(run, systems)]
    if len(systems) > 1:
        blocks.append(paired_table(run, keys[0], [s for s in systems if s != keys[0]]))
    if len(rows) > 1:
        blocks += tradeoff_charts(rows)
    return [
        Section(
            id="p002-planning",
            title="Planning loop: rounds, cost and the accuracy/coverage trade-off",
            intro="Paper 002's confidence-gated loop: answer at the confidence bar, else abstain after the last round.",
            blocks=blocks,
            order=45,
        )
    ]


def configuration_table(rows: list[dict[str, Any]]) -> Table:
    """One row a planning-loop configuration (:func:`summary`): its settings, accuracy and cost."""
    return Table(
        columns=[
            "System",
            "Bar",
            "Frontier cap",
            "Max rounds",
            "Questions",
            "Coverage",
            "Accuracy",
            "Selective accuracy",
            "Accuracy (abstain = wrong)",
            "Abstained on answerable",
            "LLM calls / q",
            "Concepts / q",
            "Exit round",
            "Answered by the exit round",
        ],
        rows=[
            [
                r["key"],
                f"{r['bar']:.2f}",
                r["cap"],
                r["rounds"],
                r["n"],
                _share(r["coverage"]),
                _share(r["graded"]),
                _share(r["selective"]),
                _share(r["overall"]),
                _share(r["answerable_abstained"]),
                _mean(r["calls"], 2),
                _mean(r["concepts"], 1),
                r["exit"],
                _share(r["early"]),
            ]
            for r in rows
        ],
        caption="Baseline records of each planning-loop configuration, all of them counted (as abstention.* counts "
        "them). Accuracy: the dataset's graded correctness of every question, a right abstention included; "
        "selective accuracy: of the answered ones. Answered by the exit round: share of the answered "
        "questions that cleared the bar by the configuration's exit_from_round (the paper's early exit)."
        + (LATE_EXIT_COST if any(r["exit"] > 1 for r in rows) else ""),
    )


# the paper's "roughly 1-4" calls against the default exit round (docs/papers/p002.md, "Verify")
LATE_EXIT_COST = (
    " LLM calls / q: the paper's lower bound of 1 call is not reachable for an answered question when the "
    'exit round is 2 (the default, the article\'s "Round 2 ... can exit early"), except when round 2 finds '
    "nothing new to expand (it makes no call and round 1's answer is verified again); a confident answer "
    "otherwise costs 2 calls, 1 with exit_from_round: 1."
)


def summary(run: RunData, key: str) -> dict[str, Any] | None:
    records = run.select(key)
    if not records:
        return None
    options = PlanningOptions(**_options(run, key))
    done = [r for r in records if answered(r)]
    right = [correctness(r) or 0.0 for r in done]
    answerable = [r for r in records if not abstention_intended(run.questions.get(r.key.question_id))]
    traced = [r.trace for r in records if r.trace is not None]
    exit_round = min(options.exit_from_round, options.max_rounds)
    early = [r for r in done if len(r.trace.artifacts.get("rounds", [])) <= exit_round]
    return {
        "key": key,
        "bar": options.confidence_bar,
        "cap": options.frontier_cap,
        "rounds": options.max_rounds,
        "exit": exit_round,
        "n": len(records),
        "coverage": len(done) / len(records),
        "graded": fmean(correctness(r) or 0.0 for r in records),
        "selective": fmean(right) if right else None,
        "overall": sum(right) / len(records),
        "answerable_abstained": (sum(map(abstained, answerable)) / len(answerable)) if answerable else None,
        "calls": fmean(len(t.llm_calls) for t in traced) if traced else None,
        "concepts": fmean(len(t.visited_entities) for t in traced) if traced else None,
        "early": len(early) / len(done) if done else None,
    }


def abstention_intended(question) -> bool:
    """Unanswerable, or answerable beyond the round budget (type ``too-deep``)."""
    return unanswerable(question) or (question is not None and question.type == "too-deep")


def hop_chart(run: RunData, systems: list[str]) -> BarChart:
    """The accuracy-per-hop table as bars: where each system falls off as chains grow longer."""
    groups = {**hop_groups(run), "All": run.question_ids}
    series = {}
    for system in systems:
        scores = per_question(run.select(system))
        series[system] = [
            fmean(found) if (found := [scores[q] for q in ids if q in scores]) else None for ids in groups.values()
        ]
    return BarChart(
        title="Baseline accuracy per gold chain length",
        ylabel="accuracy (%)",
        categories=[f"{g} (n={len(ids)})" for g, ids in groups.items()],
        series=series,
        caption="The accuracy table above, per system: graded correctness, n/m where a group has no record",
    )


def tradeoff_charts(rows: list[dict[str, Any]]) -> list[LineChart]:
    """Per frontier cap, (coverage, accuracy) as the bar rises: the graded accuracy, which credits a
    right abstention (the paper's point: abstaining prevents a hallucinated answer), then the strict one."""
    graded = _series(rows, "graded")
    strict = _series(rows, "overall")
    caption = "One point per confidence bar; a higher bar moves left (fewer answers)."
    charts = [
        LineChart(
            title="Accuracy against coverage (abstain = wrong)",
            series=strict,
            xlabel="coverage",
            ylabel="accuracy, every abstention counted as 0",
            caption=caption,
        )
    ]
    if graded:
        charts.insert(
            0,
            LineChart(
                title="Accuracy against coverage",
                series=graded,
                xlabel="coverage",
                ylabel="accuracy (dataset's grading: a right abstention earns its credit)",
                caption=caption,
            ),
        )
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


def _mean(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"
