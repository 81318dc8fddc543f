"""The ``recorded`` system (issue 31 item 6): answers a system already produced, with the contexts,
citations and trajectory it recorded (ids or text), scored like a live run; interventions refused
at load time; every bad line of the answers file named by file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from provbench.cli import main
from provbench.errors import UserError
from provbench.suite import SuiteError, load_suite
from provbench_plugins.systems.recorded import read_answers
from provbench_tools.own_docs import write as write_own_docs

SUITE = """\
name: replay
dataset:
  loader: qa
  path: data/questions.csv
  options: {documents: docs}
knowledge_base: {builder: documents, options: {chunk_size: 256}}
systems:
  - name: recorded
    options: {path: answers.jsonl}
metrics: [accuracy, em, f1, gold-trajectory, ragas-faithfulness]
"""
ANSWERS = [
    {
        "id": "q01",
        "answer": "Mira Castell",
        "confidence": 0.9,
        "contexts": ["Mira Castell founded Halden Observatory in 1921."],
        "citations": ["Mira Castell founded Halden Observatory in 1921."],
    },
    {
        "id": "q02",
        "answer": "Vell Harbor",
        "citations": ["ent:mira-castell"],
        "trajectory": [{"tool": "search", "arguments": {"query": "Mira Castell"}, "shown": ["ent:mira-castell"]}],
    },
    {"id": "q03", "answer": None, "contexts": ["a sentence that no document holds"]},
]


def write_lines(path: Path, objects: list) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("replay")
    write_own_docs(root / "data")
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    write_lines(root / "answers.jsonl", ANSWERS)
    return root


def test_recorded_answers_are_scored_without_rerunning(project, monkeypatch):
    monkeypatch.chdir(project)
    result = CliRunner().invoke(
        main, ["run", "suite.yaml", "--model", "schema-following", "--limit", "3"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    run_dir = project / "reports" / "replay"
    records = {r["key"]["question_id"]: r for r in map(json.loads, (run_dir / "records.jsonl").open())}
    first, second, third = records["q01"]["trace"], records["q02"]["trace"], records["q03"]["trace"]
    assert first["answer"] == "Mira Castell" and first["read_text_units"] and first["citations"]["text_units"]
    assert first["llm_calls"] == [] and second["citations"]["entities"] == ["ent:mira-castell"]
    assert second["steps"][0]["shown"] == {"entity": ["ent:mira-castell"]}
    assert third["outcome"] == "abstained" and third["artifacts"]["unmapped"] == ["a sentence that no document holds"]
    scores = records["q01"]["scores"]
    assert scores["accuracy"] == 1.0 and scores["em"] == 1.0 and records["q02"]["scores"]["accuracy"] == 0.0
    assert scores["gold.cited.text_unit.recall"] == 1.0 and scores["gold.visited.text_unit.recall"] == 1.0
    # RAGAS scored the recorded answer on its cited text (the schema-following stand-in judge's value means nothing)
    assert 0.0 <= scores["faithfulness_cited"] <= 1.0 and "faithfulness_cited" not in records["q01"]["score_notes"]


def test_a_suite_intervening_on_recorded_answers_is_refused(project, monkeypatch):
    monkeypatch.chdir(project)
    text = SUITE + "interventions: [cited-removal]\n"
    (project / "intervening.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(project / "intervening.yaml")
    message = str(caught.value)
    assert "intervening.yaml, line 11, field 'interventions'" in message and "'recorded' replays answers" in message
    assert "interventions need a live system" in message


@pytest.mark.parametrize(
    "bad, where, field",
    [
        ({"id": "q01", "answr": "x"}, ":2:", "'answr'"),
        ({"id": "q01", "confidence": 3}, ":2:", "'confidence'"),
        ({"id": "q01", "trajectory": [{"shown": "tu:0"}]}, ":2:", "'trajectory.0.shown'"),
        ({"id": "q00"}, ":2:", "'id'"),
    ],
)
def test_each_bad_answer_line_names_file_line_and_field(tmp_path, bad, where, field):
    path = write_lines(tmp_path / "answers.jsonl", [{"id": "q00"}, bad])
    with pytest.raises(UserError) as caught:
        read_answers(path)
    assert f"{path}{where} field {field}" in str(caught.value)


def test_a_json_list_names_the_item(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([{"id": "q1"}, {"question": "q2"}]), encoding="utf-8")
    with pytest.raises(UserError, match=r"answers.json: item 2: field 'id': Field required"):
        read_answers(path)
