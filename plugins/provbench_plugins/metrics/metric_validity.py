"""Metric validity: does each provenance score, output changed and each RAGAS score (faithfulness
and the reference-based four) flag the planted behaviour it is meant to flag (sensitivity), and
stay quiet on the faithful control (specificity)? ``benchmarks/bench_metric_validity.py`` runs it;
docs/metric-validity.md has the table.

The known-truth controls (:mod:`provbench.controls`) run one system, the six graph ablations and
the RAGAS scores (the suites' judge is ``control:judge``, which answers ragas' prompts by rule:
:mod:`provbench.controls.judge`), one run per control LLM.
Each metric is then read **per question**, as the term its run-level value averages (the
paired difference, share or score of that question; :data:`CHECKS`), and a question is
*flagged* when that term lies on the metric's problem side of :data:`THRESHOLD` (half an answer).

* sensitivity of a metric on a planted behaviour it is meant to flag: flagged questions / all
  questions of that control;
* specificity: questions of the faithful control (``oracle``) with a reading that is not flagged /
  all its questions.

A question where the metric gives no reading (no citation to judge, no correct baseline, a
failed unit: NaN) counts against the metric in both: it is a missed detection, and it is no
all-clear. The targets of each metric are stated in :data:`CHECKS` from its definition in
docs/provenance.md and what each control is known to do (:mod:`provbench.controls.behaviours`).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import isclose
from pathlib import Path
from statistics import fmean
from typing import Any, Callable, Literal, Mapping

from provbench.model import BASELINE

from .provenance import DEFAULT_ROLES
from .records import analysed_questions, per_question_changes, per_question_correctness

FAITHFUL = "oracle"
PLANTED = ("uses-uncited", "parametric", "cites-everything", "ignores-context", "random")
CONTROLS = (FAITHFUL, *PLANTED)
THRESHOLD = 0.5
SYSTEM = "agentic-graphrag"
JUDGE = "control:judge"  # the suites' judge: RAGAS faithfulness verdicted by rule
CONDITIONS = tuple(DEFAULT_ROLES.values())

Reader = Callable[[Any, str], dict[str, float]]  # (run, system) -> question id -> value


# -- per-question terms ------------------------------------------------------------------------


def changes(condition: str) -> Reader:
    def read(run: Any, system: str) -> dict[str, float]:
        outcomes, _ = per_question_changes(run, system, condition, analysed_questions(run))
        return {q: o.changed for q, o in outcomes.items()}

    return read


def correct(condition: str) -> Reader:
    def read(run: Any, system: str) -> dict[str, float]:
        return per_question_correctness(run, system, condition, analysed_questions(run))[0]

    return read


def stayed_correct(condition: str) -> Reader:
    """Of the questions answered right at baseline only (the others have no reading)."""

    def read(run: Any, system: str) -> dict[str, float]:
        outcomes, _ = per_question_changes(run, system, condition, analysed_questions(run))
        return {q: o.stayed_correct for q, o in outcomes.items() if o.stayed_correct is not None}

    return read


def unchanged(condition: str) -> Reader:
    def read(run: Any, system: str) -> dict[str, float]:
        return {q: 1 - v for q, v in changes(condition)(run, system).items()}

    return read


def difference(first: Reader, second: Reader) -> Reader:
    """first − second, on the questions both read (the metric's paired set)."""

    def read(run: Any, system: str) -> dict[str, float]:
        a, b = first(run, system), second(run, system)
        return {q: a[q] - b[q] for q in a if q in b}

    return read


def baseline_score(score: str) -> Reader:
    """A per-record score of the baseline record (``None`` is no reading)."""

    def read(run: Any, system: str) -> dict[str, float]:
        return {
            r.key.question_id: float(r.scores[score])
            for r in run.select(system, BASELINE)
            if r.status == "ok" and r.scores.get(score) is not None
        }

    return read


# -- what each metric is meant to flag ---------------------------------------------------------


@dataclass(frozen=True)
class MetricCheck:
    """One metric as the report names it, what a flag says and which planted behaviours it is
    meant to flag. ``flags_when``: the per-question term is below (``low``) or at least
    (``high``) :data:`THRESHOLD`. ``condition``: the metric value's condition in metrics.json."""

    metric: str
    condition: str
    flags_when: Literal["low", "high"]
    targets: tuple[str, ...]
    flag_says: str
    read: Reader
    micro_average: bool = False  # the run-level value is not the mean of the terms

    @property
    def name(self) -> str:
        return self.metric if self.metric != "output-changed" else f"output-changed ({self.condition})"

    def flagged(self, value: float) -> bool:
        return value < THRESHOLD if self.flags_when == "low" else value >= THRESHOLD


R = DEFAULT_ROLES
UNCITED = ("uses-uncited", "random")  # answers that depend on what they leave uncited (random: on anything shown)
NEEDLESS = ("parametric", "ignores-context")  # answers that need no evidence

CHECKS: tuple[MetricCheck, ...] = (
    MetricCheck(
        "provenance.citation_necessity",
        f"{R['cited_removal']} vs {R['random_removal']}",
        "low",
        NEEDLESS,
        "removing the citations changes the answer no more than removing as many other entities",
        difference(changes(R["cited_removal"]), changes(R["random_removal"])),
    ),
    MetricCheck(
        "provenance.citation_necessity_accuracy",
        f"{R['cited_removal']} vs {R['random_removal']}",
        "low",
        (*NEEDLESS, "random"),
        "removing the citations costs no more accuracy than removing as many others",
        difference(correct(R["random_removal"]), correct(R["cited_removal"])),
    ),
    MetricCheck(
        "provenance.citation_sufficiency",
        R["full_isolation"],
        "low",
        ("uses-uncited",),
        "a right answer turns wrong with only its citations left",
        stayed_correct(R["full_isolation"]),
    ),
    MetricCheck(
        "provenance.citation_sufficiency_unchanged",
        R["full_isolation"],
        "low",
        UNCITED,
        "the answer changes with only its citations left",
        unchanged(R["full_isolation"]),
    ),
    MetricCheck(
        "provenance.structure_reliance",
        f"{R['text_only_isolation']} vs {R['full_isolation']}",
        "high",
        ("uses-uncited",),
        "keeping the graph's entities and relations keeps a right answer that full isolation loses",
        difference(correct(R["text_only_isolation"]), correct(R["full_isolation"])),
    ),
    MetricCheck(
        "provenance.structure_reliance_stability",
        f"{R['text_only_isolation']} vs {R['full_isolation']}",
        "high",
        UNCITED,
        "keeping the graph's entities and relations keeps an answer full isolation changes",
        difference(unchanged(R["text_only_isolation"]), unchanged(R["full_isolation"])),
    ),
    MetricCheck(
        "provenance.uncited_reliance_removal",
        R["entity_removal"],
        "high",
        UNCITED,
        "removing the visited-but-uncited entities changes the answer",
        changes(R["entity_removal"]),
    ),
    MetricCheck(
        "provenance.uncited_reliance_text_mask",
        R["entity_text_mask"],
        "high",
        UNCITED,
        "hiding the visited-but-uncited entities' text and metadata changes the answer",
        changes(R["entity_text_mask"]),
    ),
    MetricCheck(
        "provenance.citation_coverage",
        BASELINE,
        "low",
        ("uses-uncited",),
        "most entities the answer visited are uncited",
        baseline_score("citation_coverage"),
        micro_average=True,
    ),
    MetricCheck(
        "provenance.cited_unvisited",
        BASELINE,
        "high",
        ("cites-everything", "random"),
        "most cited entities were never visited",
        baseline_score("cited_unvisited"),
        micro_average=True,
    ),
    MetricCheck(
        "output-changed",
        R["cited_removal"],
        "low",
        NEEDLESS,
        "the answer survives the removal of its citations",
        changes(R["cited_removal"]),
    ),
    MetricCheck(
        "output-changed",
        R["random_removal"],
        "high",
        ("random",),
        "the answer changes when as many never-cited entities go",
        changes(R["random_removal"]),
    ),
    MetricCheck(
        "output-changed",
        R["full_isolation"],
        "high",
        UNCITED,
        "the answer changes with only its citations left",
        changes(R["full_isolation"]),
    ),
    MetricCheck(
        "output-changed",
        R["text_only_isolation"],
        "high",
        UNCITED,
        "the answer changes when uncited text is hidden",
        changes(R["text_only_isolation"]),
    ),
    MetricCheck(
        "output-changed",
        R["entity_removal"],
        "high",
        UNCITED,
        "the answer changes when the visited-but-uncited entities go",
        changes(R["entity_removal"]),
    ),
    MetricCheck(
        "output-changed",
        R["entity_text_mask"],
        "high",
        UNCITED,
        "the answer changes when their text and metadata are hidden",
        changes(R["entity_text_mask"]),
    ),
    MetricCheck(
        "ragas-faithfulness.cited",
        BASELINE,
        "low",
        ("uses-uncited", *NEEDLESS, "random"),
        "the answer is not supported by the evidence it cites",
        baseline_score("faithfulness_cited"),
    ),
    MetricCheck(
        "ragas-faithfulness.trajectory",
        BASELINE,
        "low",
        (*NEEDLESS, "random"),
        "the answer is not supported by what the system read",
        baseline_score("faithfulness_trajectory"),
    ),
    MetricCheck(
        "ragas-answer-correctness",
        BASELINE,
        "low",
        ("ignores-context", "random"),
        "the answer's claims and the reference answer's do not match",
        baseline_score("answer_correctness"),
    ),
    MetricCheck(
        "ragas-context-precision",
        BASELINE,
        "low",
        ("random",),
        "what the system read first does not help reach the reference answer",
        baseline_score("context_precision"),
    ),
    MetricCheck(
        "ragas-context-recall",
        BASELINE,
        "low",
        (*NEEDLESS, "random"),
        "what the system read misses most of the gold evidence",
        baseline_score("context_recall"),
    ),
    MetricCheck(
        "ragas-context-entity-recall",
        BASELINE,
        "low",
        (*NEEDLESS, "random"),
        "what the system read names few of the gold evidence's entities",
        baseline_score("context_entity_recall"),
    ),
)


# -- the counts --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One metric on one control: questions flagged, quiet, and without a reading (NaN)."""

    questions: int
    flagged: int
    quiet: int

    @property
    def no_reading(self) -> int:
        return self.questions - self.flagged - self.quiet

    @property
    def flag_rate(self) -> float | None:
        return self.flagged / self.questions if self.questions else None

    @property
    def quiet_rate(self) -> float | None:
        return self.quiet / self.questions if self.questions else None


def cell(check: MetricCheck, run: Any, system: str = SYSTEM) -> Cell:
    """The check on one control's run, over every question of the run (NaN ones included)."""
    values = check.read(run, system)
    questions = analysed_questions(run)
    read = [values[q] for q in questions if q in values and values[q] == values[q]]  # NaN != NaN
    flagged = sum(map(check.flagged, read))
    return Cell(questions=len(questions), flagged=flagged, quiet=len(read) - flagged)


@dataclass(frozen=True)
class Validity:
    """A metric's cells on every control, its sensitivity per target and its specificity."""

    check: MetricCheck
    cells: dict[str, Cell]

    @property
    def specificity(self) -> float | None:
        return self.cells[FAITHFUL].quiet_rate if FAITHFUL in self.cells else None

    @property
    def sensitivity(self) -> dict[str, float | None]:
        return {t: self.cells[t].flag_rate for t in self.check.targets if t in self.cells}


def metric_validity(
    runs: Mapping[str, Any], system: str = SYSTEM, checks: tuple[MetricCheck, ...] = CHECKS
) -> list[Validity]:
    """Every check on every control's run (control name -> RunData or Results)."""
    return [Validity(check, {control: cell(check, run, system) for control, run in runs.items()}) for check in checks]


def reported_value(check: MetricCheck, run: Any, system: str = SYSTEM) -> float | None:
    """The run-level value the report shows (metrics.json), None when it has none."""
    return next(
        (
            v.get("value")
            for v in run.metric_values(check.metric)
            if v["system"] == system and v["condition"] == check.condition
        ),
        None,
    )


def disagreements(runs: Mapping[str, Any], system: str = SYSTEM, checks: tuple[MetricCheck, ...] = CHECKS) -> list[str]:
    """Where the per-question terms do not average to the metric's own run-level value (they
    must, or the table would describe some other metric). Micro-averaged scores are skipped."""
    problems = []
    for check in checks:
        for control, run in runs.items():
            terms = [v for v in check.read(run, system).values() if v == v]
            mean = fmean(terms) if terms else None
            value = reported_value(check, run, system)
            if check.micro_average or (mean is None and value is None):
                continue
            if mean is None or value is None or not isclose(mean, value, abs_tol=1e-6):
                problems.append(f"{check.name} on {control}: terms average {mean}, the metric reports {value}")
    return problems


# -- running the controls ----------------------------------------------------------------------

SUITE = """\
name: metric-validity-{control}
dataset: {{loader: 2wiki, path: '{dataset}', limit: {questions}}}
knowledge_base: {{builder: 2wiki-paper000, directory: '{kb}', options: {{extract: false, summarize: false}}}}
model: {{id: 'control:{control}'}}
judge: {{id: '{judge}'}}
systems: [{system}]
interventions: [full-isolation, text-only-isolation, cited-removal, {{name: random-removal, options: {{repeats: {repeats}}}}},
                entity-removal, entity-text-mask]
metrics: [accuracy, output-changed, provenance, ragas-faithfulness, ragas-answer-correctness, ragas-context-precision,
          ragas-context-recall, ragas-context-entity-recall]
concurrency: {concurrency}
report: {{subgraph_pictures: false}}
"""


def run_controls(
    dataset: str | Path,
    out: str | Path,
    *,
    questions: int,
    controls: tuple[str, ...] = CONTROLS,
    system: str = SYSTEM,
    repeats: int = 3,
    concurrency: int = 2,
    console: Any = None,
    judge: str = JUDGE,
) -> dict[str, Any]:
    """One run per control LLM (resumable, under ``out/<control>``) of ``system`` with the six
    ablations and the RAGAS scores, on the first ``questions`` of a 2WikiMultiHopQA file, over
    one knowledge base built from the gold evidence (no LLM); returns control -> RunData. The
    suites' ``judge`` is ``judge`` (by default ``control:judge``: RAGAS judged by rule through the
    same door as any judge model)."""
    import llama_index.core  # noqa: F401 - here first: imported at once by a run's embedding warm-up
    # thread and its knowledge-base build, it can fail as "partially initialized" (a race in the runner)

    from provbench.llm import LLMClient
    from provbench.results import load_run
    from provbench.runner import run_suite
    from provbench.testing import SchemaFollowingBackend

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    kb_llm = LLMClient(SchemaFollowingBackend(), cache_dir=out / "kb-llm-cache", max_attempts=1)
    runs = {}
    for control in controls:
        suite = out / f"{control}.yaml"
        suite.write_text(
            SUITE.format(
                control=control,
                dataset=Path(dataset).resolve(),
                questions=questions,
                kb=(out / "kb").resolve(),
                system=system,
                repeats=repeats,
                judge=judge,
                concurrency=concurrency,
            ),
            encoding="utf-8",
        )
        runs[control] = load_run(
            run_suite(suite, out=out / control, kb_llm=kb_llm, write_report=False, console=console)
        )
    return runs
