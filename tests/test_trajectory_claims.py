"""The gold-trajectory claims on known-truth controls: the oracle agent follows the gold chain and its
answers depend exactly on the steps that brought it gold; the random control does neither. Each
claim fails, naming itself, when the oracle is swapped for the random control or when the
leave-one-step-out intervention hides nothing."""

from __future__ import annotations

import sys
from pathlib import Path


from conftest import write_suite
from provbench import hookimpl
from provbench.controls.validate import validate_suite
from provbench.model import BASELINE, RunRecord, UnitKey, VariantInfo
from provbench.testing import control_runs, plugin_manager
from provbench_plugins.trajectory.known_truth import CriticalStepsHoldGold, GoldPathFollowed
from provbench_plugins.trajectory.steps import LeaveOneStepOutReplay

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "datasets" / "2wiki-controls" / "dev.json"
CLAIMS = ("gold-path-followed", "critical-steps-hold-gold")


def small_suite(folder: Path, kb: Path, replay: str = "leave-one-step-out-replay", limit: int = 8) -> Path:
    return write_suite(
        folder,
        f"""\
name: small-steps
dataset: {{loader: 2wiki, path: {DATA}, limit: 2}}
model: {{id: control:oracle}}
systems: [agentic-graphrag]
interventions: [{replay}]
metrics: [accuracy, gold-trajectory]
report: {{subgraph_pictures: false}}
controls:
  dataset: {{loader: 2wiki, path: {DATA}, limit: {limit}}}
  knowledge_base: {{builder: 2wiki-paper000, directory: {kb}, options: {{extract: false, summarize: false}}}}
  llms: [oracle, random]
  claims: [{", ".join(CLAIMS)}]
""",
    )


def test_the_oracle_follows_the_gold_chain_and_depends_on_its_gold_steps(tmp_path, kb_dir):
    validity = validate_suite(small_suite(tmp_path, kb_dir), out=tmp_path / "out")
    verdicts = {(v.claim, v.control): v for v in validity.verdicts}
    assert set(verdicts) == {(c, control) for c in CLAIMS for control in ("oracle", "random")}
    assert all(v.passed for v in verdicts.values()), [v.observed for v in verdicts.values() if not v.passed]
    assert verdicts["gold-path-followed", "oracle"].observed.startswith("mean gold-path coverage 1.00 over 8")
    critical = verdicts["critical-steps-hold-gold", "oracle"].observed
    held, total = critical.split(" critical step(s)")[0].split("/")
    assert held == total and int(total) >= 8  # every critical step held gold, at least one per question
    report = (tmp_path / "out" / "controls" / "oracle" / "report.html").read_text()
    assert 'id="trajectory-gold"' in report and 'id="suite-validity"' in report
    power = {(row.claim, row.sham): (row.status, row.observed) for row in validity.power}
    assert {sham: status for (claim, sham), (status, _) in power.items() if claim == "critical-steps-hold-gold"} == {
        "leave-one-step-out-replay hides nothing": "power",
        "leave-one-step-out-replay hides a same-size random set": "power",
        "oracle swapped for random": "power",
    }, power
    # the follower and the wanderer are declared: the oracle's trajectories swapped for random ones fail it
    assert {sham: status for (claim, sham), (status, _) in power.items() if claim == "gold-path-followed"} == {
        "oracle swapped for random": "power"
    }, power


def test_two_questions_are_not_enough_on_a_suite_cut_to_them(tmp_path):
    from conftest import validate_cli
    from provbench.cli import EXIT_CLAIM_NOT_DETECTABLE
    from provbench.controls.validity import read_validity

    result = validate_cli(small_suite(tmp_path, tmp_path / "kb", limit=2), tmp_path / "out")  # a KB of 2 questions
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    verdicts = read_validity(tmp_path / "out").verdicts
    assert len(verdicts) == 4 and not any(v.passed for v in verdicts)
    # the random agent may take no step on one of them: n=1
    enough = {f"not enough questions (n={n}; needs >= 5)" for n in (1, 2)}
    assert {v.unmeasured for v in verdicts} <= enough, [v.observed for v in verdicts]


def test_the_random_control_in_place_of_the_oracle_fails_both_claims(tmp_path, kb_dir, monkeypatch):
    from provbench.controls import BEHAVIOURS

    monkeypatch.setitem(BEHAVIOURS, "oracle", BEHAVIOURS["random"])
    validity = validate_suite(small_suite(tmp_path, kb_dir), out=tmp_path / "out")
    assert {(v.claim, v.control) for v in validity.failures} == {(c, "oracle") for c in CLAIMS} | {
        ("gold-path-followed", "random")
    }  # no longer apart from the oracle's coverage


class HidesNothing(LeaveOneStepOutReplay):
    """A broken leave-one-step-out: it resumes from the step, but its view hides nothing."""

    def make_view(self, view, question, baseline, rng, **kwargs):
        return view.hide()


@hookimpl
def provbench_register_interventions():
    return {"steps-hiding-nothing": HidesNothing}


def test_a_step_intervention_that_hides_nothing_fails_the_critical_step_check(tmp_path, kb_dir):
    suite = small_suite(tmp_path, kb_dir, replay="{name: steps-hiding-nothing, label: leave-one-step-out-replay}")
    validity = validate_suite(suite, out=tmp_path / "out", pm=plugin_manager(sys.modules[__name__], builtins=True))
    failed = {(v.claim, v.control): v for v in validity.failures}
    assert set(failed) == {("critical-steps-hold-gold", "oracle"), ("critical-steps-hold-gold", "random")}
    assert failed["critical-steps-hold-gold", "oracle"].observed.startswith("0/0 critical step(s)")
    assert failed["critical-steps-hold-gold", "random"].observed.startswith("0/")  # replayed as recorded: unchanged


def _variant(control: str, qid: str, step: int, changed: bool, gold: bool) -> RunRecord:
    return RunRecord(
        key=UnitKey(
            question_id=qid, system="agentic-graphrag", condition="leave-one-step-out-replay", variant=f"step:{step}"
        ),
        variant=VariantInfo(id=f"step:{step}", data={"left_out_step": step}),
        scores={"output_changed": float(changed), "gold.left_out.gold_items": float(gold)},
    )


def _coverage(qid: str, value: float) -> RunRecord:
    return RunRecord(
        key=UnitKey(question_id=qid, system="agentic-graphrag", condition=BASELINE),
        scores={"gold.path_coverage": value},
    )


def _controls(questions: int):
    """The oracle follows the gold chain and depends on the step that brought gold; random neither."""
    qids = [f"q{i}" for i in range(questions)]
    oracle = [r for q in qids for r in (_coverage(q, 1.0), _variant("oracle", q, 0, True, True))]
    oracle += [_variant("oracle", q, 1, False, False) for q in qids]
    randomly = [r for q in qids for r in (_coverage(q, 0.0), _variant("random", q, 0, True, False))]
    return control_runs({"oracle": oracle, "random": randomly + [_variant("random", q, 1, True, True) for q in qids]})


def test_the_claims_read_the_records_they_are_given():
    path = GoldPathFollowed(resamples=99).check(_controls(5))
    assert [v.passed for v in path] == [True, True], [v.observed for v in path]
    critical = CriticalStepsHoldGold().check(_controls(5))
    assert [v.passed for v in critical] == [True, True]
    assert critical[0].observed.startswith("5/5 critical step(s) held gold; 5/5 gold-holding step(s) critical")
    strict = CriticalStepsHoldGold(min_blind_change=1.0).check(
        control_runs({"oracle": [], "random": [_variant("random", "a", 0, False, False)]})
    )
    assert [v.passed for v in strict] == [False, False]  # nothing to judge the oracle by; random unchanged
    assert strict[0].unmeasured == "not measurable: no step left out under leave-one-step-out-replay"


def test_two_questions_are_not_enough_for_either_claim():
    """Coverage 1.0 and every critical step gold on 2 questions: no finding, never a pass."""
    verdicts = GoldPathFollowed(resamples=99).check(_controls(2)) + CriticalStepsHoldGold().check(_controls(2))
    assert [v.unmeasured for v in verdicts] == ["not enough questions (n=2; needs >= 5)"] * 4
    assert not any(v.passed for v in verdicts)
