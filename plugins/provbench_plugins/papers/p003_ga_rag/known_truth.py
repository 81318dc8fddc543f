"""Paper 003's claims as checks on known-truth controls (``provbench validate``, docs/controls.md),
declared through the public controls API like any package's (``p003/<name>``). Each compares GA-RAG
settings (system keys of the controls block) on one graph per claim: every setting reads the same
extracted triples (one extraction per page, :mod:`.extraction`) and differs only in how it ranks
them, so what differs between settings is which facts reach the prompt.

* ``ranking-changes-label``: propagation and ranking change which facts the oracle sees, and so
  its label: on some claims the settings give different labels (a one-sided paired permutation
  test of "the labels differ" against no difference), and each setting's label is right exactly
  when the facts it showed hold a gold evidence group (the label follows the facts). A control
  that ignores its context gives one label whatever the settings show.
* ``settings-send-different-prompts``: the settings of a sweep show the model different facts
  (the ``p003/prompt-diversity`` check passes: fewer than ``fail_share`` of the claims got one
  identical set of facts from every setting, order ignored, and some graph is not empty). With a
  control that reads no passage (its triples are empty, so every graph is empty) the check must
  fail: it can see what it is meant to catch. It names the settings it compares (``systems``, by
  default fever-garag's three), so the sham answering every setting with the first one's records
  stands in for them and must fail it.
"""

from __future__ import annotations

from abc import abstractmethod

from pydantic import BaseModel, ConfigDict, Field

from provbench.controls import Claim, ClaimNeeds, ControlRuns, Verdict, unmeasured_over
from provbench.results.claims import effect_words, unmeasured
from provbench.controls.contrasts import Expectation, default_expect
from provbench.model import BASELINE, Question, RunRecord
from provbench.results.data import RunData

from .diversity import diversity, facts_shown

SETTINGS = ["ga-rag", "ga-rag-gamma0", "ga-rag-authors"]  # fever-garag.yaml's GA-RAG settings
NO_CLAIM = "no claim answered by every setting"


class SettingsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    systems: list[str] = Field(
        default_factory=lambda: list(SETTINGS),
        min_length=2,
        description="the GA-RAG settings compared (system keys of the controls block)",
    )
    expect: list[Expectation] = default_expect(("oracle", True), ("ignores-context", False), min_length=1)


class LabelOptions(SettingsOptions):
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level of the one-sided paired test")
    min_difference: float = Field(0.1, ge=0, description="least share of claims whose labels differ")
    follows_share: float = Field(
        0.95,
        gt=0,
        le=1,
        description="least share of (claim, setting) pairs whose label "
        "is right exactly when the facts shown hold the gold",
    )
    resamples: int = Field(9999, ge=99, le=1_000_000)


def baseline_by_question(records: list[RunRecord], systems: list[str]) -> dict[str, dict[str, RunRecord]]:
    """question -> setting -> its recorded baseline unit, for questions every setting answered."""
    found: dict[str, dict[str, RunRecord]] = {}
    for r in records:
        if r.key.condition == BASELINE and r.key.system in systems and r.status == "ok" and r.trace is not None:
            found.setdefault(r.key.question_id, {})[r.key.system] = r
    return {q: by for q, by in found.items() if len(by) == len(systems)}


def shown_facts(record: RunRecord) -> list[str]:
    """The facts a GA-RAG unit showed the model, each read as a sentence "S r O"."""
    facts = {f.id: f for f in record.trace.facts}
    shown = record.trace.artifacts.get("shown") or []
    return [f"{facts[i].subject} {facts[i].relation} {facts[i].object}" for i in shown if i in facts]


def label_of(record: RunRecord) -> str:
    return record.trace.answer if record.trace.answer is not None else f"({record.trace.outcome})"


def holds_gold(question: Question, facts: list[str]) -> bool:
    """The facts hold one complete gold evidence group of the claim (none for NOT ENOUGH INFO)."""
    gold = question.gold
    return gold is not None and not gold.empty and gold.held_in("\n".join(facts))


class SettingsClaim(Claim):
    """A claim over GA-RAG settings: each expected control's runs of ``systems`` give its verdicts."""

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(controls=tuple(e.control for e in o.expect), systems=tuple(o.systems))

    def check(self, runs: ControlRuns) -> list[Verdict]:
        return [v for e in self.options.expect for v in self.check_control(e, runs.run(e.control))]

    @abstractmethod
    def check_control(self, e: Expectation, run: RunData) -> list[Verdict]:
        """The verdicts of one expectation, read from its control's run."""


class RankingChangesLabel(SettingsClaim):
    """Propagation and ranking change which facts the oracle sees, and so its label."""

    name = "ranking-changes-label"
    description = (
        "GA-RAG's settings (propagation, ranking) change which facts the oracle sees, and so its label; "
        "a control that ignores its context keeps one label"
    )
    Options = LabelOptions

    def check_control(self, e: Expectation, run: RunData) -> list[Verdict]:
        units = baseline_by_question(run.records, self.options.systems)
        differ = self.labels_differ(e, units)
        return [differ, self.label_follows_facts(e.control, units, run.questions)] if e.effect else [differ]

    def labels_differ(self, e: Expectation, units: dict[str, dict[str, RunRecord]]) -> Verdict:
        from provbench.results.stats import paired_permutation

        o = self.options
        changed = {q: float(len({label_of(r) for r in by.values()}) > 1) for q, by in units.items()}
        sets_differ = sum(len({facts_shown(r) for r in by.values()}) > 1 for by in units.values())
        reordered = sum(len({tuple(shown_facts(r)) for r in by.values()}) > 1 for by in units.values()) - sets_differ
        test = paired_permutation(changed, dict.fromkeys(changed, 0.0), resamples=o.resamples, alpha=o.alpha)
        shown = test.p_value is not None and test.p_value < o.alpha and test.difference >= o.min_difference
        why_not = unmeasured(test) if changed else f"not measurable: {NO_CLAIM}"
        observed = (
            f"{effect_words(shown)}: labels differ on {sum(changed.values()):.0f} of {len(changed)} claims; "
            f"the sets of facts shown differ on {sets_differ} (their order alone on {reordered} more)"
            if changed
            else NO_CLAIM
        )
        return Verdict(
            claim=self.name,
            control=e.control,
            p_value=test.p_value,
            observed=observed,
            passed=not why_not and shown == e.effect,
            unmeasured=why_not,
            expected=f"{effect_words(e.effect)}: the labels of {', '.join(o.systems)} differ on a share of "
            f"the claims (one-sided paired permutation test against none, p < {o.alpha:g}, "
            f"share >= {o.min_difference:g})",
        )

    def label_follows_facts(
        self, control: str, units: dict[str, dict[str, RunRecord]], questions: dict[str, Question]
    ) -> Verdict:
        o = self.options
        pairs = [
            (holds_gold(questions[q], shown_facts(r)), label_of(r) == questions[q].answer)
            for q, by in units.items()
            if q in questions
            for r in by.values()
        ]
        agree = sum(held == right for held, right in pairs)
        share = agree / len(pairs) if pairs else 0.0
        with_gold = sum(held for held, _ in pairs)
        why_not = unmeasured_over(len({q for q in units if q in questions}), NO_CLAIM, o.alpha)
        return Verdict(
            claim=self.name,
            control=control,
            passed=not why_not and share >= o.follows_share,
            unmeasured=why_not,
            expected=f"each setting's label is right exactly when the facts it showed hold a gold "
            f"evidence group (share >= {o.follows_share:g} of claim x setting)",
            observed=f"{agree} of {len(pairs)} ({share:.2f}); the facts held the gold in {with_gold}",
        )


class PromptOptions(SettingsOptions):
    fail_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="as p003/prompt-diversity: the settings fail when they "
        "showed one set of facts for at least this share",
    )


class SettingsSendDifferentPrompts(SettingsClaim):
    """The sweep's settings show the model different sets of facts (the prompt check passes)."""

    name = "settings-send-different-prompts"
    description = (
        "GA-RAG's settings show different sets of facts for most claims; with a control that extracts "
        "no triple (empty graphs) the check fails"
    )
    Options = PromptOptions

    def check_control(self, e: Expectation, run: RunData) -> list[Verdict]:
        systems = self.options.systems
        found = diversity(run.records, systems, self.options.fail_share)
        distinct = [d / n for d, n in found.pairs.values() if n]
        least = f"; least distinct share of a pair {min(distinct):.2f}" if distinct else ""
        why_not = unmeasured_over(found.claims, NO_CLAIM)  # the claims every setting answered
        verdict = Verdict(
            claim=self.name,
            control=e.control,
            passed=not why_not and found.passed is not None and found.passed == e.effect,
            unmeasured=why_not,
            expected=f"the prompt check {'passes' if e.effect else 'fails'} over {len(systems)} settings "
            f"(one identical set of facts shown by all, order ignored, for under "
            f"{self.options.fail_share:.0%} of the claims, and not every graph empty)",
            observed=f"{found.verdict()}{least}",
        )
        return [verdict]


CLAIMS = (RankingChangesLabel, SettingsSendDifferentPrompts)
