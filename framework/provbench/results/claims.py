"""Claims: what a suite's known-truth controls must show, and the door a package declares them by.

A claim is a plugin of kind ``claim`` (hook ``provbench_register_claims``), like a system or a
metric. ``provbench validate`` runs the suite's ``controls:`` block once per control LLM (each
run is an ordinary run directory), hands the claim those runs as :class:`ControlRuns`, and
prints what :meth:`Claim.check` returns: one :class:`Verdict` per control, with what was expected,
what was observed, the uncorrected p-value of its paired test and whether it passed.

A claim states what it reads (:meth:`Claim.needs`: control LLMs, systems, conditions), so a
suite that lacks one is refused when it is loaded, naming the file, line and claim. Most claims
are a contrast between conditions or an effect of conditions, with a positive control that
must show the effect and a negative one that must not: :mod:`provbench.controls.contrasts`
has both, ready to subclass with a package's defaults. docs/controls.md shows how to write one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from pydantic import BaseModel, Field

from ..model import BASELINE
from ..plugin_base import Plugin

if TYPE_CHECKING:
    from .about import ClaimAbout
    from .data import RunData


class Verdict(BaseModel):
    """One row of ``provbench validate``: a claim checked on one control LLM's run."""

    claim: str
    control: str
    expected: str = Field(description="what the claim says this control must show, in words")
    observed: str = Field(description="what its run showed, with the counts behind it")
    passed: bool
    p_value: float | None = Field(default=None, description="the paired test's uncorrected p-value, if any")
    expected_failure: str = Field(default="", description="why the suite expects this claim to fail (not counted)")
    open: str = Field(default="", description="why the claim's outcome is open on this suite (not counted)")
    unmeasured: str = Field(
        default="",
        description="why no verdict could be reached: 'not measurable: 22 no-op' (every unit left out by "
        "the pairing rule), 'not enough questions (n=1; needs >= 5)'; such a verdict never passes",
    )
    unmeasured_expected: str = Field(default="", description="why the suite expects it not measurable (not counted)")

    @property
    def status(self) -> str:
        if self.unmeasured:
            excuse = ("expected failure" if self.expected_failure else "open" if self.open else "") or (
                "expected" if self.unmeasured_expected else ""
            )
            return f"{self.unmeasured} ({excuse})" if excuse else self.unmeasured.upper()
        if self.expected_failure:
            return "unexpected pass" if self.passed else "expected failure"
        if self.open:
            return "open: pass" if self.passed else "open: fail"
        return "pass" if self.passed else "FAIL"

    @property
    def counts_as_failure(self) -> bool:
        """A failed verdict the suite did not expect: ``provbench validate`` exits with status 4.
        An unmeasured one fails unless the suite says why it is expected (``expect_not_measurable``)."""
        if self.unmeasured and self.unmeasured_expected:
            return False
        return not self.passed and not self.expected_failure and not self.open


@dataclass(frozen=True)
class ClaimNeeds:
    """What a claim reads: control LLM names, system keys and condition keys of the controls block."""

    controls: tuple[str, ...] = ()
    systems: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()


class Claim(Plugin, ABC):
    """A statement the controls confirm or refute. ``description`` says it in one sentence."""

    kind = "claim"
    description: str = ""

    def needs(self) -> ClaimNeeds:
        """What the claim reads; a suite lacking any of it is refused when loaded."""
        return ClaimNeeds()

    def about(self) -> "ClaimAbout":
        """What the claim tests (:mod:`provbench.results.about`): its shams are derived from it."""
        from .about import default_about

        return default_about(self)

    @abstractmethod
    def check(self, runs: "ControlRuns") -> list[Verdict]:
        """One verdict per control the claim reads (or more: one per condition, say)."""


class ControlRuns:
    """The finished runs of a suite's controls, one per control LLM (name -> RunData)."""

    def __init__(self, runs: dict[str, "RunData"], blind: str | None = None) -> None:
        self.runs = runs
        self.blind = blind  # a sham explanation (provbench.controls.shams): first, random or shuffled

    def credit(self, what: str, candidates: list[str], credit: list[float]) -> list[float]:
        """The credit an explanation or ranking ``what`` gives its ``candidates`` (in the order
        shown), as the claim computed it; under a blind sham, the first candidate's, a random
        one's, or the credit shuffled. A claim that reads an explanation routes it through here."""
        from .about import blind_credit

        return blind_credit(self.blind, what, candidates, credit) if self.blind else list(credit)

    @property
    def controls(self) -> list[str]:
        return list(self.runs)

    def run(self, control: str) -> "RunData":
        if control not in self.runs:
            raise KeyError(f"no run of control {control!r} (runs: {', '.join(self.runs) or 'none'})")
        return self.runs[control]

    def excluded(self, control: str) -> set[str]:
        """Questions the exclusion step left out of this control's interventions."""
        return self.run(control).excluded

    def analysed(self, control: str) -> list[str]:
        """Questions the control's interventions ran on (every question not excluded)."""
        return self.run(control).analysed

    def hid_nothing(self, control: str, system: str, condition: str) -> bool:
        """Whether every unit of ``condition`` hid nothing (the leak guard's ``no-op``): a contrast's
        reference that did so compared the treatment with nothing. False when no unit was checked (a
        context-level intervention) or the condition ran no unit."""
        units = [r for r in self.run(control).records if (r.key.system, r.key.condition) == (system, condition)]
        return bool(units) and all(r.leak_check is not None and r.leak_check.status == "no-op" for r in units)

    def scores(
        self,
        control: str,
        system: str,
        condition: str = BASELINE,
        score: str = "output_changed",
        questions: Iterable[str] | None = None,
    ) -> dict[str, float]:
        """Per-question mean of ``score`` (``accuracy``: graded correctness) over a condition's
        repeats, for the analysed questions (all questions for ``questions=...`` given), under the
        pairing rule (:mod:`provbench.results.rules`): a unit whose intervention hid nothing
        (``no-op``), leaked or is not checkable measured nothing, so a claim's statistics leave it
        out as every table does; :meth:`left_out` counts them for the verdict."""
        from .stats import per_question

        run = self.run(control)
        wanted = set(questions if questions is not None else self.analysed(control))
        values = per_question(run.select(system, condition), score)
        return {q: v for q, v in values.items() if q in wanted}

    def left_out(
        self, control: str, system: str, condition: str, questions: Iterable[str] | None = None
    ) -> dict[str, int]:
        """The units of a condition :meth:`scores` leaves out, by reason ({"no-op": 22})."""
        from .rules import left_out_counts

        run = self.run(control)
        wanted = set(questions if questions is not None else self.analysed(control))
        every = run.select(system, condition, leaked=True)
        return left_out_counts((r for r in every if r.key.question_id in wanted), run.include_leaked)


def effect_words(effect: bool) -> str:
    return "an effect" if effect else "no effect"


def describe_test(test: Any, left_out: dict[str, int] | None = None) -> str:
    """A paired test's means and size (its p-value has a column of its own), with the units the
    pairing rule left out beside the count of questions measured."""
    from .rules import left_out_text

    note = f" ({left_out_text(left_out)})" if left_out else ""
    return f"mean {test.mean_a:.2f} vs {test.mean_b:.2f} over {test.n} questions{note}"


def unmeasured(test: Any, left_out: dict[str, int] | None = None) -> str:
    """Why a paired test decides nothing: no question measured ("not measurable: 22 no-op", the
    units the pairing rule left out) or too few to reach significance; "" when it decides."""
    if not test.n:
        return "not measurable: " + (
            ", ".join(f"{n} {why}" for why, n in (left_out or {}).items()) or "no analysed question"
        )
    return test.too_few


def unmeasured_over(n: int, nothing: str, alpha: float = 0.05, chance: float = 0.5) -> str:
    """Why a verdict a claim reaches over ``n`` questions itself decides nothing; "" when it decides.
    None measured: "not measurable: <nothing>". Fewer than an exact one-sided test at ``alpha`` needs
    (against ``chance``: a binomial test's null share) to reach significance however its questions
    came out: "not enough questions (n=2; needs >= 5)". A threshold verdict with no test of its own
    (a share of at least 0.8, none readable) takes the same rule: fewer questions than a sign test
    needs could not tell even a unanimous outcome from a coin flip (docs/controls.md)."""
    from .stats import questions_needed, too_few

    if not n:
        return f"not measurable: {nothing}"
    return too_few(n, questions_needed(alpha, chance=chance))
