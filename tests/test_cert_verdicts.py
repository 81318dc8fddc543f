"""A claim's verdict cannot pass on nothing: units the pairing rule leaves out (no-op, leaked,
not checkable) are left out of the claims' own statistics, a verdict over no measured unit is
"not measurable" and one over too few questions "not enough questions", both failing validation
unless the suite declares why (issue 32, a new user's findings 1 and 2)."""

from __future__ import annotations

from provbench.model import LeakCheck, RunRecord, Trace, UnitKey
from provbench.results.claims import Verdict
from provbench.results.significance import paired_scores
from provbench.results.stats import mcnemar, paired_permutation, questions_needed
from provbench.testing import control_runs
from provbench_plugins.papers.p000_neighborhoods.known_truth import (
    CitedRemovalBeatsRandom,
    ExclusionReference,
    IgnoresContextUnchanged,
)

AGENT = "agentic-graphrag"


def unit(qid: str, condition: str = "baseline", changed: float = 0.0, status: str | None = None, accuracy=1.0):
    scores = {"accuracy": accuracy} if condition == "baseline" else {"accuracy": accuracy, "output_changed": changed}
    return RunRecord(
        key=UnitKey(question_id=qid, system=AGENT, condition=condition),
        trace=Trace(question_id=qid, system=AGENT, answer="a"),
        scores=scores,
        leak_check=LeakCheck(status=status) if status else None,
    )


def control(n: int, cells: dict[str, tuple[float, str | None]]) -> list[RunRecord]:
    """n questions: a baseline, and per condition (output changed, leak status) on every question."""
    questions = [f"q{i}" for i in range(n)]
    return [unit(q) for q in questions] + [
        unit(q, c, changed, status) for c, (changed, status) in cells.items() for q in questions
    ]


NO_OP = (0.0, "no-op")


def test_a_negative_control_whose_units_hid_nothing_is_not_measurable_not_a_pass():
    """The quickstart's ignores-context control: cited and random removal hid nothing (22/22
    no-op); "no effect: mean 0.00 vs 0.00 over 22 questions" used to pass."""
    runs = control_runs(
        {
            "oracle": control(22, {"cited-removal": (1.0, "clean"), "random-removal": (0.0, "clean")}),
            "ignores-context": control(22, {"cited-removal": NO_OP, "random-removal": NO_OP}),
        }
    )
    oracle, ignores = CitedRemovalBeatsRandom().check(runs)[:2]
    assert oracle.passed and oracle.status == "pass"
    assert not ignores.passed and ignores.counts_as_failure
    assert ignores.unmeasured == "not measurable: 22 no-op under cited-removal, 22 no-op under random-removal"
    assert ignores.status.startswith("NOT MEASURABLE")
    effect = IgnoresContextUnchanged(conditions=["cited-removal"]).check(runs)
    ignored = next(v for v in effect if v.control == "ignores-context")
    assert ignored.unmeasured == "not measurable: 22 no-op" and ignored.counts_as_failure


def test_a_verdict_over_some_measured_units_says_how_many_were_left_out():
    records = control(8, {"cited-removal": (1.0, "clean")})
    records += [unit(f"q{i}", "cited-removal", 0.0, "no-op") for i in range(8, 10)] + [unit("q8"), unit("q9")]
    verdict = IgnoresContextUnchanged(
        conditions=["cited-removal"], expect=[{"control": "oracle", "effect": True}]
    ).check(control_runs({"oracle": records}))[0]
    assert verdict.passed, verdict
    assert "over 8 questions (left out (leak guard): 2 no-op)" in verdict.observed


def test_leaked_and_not_checkable_units_are_left_out_too():
    runs = control_runs({"oracle": control(6, {"cited-removal": (1.0, "leaked")})})
    [verdict] = IgnoresContextUnchanged(
        conditions=["cited-removal"], expect=[{"control": "oracle", "effect": True}]
    ).check(runs)
    assert verdict.unmeasured == "not measurable: 6 leaked" and not verdict.passed


def test_one_question_is_not_enough_questions_never_a_pass_nor_a_library_error():
    runs = control_runs(
        {
            "oracle": control(1, {"cited-removal": (1.0, "clean")}),
            "ignores-context": control(1, {"cited-removal": (0.0, "clean")}),
        }
    )
    verdicts = IgnoresContextUnchanged(conditions=["cited-removal"]).check(runs)
    assert [v.unmeasured for v in verdicts] == ["not enough questions (n=1; needs >= 5)"] * 2
    assert all(v.counts_as_failure and not v.passed for v in verdicts)


def test_exclusion_reference_on_one_question_is_not_enough_questions():
    def reference(accuracy: float) -> list[RunRecord]:
        return [
            RunRecord(
                key=UnitKey(question_id="q0", system="llm-only", condition="baseline"), scores={"accuracy": accuracy}
            )
        ]

    runs = control_runs({"parametric": reference(1.0), "oracle": reference(0.0)}, excluded={"parametric": {"q0"}})
    verdicts = ExclusionReference().check(runs)
    assert [v.passed for v in verdicts] == [False, False]
    assert verdicts[0].unmeasured == "not enough questions (n=1; needs >= 6)"


def test_an_expected_unmeasurable_verdict_is_shown_but_does_not_fail():
    verdict = Verdict(
        claim="c", control="x", expected="", observed="", passed=False, unmeasured="not measurable: 3 no-op"
    )
    assert verdict.counts_as_failure
    excused = verdict.model_copy(update={"unmeasured_expected": "cited removal hides nothing for it"})
    assert not excused.counts_as_failure and excused.status == "not measurable: 3 no-op (expected)"


def test_every_test_helper_says_when_its_questions_are_too_few():
    assert questions_needed(0.05) == 5 and questions_needed(0.05, sides=2) == 6
    one = paired_permutation({"a": 1.0}, {"a": 0.0})
    assert one.p_value is None and one.describe() == "not enough questions (n=1; needs >= 5)"
    four = paired_permutation({q: 1.0 for q in "abcd"}, dict.fromkeys("abcd", 0.0))
    assert four.too_few == "not enough questions (n=4; needs >= 5)"  # its best p, 1/16, is above 0.05
    assert not paired_permutation({q: 1.0 for q in "abcde"}, dict.fromkeys("abcde", 0.0)).too_few
    assert mcnemar({"a": 1.0}, {"a": 0.0}).describe() == "not enough questions (n=1; needs >= 6)"
    assert paired_scores({"x": 0.2}, {"x": 0.9}).describe() == "not enough questions (n=1; needs >= 6)"
