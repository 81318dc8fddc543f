"""The claim API and a suite's ``controls:`` block: claims are plugins (a hook, like every kind),
the block is validated with file/line/field errors, and the general claims judge runs by a paired
permutation test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from provbench import hookimpl
from provbench.controls import (
    Claim,
    ClaimNeeds,
    ConditionContrast,
    ConditionEffect,
    ControlRuns,
    Expectation,
    Verdict,
    default_expect,
)
from provbench.model import RunRecord, Trace, UnitKey
from provbench.report.stats import paired_permutation
from provbench.registry import default_registry
from provbench.suite import SuiteError, load_suite
from provbench.testing import control_runs, registry_of

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "datasets" / "2wiki-mini" / "dev.json"

SUITE = f"""\
name: with-controls
dataset: {{loader: 2wiki, path: {MINI}}}
systems: [llm-only, agentic-graphrag, graphrag]
intervention_systems: [agentic-graphrag]
interventions: [cited-removal, random-removal]
exclusion: {{reference_system: llm-only}}
controls:
  dataset: {{loader: 2wiki, path: {MINI}, limit: 4}}
  knowledge_base: {{builder: 2wiki-paper000, options: {{extract: false, summarize: false}}}}
  llms: [oracle, ignores-context]
  differences:
    systems: [llm-only, agentic-graphrag]
  claims:
    - name: condition-contrast
      options:
        system: agentic-graphrag
        treatment: cited-removal
        reference: random-removal
        expect: [{{control: oracle, effect: true}}, {{control: ignores-context, effect: false}}]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path, registry=None) -> str:
    with pytest.raises(SuiteError) as info:
        load_suite(path, registry or default_registry())
    return str(info.value)


def test_a_controls_block_loads(tmp_path):
    from provbench.suite_controls import controls_configuration, describe_differences

    suite = load_suite(write(tmp_path, SUITE), default_registry()).suite
    controls, config = suite.controls, controls_configuration(suite)
    assert controls.llms == ["oracle", "ignores-context"] and config.exclusion.reference_system == "llm-only"
    assert [c.key for c in controls.claims] == ["condition-contrast"] and controls.claims[0].expect_failure is None
    assert config.system_names == ["llm-only", "agentic-graphrag"]  # the suite's own, as the block selects them
    assert [i.key for i in config.interventions] == ["cited-removal", "random-removal"]  # the suite's own
    assert describe_differences(suite) == ["systems not run by the controls: graphrag"]


SYSTEMS = "    systems: [llm-only, agentic-graphrag]\n"


@pytest.mark.parametrize(
    "old, new, where",
    [
        (
            "llms: [oracle, ignores-context]",
            "llms: [oracle, ignores-contxt]",
            "line 10, field 'controls.llms[1]': unknown control LLM 'ignores-contxt'",
        ),
        (
            "llms: [oracle, ignores-context]",
            "llms: [oracle, openai/gpt-4o]",
            "line 10, field 'controls.llms[1]': unknown control LLM 'openai/gpt-4o'",
        ),
        (
            "llms: [oracle, ignores-context]",
            "llms: [oracle, 'litellm:openai/gpt-4o']",
            "controls never call an API model",
        ),
        (
            "llms: [oracle, ignores-context]",
            "llms: [oracle, oracle]",
            "field 'controls.llms': Value error, a control LLM is listed more than once",
        ),
        (
            "reference: random-removal",
            "reference: entity-removal",
            "line 14, field 'controls.claims[0].name': claim 'condition-contrast': needs condition 'entity-removal'",
        ),
        (
            "{control: ignores-context, effect: false}",
            "{control: parametric, effect: false}",
            "needs control LLM 'parametric', which the controls do not run",
        ),
        (
            SYSTEMS,
            SYSTEMS + "    interventions: [cited-remval]\n",
            "line 13, field 'controls.differences.interventions[0]': unknown intervention 'cited-remval'",
        ),
        (
            SYSTEMS,
            SYSTEMS + "    interventions: [cited-removal]\n",
            "line 15, field 'controls.claims[0].name': claim "
            "'condition-contrast': needs condition 'random-removal', which the controls do not run",
        ),
        (
            SYSTEMS,
            "    systems: [agentic-graphrag]\n",
            "line 12, field 'controls.differences.systems': the exclusion's reference system 'llm-only' is not among",
        ),
        (
            SYSTEMS,
            "    systems: [llm-only, {name: agentic-graphrag, options: {max_stepz: 3}}]\n",
            "line 12, field 'controls.differences.systems[1].options'",
        ),
        (
            SYSTEMS,
            SYSTEMS + "    intervention_systems: [graphrag]\n",
            "line 13, field 'controls.differences.intervention_systems[0]'",
        ),
        ("  llms:", "  lms:", "field 'controls.lms': unknown field 'lms'; did you mean 'llms'?"),
        ("  differences:", "  diferences:", "field 'controls.diferences': unknown field 'diferences'"),
        (
            "        system: agentic-graphrag",
            "        sytem: agentic-graphrag",
            "line 15, field 'controls.claims[0].options': claim 'condition-contrast': bad options",
        ),
        (
            f"path: {MINI}, limit: 4",
            "path: missing.json",
            "line 8, field 'controls.dataset.path': dataset file not found",
        ),
        (
            f"dataset: {{loader: 2wiki, path: {MINI}, limit: 4}}",
            f"dataset: {{loader: mmlu, path: {REPO / 'datasets' / 'medical-mini' / 'dev.jsonl'}}}",
            "line 8, field 'controls.dataset.loader': dataset loader 'mmlu' gives no gold evidence",
        ),
    ],
)
def test_mistakes_in_the_controls_block_are_located(tmp_path, old, new, where):
    assert old in SUITE
    message = error_of(write(tmp_path, SUITE.replace(old, new)))
    assert where in message and "suite.yaml" in message


# -- a third party's claim through the hook -------------------------------------------------------


class EveryQuestionAnswered(Claim):
    """Every baseline question of a system was answered by the oracle."""

    def needs(self):
        return ClaimNeeds(controls=("oracle",), systems=("s",))

    def check(self, runs):
        answered = sum(r.trace is not None and r.trace.answer is not None for r in runs.run("oracle").select("s"))
        total = len(runs.run("oracle").select("s"))
        return [
            Verdict(
                claim=self.name,
                control="oracle",
                expected=f"{total} answered",
                observed=f"{answered} answered",
                passed=answered == total,
            )
        ]


@hookimpl
def provbench_register_claims():
    return {"every-answered": EveryQuestionAnswered}


def test_a_package_registers_a_claim_through_the_hook():
    registry = registry_of(sys.modules[__name__])
    assert registry.names("claim") == ["every-answered"]
    claim = registry.create("claim", "every-answered")
    [verdict] = claim.check(runs_of({"oracle": {("s", "baseline"): {"q1": 1.0}}}))
    assert verdict.passed and verdict.status == "pass" and claim.name == "every-answered"


# -- the general claims on synthetic runs -----------------------------------------------------------


def runs_of(spec: dict[str, dict[tuple[str, str], dict[str, float]]], excluded=()) -> ControlRuns:
    """control -> (system, condition) -> question -> output_changed (a record each, answered)."""
    records = {}
    for control, cells in spec.items():
        records[control] = [
            RunRecord(
                key=UnitKey(question_id=qid, system=system, condition=condition),
                trace=Trace(question_id=qid, system=system, answer="a"),
                scores={} if condition == "baseline" else {"output_changed": changed},
            )
            for (system, condition), values in cells.items()
            for qid, changed in values.items()
        ]
    return control_runs(records, {control: set(excluded) for control in spec})


def contrast(**expect) -> ConditionContrast:
    return ConditionContrast(
        system="s",
        treatment="cut",
        reference="rand",
        min_difference=0.5,
        expect=[{"control": c, "effect": e} for c, e in expect.items()],
    )


def test_contrast_passes_when_the_positive_shows_it_and_the_negative_does_not():
    n = 12
    runs = runs_of(
        {
            "oracle": {("s", "cut"): {f"q{i}": 1.0 for i in range(n)}, ("s", "rand"): {f"q{i}": 0.0 for i in range(n)}},
            "blind": {("s", "cut"): {f"q{i}": 0.0 for i in range(n)}, ("s", "rand"): {f"q{i}": 0.0 for i in range(n)}},
        }
    )
    verdicts = contrast(oracle=True, blind=False).check(runs)
    assert [v.passed for v in verdicts] == [True, True]
    assert verdicts[0].p_value == pytest.approx(1 / 2**n) and verdicts[1].p_value == 1.0
    assert verdicts[0].observed == "an effect: mean 1.00 vs 0.00 over 12 questions"
    assert "p < 0.05, difference >= 0.5" in verdicts[0].expected and verdicts[1].expected.startswith("no effect")


def test_contrast_fails_a_positive_that_changes_as_much_under_both():
    n = 12
    runs = runs_of(
        {"random": {("s", "cut"): {f"q{i}": 1.0 for i in range(n)}, ("s", "rand"): {f"q{i}": 1.0 for i in range(n)}}}
    )
    [verdict] = contrast(random=True).check(runs)
    assert not verdict.passed and verdict.status == "FAIL" and verdict.counts_as_failure
    assert verdict.observed.startswith("no effect")


def test_a_control_with_nothing_analysed_confirms_nothing():
    runs = runs_of({"parametric": {("s", "baseline"): {"q1": 0.0}}}, excluded=["q1"])
    [verdict] = contrast(parametric=False).check(runs)
    assert not verdict.passed and verdict.observed == "not measurable: no analysed question"


def test_effect_claim_tests_each_condition_against_no_change():
    runs = runs_of(
        {"oracle": {("s", "cut"): {f"q{i}": 1.0 for i in range(8)}, ("s", "rand"): {f"q{i}": 0.0 for i in range(8)}}}
    )
    claim = ConditionEffect(
        system="s",
        conditions=["cut", "rand"],
        expect=[
            {"control": "oracle", "effect": True, "conditions": ["cut"]},
            {"control": "oracle", "effect": False, "conditions": ["rand"]},
        ],
    )
    assert claim.needs().conditions == ("cut", "rand")
    assert [v.passed for v in claim.check(runs)] == [True, True]


def test_expected_failures_do_not_count():
    verdict = Verdict(claim="c", control="x", expected="e", observed="o", passed=False, expected_failure="issue 22")
    assert verdict.status == "expected failure" and not verdict.counts_as_failure
    assert (
        Verdict(claim="c", control="x", expected="e", observed="o", passed=True, expected_failure="issue 22").status
        == "unexpected pass"
    )


def test_paired_permutation_is_exact_for_small_n_and_one_sided():
    a = {f"q{i}": 1.0 for i in range(5)}
    b = {f"q{i}": 0.0 for i in range(5)}
    assert paired_permutation(a, b).p_value == pytest.approx(1 / 32)
    assert paired_permutation(b, a).p_value == 1.0  # "greater": b is not above a
    assert paired_permutation(b, a, alternative="less").p_value == pytest.approx(1 / 32)
    mixed = paired_permutation({"x": 1.0, "y": 0.0}, {"x": 0.0, "y": 1.0})
    assert mixed.difference == 0 and mixed.p_value == pytest.approx(0.75)
    assert paired_permutation({"x": 1.0}, {"y": 1.0}).p_value is None  # no shared question


def test_default_expect_reads_a_control_its_effect_and_optionally_its_conditions():
    from pydantic import BaseModel

    class Options(BaseModel):
        expect: list[Expectation] = default_expect(("oracle", True), ("uses-uncited", False, ["full-isolation"]))

    assert Options().expect == [
        Expectation(control="oracle", effect=True),
        Expectation(control="uses-uncited", effect=False, conditions=["full-isolation"]),
    ]
    assert Options().expect is not Options().expect  # each options object its own list
