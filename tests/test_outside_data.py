"""Red team (case f): an outside user's own data that an earlier route got wrong. Documents that
cannot be read are an error naming the file and the question row; documents the extractor finds
nothing in give a degenerate knowledge base that `run` refuses; questions whose answers are in no
document must not pass for questions with gold evidence."""

from __future__ import annotations

import pytest

from outside_helpers import OWN_DOCS, provbench


def write(folder, docs: dict[str, bytes], questions: str):
    """The user's files: ``docs/`` and ``questions.csv``."""
    (folder / "docs").mkdir(parents=True)
    for name, data in docs.items():
        (folder / "docs" / name).write_bytes(data)
    (folder / "questions.csv").write_text(questions)
    return folder / "docs", folder / "questions.csv"


@pytest.mark.parametrize(
    ("name", "data", "problem"),
    [
        ("scan.pdf", b"\x00\x01 not a pdf", "scan.pdf: not a readable PDF"),
        ("empty.txt", b"   \n", "empty.txt: no text could be read from it"),
    ],
)
def test_an_unreadable_document_is_an_error_naming_it_and_the_row(tmp_path, name, data, problem):
    docs, questions = write(tmp_path, {name: data}, f"id,question,answer,supporting_documents\nq1,Who?,Ann,{name}\n")
    done = provbench("init", "--docs", str(docs), "--questions", str(questions), "--out", str(tmp_path / "s.yaml"))
    assert done.exit_code == 2 and "questions.csv:2: field 'supporting_documents'" in done.output, done.output
    assert problem in done.output and not (tmp_path / "s.yaml").exists()


def test_documents_with_nothing_to_extract_are_refused_not_measured(tmp_path):
    docs = {"a.txt": b"the the of and a a.\n", "b.txt": b"lorem ipsum dolor sit amet.\n"}
    docs_dir, questions = write(tmp_path, docs, "id,question,answer\nq1,Who built Tor Ven?,Ulla Mest\n")
    suite = tmp_path / "suite.yaml"
    assert provbench("init", "--docs", str(docs_dir), "--questions", str(questions), "--out", str(suite)).exit_code == 0
    done = provbench("run", str(suite), "--model", "schema-following", "--out", str(tmp_path / "run"))
    assert done.exit_code == 2, done.output
    assert "is degenerate" in done.output and "it has no entities; it has no relations" in done.output
    assert not (tmp_path / "run" / "records.jsonl").exists()


@pytest.mark.xfail(
    strict=True,
    reason="red team (f): a question whose answer is in none of its supporting documents (nor anywhere "
    "in the corpus) gets the supporting document's sentence most like it as gold; the run says its gold "
    "'maps wholly onto the knowledge base', the oracle answers it right, and nothing names it",
)
def test_questions_whose_answers_are_in_no_document_are_named(tmp_path):
    docs = {p.name: p.read_bytes() for p in (OWN_DOCS / "docs").iterdir()}
    questions = (
        "id,question,answer,supporting_documents\n"
        "q1,Who repaired the dome of Halden Observatory?,Quaxville Smith,halden-observatory.md\n"
        "q2,What is Jonas Reeve's favourite colour?,Ulla Mest,jonas-reeve.md\n"
    )
    docs_dir, path = write(tmp_path, docs, questions)
    suite = tmp_path / "suite.yaml"
    assert provbench("init", "--docs", str(docs_dir), "--questions", str(path), "--out", str(suite)).exit_code == 0
    done = provbench("run", str(suite), "--model", "control:oracle", "--out", str(tmp_path / "run"))
    assert "2 of 2 question(s) map wholly" not in done.output, done.output
    assert "q1" in done.output and "q2" in done.output, done.output
