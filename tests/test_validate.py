"""``provbench validate``: paper 000's claims pass on their controls, and fail, naming the claim,
when a control or an intervention is broken on purpose. A small controls block (16 questions of
datasets/2wiki-controls, three ablations) keeps each run to seconds; the built-in suite's own
block runs in full in the integration test at the end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from provbench import hookimpl
from provbench.cli import EXIT_CLAIM_NOT_DETECTABLE, main
from provbench.controls.validate import validate_suite
from provbench.controls.validity import read_validity
from provbench.plugin_api import Intervention
from provbench.store import RunStore
from provbench.testing import plugin_manager
from test_report_browser import browser  # noqa: F401 (the headless Chromium fixture)

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "datasets" / "2wiki-controls" / "dev.json"
P000_CLAIMS = """\
    - p000/cited-removal-beats-random
    - p000/exclusion-reference
    - name: p000/ignores-context-unchanged
      options: {conditions: [cited-removal, random-removal, full-isolation]}
    - p000/isolation-breaks-uncited
"""


def small_suite(folder: Path, kb: Path, *, llms: str = "[oracle, uses-uncited, parametric, ignores-context]",
                claims: str = P000_CLAIMS, cited_removal: str = "cited-removal", model: str = "control:oracle") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "suite.yaml"
    path.write_text(f"""\
name: small-controls
dataset: {{loader: 2wiki, path: {DATA}, limit: 4}}
model: {{id: {model}}}
systems: [llm-only]
report: {{subgraph_pictures: false}}
controls:
  dataset: {{loader: 2wiki, path: {DATA}, limit: 16}}
  knowledge_base: {{builder: 2wiki-paper000, directory: {kb}, options: {{extract: false, summarize: false}}}}
  llms: {llms}
  systems: [llm-only, agentic-graphrag]
  intervention_systems: [agentic-graphrag]
  interventions:
    - {cited_removal}
    - {{name: random-removal, options: {{repeats: 2}}}}
    - full-isolation
  exclusion: {{reference_system: llm-only}}
  claims:
{claims}""", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory) -> Path:
    """One knowledge base for every suite of this module (same inputs: it is reused)."""
    return tmp_path_factory.mktemp("controls-kb") / "kb"


def test_validate_passes_paper000_claims(tmp_path, kb_dir):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["validate", str(small_suite(tmp_path, kb_dir)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    validity = read_validity(out)
    assert {v.claim for v in validity.verdicts} == {"p000/cited-removal-beats-random", "p000/exclusion-reference",
                                                    "p000/ignores-context-unchanged", "p000/isolation-breaks-uncited"}
    assert all(v.passed for v in validity.verdicts) and validity.failed_units == 0
    changed, accuracy = [v for v in validity.verdicts if v.claim == "p000/cited-removal-beats-random"
                         and v.control == "oracle"]
    assert changed.p_value < 0.05 and changed.observed.startswith("an effect: mean 1.00 vs 0.00 over 16")
    assert "accuracy of agentic-graphrag higher under random-removal than under cited-removal" in accuracy.expected
    assert accuracy.passed and accuracy.observed.startswith("an effect: mean 1.00 vs 0.00")
    assert "suite validity: small-controls" in result.output and "p000/exclusion-reference" in result.output
    for control in ("oracle", "uses-uncited", "ignores-context"):  # the controls never leak: gold comes from questions
        records = RunStore(out / "controls" / control).load_records().values()
        checks = [r.leak_check.status for r in records if r.key.condition != "baseline"]
        assert checks and set(checks) == {"clean"}, (control, set(checks))
    report = (out / "controls" / "oracle" / "report.html").read_text(encoding="utf-8")
    assert 'id="suite-validity"' in report and "p000/isolation-breaks-uncited" in report
    assert json.loads((out / "controls" / "oracle" / "validity.json").read_text())["suite_name"] == "small-controls"


def test_the_random_control_in_place_of_the_oracle_fails_the_claims(tmp_path, kb_dir, monkeypatch):
    from provbench.controls import BEHAVIOURS

    monkeypatch.setitem(BEHAVIOURS, "oracle", BEHAVIOURS["random"])  # "control:oracle" now replies at random
    result = CliRunner().invoke(main, ["validate", str(small_suite(tmp_path, kb_dir)), "--out", str(tmp_path / "out")])
    assert result.exit_code == EXIT_CLAIM_NOT_DETECTABLE, result.output
    failed = {(v.claim, v.control) for v in read_validity(tmp_path / "out").failures}
    assert ("p000/cited-removal-beats-random", "oracle") in failed  # random had no right answer to lose
    assert ("p000/isolation-breaks-uncited", "oracle") in failed  # and isolation changes its replies
    assert "not detectable: p000/cited-removal-beats-random" in result.stderr


class HidesNothing(Intervention):
    """A broken ablation: the view it hands the system hides nothing."""

    def make_view(self, view, question, baseline, rng, **kwargs):
        return view.hide()


@hookimpl
def provbench_register_interventions():
    return {"hides-nothing": HidesNothing}


def test_an_intervention_that_hides_nothing_fails_paper000s_check(tmp_path, kb_dir):
    broken = "{name: hides-nothing, label: cited-removal}"  # takes cited removal's place
    suite = small_suite(tmp_path, kb_dir, cited_removal=broken, llms="[oracle, ignores-context]",
                        claims="    - p000/cited-removal-beats-random\n")
    validity = validate_suite(suite, out=tmp_path / "out", pm=plugin_manager(sys.modules[__name__], builtins=True))
    assert [(v.claim, v.control) for v in validity.failures] == [("p000/cited-removal-beats-random", "oracle")] * 2
    assert all(v.observed.startswith("no effect: mean") for v in validity.failures)  # nothing hidden, nothing lost


def test_an_expected_failure_is_shown_but_does_not_fail(tmp_path, kb_dir):
    claims = ("    - name: p000/cited-removal-beats-random\n      expect_failure: a known gap\n      options:\n"
              "        expect: [{control: ignores-context, effect: true}]\n")
    suite = small_suite(tmp_path, kb_dir, llms="[ignores-context]", claims=claims)
    result = CliRunner().invoke(main, ["validate", str(suite), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "expected to fail: a known gap" in result.output and "expected failure" in result.output


def test_a_suite_without_controls_is_refused(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text(f"name: plain\ndataset: {{loader: 2wiki, path: {DATA}}}\nsystems: [llm-only]\n")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2 and "declares no controls" in result.stderr


def test_a_run_with_controls_reports_suite_validity(tmp_path, kb_dir):
    suite = small_suite(tmp_path, kb_dir, llms="[oracle, ignores-context]", claims="    - p000/cited-removal-beats-random\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(suite), "--controls", "--out", str(out)])
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="suite-validity"' in html and "p000/cited-removal-beats-random" in html
    assert (out / "controls" / "oracle" / "records.jsonl").is_file()


@pytest.mark.browser
def test_suite_validity_section_in_chromium(tmp_path, kb_dir, browser, artifacts_dir):
    from test_report_browser import assert_nothing_ran, open_page

    suite = small_suite(tmp_path, kb_dir, llms="[oracle, ignores-context]",
                        claims="    - p000/cited-removal-beats-random\n    - name: p000/exclusion-reference\n"
                               "      options: {knows: ignores-context}\n")
    out = tmp_path / "run"
    assert CliRunner().invoke(main, ["run", str(suite), "--controls", "--out", str(out)]).exit_code == 4
    page, dialogs = open_page(browser, out / "report.html")
    heading, table = page.locator("h2#suite-validity"), page.locator("table.validity")
    assert heading.is_visible() and heading.inner_text() == "Suite validity" and table.is_visible()
    rows = table.locator("tbody tr")
    assert rows.count() == 6  # 2 controls x 2 scores, then 2 controls
    assert page.locator("p.caption", has_text="not detectable: p000/exclusion-reference").is_visible()
    failed = rows.filter(has_text="FAIL")
    assert failed.count() == 1 and "ignores-context" in failed.inner_text()  # it excludes almost nothing
    box = table.bounding_box()
    assert box and box["width"] > 600 and box["height"] > 100
    table.screenshot(path=str(artifacts_dir / "report-suite-validity.png"))
    assert_nothing_ran(page, dialogs)
    page.close()


def suites_with_controls() -> list[str]:
    """Every built-in suite that declares a `controls:` block: each must pass `validate`."""
    return sorted(path.stem for path in (REPO / "suites").glob("*.yaml")
                  if any(line.startswith("controls:") for line in path.read_text().splitlines()))


def test_every_built_in_suite_declares_its_controls():
    every = sorted(path.stem for path in (REPO / "suites").glob("*.yaml"))
    assert suites_with_controls() == every  # a suite without controls cannot show what it detects


@pytest.mark.integration
@pytest.mark.parametrize("suite", suites_with_controls())
def test_the_built_in_suites_controls_pass_within_five_minutes(tmp_path, suite):
    import time

    started = time.monotonic()
    result = CliRunner().invoke(main, ["validate", str(REPO / "suites" / f"{suite}.yaml"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 300
    verdicts = read_validity(tmp_path / "out").verdicts
    assert all(v.passed or v.expected_failure for v in verdicts)  # the authors' suite marks the claims it cannot test
    assert sum(bool(v.expected_failure) for v in verdicts) == (2 if suite.endswith("-authors") else 0)


def test_control_runs_of_another_controls_version_start_over(tmp_path, monkeypatch):
    from provbench.controls import validate
    from provbench.suite import load_suite

    suite = load_suite(small_suite(tmp_path, tmp_path / "kb"))
    run_dir = tmp_path / "controls" / "oracle"
    identity = validate.run_identity(suite, "oracle")
    assert validate.start_or_resume(run_dir, identity) == run_dir
    (run_dir / "records.jsonl").write_text("kept\n")
    validate.start_or_resume(run_dir, validate.run_identity(suite, "oracle"))
    assert (run_dir / "records.jsonl").is_file()  # same identity: resumed
    monkeypatch.setattr(validate, "VERSION", validate.VERSION + 1)
    validate.start_or_resume(run_dir, validate.run_identity(suite, "oracle"))
    assert not (run_dir / "records.jsonl").exists()  # a newer control: its old records are gone
