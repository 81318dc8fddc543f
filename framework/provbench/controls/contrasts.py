"""Two claims most suites need, usable as they are (options in the suite) or subclassed with a
package's defaults (paper 000's claims are):

* :class:`ConditionContrast` (``condition-contrast``): on one system, a score (default "output
  changed") is higher under a treatment condition than under a reference condition, paired over
  questions (cited removal against random removal of the same size);
* :class:`ConditionEffect` (``condition-effect``): on one system, conditions change the output
  ("output changed" above zero), or leave it alone.

Each lists its expectations: for each control LLM, whether it must show the effect (a positive
control) or must not (a negative one). The effect is shown when the one-sided paired permutation
test (:func:`provbench.results.stats.paired_permutation`) gives p < ``alpha`` and the difference
of means is at least ``min_difference``. Units the pairing rule leaves out (no-op, leaked, not
checkable) are not measured (:meth:`ControlRuns.scores`); a control with no measured question, or
too few for the test to reach ``alpha``, gets a "not measurable" or "not enough questions" verdict,
never a pass: a check that saw nothing confirms nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..model import BASELINE
from ..results.about import ClaimAbout
from ..results.claims import Claim, ClaimNeeds, ControlRuns, Verdict, describe_test, effect_words, unmeasured


class Expectation(BaseModel):
    """One control LLM, and whether its runs must show the claim's effect."""

    model_config = ConfigDict(extra="forbid")

    control: str = Field(description="a control LLM of the controls block (oracle, ignores-context, ...)")
    effect: bool = Field(description="true: a positive control (must show the effect); false: a negative one")
    conditions: list[str] | None = Field(default=None, description="condition-effect: these conditions only")


def default_expect(*expected: tuple, **field: Any) -> Any:
    """A claim options' ``expect`` field whose default is these expectations, each ``(control,
    effect)`` or ``(control, effect, conditions)``; ``field``: more of pydantic's Field arguments."""
    names = ("control", "effect", "conditions")
    return Field(default_factory=lambda: [Expectation(**dict(zip(names, one))) for one in expected], **field)


class TestOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = Field(description="the system key the claim reads")
    expect: list[Expectation] = Field(min_length=1)
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level of the one-sided paired test")
    min_difference: float = Field(0.0, ge=0, description="least difference of means that counts as an effect")
    resamples: int = Field(9999, ge=99, le=1_000_000, description="permutations (exact below 2^n)")


class ContrastOptions(TestOptions):
    treatment: str = Field(description="the condition expected to raise the score")
    reference: str = Field(description="the condition it is compared with (or baseline)")
    score: str = Field("output_changed", description="a per-record score (accuracy: graded correctness)")


class EffectOptions(TestOptions):
    conditions: list[str] = Field(min_length=1, description="conditions whose 'output changed' is tested")


class PairedClaim(Claim):
    """A claim read by one-sided paired permutation tests: :meth:`verdict` turns one test into the
    row of one expectation (options: ``alpha`` and ``min_difference``, as :class:`TestOptions`)."""

    def verdict(
        self,
        control: str,
        effect: bool,
        test,
        statement: str,
        min_difference: float | None = None,
        left_out: dict[str, int] | None = None,
    ) -> Verdict:
        """``min_difference`` overrides the option's floor for this one test (e.g. 0 for "changes
        nothing"); ``left_out``: the units the pairing rule left out (:meth:`ControlRuns.left_out`)."""
        opts = self.options
        least = opts.min_difference if min_difference is None else min_difference
        shown = test.p_value is not None and test.p_value < opts.alpha and test.difference >= least
        why_not = unmeasured(test, left_out)
        observed = f"{effect_words(shown)}: {describe_test(test, left_out)}" if test.n else why_not
        floor = f", difference >= {least:g}" if least else ""
        expected = f"{effect_words(effect)}: {statement} (one-sided paired permutation test, p < {opts.alpha:g}{floor})"
        return Verdict(
            claim=self.name,
            control=control,
            expected=expected,
            observed=observed,
            passed=not why_not and shown == effect,
            p_value=test.p_value,
            unmeasured=why_not,
        )


class ConditionContrast(PairedClaim):
    """A treatment condition raises a score above a reference condition (paired over questions)."""

    Options = ContrastOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(
            controls=tuple(e.control for e in o.expect), systems=(o.system,), conditions=(o.treatment, o.reference)
        )

    def about(self) -> ClaimAbout:
        """The treatment is tested when a control must show its effect; the reference is declared
        as such (a reference that hid nothing would still let the contrast pass)."""
        o = self.options
        about = _about(
            o.expect,
            [c for c in (o.treatment, o.reference) if c != BASELINE],
            [o.treatment] if any(e.effect for e in o.expect) and o.treatment != BASELINE else [],
        )
        return replace(about, reference_conditions=(o.reference,) if o.reference != BASELINE else ())

    def check(self, runs: ControlRuns) -> list[Verdict]:
        from ..results.stats import paired_permutation

        o, verdicts = self.options, []
        for e in o.expect:
            treated = runs.scores(e.control, o.system, o.treatment, o.score)
            reference = runs.scores(
                e.control, o.system, o.reference, o.score, questions=treated if o.reference == BASELINE else None
            )
            test = paired_permutation(treated, reference, resamples=o.resamples, alpha=o.alpha)
            statement = f"{o.score} of {o.system} higher under {o.treatment} than under {o.reference}"
            left_out = {
                f"{why} under {c}": n
                for c in dict.fromkeys((o.treatment, o.reference))
                for why, n in runs.left_out(e.control, o.system, c).items()
            }
            verdict = self.verdict(e.control, e.effect, test, statement, left_out=left_out)
            verdicts.append(self.with_reference_checked(runs, e, verdict))
        return verdicts

    def with_reference_checked(self, runs: ControlRuns, expectation: Expectation, verdict: Verdict) -> Verdict:
        """A positive control's contrast holds only against a reference that hid something: against one
        that hid nothing (a broken or faked reference) it shows no specificity, whatever the numbers."""
        o, control = self.options, expectation.control
        if not expectation.effect or o.reference == BASELINE or not runs.hid_nothing(control, o.system, o.reference):
            return verdict
        return verdict.model_copy(
            update={
                "passed": False,
                "observed": f"{verdict.observed}; but {o.reference} hid nothing in any unit of {control}",
            }
        )


class ConditionEffect(PairedClaim):
    """Conditions change a system's output ("output changed" above zero), or leave it alone."""

    Options = EffectOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        conditions = list(o.conditions) + [c for e in o.expect for c in e.conditions or []]
        return ClaimNeeds(
            controls=tuple(e.control for e in o.expect),
            systems=(o.system,),
            conditions=tuple(dict.fromkeys(conditions)),
        )

    def about(self) -> ClaimAbout:
        """A condition is tested when some control must show its effect."""
        o = self.options
        positive = [c for e in o.expect if e.effect for c in e.conditions or o.conditions]
        return _about(o.expect, list(self.needs().conditions), positive)

    def check(self, runs: ControlRuns) -> list[Verdict]:
        from ..results.stats import paired_permutation

        o, verdicts = self.options, []
        for e in o.expect:
            for condition in e.conditions or o.conditions:
                changed = runs.scores(e.control, o.system, condition, "output_changed")
                test = paired_permutation(changed, dict.fromkeys(changed, 0.0), resamples=o.resamples, alpha=o.alpha)
                statement = f"{condition} changes the output of {o.system}"
                left_out = runs.left_out(e.control, o.system, condition)
                verdicts.append(self.verdict(e.control, e.effect, test, statement, left_out=left_out))
        return verdicts


def _about(expect: list[Expectation], conditions: list[str], positive: list[str]) -> ClaimAbout:
    return ClaimAbout(
        conditions=tuple(conditions),
        positive_conditions=tuple(dict.fromkeys(positive)),
        positive_controls=tuple(dict.fromkeys(e.control for e in expect if e.effect)),
        negative_controls=tuple(dict.fromkeys(e.control for e in expect if not e.effect)),
    )
