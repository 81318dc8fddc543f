"""Paper 002's claims (``provbench validate``, docs/controls.md): they hold on curriculum-mini's
known-truth controls, and each fails, named, when a control, a configuration or a condition is
broken on purpose. A subset of curriculum-mini (6 deep, 3 unanswerable and 2 too-deep questions on
the whole concept graph) keeps each validation to seconds; suites/curriculum-planning.yaml's own
block runs in full in tests/test_validate.py's integration test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import validate_cli, verdicts_by_claim, write_suite
from provbench.cli import EXIT_CLAIM_NOT_DETECTABLE
from provbench.controls.validate import validate_suite
from provbench.errors import UserError
from provbench.suite import load_suite

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "datasets" / "curriculum-mini"
SUBSET = {"deep": 6, "unanswerable": 3, "too-deep": 2}
CLAIMS = ("p002/rounds-reach-deep-answers", "p002/abstains-when-unreachable", "p002/gold-edge-changes-answer")
LOOP = "planning-loop"
ONE_ROUND = '{name: planning-loop, label: "one-shot, same seeds", options: {max_rounds: 1}}'


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """curriculum-mini's graph with the first questions of each kind in SUBSET."""
    folder = tmp_path_factory.mktemp("curriculum-subset")
    for name in ("concepts.csv", "edges.csv"):
        shutil.copy(MINI / name, folder / name)
    rows = [json.loads(line) for line in (MINI / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line]
    kept = [r for kind, n in SUBSET.items() for r in [r for r in rows if r["type"] == kind][:n]]
    assert [sum(r["type"] == kind for r in kept) for kind in SUBSET] == list(SUBSET.values())
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    return folder


def controls_suite(
    folder: Path,
    data: Path,
    kb: Path,
    *,
    loop: str = LOOP,
    one_round: str = ONE_ROUND,
    gold: str = "invalidate-gold-edge",
    off_chain: str = "invalidate-off-chain-edge",
    llms: str = "[oracle, parametric, ignores-context]",
    claims: tuple[str, ...] = CLAIMS,
) -> Path:
    listed = "".join(f"    - {c}\n" for c in claims)
    return write_suite(
        folder,
        f"""\
name: p002-controls
dataset: {{loader: curriculum, path: {data}, limit: 2}}
knowledge_base: {{builder: concept-graph, directory: {kb}}}
systems:
  - {loop}
  - {one_round}
intervention_systems: [planning-loop]
interventions:
  - {gold}
  - {off_chain}
report: {{subgraph_pictures: false}}
controls:
  dataset: {{loader: curriculum, path: {data}}}
  knowledge_base: {{builder: concept-graph, directory: {kb}}}
  llms: {llms}
  claims:
{listed}""",
    )


def test_paper002s_claims_hold_on_their_controls(tmp_path, data, kb_dir):
    validity = validate_suite(controls_suite(tmp_path, data, kb_dir), out=tmp_path / "out")
    assert validity.failed_units == 0 and not validity.failures, [v for v in validity.failures]
    found = verdicts_by_claim(validity.verdicts)
    assert {claim for claim, _ in found} == set(CLAIMS)
    [rounds] = found[("p002/rounds-reach-deep-answers", "oracle")]
    # cm-23's chain is cut by round 1's frontier cap (the question names no relation): 5 of 6 answered
    assert rounds.observed == "an effect: mean 0.83 vs 0.00 over 6 questions" and rounds.p_value == 1 / 32
    [knows] = found[("p002/rounds-reach-deep-answers", "parametric")]  # right with or without the rounds
    assert knows.observed == "no effect: mean 1.00 vs 1.00 over 6 questions"
    abstains, reaches = found[("p002/abstains-when-unreachable", "oracle")]
    assert abstains.observed == "an effect: mean 1.00 vs 0.00 over 5 questions"
    assert reaches.observed == "an effect: mean 0.83 vs 0.00 over 6 questions"  # the deep ones are answered
    invalidated, gold, off_chain = found[("p002/gold-edge-changes-answer", "oracle")]
    assert gold.observed == "an effect: mean 1.00 vs 0.00 over 5 questions"  # the five deep answers
    assert off_chain.observed.startswith("no effect: mean 0.00") and "difference >=" not in off_chain.expected
    assert invalidated.passed and invalidated.observed.startswith("5 of 5 answered questions")
    power = {(row.claim.removeprefix("p002/"), row.sham): row.status for row in validity.power}
    assert power["gold-edge-changes-answer", "invalidate-gold-edge hides nothing"] == "power"
    assert power["gold-edge-changes-answer", "oracle swapped for ignores-context"] == "power"
    # the off-chain edge is the gold edge's reference: only "changes nothing" is expected of it
    assert power["gold-edge-changes-answer", "invalidate-off-chain-edge"] == "reference"
    assert "untested" not in set(power.values())
    assert power["rounds-reach-deep-answers", "every setting answered as planning-loop"] == "power"
    assert power["rounds-reach-deep-answers", "oracle swapped for parametric"] == "power"
    assert power["abstains-when-unreachable", "oracle swapped for ignores-context"] == "power"


def test_the_random_control_in_place_of_the_oracle_fails_each_claim(tmp_path, data, kb_dir, monkeypatch):
    from provbench.controls import BEHAVIOURS

    monkeypatch.setitem(BEHAVIOURS, "oracle", BEHAVIOURS["random"])  # "control:oracle" now replies at random
    out = tmp_path / "out"
    result = validate_cli(controls_suite(tmp_path, data, kb_dir), out)
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    from provbench.controls.validity import read_validity

    failed = {(v.claim, v.control) for v in read_validity(out).failures}
    assert failed == {(claim, "oracle") for claim in CLAIMS}  # the negative controls still pass
    assert all(claim in result.stderr for claim in CLAIMS), result.stderr


def test_a_claim_blind_to_the_rounds_has_no_power_and_fails_validate(tmp_path, data, kb_dir):
    """rounds-reach-deep-answers with only its negative half (parametric: right with or without the
    rounds) passes, and passes too with every setting answered as the loop: no power against that
    sham, so validate names it and exits with 4."""
    blind = "{name: p002/rounds-reach-deep-answers, options: {expect: [{control: parametric, effect: false}]}}"
    suite = controls_suite(tmp_path, data, kb_dir, llms="[parametric]", claims=(blind,))
    result = validate_cli(suite, tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    assert "not detectable" not in result.stderr  # the claim holds: only its power is missing
    assert "no power against every setting answered as planning-loop: p002/rounds-reach-deep-answers" in result.stderr


def test_the_loop_without_its_gate_fails_the_abstention_claim(tmp_path, data, kb_dir):
    """confidence_bar 0 in the loop's place: it answers "unknown" where it should abstain."""
    suite = controls_suite(
        tmp_path,
        data,
        kb_dir,
        loop="{name: planning-loop, options: {confidence_bar: 0.0}}",
        llms="[oracle, ignores-context]",
        claims=(CLAIMS[1],),
    )
    validity = validate_suite(suite, out=tmp_path / "out")
    [failure] = validity.failures
    assert (failure.claim, failure.control) == ("p002/abstains-when-unreachable", "oracle")
    assert failure.observed.startswith("no effect: mean 0.")


def test_the_one_round_loop_fails_the_abstention_claim(tmp_path, data, kb_dir):
    """One round abstains on everything deep as well: the round limit, not the gate."""
    suite = controls_suite(
        tmp_path,
        data,
        kb_dir,
        loop="{name: planning-loop, options: {max_rounds: 1}}",
        llms="[oracle, ignores-context]",
        claims=(CLAIMS[1],),
    )
    failures = validate_suite(suite, out=tmp_path / "out").failures
    assert [(f.claim, f.control) for f in failures] == [("p002/abstains-when-unreachable", "oracle")]
    assert "answers the deep questions" in failures[0].expected and failures[0].observed.startswith("no effect")


def test_a_control_condition_that_hides_nothing_fails_the_gold_edge_claim(tmp_path, data, kb_dir):
    hides_nothing = '{name: as-of, label: invalidate-off-chain-edge, options: {time: "2099-01-01"}}'
    suite = controls_suite(
        tmp_path, data, kb_dir, off_chain=hides_nothing, llms="[oracle, ignores-context]", claims=(CLAIMS[2],)
    )
    failures = validate_suite(suite, out=tmp_path / "out").failures
    assert {f.control for f in failures} == {"oracle", "ignores-context"}
    checks = [f for f in failures if "left out (no edge invalidated)" in f.observed]
    assert len(checks) == 2 and all(f.observed.startswith("0 of ") for f in checks)
    assert all("invalidate-off-chain-edge on" in f.observed for f in checks)


def test_an_off_chain_edge_as_the_treatment_fails_the_gold_edge_claim(tmp_path, data, kb_dir):
    broken = "{name: invalidate-off-chain-edge, label: invalidate-gold-edge}"  # takes the gold edge's place
    suite = controls_suite(tmp_path, data, kb_dir, gold=broken, llms="[oracle, ignores-context]", claims=(CLAIMS[2],))
    validity = validate_suite(suite, out=tmp_path / "out")
    [failure] = validity.failures
    assert (failure.claim, failure.control) == ("p002/gold-edge-changes-answer", "oracle")
    assert failure.observed == "no effect: mean 0.00 vs 0.00 over 5 questions"


def test_a_claim_needing_the_one_round_configuration_is_refused_without_it(tmp_path, data, kb_dir):
    suite = controls_suite(tmp_path, data, kb_dir, one_round="{name: graphrag, options: {ask_confidence: true}}")
    with pytest.raises(UserError, match=r"controls\.claims\[0\]'.*needs system 'one-shot, same seeds'"):
        load_suite(suite)


def test_the_built_in_suite_declares_paper002s_claims():
    controls = load_suite(REPO / "suites" / "curriculum-planning.yaml").suite.controls
    assert [c.name for c in controls.claims] == [*CLAIMS, CLAIMS[0]]
    assert {"oracle", "parametric", "ignores-context", "noise-sensitive"} <= set(controls.llms)
    # issue 35 item 1: "the loop beats one-shot" is open, against one-shot over the same 4-hop neighbourhood
    beats = controls.claims[-1]
    assert beats.label == "p002/loop-beats-one-shot" and beats.open and not beats.expect_failure
    assert beats.options["one_round"] == "one-shot, 4-hop neighbourhood"
    assert {e["control"]: e["effect"] for e in beats.options["expect"]} == {"noise-sensitive": True, "oracle": False}
