"""The ``qa`` loader: a user's own question file (JSONL, JSON, CSV, Parquet), the field mapping and
its defaults, the four answer types and their scoring, gold evidence from supporting sentences and
documents, and every error path naming file, row and field (issue 31 items 1 and 4)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from provbench.cli import main
from provbench.errors import UserError
from provbench.gold import normalize_text
from provbench_plugins.datasets.qa.loader import QALoader
from provbench_tools.own_docs import write as write_own_docs

ROWS = [
    {
        "id": "a",
        "question": "Who founded Halden Observatory?",
        "answer": "Mira Castell",
        "supporting_documents": "halden-observatory.md",
    },
    {"id": "b", "question": "Were both born in Brennmoor?", "answer": "yes", "supporting_documents": ""},
]


def write(path: Path, rows: list[dict]) -> Path:
    if path.suffix == ".csv":
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif path.suffix == ".json":
        path.write_text(json.dumps({"data": rows}), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.fixture(scope="module")
def own_docs(tmp_path_factory) -> Path:
    return write_own_docs(tmp_path_factory.mktemp("own-docs"))


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet"])
def test_every_file_kind_loads_the_same_questions(tmp_path, own_docs, suffix):
    path = write(tmp_path / f"q{suffix}", ROWS)
    questions = QALoader().load(path, documents=str(own_docs / "docs"))
    assert [(q.id, q.answer, q.metadata["answer_type"]) for q in questions] == [
        ("a", "Mira Castell", "text"),
        ("b", "yes", "yes-no"),
    ]
    assert questions[0].gold.sentences[0].text == "Mira Castell founded Halden Observatory in 1921."
    assert questions[0].gold.entities == ["Halden Observatory"]  # the document's subject
    assert questions[1].gold is None


def test_field_mapping_and_default_column_names(tmp_path):
    ragas_like = write(
        tmp_path / "r.jsonl",
        [{"user_input": "Capital of Orlen?", "reference": "Tamsk", "answer_aliases": ["Tamsk city"]}],
    )
    [q] = QALoader().load(ragas_like)
    assert (q.id, q.question, q.answer, q.aliases) == ("1", "Capital of Orlen?", "Tamsk", ["Tamsk city"])
    mine = write(tmp_path / "m.csv", [{"key": "k1", "ask": "Capital of Orlen?", "gold": "Tamsk"}])
    [q] = QALoader().load(mine, fields={"id": "key", "question": "ask", "answer": "gold"})
    assert (q.id, q.question, q.answer) == ("k1", "Capital of Orlen?", "Tamsk")


def test_multiple_choice_label_set_and_yes_no_scoring(tmp_path):
    path = write(
        tmp_path / "t.jsonl",
        [
            {"id": "mc", "question": "Which?", "choices": ["red", "green", "blue"], "correct": "green"},
            {"id": "yn", "question": "Is it?", "answer": "no"},
            {"id": "ft", "question": "Who?", "answer": ["Mira Castell", "M. Castell"]},
        ],
    )
    mc, yn, ft = QALoader().load(path)
    loader = QALoader()
    assert (mc.answer, mc.aliases, mc.choices) == ("B", ["green"], ["red", "green", "blue"])
    assert [loader.score_answer(mc, p)["accuracy"] for p in ("B", "(B)", "green.", "Answer: B", "C", "red")] == [
        1,
        1,
        1,
        1,
        0,
        0,
    ]
    assert loader.score_answer(yn, "No.")["accuracy"] == 1 and loader.score_answer(yn, "yes")["accuracy"] == 0
    scores = loader.score_answer(ft, "M. Castell")
    assert scores["accuracy"] == 1 and scores["em"] == 1 and scores["f1"] == 1  # the 2Wiki rule, best over aliases
    assert loader.score_answer(ft, "Not Mira Castell")["accuracy"] == 0
    labels = write(tmp_path / "l.csv", [{"claim": "Tamsk is a city.", "label": "SUPPORTS"}])
    [lab] = QALoader().load(labels, labels=["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"])
    assert lab.metadata["answer_type"] == "label"
    assert [
        loader.score_answer(lab, p)["accuracy"]
        for p in ("supports", "It SUPPORTS the claim", "refutes", "SUPPORTS or REFUTES")
    ] == [1, 1, 0, 0]


def test_supporting_sentences_are_gold_and_map_by_text(tmp_path):
    path = write(
        tmp_path / "s.jsonl",
        [
            {
                "question": "Q?",
                "answer": "x",
                "supporting_sentences": ["Plain sentence.", {"document": "a.md", "text": "Titled one."}],
                "gold_path": ["A", "B"],
            }
        ],
    )
    [q] = QALoader().load(path)
    assert [(s.document, s.text) for s in q.gold.sentences] == [("", "Plain sentence."), ("a.md", "Titled one.")]
    assert q.gold.entities == ["A", "B"] and q.gold.held_in("plain sentence. titled   one.")


BAD = [
    ({"question": "Q?"}, "field 'answer' is missing"),
    ({"question": "", "answer": "x"}, "field 'question': is empty"),
    ({"question": "Q?", "answer": {"a": 1}}, "field 'answer': item 1 must be text"),
    ({"question": "Q?", "choices": ["a", "b"], "correct": "E"}, "field 'correct': 'E' names none of the 2 choices"),
    ({"question": "Q?", "choices": ["a"], "correct": "A"}, "field 'choices': a multiple-choice question needs 2"),
    ({"question": "Q?", "answer": "x", "supporting_sentences": [3]}, "field 'supporting_sentences': each item"),
    ({"question": "Q?", "answer": "x", "supporting_documents": ["a.md"]}, "the loader option 'documents'"),
    ({"question": "Q?", "answer": "x", "aliases": "[broken"}, "field 'aliases': looks like a JSON list"),
]


@pytest.mark.parametrize("row,problem", BAD)
def test_bad_rows_name_file_row_and_field(tmp_path, row, problem):
    path = write(tmp_path / "bad.jsonl", [{"question": "Fine?", "answer": "yes"}, row])
    with pytest.raises(UserError) as err:
        QALoader().load(path)
    assert f"{path}:2: " in str(err.value) and problem in str(err.value), str(err.value)


def test_unknown_document_duplicate_ids_and_option_errors(tmp_path, own_docs):
    docs = str(own_docs / "docs")
    path = write(
        tmp_path / "d.csv",
        [
            {"id": "1", "question": "Q?", "answer": "x", "supporting_documents": ""},
            {"id": "1", "question": "Q?", "answer": "x", "supporting_documents": ""},
            {"id": "2", "question": "Q?", "answer": "x", "supporting_documents": "nowhere.md"},
            {"id": "3", "question": "Q?", "answer": "x", "supporting_documents": "mira_castell.md"},
        ],
    )
    problems = QALoader().problems(path, documents=docs)
    assert problems[0] == f"{path}:3: field 'id': question id '1' is also used at {path}:2"
    assert (
        problems[1].startswith(f"{path}:4: field 'supporting_documents'")
        and "no document named 'nowhere.md'" in problems[1]
        and "did you mean" not in problems[1]
    )
    assert "no document named 'mira_castell.md'" in problems[2] and "(did you mean 'mira-castell.md'?)" in problems[2]
    with pytest.raises(UserError, match="answer_type 'label' needs the loader option 'labels'"):
        QALoader().load(write(tmp_path / "l.jsonl", [{"question": "Q?", "answer": "x"}]), answer_type="label")
    with pytest.raises(UserError, match="maps unknown field"):
        QALoader().load(path, fields={"questoin": "q"})
    with pytest.raises(UserError, match=r"bad options: colour"):
        QALoader().load(path, colour="red")
    broken = tmp_path / "broken.csv"
    broken.write_text("question,answer\nQ?,x,extra\n", encoding="utf-8")
    assert QALoader().problems(broken) == [f"{broken}:2: more values than the header has columns"]
    with pytest.raises(UserError, match="unknown question file kind"):
        QALoader().load(tmp_path / "q.xlsx")


def test_data_info_validates_and_lists_every_problem(tmp_path, own_docs):
    good = own_docs / "questions.csv"
    result = CliRunner().invoke(main, ["data", "info", str(good), "--option", "documents=docs"])
    assert result.exit_code == 0, result.output
    assert "10 record(s), loader 'qa'" in result.output and "yes-no" in result.output
    bad = write(tmp_path / "bad.csv", [{"question": "Q?", "answer": ""}, {"question": "", "answer": "x"}])
    result = CliRunner().invoke(main, ["data", "info", str(bad)])
    assert result.exit_code == 2
    assert (
        f"{bad}:2: field 'answer': is empty" in result.output
        and f"{bad}:3: field 'question': is empty" in result.output
    )


def test_a_loader_of_the_files_own_format_wins_over_qa():
    from provbench.datainfo import resolve_loader
    from provbench.registry import default_registry

    mini = Path(__file__).resolve().parents[1] / "datasets" / "2wiki-mini" / "dev.json"
    assert resolve_loader(default_registry(), mini, None).name == "2wiki"


def test_gold_sentences_of_supporting_documents_are_the_ones_that_answer(own_docs):
    questions = {q.id: q for q in QALoader().load(own_docs / "questions.csv", documents="docs")}
    texts = {qid: [normalize_text(s.text) for s in q.gold.sentences] for qid, q in questions.items()}
    assert texts["q02"] == ["mira castell founded halden observatory in 1921.", "she was born in brennmoor in 1889."]
    assert texts["q06"][1] == "lindqvist founded orlen optical works in 1902."  # not the title line naming the answer


def test_a_dataset_folder_reads_through_hugging_face_datasets(tmp_path):
    pytest.importorskip("datasets")
    folder = tmp_path / "my-questions"
    folder.mkdir()
    write(folder / "train.csv", [{"query": "Who founded Halden Observatory?", "reference": "Mira Castell"}])
    [q] = QALoader().load(folder, split="train")
    assert (q.question, q.answer) == ("Who founded Halden Observatory?", "Mira Castell")
    with pytest.raises(UserError, match="split 'test'"):
        QALoader().load(folder, split="test")


def test_the_committed_corpus_is_what_the_generator_writes(tmp_path):
    committed = Path(__file__).resolve().parents[1] / "datasets" / "own-docs-mini"
    written = write_own_docs(tmp_path)
    files = sorted(p.relative_to(written) for p in written.rglob("*") if p.is_file())
    assert files and all((committed / f).read_bytes() == (written / f).read_bytes() for f in files)


@pytest.mark.parametrize(
    "name,content,problem",
    [
        ("bad.json", b'[{"question": "Q?"', "bad.json:1: not valid JSON"),
        ("bad.json", b'{"question": "Q?"}', "expected a JSON array of question objects"),
        ("bad.json", b'[{"question": "Q?", "answer": "x"}, 3]', "bad.json, record 2: expected an object"),
        ("bad.jsonl", b'{"question": "Q?", "answer": "x"}\n{oops\n', "bad.jsonl:2"),
        ("bad.csv", "question,answer\nQ?,caf\xe9\n".encode("latin-1"), "bad.csv: not UTF-8 text"),
        ("bad.parquet", b"PAR1 not really", "bad.parquet: not a readable Parquet file"),
    ],
)
def test_unreadable_files_name_the_file_and_where(tmp_path, name, content, problem):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(UserError, match=problem.replace(".", r"\.").replace("[", r"\[")):
        QALoader().load(path)


@pytest.mark.parametrize(
    "row,options,problem",
    [
        (
            {"question": "Q?", "answer": "maybe"},
            {"answer_type": "yes-no"},
            "field 'answer': a yes-no question's answer",
        ),
        (
            {"question": "Q?", "answer": "TRUE"},
            {"labels": ["SUPPORTS", "REFUTES"]},
            "field 'answer': 'TRUE' is not one",
        ),
        ({"question": "Q?", "choices": ["a", {"b": 1}], "correct": "A"}, {}, "field 'choices': item 2 must be text"),
        (
            {"question": "Q?", "answer": "x", "supporting_documents": "Halden"},
            {"documents": "DOCS"},
            "no document named 'Halden'",
        ),
    ],
)
def test_answer_type_and_gold_errors_name_row_and_field(tmp_path, own_docs, row, options, problem):
    path = write(tmp_path / "bad.jsonl", [row])
    options = {k: str(own_docs / "docs") if v == "DOCS" else v for k, v in options.items()}
    with pytest.raises(UserError) as err:
        QALoader().load(path, **options)
    assert str(err.value).startswith(f"{path}:1: ") and problem in str(err.value), str(err.value)


def test_a_name_shared_by_two_documents_must_be_a_path(tmp_path):
    docs = tmp_path / "docs"
    for sub in ("a", "b"):
        (docs / sub).mkdir(parents=True)
        (docs / sub / "notes.md").write_text(f"# Notes {sub}\n\nSome text about {sub}.\n", encoding="utf-8")
    path = write(
        tmp_path / "q.jsonl",
        [
            {"question": "Q?", "answer": "x", "supporting_documents": ["notes.md"]},
            {"question": "Q?", "answer": "x", "supporting_documents": ["a/notes.md"]},
        ],
    )
    problems = QALoader().problems(path, documents=str(docs))
    assert (
        len(problems) == 1
        and "'notes.md' names 2 documents (a/notes.md, b/notes.md); use its relative path" in problems[0]
        and problems[0].startswith(f"{path}:1: field 'supporting_documents'")
    )


def test_gzipped_json_lines_load(tmp_path):
    import gzip

    path = tmp_path / "q.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"question": "Q?", "answer": "x"}\n'))
    assert [q.answer for q in QALoader().load(path)] == ["x"]
