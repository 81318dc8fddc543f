"""Trajectory-provenance scores: what an answer depended on, beyond what it cited.

Definitions and formulas are in docs/provenance.md; the names there match the
``provenance.<score>`` metric names emitted here. Every score is a share or a difference of
shares over a *paired* question set (analysed questions that have usable records in every
condition the score compares), so each MetricValue carries a numerator and denominator on one
common question set, and ``detail`` carries the component counts. Units the pairing rule leaves out
(:func:`provbench.results.rules.left_out_as`: leaked, no-effect, no-op, not checkable) are not in any
score; the run notes them beside each value, and a score over a condition with none left is "not
measurable" (:func:`provbench.results.rules.with_left_out_notes`).
"""

from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator

from provbench.model import BASELINE, RunRecord, Trace
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results

from .records import (
    ChangeOutcome,
    round6,
    analysed_questions,
    per_question_changes,
    per_question_correctness,
)

# Which run condition plays which role; a suite may rename its conditions.
DEFAULT_ROLES = {
    "cited_removal": "cited-removal",
    "random_removal": "random-removal",
    "full_isolation": "full-isolation",
    "text_only_isolation": "text-only-isolation",
    "entity_removal": "entity-removal",
    "entity_text_mask": "entity-text-mask",
}


# -- per trace ---------------------------------------------------------------------------------


def coverage_counts(trace: Trace) -> dict[str, int]:
    """|visited|, |cited ∩ visited|, |cited|, |cited − visited| for one trace."""
    visited, cited = set(trace.visited_entities), set(trace.citations.entities)
    return {
        "visited": len(visited),
        "cited_and_visited": len(cited & visited),
        "cited": len(cited),
        "cited_not_visited": len(cited - visited),
    }


def citation_coverage(trace: Trace) -> float | None:
    c = coverage_counts(trace)
    return c["cited_and_visited"] / c["visited"] if c["visited"] else None


def cited_unvisited_share(trace: Trace) -> float | None:
    c = coverage_counts(trace)
    return c["cited_not_visited"] / c["cited"] if c["cited"] else None


# -- the metric --------------------------------------------------------------------------------


class ProvenanceMetric(Metric):
    """Citation necessity, sufficiency, coverage; structure and uncited-context reliance."""

    name = "provenance"

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

        conditions: dict[str, str] = Field(
            default_factory=dict, description="role -> condition label, for suites that rename conditions"
        )

        @field_validator("conditions")
        @classmethod
        def _known_roles(cls, value: dict[str, str]) -> dict[str, str]:
            unknown = set(value) - set(DEFAULT_ROLES)
            if unknown:
                raise ValueError(f"unknown condition role(s) {sorted(unknown)}; known: {sorted(DEFAULT_ROLES)}")
            return value

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.roles = DEFAULT_ROLES | self.options.conditions

    def score(self, record: RunRecord, question, context) -> dict[str, float | None]:
        if record.trace is None:
            return {}
        return {
            "citation_coverage": citation_coverage(record.trace),
            "cited_unvisited": cited_unvisited_share(record.trace),
        }

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values: list[MetricValue] = []
        for system in results.systems:
            scorer = _SystemScores(results, system, self.roles)
            values += scorer.coverage()
            values += scorer.necessity() + scorer.sufficiency() + scorer.structure() + scorer.uncited()
        return values


class _SystemScores:
    """All provenance scores of one system; each method returns MetricValues."""

    def __init__(self, results: Results, system: str, roles: Mapping[str, str]) -> None:
        self.results, self.system, self.roles = results, system, roles
        self.analysed = analysed_questions(results)
        self.base_correct, _ = per_question_correctness(results, system, BASELINE, self.analysed)

    # helpers -----------------------------------------------------------------------------
    def value(
        self,
        score: str,
        value: float | None,
        numerator: float | None,
        denominator: int | None,
        condition: str = BASELINE,
        note: str = "",
        **detail: Any,
    ) -> MetricValue:
        return MetricValue(
            metric=f"provenance.{score}",
            system=self.system,
            condition=condition,
            value=value,
            numerator=round6(numerator),
            denominator=denominator,
            detail=detail,
            note=note,
        )

    def versus(self, *roles: str) -> str:
        """The condition label of a score: the run condition(s) it compares."""
        return " vs ".join(self.roles[r] for r in roles)

    def missing(self, score: str, *roles: str) -> MetricValue | None:
        absent = [self.roles[r] for r in roles if not self.results.select(self.system, self.roles[r], leaked=True)]
        if not absent:
            return None
        return self.value(
            score,
            None,
            None,
            None,
            self.versus(*roles),
            note=f"no {self.system} records under: {', '.join(absent)} "
            "(not in the suite, or not applied to this system)",
        )

    def changes(self, role: str) -> dict[str, ChangeOutcome]:
        return per_question_changes(self.results, self.system, self.roles[role], self.analysed)[0]

    def correct(self, role: str) -> dict[str, float]:
        return per_question_correctness(self.results, self.system, self.roles[role], self.analysed)[0]

    def paired_difference(
        self,
        score: str,
        first: Mapping[str, float],
        second: Mapping[str, float],
        first_name: str,
        second_name: str,
        condition: str,
    ) -> MetricValue:
        """(Σ first − Σ second) / n over questions present in both."""
        paired = [q for q in self.analysed if q in first and q in second]
        a, b = sum(first[q] for q in paired), sum(second[q] for q in paired)
        n = len(paired)
        return self.value(
            score,
            (a - b) / n if n else None,
            a - b,
            n,
            condition,
            **{first_name: round6(a), second_name: round6(b), "questions": n},
        )

    # scores ------------------------------------------------------------------------------
    def coverage(self) -> list[MetricValue]:
        """Micro-averaged over every baseline record with a trace (not only analysed ones)."""
        totals = {"visited": 0, "cited_and_visited": 0, "cited": 0, "cited_not_visited": 0}
        traces = [
            r.trace for r in self.results.select(self.system, BASELINE) if r.status == "ok" and r.trace is not None
        ]
        for trace in traces:
            for key, count in coverage_counts(trace).items():
                totals[key] += count
        share = lambda num, den: totals[num] / totals[den] if totals[den] else None  # noqa: E731 - a one-line closure
        return [
            self.value(
                "citation_coverage",
                share("cited_and_visited", "visited"),
                totals["cited_and_visited"],
                totals["visited"],
                answers=len(traces),
            ),
            self.value(
                "cited_unvisited",
                share("cited_not_visited", "cited"),
                totals["cited_not_visited"],
                totals["cited"],
                answers=len(traces),
            ),
        ]

    def necessity(self) -> list[MetricValue]:
        gap = self.missing("citation_necessity", "cited_removal", "random_removal")
        if gap:
            return [gap, self.missing("citation_necessity_accuracy", "cited_removal", "random_removal")]
        cited_changes = {q: o.changed for q, o in self.changes("cited_removal").items()}
        random_changes = {q: o.changed for q, o in self.changes("random_removal").items()}
        return [
            self.paired_difference(
                "citation_necessity",
                cited_changes,
                random_changes,
                "changed_cited_removal",
                "changed_random_removal",
                self.versus("cited_removal", "random_removal"),
            ),
            self.paired_difference(
                "citation_necessity_accuracy",
                self.correct("random_removal"),
                self.correct("cited_removal"),
                "correct_random_removal",
                "correct_cited_removal",
                self.versus("cited_removal", "random_removal"),
            ),
        ]

    def sufficiency(self) -> list[MetricValue]:
        gap = self.missing("citation_sufficiency", "full_isolation")
        if gap:
            return [gap, self.missing("citation_sufficiency_unchanged", "full_isolation")]
        outcomes = self.changes("full_isolation")
        kept = [o.stayed_correct for o in outcomes.values() if o.stayed_correct is not None]
        unchanged = sum(1 - o.changed for o in outcomes.values())
        condition = self.versus("full_isolation")
        return [
            self.value(
                "citation_sufficiency",
                sum(kept) / len(kept) if kept else None,
                sum(kept),
                len(kept),
                condition,
                stayed_correct=round6(sum(kept)),
                originally_correct=len(kept),
            ),
            self.value(
                "citation_sufficiency_unchanged",
                unchanged / len(outcomes) if outcomes else None,
                unchanged,
                len(outcomes),
                condition,
                unchanged=round6(unchanged),
                compared=len(outcomes),
            ),
        ]

    def structure(self) -> list[MetricValue]:
        gap = self.missing("structure_reliance", "text_only_isolation", "full_isolation")
        if gap:
            return [gap, self.missing("structure_reliance_stability", "text_only_isolation", "full_isolation")]
        stable = lambda role: {q: 1 - o.changed for q, o in self.changes(role).items()}  # noqa: E731 - a one-line closure
        return [
            self.paired_difference(
                "structure_reliance",
                self.correct("text_only_isolation"),
                self.correct("full_isolation"),
                "correct_text_only_isolation",
                "correct_full_isolation",
                self.versus("text_only_isolation", "full_isolation"),
            ),
            self.paired_difference(
                "structure_reliance_stability",
                stable("text_only_isolation"),
                stable("full_isolation"),
                "unchanged_text_only_isolation",
                "unchanged_full_isolation",
                self.versus("text_only_isolation", "full_isolation"),
            ),
        ]

    def uncited(self) -> list[MetricValue]:
        values = []
        for role, score in (
            ("entity_removal", "uncited_reliance_removal"),
            ("entity_text_mask", "uncited_reliance_text_mask"),
        ):
            gap = self.missing(score, role)
            if gap:
                values.append(gap)
                continue
            outcomes = self.changes(role)
            after = self.correct(role)
            paired = [q for q in self.analysed if q in self.base_correct and q in after]
            drop = sum(self.base_correct[q] - after[q] for q in paired)
            changed = sum(o.changed for o in outcomes.values())
            values.append(
                self.value(
                    score,
                    changed / len(outcomes) if outcomes else None,
                    changed,
                    len(outcomes),
                    self.versus(role),
                    changed=round6(changed),
                    compared=len(outcomes),
                    accuracy_drop=round6(drop / len(paired)) if paired else None,
                    accuracy_drop_numerator=round6(drop),
                    accuracy_drop_questions=len(paired),
                )
            )
        return values
