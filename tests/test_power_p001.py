"""Paper 001's claims have power against every sham of what they are about (issue 32): each gives
one verdict per removal, so a removal faked alone (hiding nothing, or a random variant in place of
the real one) fails its own verdict, where the claims pooled over removals let the others carry
it. A real removal broken to hide nothing fails validate (exit 4), and the pooled claim of before
the repair, planted here, is named as having no power against one faked removal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from provbench import hookimpl
from provbench.cli import EXIT_CLAIM_NOT_DETECTABLE
from provbench.controls.validity import read_validity
from provbench.testing import plugin_manager
from provbench_plugins.papers.p001_kgrag_ex.interventions import NodeRemoval
from provbench_plugins.papers.p001_kgrag_ex.known_truth import ExplanationNamesPlanted
from conftest import validate_cli
from test_validate_p001 import p001_suite

REMOVALS = ("kg-node-removal", "kg-edge-removal", "kg-subpath-removal")
CLAIMS = ("p001/explanation-names-planted", "p001/unplanted-change-nothing")


class PooledExplanation(ExplanationNamesPlanted):
    """The explanation claim as it was before the repair: Table 2's explanation over every removal only."""

    name = "pooled-explanation"

    def scopes(self):
        return [("every removal (Table 2)", list(self.options.conditions))]


class NodeRemovalHidingNothing(NodeRemoval):
    """A broken node removal: its variants are the real ones, but the system reads the paths whole."""

    name = "broken-node-removal"

    def perturb(self, question, baseline, rng, **kwargs):
        return baseline


@hookimpl
def provbench_register_claims():
    return {"pooled-explanation": PooledExplanation}


@hookimpl
def provbench_register_interventions():
    return {"broken-node-removal": NodeRemovalHidingNothing}


@pytest.fixture(scope="module")
def kb_dir(controls_kb_dir) -> Path:
    return controls_kb_dir


@pytest.fixture(scope="module")
def validated(tmp_path_factory, kb_dir):
    folder = tmp_path_factory.mktemp("power-p001")
    return folder, folder / "out", validate_cli(p001_suite(folder, kb_dir), folder / "out")


@pytest.fixture
def with_planted_plugins(monkeypatch):
    import provbench.registry

    pm = plugin_manager(sys.modules[__name__], builtins=True)
    monkeypatch.setattr(provbench.registry, "default_plugin_manager", lambda: pm)


def test_each_removal_has_its_verdicts_and_every_sham_fails_a_claim(validated):
    _, out, result = validated
    assert result.exit_code == 0, result.output
    validity = read_validity(out)
    for claim in CLAIMS:
        scopes = [v.expected.split(":")[0] for v in validity.verdicts if v.claim == claim and v.control == "oracle"]
        assert [s for s in scopes if s in REMOVALS] == list(REMOVALS), (claim, scopes)
    power = {(row.claim, row.sham): row for row in validity.power}
    for claim in CLAIMS:
        for removal in REMOVALS:
            for faked in ("hides nothing", "hides a same-size random set"):
                row = power[claim, f"{removal} {faked}"]
                assert row.status == "power" and f"{removal}: " in row.observed, row
    assert {row.status for row in validity.power} == {"power"}, [r for r in validity.power if r.status != "power"]


def test_the_pooled_explanation_has_no_power_against_one_faked_removal(validated, kb_dir, with_planted_plugins):
    folder, out, _ = validated
    suite = p001_suite(folder / "pooled", kb_dir, claims="    - pooled-explanation\n")
    result = validate_cli(suite, folder / "pooled" / "out", reuse=out)  # the same control runs, resumed
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    for removal in REMOVALS:
        assert f"no power against {removal} hides nothing: pooled-explanation" in result.stderr


def test_a_node_removal_that_hides_nothing_fails_validate(tmp_path, kb_dir, with_planted_plugins):
    suite = p001_suite(
        tmp_path, kb_dir, llms="[oracle]", claims="    - name: p001/unplanted-change-nothing\n"
    )  # its one control: the oracle
    text = suite.read_text(encoding="utf-8")
    suite.write_text(
        text.replace("  - kg-node-removal\n", "  - {name: broken-node-removal, label: kg-node-removal}\n"),
        encoding="utf-8",
    )
    result = validate_cli(suite, tmp_path / "out")
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    failed = read_validity(tmp_path / "out").failures
    assert [v.observed.split(":")[0] for v in failed] == ["kg-node-removal"]  # the other removals still hold
    assert "planted: 0 of" in failed[0].observed
    assert "not detectable: p001/unplanted-change-nothing" in result.stderr
