"""CI gates: assertions in a suite are validated with file, line and field; a failing one makes
`provbench run` exit with status 5 and shows in junit.xml and summary.json, beside failed units."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from provbench.suite import SuiteError, load_suite
from runner_helpers import QUESTIONS, scripted_llm, toy_plugin_manager, toy_registry

SUITE = """\
name: t
dataset: {loader: toy-json, path: questions.json}
model: {id: scripted}
systems: [toy-graph, toy-plain]
interventions: [toy-hide-cited]
metrics: [toy-length]
"""


def write(tmp_path: Path, extra: str, questions: list | None = None) -> Path:
    (tmp_path / "questions.json").write_text(json.dumps(questions if questions is not None else QUESTIONS[:4]))
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE + extra)
    return path


def error_of(path: Path) -> str:
    with pytest.raises(SuiteError) as info:
        load_suite(path, toy_registry())
    return str(info.value)


def test_assertions_load_and_full_names_mean_their_keys(tmp_path):
    loaded = load_suite(
        write(
            tmp_path,
            "assert:\n  - {metric: accuracy, system: toy-graph, min: 0.5}\n"
            "  - {metric: provenance.toy-length, condition: toy-hide-cited, max: 40}\n",
        ),
        toy_registry(),
    )
    first, second = loaded.suite.assertions
    assert (first.system, first.min, first.condition) == ("toy-graph", 0.5, None)
    assert second.system is None and second.max == 40


@pytest.mark.parametrize(
    "entry, line, field, words",
    [
        ("{metric: accuracy, system: toy-graph}", 9, "assert[1]", "needs min, max or both"),
        ("{metric: accuracy, min: 0.9, max: 0.1}", 9, "assert[1]", "min 0.9 is above max 0.1"),
        ("{metric: accuracy, system: toy-grap, min: 0.5}", 9, "assert[1].system", "did you mean 'toy-graph'"),
        ("{metric: accuracy, condition: cited-removal, min: 0.5}", 9, "assert[1].condition", "unknown condition"),
        (
            "{metric: p.x, condition: toy-hide-cited vs nope, min: 0}",
            9,
            "assert[1].condition",
            "unknown condition 'nope'",
        ),
        ("{metric: accuracy, mni: 0.5}", 9, "assert[1].mni", "unknown field"),
    ],
)
def test_a_bad_assertion_names_file_line_and_field(tmp_path, entry, line, field, words):
    message = error_of(write(tmp_path, f"assert:\n  - {{metric: accuracy, min: 0}}\n  - {entry}\n"))
    assert f"suite.yaml, line {line}, field '{field}'" in message and words in message, message


def test_repeats_need_a_temperature_above_zero(tmp_path):
    suite = SUITE.replace(
        "systems: [toy-graph, toy-plain]", "systems:\n  - {name: toy-graph, repeats: 3}\n  - toy-plain"
    )
    (tmp_path / "questions.json").write_text("[]")
    path = tmp_path / "suite.yaml"
    path.write_text(suite)
    message = error_of(path)
    assert "line 5, field 'systems[0].repeats'" in message and "temperature above 0" in message, message
    path.write_text(suite.replace("model: {id: scripted}", "model: {id: scripted, params: {temperature: 0.7}}"))
    assert load_suite(path, toy_registry()).suite.systems[0].repeats == 3


@pytest.fixture
def cli_run(monkeypatch):
    """`provbench run` on the toy plugins and the scripted LLM."""
    import provbench.runner as runner
    from provbench.cli import main

    real = runner.run_suite
    monkeypatch.setattr(
        runner,
        "run_suite",
        lambda *a, **k: real(*a, **k, pm=toy_plugin_manager(), llm=scripted_llm()[0], write_report=False),
    )
    return lambda suite, out: CliRunner().invoke(main, ["run", str(suite), "--out", str(out)])


def test_a_failing_assertion_exits_5_with_junit_and_summary(tmp_path, cli_run):
    suite = write(
        tmp_path,
        "assert:\n  - {metric: accuracy, system: toy-graph, min: 0.5}\n"
        "  - {metric: accuracy, system: toy-plain, min: 0.9, name: plain is good}\n"
        "  - {metric: answer_length, condition: toy-hide-cited, max: 100}\n",
    )
    result = cli_run(suite, tmp_path / "run")
    assert result.exit_code == 5, result.output
    assert "plain is good" in result.output and "FAILED" in result.output
    tree = ET.parse(tmp_path / "run" / "junit.xml").getroot()
    assert tree.tag == "testsuites" and tree.get("failures") == "1" and tree.get("errors") == "0"
    checks = tree.find("testsuite[@name='assertions']")
    cases = {c.get("name"): c for c in checks.findall("testcase")}
    assert cases["plain is good"].find("failure").get("message").startswith("0.25 outside [0.9, –]")
    assert cases["accuracy >= 0.5 (toy-graph, baseline)"].find("failure") is None
    assert "answer_length <= 100 (toy-graph, toy-hide-cited)" in cases  # no system: each system that has it
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["exit_status"] == 5 and summary["assertions_failed"] == 1 and not summary["passed"]
    assert summary["units"] == {"total": 16, "ok": 16, "failed": 0}
    assert summary["baseline_accuracy"] == {"toy-graph": 1.0, "toy-plain": 0.25}
    cost = summary["cost"]  # the scripted model runs here: every call priced 0, marked local
    assert cost["calls"] > 0 and cost["local_calls"] == cost["calls"] and cost["text"] == "0 (local)"
    assert summary["stopped"] is None


def test_failed_units_are_junit_errors_and_exit_3(tmp_path, cli_run):
    suite = write(tmp_path, "assert:\n  - {metric: accuracy, system: toy-plain, min: 0.1}\n", questions=QUESTIONS)
    result = cli_run(suite, tmp_path / "run")
    assert result.exit_code == 3, result.output
    tree = ET.parse(tmp_path / "run" / "junit.xml").getroot()
    units = tree.find("testsuite[@name='units']")
    errors = units.findall("testcase/error")
    assert len(errors) == int(units.get("errors")) >= 2
    assert any("toy system crashed on q6-crash" in e.get("message") for e in errors)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["exit_status"] == 3 and summary["units"]["failed"] == len(errors)
    assert {u["question_id"] for u in summary["failed_units"]} >= {"q6-crash", "q7-llm"}


def test_a_metric_the_run_lacks_fails_and_check_rereads(tmp_path, cli_run):
    from provbench.cli import main

    suite = write(tmp_path, "assert:\n  - {metric: provenance.citation_necessity, min: 0.1}\n")
    assert cli_run(suite, tmp_path / "run").exit_code == 5
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert "no value of 'provenance.citation_necessity'" in summary["assertions"][0]["message"]
    (tmp_path / "run" / "junit.xml").unlink()
    result = CliRunner().invoke(main, ["check", str(tmp_path / "run")])
    assert result.exit_code == 5 and (tmp_path / "run" / "junit.xml").exists()


def test_a_run_the_budget_stopped_exits_6_in_summary_as_on_the_command_line(tmp_path, cli_run):
    result = cli_run(write(tmp_path, "budget: {max_calls: 3}\n"), tmp_path / "run")
    assert result.exit_code == 6, result.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["exit_status"] == 6 and not summary["passed"] and "max_calls 3" in summary["stopped"]
    from provbench import cli, gates

    assert (gates.EXIT_UNITS_FAILED, gates.EXIT_BUDGET) == (cli.EXIT_UNITS_FAILED, cli.EXIT_BUDGET)


def test_no_assertions_and_no_failures_exit_0(tmp_path, cli_run):
    result = cli_run(write(tmp_path, ""), tmp_path / "run")
    assert result.exit_code == 0, result.output
    tree = ET.parse(tmp_path / "run" / "junit.xml").getroot()
    assert tree.get("tests") == "1" and tree.find("testsuite[@name='units']/testcase").get("name") == "all 16 units ran"
    from provbench.cli import main

    checked = CliRunner().invoke(main, ["check", str(tmp_path / "run")])  # success is not silence
    assert checked.exit_code == 0 and "16 of 16 unit(s) ran, 0 failed; the suite asserts nothing" in checked.output
    assert "passed; wrote summary.json and junit.xml" in checked.output


def test_a_metric_of_one_condition_needs_none_named(tmp_path, cli_run):
    """provenance.citation_necessity's values are for 'cited-removal vs random-removal': an
    assertion may name that condition, or none when the metric has only that one."""
    from provbench.gates import check_run
    from provbench.report.data import load_run

    suite = write(tmp_path, "assert:\n  - {metric: p.x, condition: baseline vs toy-hide-cited, max: 0.5}\n")
    assert load_suite(suite, toy_registry()).suite.assertions[0].condition == "baseline vs toy-hide-cited"
    cli_run(suite, tmp_path / "run")
    run = load_run(tmp_path / "run")
    run.metrics["values"].append(
        {"metric": "p.x", "system": "toy-graph", "condition": "baseline vs toy-hide-cited", "value": 0.25}
    )
    run.manifest.suite["assertions"] = [{"metric": "p.x", "max": 0.5}, {"metric": "provenance.toy-length", "max": 100}]
    first, *lengths = check_run(run)
    assert (first.system, first.condition, first.value, first.passed) == (
        "toy-graph",
        "baseline vs toy-hide-cited",
        0.25,
        True,
    )
    assert first.name == "p.x <= 0.5 (toy-graph, baseline vs toy-hide-cited)"
    assert {r.condition for r in lengths} == {"baseline"}  # several conditions: the baseline's value
