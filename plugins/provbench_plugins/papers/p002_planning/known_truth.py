"""Paper 002's claims as checks on known-truth controls (``provbench validate``, docs/controls.md),
declared on :mod:`provbench.controls` as any package would and registered with
``provbench_register_claims`` (so they are ``p002/<name>``). Defaults name the systems and
conditions of ``suites/curriculum-planning.yaml``'s controls block; a suite may override any option.
Each reads a subset of the questions by their ``type`` (curriculum-mini's ``deep``, ``too-deep``,
``unanswerable``), so a dataset of its own only needs to type its questions the same way.

* ``rounds-reach-deep-answers``: on questions whose answer lies 3-4 edges from every concept they
  name, the loop is right with the oracle, while the same loop held to one round over the same
  seeds is not; a model that knows the answers without evidence (``parametric``) is right in both,
  so the difference comes from the evidence the rounds reach, not from the configurations.
* ``abstains-when-unreachable``: on unanswerable questions and on those deeper than the round
  budget, the loop with the oracle abstains on every one; with a model confident whatever it is
  shown (``ignores-context``) the gate lets the answers through, so the check can see it fail. And
  the same loop answers the questions within its rounds (``deep``), so an abstention that comes
  from a shorter round limit (one round abstains on everything deep) does not pass for the gate.
* ``gold-edge-changes-answer``: on the questions the loop answered, invalidating an edge of the
  gold chain changes its answer far more than invalidating a used edge off the chain, and the
  off-chain edge alone changes nothing; a model that ignores its context changes under neither.
  Only questions where every unit of both conditions invalidated an edge are compared (those left
  out are named), and they must be at least half of the answered ones: a condition that hid
  nothing (``as-of`` a far future time in the off-chain edge's place) would otherwise pass as "no
  change".
"""

from __future__ import annotations

from typing import Callable

from pydantic import Field

from provbench.controls import ClaimAbout, ClaimNeeds, ControlRuns, PairedClaim, Verdict, unmeasured_over
from provbench.controls.contrasts import Expectation, TestOptions, default_expect
from provbench.model import BASELINE

LOOP = "planning-loop"
ONE_ROUND = "one-shot, same seeds"


class _P002Claim(PairedClaim):
    """The shared verdict (:class:`provbench.controls.PairedClaim`): the effect is shown when the
    one-sided paired permutation test gives p < alpha and the difference of means reaches
    ``min_difference``; plus the questions of given types."""

    def typed(self, runs: ControlRuns, control: str, types: list[str]) -> list[str]:
        """The control run's questions of these types."""
        questions = runs.run(control).questions
        return [q for q in runs.run(control).question_ids if questions[q].type in types]


def _paired(a: dict[str, float], b: dict[str, float], resamples: int):
    from provbench.results.stats import paired_permutation

    return paired_permutation(a, b, resamples=resamples)


class RoundsOptions(TestOptions):
    system: str = LOOP
    one_round: str = Field(ONE_ROUND, description="the loop with max_rounds 1 (same seeds, prompt and gate)")
    question_types: list[str] = Field(
        default_factory=lambda: ["deep"], min_length=1, description="question types whose answer lies beyond one round"
    )
    min_difference: float = Field(0.5, ge=0, description="accuracy gained on at least half the questions")
    expect: list[Expectation] = default_expect(("oracle", True), ("parametric", False))


class RoundsReachDeepAnswers(_P002Claim):
    """On deep questions the loop is right where one round over the same seeds is not."""

    name = "rounds-reach-deep-answers"
    description = (
        "On questions 3-4 edges from every concept they name, the loop with the oracle answers them "
        "and one round over the same seeds does not."
    )
    Options = RoundsOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(controls=tuple(e.control for e in o.expect), systems=(o.system, o.one_round))

    def check(self, runs: ControlRuns) -> list[Verdict]:
        o, verdicts = self.options, []
        for e in o.expect:
            deep = self.typed(runs, e.control, o.question_types)
            loop, once = (
                runs.scores(e.control, s, BASELINE, "accuracy", questions=deep) for s in (o.system, o.one_round)
            )
            statement = (
                f"accuracy of {o.system} higher than of {o.one_round!r} on the {'/'.join(o.question_types)} questions"
            )
            verdicts.append(self.verdict(e.control, e.effect, _paired(loop, once, o.resamples), statement))
        return verdicts


class AbstainsOptions(TestOptions):
    system: str = LOOP
    question_types: list[str] = Field(
        default_factory=lambda: ["unanswerable", "too-deep"],
        min_length=1,
        description="question types the loop cannot answer within its rounds",
    )
    min_difference: float = Field(1.0, ge=0, le=1, description="share of those questions abstained on (1: every one)")
    reachable_types: list[str] = Field(
        default_factory=lambda: ["deep"],
        description="question types within the round budget: answered by every control",
    )
    expect: list[Expectation] = default_expect(("oracle", True), ("ignores-context", False))


class AbstainsWhenUnreachable(_P002Claim):
    """The loop abstains on unanswerable questions and on those deeper than its round budget."""

    name = "abstains-when-unreachable"
    description = "On unanswerable and too-deep questions the loop with the oracle abstains on every one."
    Options = AbstainsOptions

    def needs(self) -> ClaimNeeds:
        return ClaimNeeds(controls=tuple(e.control for e in self.options.expect), systems=(self.options.system,))

    def check(self, runs: ControlRuns) -> list[Verdict]:
        o, verdicts = self.options, []
        for e in o.expect:
            wanted = set(self.typed(runs, e.control, o.question_types))
            abstained = _per_question(runs, e.control, o.system, lambda r: float(r.trace.abstained), wanted)
            statement = f"{o.system} abstains on the {'/'.join(o.question_types)} questions (against never)"
            test = _paired(abstained, dict.fromkeys(abstained, 0.0), o.resamples)
            verdicts.append(self.verdict(e.control, e.effect, test, statement))
            if o.reachable_types:
                verdicts.append(self.answers_within_reach(runs, e.control))
        return verdicts

    def answers_within_reach(self, runs: ControlRuns, control: str) -> Verdict:
        """The round limit apart from the gate: the reachable questions are answered (by half at least)."""
        o = self.options
        reachable = set(self.typed(runs, control, o.reachable_types))
        answered = _per_question(runs, control, o.system, lambda r: float(not r.trace.abstained), reachable)
        statement = f"{o.system} answers the {'/'.join(o.reachable_types)} questions, within its rounds (against never)"
        return self.verdict(
            control, True, _paired(answered, dict.fromkeys(answered, 0.0), o.resamples), statement, min_difference=0.5
        )


def _invalidated(record) -> bool:
    hidden = record.trace.artifacts.get("hidden_by_intervention", {}) if record.trace is not None else {}
    return record.status == "ok" and hidden.get("invalidated", {}).get("count", 0) > 0


def _per_question(
    runs: ControlRuns, control: str, system: str, value: Callable, questions: set[str], condition: str = BASELINE
) -> dict[str, float]:
    """``value(record)`` of the baseline records of these questions (one record each)."""
    return {
        r.key.question_id: value(r)
        for r in runs.run(control).select(system, condition)
        if r.key.question_id in questions and r.trace is not None
    }


class GoldEdgeOptions(TestOptions):
    system: str = LOOP
    gold: str = Field("invalidate-gold-edge", description="the condition invalidating one gold-chain edge")
    off_chain: str = Field("invalidate-off-chain-edge", description="the condition invalidating a used edge off it")
    min_difference: float = Field(0.5, ge=0, description="'far more': at least half the answered questions more")
    expect: list[Expectation] = default_expect(("oracle", True), ("ignores-context", False))


class GoldEdgeChangesAnswer(_P002Claim):
    """An invalidated gold-chain edge changes the loop's answer; an invalidated edge off the chain does not."""

    name = "gold-edge-changes-answer"
    description = (
        "On the questions the loop answered, an invalidated edge of the gold chain changes the answer "
        "and one off the chain does not."
    )
    Options = GoldEdgeOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(
            controls=tuple(e.control for e in o.expect), systems=(o.system,), conditions=(o.gold, o.off_chain)
        )

    def about(self) -> ClaimAbout:
        """The gold edge must show an effect; the off-chain edge is its reference: it must not."""
        o = self.options
        return ClaimAbout(
            conditions=(o.gold, o.off_chain),
            positive_conditions=(o.gold,),
            reference_conditions=(o.off_chain,),
            positive_controls=tuple(e.control for e in o.expect if e.effect),
            negative_controls=tuple(e.control for e in o.expect if not e.effect),
        )

    def check(self, runs: ControlRuns) -> list[Verdict]:
        """Per control: gold above off-chain ("output changed"), then off-chain above nothing
        (an effect no control may show, however small)."""
        o, verdicts = self.options, []
        for e in o.expect:
            answered, check = self.invalidated_everywhere(runs, e.control)
            verdicts.append(check)
            gold, off = (runs.scores(e.control, o.system, c, questions=answered) for c in (o.gold, o.off_chain))
            verdicts.append(
                self.verdict(
                    e.control,
                    e.effect,
                    _paired(gold, off, o.resamples),
                    f"output of {o.system} changed more under {o.gold} than under {o.off_chain}",
                )
            )
            still = _paired(off, dict.fromkeys(off, 0.0), o.resamples)  # any significant change counts
            verdicts.append(
                self.verdict(
                    e.control, False, still, f"{o.off_chain} changes the output of {o.system}", min_difference=0.0
                )
            )
        return verdicts

    def invalidated_everywhere(self, runs: ControlRuns, control: str) -> tuple[list[str], Verdict]:
        """The answered questions where every unit of both conditions invalidated an edge, and the
        verdict that they are at least half of them (a failed or missing unit invalidated nothing)."""
        o, answered = self.options, self.answered_with_chain(runs, control)
        units = {c: {} for c in (o.gold, o.off_chain)}
        for condition, seen in units.items():
            for r in runs.run(control).select(o.system, condition):
                seen[r.key.question_id] = seen.get(r.key.question_id, True) and _invalidated(r)
        missed = [f"{c} on {q}" for q in answered for c, seen in units.items() if not seen.get(q, False)]
        kept = [q for q in answered if all(seen.get(q, False) for seen in units.values())]
        observed = (
            f"{len(kept)} of {len(answered)} answered questions; left out (no edge invalidated): "
            f"{', '.join(missed[:5]) or 'none'}{' ...' if len(missed) > 5 else ''}"
        )
        why_not = unmeasured_over(len(answered), "no question with a gold chain answered at baseline", o.alpha)
        verdict = Verdict(
            claim=self.name,
            control=control,
            observed=observed,
            passed=not why_not and 2 * len(kept) >= len(answered),
            unmeasured=why_not,
            expected=f"{o.gold} and {o.off_chain} invalidated an edge on at least half the answered "
            "questions (the others left out of the comparison)",
        )
        return kept, verdict

    def answered_with_chain(self, runs: ControlRuns, control: str) -> list[str]:
        """Questions with a gold chain that the system answered at baseline: an answer that can change."""
        questions = runs.run(control).questions
        chained = {q for q, question in questions.items() if question.gold is not None and question.gold.triples}
        return [
            q
            for q, answered in _per_question(
                runs, control, self.options.system, lambda r: not r.trace.abstained, chained
            ).items()
            if answered
        ]


CLAIMS = (RoundsReachDeepAnswers, AbstainsWhenUnreachable, GoldEdgeChangesAnswer)
