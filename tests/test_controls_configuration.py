"""What the controls run and what each claim is tested against, without running a suite: the
controls' configuration is the suite's own with declared differences (issue 32, items 1 and 7),
a claim's declaration gives its shams and names its untested conditions (item 3), and the power
matrix says "no power" exactly when a claim still passes under a sham (item 2)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from provbench.controls import ClaimAbout, ConditionEffect
from provbench.suite_controls import controls_configuration, describe_differences
from provbench.controls.power import power_rows
from provbench.results.about import blind_credit
from provbench.controls.shams import Sham, ShamIntervention, shams_of, under_sham
from provbench.model import BASELINE, RunRecord, Trace, UnitKey
from provbench.plugin_api import Intervention
from provbench.registry import default_registry
from provbench.suite import ClaimRef, load_suite
from provbench.testing import control_runs
from provbench.testing.kb import build_tiny_kb

REPO = Path(__file__).resolve().parents[1]
FEVER_GARAG = REPO / "suites" / "fever-garag.yaml"
THE_FILTER = "triple_confidence_threshold"


def test_fever_garags_controls_run_the_triple_filter_the_suite_runs():
    """The shipped suite runs GA-RAG with the filter off; its controls now run the same options."""
    suite = load_suite(FEVER_GARAG, default_registry()).suite
    config = controls_configuration(suite)
    assert [s.key for s in config.systems] == ["ga-rag", "ga-rag-gamma0", "ga-rag-authors"]
    assert all(s.options[THE_FILTER] is None for s in config.systems)
    assert not [line for line in describe_differences(suite) if THE_FILTER in line]


def test_controls_on_the_authors_filter_show_the_difference(tmp_path):
    """The issue's case: controls on the 0.6 filter while the suite runs `triple_confidence_threshold:
    null`. The block can still say so, but every report of it prints the difference."""
    raw = yaml.safe_load(FEVER_GARAG.read_text(encoding="utf-8"))
    raw["dataset"]["path"] = raw["controls"]["dataset"]["path"] = str(REPO / "datasets" / "fever-mini" / "dev.jsonl")
    raw["controls"]["differences"]["systems"] = [  # the block before this issue: the authors' 0.6 filter
        {"name": "p003/ga-rag", "options": {"top_facts": 4}},
        {"name": "p003/ga-rag", "label": "ga-rag-gamma0", "options": {"gamma": 0.0, "top_facts": 4}},
        {"name": "p003/ga-rag", "label": "ga-rag-authors", "options": {"ranking": "authors", "top_facts": 4}},
    ]
    path = tmp_path / "fever-garag.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    lines = describe_differences(load_suite(path, default_registry()).suite)
    for key in ("ga-rag", "ga-rag-gamma0", "ga-rag-authors"):
        assert f"system {key}: {THE_FILTER} the plugin's default (suite: None)" in lines


def test_a_key_of_the_suite_overrides_its_options_and_says_so(tmp_path):
    raw = yaml.safe_load(FEVER_GARAG.read_text(encoding="utf-8"))
    raw["dataset"]["path"] = raw["controls"]["dataset"]["path"] = str(REPO / "datasets" / "fever-mini" / "dev.jsonl")
    raw["controls"]["differences"]["systems"] = [
        {"name": "ga-rag", "options": {THE_FILTER: 0.6}},
        "ga-rag-gamma0",
        "ga-rag-authors",
    ]
    path = tmp_path / "fever-garag.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    suite = load_suite(path, default_registry()).suite
    ga_rag, gamma0, _ = controls_configuration(suite).systems
    assert (
        gamma0.options[THE_FILTER] is None
        and ga_rag.name == "p003/ga-rag"
        and ga_rag.options == {"top_facts": 4, THE_FILTER: 0.6}
    )
    assert f"system ga-rag: {THE_FILTER} 0.6 (suite: None)" in describe_differences(suite)


# -- what a claim is about, and its shams ---------------------------------------------------------


def about_of(name: str, **options) -> ClaimAbout:
    return default_registry().create("claim", name, **options).about()


def test_a_condition_with_no_positive_expectation_is_untested():
    """Only "no effect on ignores-context" expected of two ablations: no sham of them could fail the claim."""
    about = about_of(
        "condition-effect",
        system="agentic-graphrag",
        conditions=["entity-removal", "entity-text-mask"],
        expect=[{"control": "ignores-context", "effect": False}],
    )
    assert about.positive_conditions == () and about.untested == ["entity-removal", "entity-text-mask"]


def test_paper000s_negative_control_claim_names_a_positive_control_for_each_ablation():
    """Issue 34 item 6a: each ablation it names must change some control's answers."""
    about = about_of("p000/ignores-context-unchanged")
    assert about.untested == [] and about.conditions == ("cited-removal", "full-isolation", "entity-removal")
    assert about.positive_controls == ("oracle", "uses-uncited")
    assert about.negative_controls == ("ignores-context", "oracle")  # the oracle keeps its answers under full isolation
    narrowed = about_of("p000/ignores-context-unchanged", conditions=["cited-removal", "full-isolation"])
    assert narrowed.conditions == ("cited-removal", "full-isolation") and narrowed.untested == []


def test_a_contrasts_reference_is_declared_as_such():
    """A contrast's reference is compared with, never expected to show an effect: "reference", not a gap."""
    contrast = about_of("p000/cited-removal-beats-random")
    assert contrast.reference_conditions == ("random-removal",) and contrast.untested == []
    edge = about_of("p002/gold-edge-changes-answer")
    assert edge.reference_conditions == ("invalidate-off-chain-edge",) and edge.untested == []
    assert (
        about_of(
            "condition-contrast",
            system="s",
            treatment="a",
            reference="baseline",
            expect=[{"control": "oracle", "effect": True}],
        ).reference_conditions
        == ()
    )


def test_shams_are_derived_from_the_declaration():
    about = about_of("p000/isolation-breaks-uncited")
    assert [s.label for s in shams_of(about, ["oracle", "uses-uncited"])] == [
        "full-isolation hides nothing",
        "full-isolation hides a same-size random set",
        "uses-uncited swapped for oracle",
    ]
    assert [s.label for s in shams_of(about, ["uses-uncited"])][-1] != "uses-uncited swapped for oracle"
    settings = about_of("p002/rounds-reach-deep-answers")
    assert [s.label for s in shams_of(settings, ["oracle", "parametric"])] == [
        "oracle swapped for parametric",
        "every setting answered as planning-loop",
    ]
    exclusion = about_of("p000/exclusion-reference")
    assert "the exclusion step off (no question left out)" in [s.label for s in shams_of(exclusion, ["oracle"])]
    explained = ClaimAbout(explanations=("most-influential",))
    assert [s.label for s in shams_of(explained, [])] == [
        "most-influential: the first element",
        "most-influential: a random element",
        "most-influential: shuffled credit",
    ]


def test_blind_credit():
    credit = [0.0, 3.0, 1.0, 0.0]
    names = ["a", "b", "c", "d"]
    assert blind_credit("first", "x", names, credit) == [1.0, 0.0, 0.0, 0.0]
    chosen = blind_credit("random", "x", names, credit)
    assert sorted(chosen) == [0.0, 0.0, 0.0, 1.0] and chosen == blind_credit("random", "x", names, credit)
    assert sorted(blind_credit("shuffled", "x", names, credit)) == sorted(credit)


# -- the power matrix on records in memory -------------------------------------------------------


def record(qid: str, condition: str, changed: float, system: str = "s") -> RunRecord:
    return RunRecord(
        key=UnitKey(question_id=qid, system=system, condition=condition),
        trace=Trace(question_id=qid, system=system, answer="a"),
        scores={"output_changed": changed},
    )


def runs_where_the_sham_changes(sham_change: float, questions: int = 8):
    rows = {"pos": [], "neg": []}
    for i in range(questions):
        q = f"q{i}"
        rows["pos"] += [
            record(q, BASELINE, 0.0),
            record(q, "cut", 1.0),
            record(q, "cut~sham-nothing", sham_change),
            record(q, "cut~sham-random", 0.0),
        ]
        rows["neg"] += [
            record(q, BASELINE, 0.0),
            record(q, "cut", 0.0),
            record(q, "cut~sham-nothing", 0.0),
            record(q, "cut~sham-random", 0.0),
        ]
    return control_runs(rows)


def claim_and_ref():
    claim = ConditionEffect(
        system="s", conditions=["cut"], expect=[{"control": "pos", "effect": True}, {"control": "neg", "effect": False}]
    )
    claim.name = "cut-changes"
    return claim, ClaimRef(name="condition-effect", label="cut-changes")


@pytest.mark.parametrize("sham_change, status", [(0.0, "power"), (1.0, "no power")])
def test_a_claim_that_still_passes_under_a_sham_has_no_power(sham_change, status):
    claim, ref = claim_and_ref()
    runs = runs_where_the_sham_changes(sham_change)
    real = claim.check(under_sham(runs, Sham("option", "none", "off")))  # the real records, stand-ins left out
    assert all(v.passed for v in real)
    rows = {r.sham: r for r in power_rows(ref, claim.about(), runs, real, claim.check)}
    assert rows["cut hides nothing"].status == status
    assert rows["cut hides a same-size random set"].status == "power"
    assert rows["pos swapped for neg"].status == "power"
    assert rows["cut hides nothing"].counts_as_failure == (status == "no power")
    excused = power_rows(
        ref.model_copy(update={"open": "a genuinely open question"}), claim.about(), runs, real, claim.check
    )
    assert not any(r.counts_as_failure for r in excused)


# -- the stand-in intervention on a real knowledge base -------------------------------------------


class HidesTwoEntitiesAndOneUnit(Intervention):
    def make_view(self, view, question, baseline, rng, **kwargs):
        entities = sorted(view.entity_ids())[:2]
        return view.hide(entities=entities, text_units=sorted(view.text_unit_ids())[:1])


def test_the_stand_in_hides_nothing_or_as_much_at_random(tmp_path):
    view = build_tiny_kb(tmp_path / "kb").view()
    real = HidesTwoEntitiesAndOneUnit()
    real.name = "cut"
    assert ShamIntervention(real, "nothing").make_view(view, None, None, random.Random(1)).hidden.empty
    hidden = ShamIntervention(real, "random").make_view(view, None, None, random.Random(1)).hidden
    assert (len(hidden.entities), len(hidden.text_units), len(hidden.relations)) == (2, 1, 0)
    draws = {
        tuple(sorted(ShamIntervention(real, "random").make_view(view, None, None, random.Random(seed)).hidden.entities))
        for seed in range(8)
    }
    assert len(draws) > 1  # drawn at random, not the real intervention's choice


def test_an_open_claim_shows_its_result_without_failing():
    from provbench.controls.validate import check_claim

    claim, ref = claim_and_ref()
    runs = runs_where_the_sham_changes(1.0)
    closed = check_claim(claim, ref, control_runs({"pos": [], "neg": []}))  # nothing analysed: it fails
    assert closed and all(v.counts_as_failure and v.status == "NOT MEASURABLE: NO ANALYSED QUESTION" for v in closed)
    opened = check_claim(
        claim, ref.model_copy(update={"open": "noise-sensitive"}), control_runs({"pos": [], "neg": []})
    )
    assert opened and all(
        not v.counts_as_failure and v.status == "not measurable: no analysed question (open)" for v in opened
    )
    assert all(v.open == "noise-sensitive" for v in opened)
    assert all(
        v.status == "open: pass" for v in check_claim(claim, ref.model_copy(update={"open": "x"}), runs) if v.passed
    )
