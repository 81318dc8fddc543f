"""`provbench data info`, built-in suites by name, and the CLI defaults that moved into suites."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import REPO, shared_dir
from provbench.cli import main
from provbench.datainfo import DataError, data_info
from provbench.errors import UserError
from provbench.testing import TINY_QUESTIONS, registry_of, toy_plugin

MINI = REPO / "datasets" / "2wiki-mini" / "dev.json"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})


def test_counts_per_facet_on_the_mini_dataset():
    result = invoke("data", "info", str(MINI))
    assert result.exit_code == 0, result.output
    assert "30 record(s), loader '2wiki'" in result.output  # the one loader that claims the file
    assert "per type" in result.output and "per category" in result.output
    assert "compositional" in result.output and "summary-vs-local" in result.output


def test_every_shared_2wiki_sample_is_described():
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared is absent")
    samples = sorted((shared / "datasets" / "2wikimultihopqa").glob("*.json"))
    assert samples
    for sample in samples:
        result = invoke("data", "info", str(sample), "--loader", "2wiki")
        assert result.exit_code == 0 and "record(s)" in result.output, result.output


def test_a_broken_file_lists_located_problems_and_exits_non_zero(tmp_path):
    records = json.loads(MINI.read_text())[:3]
    records[0]["question"] = ""
    del records[2]["type"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(records))
    result = invoke("data", "info", str(broken), "--loader", "2wiki")
    assert result.exit_code != 0
    assert f"{broken}: record {records[0]['_id']!r}: field question" in result.output, result.output
    assert f"record {records[2]['_id']!r}: field type: Field required" in result.output, result.output
    (tmp_path / "syntax.json").write_text("[{oops")
    result = invoke("data", "info", str(tmp_path / "syntax.json"), "--loader", "2wiki")
    assert result.exit_code != 0 and "not valid JSON (line 1" in result.output, result.output


def test_loader_choice_errors(tmp_path):
    unknown = tmp_path / "notes.csv"
    unknown.write_text("a,b\n")
    result = invoke("data", "info", str(unknown))
    assert result.exit_code != 0 and "no loader recognises this file" in result.output
    assert "known loaders: 2wiki" in result.output
    other_columns = tmp_path / "cols.csv"
    other_columns.write_text("qid,q,a\n1,Who?,me\n")
    result = invoke("data", "info", str(other_columns))
    assert "qa: looked for a question column (question, query," in result.output, result.output
    assert "the file has qid, q, a: map yours with the option fields" in result.output
    result = invoke("data", "info", str(MINI), "--loader", "2wikki")
    assert result.exit_code != 0 and "unknown dataset_loader '2wikki'; did you mean '2wiki'?" in result.output
    result = invoke("data", "info", str(MINI), "--option", "selct=true")
    assert result.exit_code != 0 and "dataset_loader '2wiki': bad options: selct=True" in result.output
    result = invoke("data", "info", str(MINI), "--option", "select")
    assert result.exit_code != 0 and "expected KEY=VALUE" in result.output


def test_options_reach_the_loader():
    result = invoke("data", "info", str(MINI), "--option", "quotas={local-path: 2}")
    assert result.exit_code == 0 and "2 record(s)" in result.output, result.output


def test_generic_over_loaders_facets_choices_and_duplicates(tmp_path):
    registry = registry_of(toy_plugin())
    questions = [dict(q) for q in TINY_QUESTIONS]
    questions[0]["choices"] = ["Orin Vale", "Mara Holt", "Norland"]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(questions))
    info = data_info(registry, path)  # the toy loader claims a JSON list of questions
    assert info.loader == "questions-json" and info.records == 3
    assert dict(info.facets["type"]) == {"bridge": 2, "lookup": 1}
    assert "category" not in info.facets  # no question carries one
    assert dict(info.choices) == {3: 1}
    path.write_text(json.dumps(questions + questions[:1]))
    with pytest.raises(DataError, match="question id\\(s\\) used more than once: t1"):
        data_info(registry, path)
    path.write_text("[]")
    with pytest.raises(DataError, match="found no questions"):
        data_info(registry, path, "questions-json")
    both = registry_of(toy_plugin("a"), toy_plugin("b"))
    path.write_text(json.dumps(questions))
    with pytest.raises(UserError, match="several loaders read this file \\(questions-json, questions-json\\)"):
        data_info(both, path)


def test_suites_lists_the_builtin_suites_and_run_resolves_a_name():
    result = invoke("suites")
    assert result.exit_code == 0 and "quickstart" in result.output and "2wiki-provenance" in result.output
    from provbench.bundled import resolve_suite

    assert resolve_suite("quickstart") == REPO / "suites" / "quickstart.yaml"
    assert resolve_suite(str(REPO / "suites" / "quickstart.yaml")) == REPO / "suites" / "quickstart.yaml"
    result = invoke("run", "quickstrat")
    assert result.exit_code != 0
    assert "suite 'quickstrat': no such file, and no built-in suite of that name" in result.output
    listed = result.output.split("built-in suites: ", 1)[1].split(")")[0].split(", ")
    assert {"2wiki-provenance", "quickstart"} <= set(listed)


def test_kb_build_of_a_dataset_file_needs_a_builder():
    result = invoke("kb", "build", str(MINI))
    assert result.exit_code != 0
    # the known builders grow with each paper: check the message and membership, not the whole list
    assert "name the knowledge-base builder with --builder (known: " in result.output
    assert "2wiki-paper000" in result.output


@pytest.mark.parametrize("target", ["", "questions.jsonl"])
def test_the_curriculum_folder_or_its_questions_are_recognised(target):
    result = invoke("data", "info", str(REPO / "datasets" / "curriculum-mini" / target))
    assert result.exit_code == 0, result.output
    assert "loader 'curriculum'" in result.output
