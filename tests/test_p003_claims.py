"""Paper 003's claims on known-truth controls (``provbench validate``): they pass on
suites/fever-garag.yaml's own controls block, and fail, naming each claim, when the oracle is
broken on purpose (swapped for a control that ignores its context, or for one that replies at
random) or when the settings compared are one setting under three names."""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import REPO, validate_cli, verdicts_by_claim, write_suite
from provbench.cli import EXIT_CLAIM_NOT_DETECTABLE
from provbench.controls.validity import read_validity

SUITE = REPO / "suites" / "fever-garag.yaml"
DATA = REPO / "datasets" / "fever-mini" / "dev.jsonl"
CLAIMS = ("p003/ranking-changes-label", "p003/settings-send-different-prompts")


def smaller_suite(folder: Path, kb: Path, limit: int = 12, systems: list | None = None) -> Path:
    """fever-garag.yaml with its controls on ``limit`` claims (stratified) and a shared KB."""
    raw = yaml.safe_load(SUITE.read_text(encoding="utf-8"))
    raw["dataset"]["path"] = str(DATA)
    controls = raw["controls"]
    controls["dataset"].update(path=str(DATA), limit=limit, sample=True, seed=0)
    controls["knowledge_base"]["directory"] = str(kb)
    if systems is not None:
        controls["differences"]["systems"] = systems
    return write_suite(folder, yaml.safe_dump(raw, sort_keys=False))


def verdicts(out: Path) -> dict[tuple[str, str], list]:
    return verdicts_by_claim(read_validity(out).verdicts)


def test_paper003s_claims_pass_on_fever_garags_controls(tmp_path):
    result = validate_cli(SUITE, tmp_path / "out")
    assert result.exit_code == 0, result.output
    found = verdicts(tmp_path / "out")
    assert set(found) == {(c, control) for c in CLAIMS for control in ("oracle", "ignores-context")}
    assert all(v.passed for vs in found.values() for v in vs) and read_validity(tmp_path / "out").failed_units == 0
    differ, follows = found[("p003/ranking-changes-label", "oracle")]
    assert differ.p_value < 0.05 and differ.observed.startswith("an effect: labels differ on 12 of 36 claims")
    assert follows.observed.startswith("108 of 108 (1.00)")  # right exactly where the facts shown hold the gold
    [quiet] = found[("p003/ranking-changes-label", "ignores-context")]
    assert quiet.observed.startswith("no effect: labels differ on 0 of 36")
    [prompts] = found[("p003/settings-send-different-prompts", "oracle")]
    assert prompts.observed.startswith("passed: the 3 settings showed one identical set of facts for 0 of 36 claims")
    [empty] = found[("p003/settings-send-different-prompts", "ignores-context")]
    assert empty.observed.startswith("FAILED: every local graph was empty")
    assert "the sets of facts shown differ on 36 (their order alone on 0 more)" in differ.observed
    power = {(row.claim, row.sham): row.status for row in read_validity(tmp_path / "out").power}
    assert power == {  # each claim fails under its shams, named
        ("p003/ranking-changes-label", "oracle swapped for ignores-context"): "power",
        ("p003/ranking-changes-label", "every setting answered as ga-rag"): "power",
        ("p003/settings-send-different-prompts", "oracle swapped for ignores-context"): "power",
        ("p003/settings-send-different-prompts", "every setting answered as ga-rag"): "power",
    }
    # the suite's own three rankings and filter; the gated setting answers as the baseline, so it is left out
    assert read_validity(tmp_path / "out").differences == [
        "systems not run by the controls: vanilla-rag, ga-rag-authors-gate, planning-loop",
        "interventions not run by the controls: cited-removal, random-removal, full-isolation",
        "metrics not run by the controls: accuracy, output-changed, fever, provenance, table1, prompt-diversity",
    ]


def test_two_claims_are_not_enough_for_paper003s_claims(tmp_path):
    """The controls cut to 2 claims: every verdict says so, none passes, validate exits 4."""
    result = validate_cli(smaller_suite(tmp_path, tmp_path / "kb", limit=2), tmp_path / "out")  # a KB of 2 claims
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    found = verdicts(tmp_path / "out")
    assert set(found) == {(c, control) for c in CLAIMS for control in ("oracle", "ignores-context")}
    every = [v for vs in found.values() for v in vs]
    assert len(every) == 5 and not any(v.passed for v in every)
    assert {v.unmeasured for v in every} == {"not enough questions (n=2; needs >= 5)"}, [v.observed for v in every]


def test_an_oracle_that_ignores_its_context_fails_each_claim_naming_it(tmp_path, kb_dir, monkeypatch):
    from provbench.controls import BEHAVIOURS

    monkeypatch.setitem(BEHAVIOURS, "oracle", BEHAVIOURS["ignores-context"])  # reads no fact, extracts none
    result = validate_cli(smaller_suite(tmp_path, kb_dir), tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    failed = {(v.claim, v.control) for v in read_validity(tmp_path / "out").failures}
    assert failed == {(claim, "oracle") for claim in CLAIMS}
    assert all(claim in result.stderr for claim in CLAIMS) and "not detectable" in result.stderr


def test_a_random_reader_changes_labels_that_do_not_follow_the_facts(tmp_path, kb_dir, monkeypatch):
    from provbench.controls import BEHAVIOURS

    monkeypatch.setitem(BEHAVIOURS, "oracle", BEHAVIOURS["random"])  # a label by a hash of the prompt
    result = validate_cli(smaller_suite(tmp_path, kb_dir), tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    follows = verdicts(tmp_path / "out")[("p003/ranking-changes-label", "oracle")][-1]
    assert "exactly when the facts it showed hold" in follows.expected and not follows.passed


def test_one_setting_under_three_names_fails_each_claim(tmp_path, kb_dir):
    same = [
        {"name": "p003/ga-rag", "label": label, "options": {"top_facts": 4}}
        for label in ("ga-rag", "ga-rag-gamma0", "ga-rag-authors")
    ]
    result = validate_cli(smaller_suite(tmp_path, kb_dir, systems=same), tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    failed = verdicts(tmp_path / "out")
    [differ, _] = failed[("p003/ranking-changes-label", "oracle")]
    assert not differ.passed and differ.observed.startswith("no effect: labels differ on 0 of 12 claims")
    [prompts] = failed[("p003/settings-send-different-prompts", "oracle")]
    assert not prompts.passed and prompts.observed.startswith(
        "FAILED: all 3 settings showed one identical set of facts for 12 of 12 claims"
    )


def test_settings_that_only_reorder_whole_graphs_fail_each_claim(tmp_path, kb_dir):
    """The three rankings with every fact shown (top_facts 100) send prompts that differ in the
    facts' order only: the prompt check fails, and the label claim says the sets never differed."""
    whole = [
        {"name": "p003/ga-rag", "label": label, "options": {**options, "top_facts": 100}}
        for label, options in (
            ("ga-rag", {}),
            ("ga-rag-gamma0", {"gamma": 0.0}),
            ("ga-rag-authors", {"ranking": "authors"}),
        )
    ]
    result = validate_cli(smaller_suite(tmp_path, kb_dir, systems=whole), tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    failed = verdicts(tmp_path / "out")
    [prompts] = failed[("p003/settings-send-different-prompts", "oracle")]
    assert not prompts.passed and prompts.observed.startswith(
        "FAILED: all 3 settings showed one identical set of facts for 12 of 12 claims"
    )
    differ = failed[("p003/ranking-changes-label", "oracle")][0]
    assert "the sets of facts shown differ on 0 (their order alone on" in differ.observed
    assert "their order alone on 0 more" not in differ.observed


def test_a_claim_blind_to_its_settings_has_no_power_and_fails_validate(tmp_path, kb_dir):
    """settings-send-different-prompts with only its negative half (a control that extracts nothing,
    so every graph is empty) passes, and passes too with every setting answered as the first: no
    power against that sham, so validate names it and exits with 4."""
    raw = yaml.safe_load(smaller_suite(tmp_path, kb_dir).read_text(encoding="utf-8"))
    raw["controls"]["llms"] = ["ignores-context"]
    raw["controls"]["claims"] = [
        {
            "name": "p003/settings-send-different-prompts",
            "options": {"expect": [{"control": "ignores-context", "effect": False}]},
        }
    ]
    path = tmp_path / "blind.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    result = validate_cli(path, tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    assert "not detectable" not in result.stderr  # the claim holds: only its power is missing
    assert "no power against every setting answered as ga-rag: p003/settings-send-different-prompts" in result.stderr


def test_a_claim_naming_a_setting_the_controls_lack_is_refused(tmp_path, kb_dir):
    raw = yaml.safe_load(smaller_suite(tmp_path, kb_dir).read_text(encoding="utf-8"))
    raw["controls"]["claims"][0] = {"name": "p003/ranking-changes-label", "options": {"systems": ["ga-rag", "nope"]}}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    result = validate_cli(path, tmp_path / "out")
    assert result.exit_code == 2 and "needs system 'nope'" in result.stderr and "controls.claims[0]" in result.stderr
