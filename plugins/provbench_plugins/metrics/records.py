"""Reading run records: correctness, per-question values and answer changes, with the counts behind them.

Reading records
    * A record's correctness is :func:`provbench.plugin_api.correctness`: the graded
      ``scores["accuracy"]`` in [0, 1] set by the runner from the dataset loader's
      ``score_answer``; accuracy is its mean. A question is *correct* when that score is 1.
    * Records with ``status == "failed"`` (the runner could not produce a trace) count as wrong
      (0) for accuracy and are reported in ``detail["failed"]``.
    * Table 2's rule for failed units, one computation (:func:`per_question_changes`) read by the
      metrics and by paper 000's report: a failed *intervention* unit gave no answer, so it
      counts as a changed answer and, for an originally correct question, as not staying
      correct; the denominators stay "analysed questions" and "originally correct questions",
      as in the paper. A failed *baseline* leaves its question out of both (there is nothing to
      compare with; it is not originally correct). Both kinds are counted in ``detail["failed"]``.
    * A unit's "changed" is the runner's per-record ``scores["output_changed"]`` (the loader's
      normalisation), recomputed the same way when a record lacks it.
    * A question with no record for a condition is ``missing``; one whose records carry no
      accuracy score is ``unscored``. Both are left out of the denominator and reported.
    * Repeats of a condition (random removal) are averaged per question first, so counts may be
      fractional (16.3/20 in the paper).
    * The pairing rule (:func:`provbench.results.rules.left_out_as`): intervention units the leak guard
      found leaked, no-effect, no-op or not checkable measure nothing and are left out
      (``results.select``; leaked ones count with the suite's ``leak_guard.include_leaked``); the
      units left out are counted by reason in ``detail`` (``detail["leaked"]``, ``detail["no-op"]``,
      ...), and a question left with none is not in the denominator. A condition's measured units
      are compared with the baseline of the same questions. A cell whose every unit is left out is
      not measurable (:func:`provbench.leakguard.not_measurable`).
    * Intervention conditions are analysed over the questions not in ``results.excluded``.
      Accuracy of the baseline is reported over the same analysed set (Table 2) and, in
      ``detail["all_questions"]``, over every question (Table 1).
    * "Changed" compares answers after the dataset loader's ``normalize`` (``results.loader``);
      without a loader, the base :class:`DatasetLoader` normalisation (case and whitespace).
      An abstention is an output of its own, not an empty answer
      (:func:`provbench.plugin_api.compared_output`): answering where the baseline abstained, or
      abstaining where it answered, is a change; two abstentions are not.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any, Callable, Iterable, Mapping

from provbench.leakguard import not_measurable
from provbench.model import BASELINE, RunRecord
from provbench.plugin_api import (
    DatasetLoader,
    Results,
    compared_output,
    correctness,
    is_correct,
    left_out_counts,
    left_out_text,
)

FOOTPRINT_FIELDS = ("retrieved_text_units", "cited_text_units", "visited_entities", "cited_entities")


# -- reading records ---------------------------------------------------------------------------


class _PlainLoader(DatasetLoader):
    """Only for its base ``normalize`` (case and whitespace) when a run has no loader."""

    name = "plain"

    def load(self, source, **options):
        raise NotImplementedError("_PlainLoader only normalises answers")


def loader_normalizer(results: Any) -> Callable[[str], str]:
    return (getattr(results, "loader", None) or _PlainLoader()).normalize


def analysed_questions(results: Results) -> list[str]:
    """Questions in the intervention analysis: all known questions minus the excluded ones."""
    ids = list(results.questions) or list(dict.fromkeys(r.key.question_id for r in results.records))
    return [q for q in ids if q not in results.excluded]


def all_questions(results: Results) -> list[str]:
    return list(results.questions) or list(dict.fromkeys(r.key.question_id for r in results.records))


def by_question(records: Iterable[RunRecord]) -> dict[str, list[RunRecord]]:
    grouped: dict[str, list[RunRecord]] = defaultdict(list)
    for record in records:
        grouped[record.key.question_id].append(record)
    return grouped


def baseline_records(results: Results, system: str) -> dict[str, RunRecord]:
    """The baseline record of each question (lowest repeat if a baseline was repeated)."""
    chosen: dict[str, RunRecord] = {}
    for record in sorted(results.select(system, BASELINE), key=lambda r: r.key.repeat):
        chosen.setdefault(record.key.question_id, record)
    return chosen


@dataclass
class Tally:
    """Counts behind one reported share; ``value`` is numerator / denominator."""

    numerator: float = 0.0
    denominator: int = 0
    failed: int = 0
    missing: int = 0
    unscored: int = 0
    left_out: dict[str, int] = field(default_factory=dict)  # units the pairing rule left out, by reason

    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    def counts(self) -> dict[str, Any]:
        counts = {
            "numerator": round6(self.numerator),
            "denominator": self.denominator,
            "failed": self.failed,
            "missing": self.missing,
            "unscored": self.unscored,
        }
        return counts | self.left_out

    def note(self) -> str:
        """The units left out, for the note beside the number ("" when none is)."""
        return left_out_text(self.left_out)


def round6(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def per_question_correctness(
    results: Results, system: str, condition: str, questions: Iterable[str]
) -> tuple[dict[str, float], Tally]:
    """Mean correctness over repeats for each question that has a usable record."""
    questions = list(questions)
    grouped, left_out = by_question(results.select(system, condition)), left_out_questions(results, system, condition)
    values: dict[str, float] = {}
    tally = Tally(left_out=left_out_units(results, system, condition, questions))
    for qid in questions:
        records = grouped.get(qid, [])
        tally.failed += sum(r.status == "failed" for r in records)
        scored = [c for c in map(correctness, records) if c is not None]
        if not records:  # none left to count (counted in tally.left_out), or none recorded
            tally.missing += qid not in left_out
        elif not scored:
            tally.unscored += 1
        else:
            values[qid] = fmean(scored)
    tally.numerator = sum(values.values())
    tally.denominator = len(values)
    return values, tally


def per_question_official(
    results: Any, system: str, condition: str, questions: Iterable[str], score: str
) -> tuple[dict[str, float], Tally]:
    """A per-record answer score (``em``, ``f1``) per question as the official 2WikiMultihopQA /
    HotpotQA evaluation counts it: every question in ``questions`` is in the denominator, and one
    without a scored prediction (no record, a failed run, no score) scores 0, except one whose every
    unit the pairing rule left out (not in the denominator). Repeats are averaged."""
    questions = list(questions)
    grouped, left_out = by_question(results.select(system, condition)), left_out_questions(results, system, condition)
    values: dict[str, float] = {}
    tally = Tally(left_out=left_out_units(results, system, condition, questions))
    for qid in questions:
        records = grouped.get(qid, [])
        if not records and qid in left_out:  # the pairing rule: not a 0, not in the denominator
            continue
        tally.missing += not records
        tally.failed += sum(r.status == "failed" for r in records)
        tally.unscored += sum(r.status == "ok" and r.scores.get(score) is None for r in records)
        values[qid] = (
            fmean(float(r.scores.get(score) or 0.0) if r.status == "ok" else 0.0 for r in records) if records else 0.0
        )
    tally.numerator = sum(values.values())
    tally.denominator = len(values)
    return values, tally


@dataclass
class ChangeOutcome:
    """One question under one condition, compared with its baseline (repeats averaged)."""

    changed: float
    stayed_correct: float | None  # None unless the baseline answer was correct


def per_question_changes(
    results: Any, system: str, condition: str, questions: Iterable[str], normalize: Callable[[str], str] | None = None
) -> tuple[dict[str, ChangeOutcome], Tally]:
    """Answer changes against the baseline, by the module's rule for failed units. ``results`` is
    anything with ``select(system, condition)`` (metrics' Results, the report's RunData)."""
    normalize = normalize or loader_normalizer(results)
    questions = list(questions)
    baselines = baseline_records(results, system)
    grouped, left_out = by_question(results.select(system, condition)), left_out_questions(results, system, condition)
    outcomes: dict[str, ChangeOutcome] = {}
    tally = Tally(left_out=left_out_units(results, system, condition, questions))
    for qid in questions:
        base, records = baselines.get(qid), grouped.get(qid, [])
        if base is not None and not records and qid in left_out:
            continue
        if base is None or not records:
            tally.missing += 1
            continue
        tally.failed += sum(r.status == "failed" for r in records) + (base.status == "failed")
        if base.status == "failed":
            continue
        outcomes[qid] = compare(base, records, normalize)
    tally.numerator = sum(o.changed for o in outcomes.values())
    tally.denominator = len(outcomes)
    return outcomes, tally


def changed(record: RunRecord, base: RunRecord, normalize: Callable[[str], str]) -> float:
    """1.0 if the unit's answer differs from the baseline's; a failed unit (no answer) has changed."""
    if record.status == "failed":
        return 1.0
    stored = record.scores.get("output_changed")
    if stored is not None:
        return float(stored)
    return float(compared_output(record.trace, normalize) != compared_output(base.trace, normalize))


def compare(base: RunRecord, records: list[RunRecord], normalize: Callable[[str], str]) -> ChangeOutcome:
    """Repeats averaged; "stayed correct" is :func:`provbench.plugin_api.is_correct` (a failed unit is not)."""
    share_changed = fmean(changed(r, base, normalize) for r in records)
    if not is_correct(base):
        return ChangeOutcome(share_changed, None)
    return ChangeOutcome(share_changed, fmean(float(is_correct(r)) for r in records))


def stayed_correct_tally(outcomes: Mapping[str, ChangeOutcome]) -> Tally:
    kept = [o.stayed_correct for o in outcomes.values() if o.stayed_correct is not None]
    return Tally(numerator=sum(kept), denominator=len(kept))


def intervention_conditions(results: Results, system: str) -> list[str]:
    return [c for c in results.conditions if c != BASELINE and results.select(system, c, leaked=True)]


def left_out_questions(results: Any, system: str, condition: str) -> set[str]:
    """Questions with a unit the pairing rule left out (:func:`provbench.results.rules.left_out_as`)."""
    kept = {id(r) for r in results.select(system, condition)}
    return {r.key.question_id for r in results.select(system, condition, leaked=True) if id(r) not in kept}


def left_out_units(results: Any, system: str, condition: str, questions: Iterable[str]) -> dict[str, int]:
    """Units of ``questions`` the pairing rule left out, by reason."""
    wanted = set(questions)
    return left_out_counts(
        (r for r in results.select(system, condition, leaked=True) if r.key.question_id in wanted),
        getattr(results, "include_leaked", False),
    )


def cell_not_measurable(results: Any, system: str, condition: str, questions: Iterable[str]) -> str | None:
    """Why this system x condition over ``questions`` measures nothing (every unit left out by the
    pairing rule: :func:`provbench.leakguard.not_measurable`), or None."""
    wanted = set(questions)
    return not_measurable(
        (r for r in results.select(system, condition, leaked=True) if r.key.question_id in wanted),
        getattr(results, "include_leaked", False),
    )


def arrow(delta: float) -> str:
    if abs(delta) < 1e-9:
        return "→"
    return "↑" if delta > 0 else "↓"
