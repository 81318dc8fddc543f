"""Paper 000's claims as checks on known-truth controls (``provbench validate``, docs/controls.md),
declared as any package would: claims on :mod:`provbench.controls`, registered with
``provbench_register_claims`` (so they are ``p000/<name>``). Defaults name paper 000's systems and
ablations; a suite may override any option.

* ``cited-removal-beats-random``: removing the baseline's cited entities changes the oracle
  agent's answers far more than removing as many random ones, and costs it the right answers
  random removal leaves; an agent that ignores its context changes under neither. Both halves
  are needed: an LLM whose reply is a hash of its prompt (the ``random`` control) also changes
  more under cited removal (it cited what its prompts showed, random removal now draws entities
  it never visited), but it had no right answer to lose.
* ``exclusion-reference``: with the parametric control as the ``llm-only`` reference, the
  exclusion step leaves out every question; with the oracle (which knows nothing without
  evidence), none. It reads the exclusion the run recorded, so it fails with the step off.
* ``entity-removal-breaks-uncited``: removing the visited-but-uncited entities changes the answers
  of the control that used evidence it did not cite (its uncited gold entities are exactly those),
  and not those of an agent that ignores its context.
* ``text-only-isolation-gentler``: text-only isolation changes fewer answers than full isolation
  (the paper's Study 1 contrast): the uncited-evidence control keeps its answers when only text
  goes, loses them when the entities go.
* ``hides-own-text``: the text rule, read from what each unit's view hid (its record's
  ``hidden_by_intervention``) against the knowledge base: every condition that removes or masks
  entities hides their own text, bar the cited text it keeps, and text-only isolation hides as
  much text as full isolation. The control LLMs answer from relation lines, so no answer can
  show the text rule; this claim does.
* ``ignores-context-unchanged``: no ablation changes the answers of an agent that ignores its
  context, while each does change a control that reads it: cited removal the oracle's, full
  isolation and entity removal those of ``uses-uncited`` (full isolation keeping the oracle's, or a
  same-size random set, nearly everything, would pass for it). Only ablations some control's answers
  can show are named (``CHANGE_ANSWERS``): random removal is cited removal's reference, and text-only
  isolation and entity text mask hide text alone, which ``hides-own-text`` sees.
* ``isolation-breaks-uncited``: full isolation (only the cited evidence left) keeps the faithful
  citer (the oracle) right, but changes the answers of the control that used evidence it did not
  cite: citations are necessary, not sufficient, and the ablation detects it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from provbench.controls import Claim, ClaimAbout, ClaimNeeds, ConditionContrast, ConditionEffect, ControlRuns, Verdict
from provbench.controls.contrasts import ContrastOptions, EffectOptions, Expectation, default_expect

from .text_rule_claim import HidesOwnText

AGENT = "agentic-graphrag"
# The ablations some control's answers show: the controls answer from relation lines, so text-only
# isolation and entity text mask (text alone) change no answer (hides-own-text reads their text
# rule), and random removal seldom hits the gold (it is cited removal's reference).
CHANGE_ANSWERS = ["cited-removal", "full-isolation", "entity-removal"]


class CitedRemovalBeatsRandomOptions(ContrastOptions):
    system: str = AGENT
    treatment: str = "cited-removal"
    reference: str = "random-removal"
    min_difference: float = Field(0.5, ge=0, description="'far more': at least half the questions more")
    expect: list[Expectation] = default_expect(("oracle", True), ("ignores-context", False))


class CitedRemovalBeatsRandom(ConditionContrast):
    """Cited removal changes a context reader's answers far more than random removal of the same size."""

    name = "cited-removal-beats-random"
    description = __doc__
    Options = CitedRemovalBeatsRandomOptions

    def check(self, runs: ControlRuns) -> list[Verdict]:
        """Output changed (treatment above reference), then accuracy (reference above treatment)."""
        o = self.options
        accuracy = ConditionContrast(
            **{**o.model_dump(), "treatment": o.reference, "reference": o.treatment, "score": "accuracy"}
        )
        accuracy.name = self.name
        return super().check(runs) + accuracy.check(runs)


class IgnoresContextOptions(EffectOptions):
    system: str = AGENT
    conditions: list[str] = Field(
        default_factory=lambda: list(CHANGE_ANSWERS),
        description="ablations a context reader's answers show (see CHANGE_ANSWERS)",
    )
    expect: list[Expectation] = default_expect(
        ("ignores-context", False),
        ("oracle", True, ["cited-removal"]),
        ("uses-uncited", True, ["full-isolation", "entity-removal"]),
        # full isolation hides nearly everything, so a same-size random set changes uses-uncited too:
        # only the faithful citer keeping its answers tells the real isolation apart
        ("oracle", False, ["full-isolation"]),
    )

    @model_validator(mode="after")
    def _expect_on_these_conditions(self):
        """A positive expectation holds on the claim's conditions only (a suite that runs fewer
        ablations narrows ``conditions`` alone); one left with none of them is dropped."""
        kept = []
        for e in self.expect:
            on = None if e.conditions is None else [c for c in e.conditions if c in self.conditions]
            if on is None or on:
                kept.append(e.model_copy(update={"conditions": on}))
        self.expect = kept
        return self


class IgnoresContextUnchanged(ConditionEffect):
    """No ablation changes an agent that ignores its context, while each changes a control that
    reads it: cited removal the oracle, full isolation and entity removal ``uses-uncited`` (full
    isolation keeping the oracle's answers)."""

    name = "ignores-context-unchanged"
    description = __doc__
    Options = IgnoresContextOptions


class _BreaksUncitedOptions(EffectOptions):
    """One ablation changes the answers of the control that used evidence it did not cite."""

    system: str = AGENT
    min_difference: float = 0.5


class IsolationOptions(_BreaksUncitedOptions):
    conditions: list[str] = Field(default_factory=lambda: ["full-isolation"])
    expect: list[Expectation] = default_expect(("uses-uncited", True), ("oracle", False))


class IsolationBreaksUncited(ConditionEffect):
    """Full isolation keeps the faithful citer's answers but changes those of one that used uncited evidence."""

    name = "isolation-breaks-uncited"
    description = __doc__
    Options = IsolationOptions


class EntityRemovalOptions(_BreaksUncitedOptions):
    conditions: list[str] = Field(default_factory=lambda: ["entity-removal"])
    expect: list[Expectation] = default_expect(("uses-uncited", True), ("ignores-context", False))


class EntityRemovalBreaksUncited(ConditionEffect):
    """Removing the visited-but-uncited entities changes the answers of a control that used them uncited."""

    name = "entity-removal-breaks-uncited"
    description = __doc__
    Options = EntityRemovalOptions


class GentlerOptions(ContrastOptions):
    system: str = AGENT
    treatment: str = "full-isolation"
    reference: str = "text-only-isolation"
    min_difference: float = 0.5
    expect: list[Expectation] = default_expect(("uses-uncited", True), ("ignores-context", False))


class TextOnlyIsolationGentler(ConditionContrast):
    """Text-only isolation changes fewer answers than full isolation (Study 1's contrast)."""

    name = "text-only-isolation-gentler"
    description = __doc__
    Options = GentlerOptions


class ExclusionOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reference_system: str = Field("llm-only", description="the exclusion step's reference system")
    knows: str = Field("parametric", description="a control right without evidence: every question excluded")
    ignorant: str = Field("oracle", description="a control wrong without evidence: no question excluded")


class ExclusionReference(Claim):
    """The exclusion step leaves out what the reference knows without evidence: all for a
    parametric reference, nothing for the oracle."""

    name = "exclusion-reference"
    description = "The exclusion step leaves out every question for a parametric reference and none for the oracle."
    Options = ExclusionOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(controls=(o.knows, o.ignorant), systems=(o.reference_system,))

    def about(self) -> ClaimAbout:
        """The suite's exclusion step, shown by the knowing control and not by the ignorant one."""
        o = self.options
        return ClaimAbout(options=("exclusion",), positive_controls=(o.knows,), negative_controls=(o.ignorant,))

    def check(self, runs: ControlRuns) -> list[Verdict]:
        from provbench.results.stats import mcnemar

        o = self.options
        right = {
            c: runs.scores(c, o.reference_system, score="accuracy", questions=runs.run(c).question_ids)
            for c in (o.knows, o.ignorant)
        }
        test = mcnemar(right[o.knows], right[o.ignorant])  # paired: the knowing reference right, the other wrong
        verdicts = []
        for control, everything in ((o.knows, True), (o.ignorant, False)):
            run = runs.run(control)
            excluded = runs.excluded(control) & set(run.question_ids)  # what the run left out, not a recount
            total = len(run.question_ids)
            want = total if everything else 0
            verdicts.append(
                Verdict(
                    claim=self.name,
                    control=control,
                    p_value=test.p_value,
                    expected=f"{'every' if everything else 'no'} question excluded by {o.reference_system} ({want}/{total})",
                    observed=f"{len(excluded)}/{total} excluded (McNemar of {o.knows} vs {o.ignorant} on "
                    f"{o.reference_system}: {test.baseline_only} vs {test.condition_only} discordant)",
                    passed=bool(total) and len(excluded) == want and not test.too_few,
                    unmeasured=test.too_few,  # a knowing and an ignorant reference too few to tell apart
                )
            )
        return verdicts


CLAIMS = (
    CitedRemovalBeatsRandom,
    EntityRemovalBreaksUncited,
    ExclusionReference,
    HidesOwnText,
    IgnoresContextUnchanged,
    IsolationBreaksUncited,
    TextOnlyIsolationGentler,
)
