"""Claims that check the gold-trajectory scores and the leave-one-step-out intervention on known-truth
controls (``provbench validate``, docs/controls.md):

* ``gold-path-followed``: an agent driven by the oracle follows the gold chain (mean gold-path
  coverage at least ``min_coverage``), one driven by the random control does not (its coverage lies
  ``min_difference`` below the oracle's, one-sided paired permutation test over questions);
* ``critical-steps-hold-gold``: under ``leave-one-step-out-replay`` (the later actions replayed, so
  the agent cannot reach the gold another way), the steps whose removal changes the oracle's answer
  are the steps whose results held gold (at least ``min_precision`` of the critical steps held gold,
  at least ``min_recall`` of the gold-holding steps are critical); for the random control, whose
  reply hangs on every word of its prompt, leaving out a step that held no gold changes the answer
  too (at least ``min_blind_change`` of such steps): criticality tells gold from the rest only for a
  reader of evidence. The p-value is Fisher's exact test (one-sided) of "held gold" against "answer
  changed" over the control's units.

Both read per-record scores of the ``gold-trajectory`` metric, which the controls block must list.
"""

from __future__ import annotations

from collections import Counter
from statistics import fmean

from pydantic import BaseModel, ConfigDict, Field

from provbench.controls import Claim, ClaimAbout, ClaimNeeds, ControlRuns, Verdict, unmeasured_over
from provbench.results.claims import unmeasured
from provbench.model import BASELINE

from .dependence import step_dependence

AGENT = "agentic-graphrag"


class PathOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = Field(AGENT, description="the system key the claim reads")
    follower: str = Field("oracle", description="a control that follows the gold evidence")
    wanderer: str = Field("random", description="a control that does not")
    min_coverage: float = Field(0.9, ge=0, le=1, description="the follower's least mean gold-path coverage")
    min_difference: float = Field(0.3, ge=0, le=1, description="how far below the follower's the wanderer's lies")
    alpha: float = Field(0.05, gt=0, lt=1)
    resamples: int = Field(9999, ge=99, le=1_000_000)


class GoldPathFollowed(Claim):
    """The oracle's trajectories follow the gold chain; the random control's do not."""

    name = "gold-path-followed"
    description = __doc__
    Options = PathOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(controls=(o.follower, o.wanderer), systems=(o.system,))

    def about(self) -> ClaimAbout:
        """The follower must follow the gold chain and the wanderer must not: the sham swapping them fails it."""
        return ClaimAbout(positive_controls=(self.options.follower,), negative_controls=(self.options.wanderer,))

    def check(self, runs: ControlRuns) -> list[Verdict]:
        from provbench.results.stats import paired_permutation

        o = self.options
        coverage = {
            c: runs.scores(c, o.system, BASELINE, "gold.path_coverage", questions=runs.run(c).question_ids)
            for c in (o.follower, o.wanderer)
        }
        test = paired_permutation(coverage[o.follower], coverage[o.wanderer], resamples=o.resamples, alpha=o.alpha)
        means = {c: fmean(v.values()) if v else None for c, v in coverage.items()}
        nothing = "no question with a mapped gold chain"
        follower_unmeasured = unmeasured_over(len(coverage[o.follower]), nothing, o.alpha)
        wanderer_unmeasured = unmeasured(test) if test.n else f"not measurable: {nothing} in both"

        def shown(c: str) -> str:
            if means[c] is None:
                return nothing
            return f"mean gold-path coverage {means[c]:.2f} over {len(coverage[c])} question(s)"

        follower_ok = means[o.follower] is not None and means[o.follower] >= o.min_coverage
        apart = (
            test.n > 0 and test.p_value is not None and test.p_value < o.alpha and test.difference >= o.min_difference
        )
        return [
            Verdict(
                claim=self.name,
                control=o.follower,
                p_value=test.p_value,
                passed=follower_ok and not follower_unmeasured,
                unmeasured=follower_unmeasured,
                expected=f"{o.system} follows the gold chain: mean gold-path coverage >= {o.min_coverage:g}",
                observed=shown(o.follower),
            ),
            Verdict(
                claim=self.name,
                control=o.wanderer,
                p_value=test.p_value,
                passed=apart and not wanderer_unmeasured,
                unmeasured=wanderer_unmeasured,
                expected=f"{o.system} does not: coverage at least {o.min_difference:g} below {o.follower}'s "
                f"(one-sided paired permutation test, p < {o.alpha:g})",
                observed=f"{shown(o.wanderer)}; {test.mean_a:.2f} vs {test.mean_b:.2f} over {test.n} paired"
                if test.n
                else shown(o.wanderer),
            ),
        ]


class CriticalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = Field(AGENT, description="the system key the claim reads")
    condition: str = Field("leave-one-step-out-replay", description="the leave-one-step-out condition's key")
    follower: str = Field("oracle", description="a control whose answers rest on the gold evidence")
    blind: str = Field("random", description="a control whose answers rest on everything in its prompt")
    min_precision: float = Field(1.0, ge=0, le=1, description="share of the follower's critical steps that held gold")
    min_recall: float = Field(
        0.9, ge=0, le=1, description="share of the follower's gold-holding steps that are critical"
    )
    min_blind_change: float = Field(
        0.5, ge=0, le=1, description="share of the blind control's gold-less steps whose removal changes it"
    )


class CriticalStepsHoldGold(Claim):
    """The steps the oracle's answers depend on are the steps that brought it gold evidence."""

    name = "critical-steps-hold-gold"
    description = __doc__
    Options = CriticalOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(controls=(o.follower, o.blind), systems=(o.system,), conditions=(o.condition,))

    def about(self) -> ClaimAbout:
        """The step condition must show its effect, and the follower's critical steps must be the gold ones
        (swapped for the blind control's, they are not)."""
        o = self.options
        return ClaimAbout(
            conditions=(o.condition,),
            positive_conditions=(o.condition,),
            positive_controls=(o.follower,),
            negative_controls=(o.blind,),
        )

    def check(self, runs: ControlRuns) -> list[Verdict]:
        return [self.follower_verdict(runs), self.blind_verdict(runs)]

    def table(self, runs: ControlRuns, control: str) -> tuple[Counter, int, int, str]:
        """(held gold, changed) -> units; units; failed units (left out); why the questions whose
        steps were left out decide nothing ("" when they decide)."""
        run = runs.run(control)
        analysed = set(run.analysed)
        dep = step_dependence(
            r for r in run.select(self.options.system, self.options.condition) if r.key.question_id in analysed
        )
        nothing = f"no step left out under {self.options.condition}"
        return dep.with_gold, dep.units, dep.failed, unmeasured_over(dep.questions, nothing)

    def follower_verdict(self, runs: ControlRuns) -> Verdict:
        o = self.options
        table, units, failed, why_not = self.table(runs, o.follower)
        critical = table[(True, True)] + table[(False, True)]
        holding = table[(True, True)] + table[(True, False)]
        precision = table[(True, True)] / critical if critical else None
        recall = table[(True, True)] / holding if holding else None
        passed = (
            precision is not None and precision >= o.min_precision and recall is not None and recall >= o.min_recall
        )
        return Verdict(
            claim=self.name,
            control=o.follower,
            p_value=_fisher(table),
            passed=passed and not why_not,
            unmeasured=why_not,
            expected=f"under {o.condition}, its answer changes only when the left-out step held gold (>= "
            f"{o.min_precision:g} of critical steps) and when one did (>= {o.min_recall:g} of gold-holding steps)",
            observed=f"{table[(True, True)]}/{critical} critical step(s) held gold; {table[(True, True)]}/{holding} "
            f"gold-holding step(s) critical; {units} unit(s), {failed} failed",
        )

    def blind_verdict(self, runs: ControlRuns) -> Verdict:
        o = self.options
        table, _, _, why_not = self.table(runs, o.blind)
        gold_less = table[(False, True)] + table[(False, False)]
        share = table[(False, True)] / gold_less if gold_less else None
        return Verdict(
            claim=self.name,
            control=o.blind,
            p_value=_fisher(table),
            passed=not why_not and share is not None and share >= o.min_blind_change,
            unmeasured=why_not,
            expected=f"under {o.condition}, leaving out a step that held no gold changes its answer too (>= "
            f"{o.min_blind_change:g} of such steps): criticality alone does not single out gold",
            observed=f"{table[(False, True)]}/{gold_less} gold-less step(s) changed its answer; "
            f"{table[(True, True)]}/{table[(True, True)] + table[(True, False)]} gold-holding ones did",
        )


def _fisher(table) -> float | None:
    """One-sided Fisher's exact test: are answer changes more frequent after removing a gold-holding step?"""
    from scipy.stats import fisher_exact

    cells = [[table[(True, True)], table[(True, False)]], [table[(False, True)], table[(False, False)]]]
    if not any(map(sum, cells)) or not all(map(sum, cells)):
        return None
    return float(fisher_exact(cells, alternative="greater").pvalue)


CLAIMS = (GoldPathFollowed, CriticalStepsHoldGold)
