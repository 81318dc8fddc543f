"""A contrast's reference gets a sham too (issue 32 item 4): replaced by an intervention that hides
nothing, the contrast "the treatment changes more than the reference" still holds by its numbers
(nothing changes under the reference), but it no longer controls for anything (a same-size random
removal that hid nothing says nothing about specificity). So a contrast must fail under it: the
ready-made ``ConditionContrast`` checks that its reference hid something for each positive control,
and the power matrix shows "power"; a contrast without that check has no power against the sham."""

from __future__ import annotations

from provbench.controls import ConditionContrast
from provbench.controls.power import power_rows
from provbench.controls.shams import shams_of, without_shams
from provbench.model import BASELINE, LeakCheck, RunRecord, UnitKey
from provbench.suite import ClaimRef
from provbench.testing import control_runs

QUESTIONS = [f"q{i}" for i in range(8)]
OPTIONS = {
    "system": "agent",
    "treatment": "cited-removal",
    "reference": "random-removal",
    "min_difference": 0.5,
    "expect": [{"control": "oracle", "effect": True}, {"control": "ignores-context", "effect": False}],
}


def unit(question: str, condition: str, changed: float, status: str | None) -> RunRecord:
    check = LeakCheck(status=status) if status else None
    return RunRecord(
        key=UnitKey(question_id=question, system="agent", condition=condition),
        scores={"output_changed": changed},
        leak_check=check,
    )


def runs(reference_status: str = "clean"):
    """The oracle's answers change under cited removal and not under random removal (which hid
    something, or nothing); the stand-in of random removal hides nothing; ignores-context changes nothing."""

    def control(cited: float) -> list[RunRecord]:
        return [
            rec
            for q in QUESTIONS
            for rec in (
                unit(q, BASELINE, 0.0, None),
                unit(q, "cited-removal", cited, "clean"),
                unit(q, "random-removal", 0.0, reference_status),
                unit(q, "random-removal~sham-nothing", 0.0, "no-op"),
            )
        ]

    return control_runs({"oracle": control(1.0), "ignores-context": control(0.0)})


class UncheckedContrast(ConditionContrast):
    """A contrast that never looks at what its reference hid."""

    def with_reference_checked(self, runs, expectation, verdict):
        return verdict


def reference_row(claim: ConditionContrast, with_shams) -> str:
    ref = ClaimRef(name="contrast")
    verdicts = claim.check(without_shams(with_shams))
    assert verdicts and all(v.passed for v in verdicts), verdicts
    rows = power_rows(ref, claim.about(), with_shams, verdicts, claim.check)
    return {row.sham: row for row in rows}["random-removal hides nothing"]


def test_a_reference_gets_a_hides_nothing_sham_only():
    labels = [s.label for s in shams_of(ConditionContrast(**OPTIONS).about(), ["oracle", "ignores-context"])]
    assert "random-removal hides nothing" in labels
    assert "random-removal hides a same-size random set" not in labels  # a random set is the reference again


def test_a_contrast_fails_against_a_reference_that_hid_nothing():
    row = reference_row(ConditionContrast(**OPTIONS), runs())
    assert row.status == "power" and "random-removal hid nothing in any unit of oracle" in row.observed
    unchecked = reference_row(UncheckedContrast(**OPTIONS), runs())
    # without the check, the pairing rule catches it too: a reference whose every unit is no-op leaves the
    # contrast nothing measured (the numbers alone, 1.00 vs 0.00, would pass)
    assert unchecked.status == "power" and "not measurable: 8 no-op under random-removal" in unchecked.observed
    (oracle, blind) = ConditionContrast(**OPTIONS).check(without_shams(runs(reference_status="no-op")))
    # a real reference that hid nothing leaves both controls nothing measured: neither verdict passes
    assert not oracle.passed and not blind.passed
    assert oracle.unmeasured == blind.unmeasured == "not measurable: 8 no-op under random-removal"
