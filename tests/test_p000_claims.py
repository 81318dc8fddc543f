"""Paper 000's claims see every condition (issue 34 item 6a): each one passes on runs that show
its effect and fails on a blind run (a condition that hides nothing, the text rule turned off, the
exclusion step off)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from interventions_helpers import A, B, C, D, E, baseline_trace, build_ablation_kb
from provbench.model import Question, RunManifest, RunRecord, Trace, UnitKey
from provbench.results.data import RunData
from provbench.controls import ControlRuns
from provbench.testing import control_runs
from provbench_plugins.papers.p000_neighborhoods import interventions as I
from provbench_plugins.papers.p000_neighborhoods.known_truth import (
    EntityRemovalBreaksUncited,
    ExclusionReference,
    IgnoresContextUnchanged,
    TextOnlyIsolationGentler,
)
from provbench_plugins.papers.p000_neighborhoods.text_rule_claim import HidesOwnText

AGENT = "agentic-graphrag"
QUESTIONS = [f"q{i}" for i in range(8)]
QUESTION = Question(id="q0", question="Who directed Blue River?", answer="Ann Lee")


def record(
    qid: str,
    system: str = AGENT,
    condition: str = "baseline",
    changed: float | None = None,
    accuracy: float = 1.0,
    trace: Trace | None = None,
) -> RunRecord:
    scores = {"accuracy": accuracy} if changed is None else {"accuracy": accuracy, "output_changed": changed}
    return RunRecord(
        key=UnitKey(question_id=qid, system=system, condition=condition),
        trace=trace or Trace(question_id=qid, system=system, answer="a"),
        scores=scores,
    )


def changes(control_changes: dict[str, dict[str, float]]) -> ControlRuns:
    """control -> condition -> output changed on every question."""
    return control_runs(
        {
            control: [record(q) for q in QUESTIONS]
            + [record(q, condition=c, changed=v) for c, v in cells.items() for q in QUESTIONS]
            for control, cells in control_changes.items()
        }
    )


def passed(claim, runs) -> list[bool]:
    return [v.passed for v in claim.check(runs)]


def test_entity_removal_must_change_the_uncited_evidence_control():
    claim = EntityRemovalBreaksUncited()
    assert passed(claim, changes({"uses-uncited": {"entity-removal": 1.0}, "ignores-context": {"entity-removal": 0.0}}))
    blind = changes({"uses-uncited": {"entity-removal": 0.0}, "ignores-context": {"entity-removal": 0.0}})
    assert passed(claim, blind) == [False, True]  # a removal that hides nothing fails it


def test_text_only_isolation_must_change_fewer_answers_than_full_isolation():
    claim = TextOnlyIsolationGentler()
    seen = {"full-isolation": 1.0, "text-only-isolation": 0.0}
    assert all(passed(claim, changes({"uses-uncited": seen, "ignores-context": dict.fromkeys(seen, 0.0)})))
    blind = {"full-isolation": 0.0, "text-only-isolation": 0.0}  # full isolation hides nothing
    assert not passed(claim, changes({"uses-uncited": blind, "ignores-context": blind}))[0]


def test_every_ablation_of_the_negative_control_claim_must_change_a_context_reader():
    """ignores-context-unchanged: an ablation that hides nothing (here entity removal, for the
    control that used uncited evidence) passes "no change for ignores-context" but fails the claim."""
    claim = IgnoresContextUnchanged()
    seen = {"cited-removal": 1.0, "full-isolation": 1.0, "entity-removal": 1.0}
    blind = dict.fromkeys(seen, 0.0)
    oracle = {**blind, "cited-removal": 1.0}
    assert all(passed(claim, changes({"ignores-context": blind, "oracle": oracle, "uses-uncited": seen})))
    nothing_hidden = {**seen, "entity-removal": 0.0}
    assert passed(claim, changes({"ignores-context": blind, "oracle": oracle, "uses-uncited": nothing_hidden})) == [
        True,
        True,
        True,
        True,
        True,
        False,
        True,
    ]
    # a random set as large as full isolation's: every context reader changes, the faithful citer too
    everything = {**oracle, "full-isolation": 1.0}
    assert passed(claim, changes({"ignores-context": blind, "oracle": everything, "uses-uncited": seen}))[-1] is False


def test_exclusion_reference_reads_the_runs_exclusion():
    def runs(excluded: set[str]) -> ControlRuns:
        return control_runs(
            {
                "parametric": [record(q, "llm-only") for q in QUESTIONS],
                "oracle": [record(q, "llm-only", accuracy=0.0) for q in QUESTIONS],
            },
            {"parametric": excluded, "oracle": set()},
        )

    assert passed(ExclusionReference(), runs(set(QUESTIONS))) == [True, True]
    # the exclusion step off: the parametric reference was right everywhere, yet nothing was left out
    assert passed(ExclusionReference(), runs(set())) == [False, True]


# -- hides-own-text: the text rule, read from what each unit's view hid ------------------------------


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("p000-claims") / "kb"
    build_ablation_kb(path).close()  # the claim opens it read-only, as after a controls run
    return path


def text_rule_run(
    kb_dir: Path, entity_removal: I.GraphAblation, text_only: I.GraphAblation | None = None, questions: int = 5
) -> ControlRuns:
    """``questions`` copies of one question (5: the fewest a verdict is reached over): A and E cited,
    B, C and D visited but not cited; each condition's view hidden summary and full hidden set, as a
    unit's record keeps them."""
    from provbench.audit import hidden_set
    from provbench.kb import KnowledgeBase

    baseline = baseline_trace(cited=(A, E), visited=(A, B, C, D), cited_text_units=())
    ablations = {
        "entity-removal": entity_removal,
        "entity-text-mask": I.EntityTextMask(),
        "cited-removal": I.CitedRemoval(),
        "random-removal": I.RandomRemoval(repeats=1),
        "text-only-isolation": text_only or I.TextOnlyIsolation(),
        "full-isolation": I.FullIsolation(),
    }
    kb = KnowledgeBase.open(kb_dir, read_only=True)
    try:
        records = [
            record(f"q{i}", trace=baseline.model_copy(update={"question_id": f"q{i}"})) for i in range(questions)
        ]
        for condition, ablation in ablations.items():
            view = ablation.make_view(kb.view(), QUESTION, baseline, random.Random(0))
            for qid in (f"q{i}" for i in range(questions)):
                summary = {"hidden_by_intervention": view.hidden_summary()}
                trace = Trace(question_id=qid, system=AGENT, answer="a", artifacts=summary)
                records.append(record(qid, condition=condition, changed=0.0, trace=trace))
                records[-1].hidden = hidden_set(view)
    finally:
        kb.close()
    manifest = RunManifest(run_id="oracle", suite_name="s", suite={"knowledge_base": {"directory": str(kb_dir)}})
    return ControlRuns({"oracle": RunData(Path("."), manifest, {}, records, {})})


class EntitiesWithoutText(I.EntityRemoval):
    """A planted fault: removes the visited-but-uncited entities and none of their text."""

    def plan(self, view, question, baseline, rng):
        return I.HidePlan(entities=super().plan(view, question, baseline, rng).entities)


def test_hides_own_text_sees_the_text_rule(kb_dir):
    claim = HidesOwnText(controls=["oracle"])
    verdicts = claim.check(text_rule_run(kb_dir, I.EntityRemoval()))
    assert [v.passed for v in verdicts] == [True] * 5, [v.observed for v in verdicts]
    # B's tu:3, C's tu:2 and tu:7, D's tu:4, on each of 5 questions
    assert verdicts[0].observed == "0 of 20 own text unit(s) readable over 5 question(s)"
    faulty = claim.check(text_rule_run(kb_dir, EntitiesWithoutText()))
    assert [v.passed for v in faulty] == [False, True, True, True, True]
    assert faulty[0].observed == "20 of 20 own text unit(s) readable over 5 question(s)"


def test_hides_own_text_over_too_few_questions_is_not_enough_questions(kb_dir):
    """Hiding checked right on 2 questions is no finding: every verdict says so, none passes."""
    verdicts = HidesOwnText(controls=["oracle"]).check(text_rule_run(kb_dir, I.EntityRemoval(), questions=2))
    assert [v.unmeasured for v in verdicts] == ["not enough questions (n=2; needs >= 5)"] * 5
    assert not any(v.passed for v in verdicts) and all(v.counts_as_failure for v in verdicts)


class OtherTextSameCount(I.TextOnlyIsolation):
    """A planted fault: hides as many text units as text-only isolation, other ones (a same-size random set)."""

    def make_view(self, view, question, baseline, rng, **kwargs):
        from provbench.controls.shams import random_view

        real = super().make_view(view, question, baseline, rng, **kwargs).hidden
        return random_view(view, {"text_units": len(real.text_units)}, random.Random(3))


def test_text_only_isolation_must_hide_the_very_text_full_isolation_hides(kb_dir):
    """Counting the hidden text units per question is blind to which: a same-size random set passed."""
    claim = HidesOwnText(controls=["oracle"])
    same = claim.check(text_rule_run(kb_dir, I.EntityRemoval()))[-1]
    assert same.passed and same.observed == "0 of 5 question(s) differ"
    other = claim.check(text_rule_run(kb_dir, I.EntityRemoval(), OtherTextSameCount()))[-1]
    assert not other.passed and other.observed == "5 of 5 question(s) differ"
