"""The "2wiki" loader: official formats, hub layout, validation errors, limit and sampling."""

from __future__ import annotations

import copy
import random
import json
from pathlib import Path

import pytest

from conftest import shared_dir
from kb_2wiki_helpers import TINY_RECORDS, write_tiny_2wiki
from provbench.errors import UserError
from provbench.registry import default_registry
from provbench_plugins.datasets.twowiki import selection
from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader

loader = TwoWikiLoader()


def write(path: Path, records) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def many_records(n: int) -> list[dict]:
    out = []
    for i in range(n):
        record = copy.deepcopy(TINY_RECORDS[i % len(TINY_RECORDS)])
        record["_id"] = f"q{i:03d}"
        out.append(record)
    return out


def test_registered_under_2wiki():
    assert isinstance(default_registry().create("dataset_loader", "2wiki"), TwoWikiLoader)


def test_plain_dev_format(tmp_path):
    questions = loader.load(write_tiny_2wiki(tmp_path / "dev.json"))
    assert [q.id for q in questions] == ["tiny-q1", "tiny-q2", "tiny-q3"]
    q1 = questions[0]
    assert q1.answer == "Mira Vale" and q1.type == "compositional" and q1.dataset == "2wiki"
    assert q1.metadata["context"][0] == {"title": "Glass Harbor (film)", "sentences": TINY_RECORDS[0]["context"][0][1]}
    assert q1.metadata["supporting_facts"] == [["Glass Harbor (film)", 1], ["Orin Vale", 1]]
    assert q1.metadata["evidences"][1] == ["Orin Vale", "mother", "Mira Vale"]
    # q1 has the namesake "Glass Harbor (novel)" among its distractors; q2 is a comparison;
    # q3's distractors mention only its answer ("Sorrel Coast"), which is no wrong route
    assert [q.category for q in questions] == ["distractor-path", "summary-vs-local", "local-path"]


def test_jsonl_and_parquet_give_the_same_questions(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    plain = loader.load(write_tiny_2wiki(tmp_path / "dev.json"))
    jsonl = tmp_path / "dev.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in TINY_RECORDS) + "\n", encoding="utf-8")
    # mirrors keep list fields as JSON text in parquet
    as_text = [{k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in TINY_RECORDS]
    pq.write_table(pa.Table.from_pylist(as_text), tmp_path / "dev.parquet")
    assert loader.load(jsonl) == plain
    assert loader.load(tmp_path / "dev.parquet") == plain


def struct_rows() -> list[dict]:
    """The hub's parquet layout: each list of tuples as a struct of parallel lists."""
    rows = []
    for r in TINY_RECORDS:
        rows.append(
            {
                "_id": r["_id"],
                "type": r["type"],
                "question": r["question"],
                "answer": r["answer"],
                "context": {"title": [t for t, _ in r["context"]], "sentences": [s for _, s in r["context"]]},
                "supporting_facts": {
                    "title": [t for t, _ in r["supporting_facts"]],
                    "sent_id": [i for _, i in r["supporting_facts"]],
                },
                "evidences": {
                    "fact": [e[0] for e in r["evidences"]],
                    "relation": [e[1] for e in r["evidences"]],
                    "entity": [e[2] for e in r["evidences"]],
                },
            }
        )
    return rows


def test_hub_layout_through_the_datasets_library(tmp_path):
    """A local directory laid out as a hub dataset goes through datasets.load_dataset, as a hub id does."""
    pytest.importorskip("datasets")
    import pyarrow as pa
    import pyarrow.parquet as pq

    repo = tmp_path / "2WikiMultihopQA" / "data"
    repo.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(struct_rows()), repo / "dev-00000-of-00001.parquet")
    hub = loader.load(repo.parent, split="dev")
    assert hub == loader.load(write_tiny_2wiki(tmp_path / "dev.json"))


def test_unreachable_hub_id_is_a_clear_error(tmp_path, monkeypatch):
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(UserError, match=r"could not load 'xanhho/2WikiMultihopQA' \(split 'dev'\)"):
        loader.load("xanhho/2WikiMultihopQA")


@pytest.mark.skipif(shared_dir() is None, reason="../shared/datasets is absent")
def test_real_plain_sample():
    [q] = loader.load(shared_dir() / "datasets/2wikimultihopqa/dev.sample1.json")
    assert q.type == "compositional" and len(q.metadata["context"]) == 10
    assert len(q.metadata["evidences"]) >= 2 and "entity_ids" not in q.metadata


@pytest.mark.skipif(shared_dir() is None, reason="../shared/datasets is absent")
def test_real_data_ids_sample_decodes_python_literal_fields():
    questions = loader.load(shared_dir() / "datasets/2wikimultihopqa/dev.sample2.data_ids.json")
    assert len(questions) == 2
    q = questions[0]
    assert isinstance(q.metadata["context"], list) and q.metadata["context"][0]["title"]
    assert all(len(e) == 3 for e in q.metadata["evidences"])
    assert "entity_ids" in q.metadata and "evidences_id" in q.metadata
    for q in questions:  # supporting facts point at real sentences
        paragraphs = {p["title"]: p["sentences"] for p in q.metadata["context"]}
        for title, sent_id in q.metadata["supporting_facts"]:
            assert 0 <= sent_id < len(paragraphs[title])


def data_ids_fixture(folder: Path) -> Path:
    """The tiny world in the data_ids release's form (Python-literal list fields, entity_ids,
    evidences_id, answer_id) with an ``id_aliases.json`` beside it, as the official release ships."""
    records = []
    for record, answer_id in zip(copy.deepcopy(TINY_RECORDS), ("Q901", "Q902", "Q903")):
        records.append(
            {
                **{k: repr(v) if k == "context" else v for k, v in record.items()},
                "entity_ids": "Q900_Q901",
                "evidences_id": [],
                "answer_id": answer_id,
            }
        )
    records[2]["answer_id"] = None  # a date or a string answer has no id
    write(folder / "dev.json", records)
    lines = [
        {"Q_id": "Q901", "aliases": ["M. Vale", "Mira Vale"], "demonyms": []},
        {"Q_id": "Q902", "aliases": ["Glass Harbour"], "demonyms": ["Glass Harborian"]},
        {"Q_id": "Q903", "aliases": [], "demonyms": []},
    ]
    (folder / "id_aliases.json").write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return folder / "dev.json"


def test_id_aliases_become_accepted_answers(tmp_path):
    path = data_ids_fixture(tmp_path)
    assert [q.aliases for q in loader.load(path)] == [[], [], []]  # off by default
    q1, q2, q3 = loader.load(path, id_aliases="id_aliases.json")  # relative to the dataset file
    assert q1.aliases == ["M. Vale"] and q2.aliases == ["Glass Harbour", "Glass Harborian"] and q3.aliases == []
    # scored as the official evaluation does: the best over the answer and its aliases and demonyms
    assert loader.score_answer(q2, "Glass Harborian") == {"accuracy": 1.0, "em": 1.0, "f1": 1.0}
    assert loader.score_answer(loader.load(path)[1], "Glass Harborian")["em"] == 0.0
    assert loader.load(path, id_aliases=str(tmp_path / "id_aliases.json"))[1].aliases == q2.aliases


def test_bad_id_aliases_are_clear_errors(tmp_path):
    path = data_ids_fixture(tmp_path)
    with pytest.raises(UserError, match="option id_aliases: .*missing.json does not exist"):
        loader.load(path, id_aliases="missing.json")
    (tmp_path / "bad.json").write_text(
        '{"Q_id": "Q1", "aliases": ["A"], "demonyms": []}\n{"Q_id": "Q2", "aliases": "B"}\n'
    )
    with pytest.raises(UserError, match=r"bad.json:2: field aliases of Q2 must be a list of strings"):
        loader.load(path, id_aliases="bad.json")
    with pytest.raises(UserError, match="needs records with answer_id"):
        loader.load(write_tiny_2wiki(tmp_path / "plain" / "dev.json"), id_aliases=str(tmp_path / "id_aliases.json"))


@pytest.mark.parametrize(
    "mutate, field, message",
    [
        (lambda r: r.pop("answer"), "answer", "Field required"),
        (lambda r: r.update(supporting_facts=[["Glass Harbor (film)", "one"]]), "supporting_facts.0.1", "integer"),
        (lambda r: r.update(evidences=[["Glass Harbor", "director"]]), "evidences.0", ""),
        (lambda r: r.update(context="not a list"), "context", ""),
        (lambda r: r.update(supporting_facts=[["Nowhere", 0]]), "supporting_facts", "Nowhere"),
        (lambda r: r.update(question=""), "question", "at least 1"),
    ],
)
def test_malformed_record_names_file_record_and_field(tmp_path, mutate, field, message):
    records = copy.deepcopy(TINY_RECORDS)
    mutate(records[1])
    path = write(tmp_path / "bad.json", records)
    with pytest.raises(UserError) as info:
        loader.load(path)
    text = str(info.value)
    assert str(path) in text and "record 'tiny-q2'" in text and f"field {field}" in text and message in text


def test_malformed_files(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('[{"_id": "a",\n "type": }]', encoding="utf-8")
    with pytest.raises(UserError, match=r"broken.json: not valid JSON \(line 2"):
        loader.load(broken)
    with pytest.raises(UserError, match="expected a JSON list"):
        loader.load(write(tmp_path / "obj.json", {"_id": "x"}))
    with pytest.raises(UserError, match=r"record #0 is str"):
        loader.load(write(tmp_path / "strs.json", ["x"]))
    lines = tmp_path / "dev.jsonl"
    lines.write_text(json.dumps(TINY_RECORDS[0]) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"dev.jsonl:2: not valid JSON"):
        loader.load(lines)
    (tmp_path / "dev.csv").write_text("a,b")
    with pytest.raises(UserError, match="unknown 2Wiki file type '.csv'"):
        loader.load(tmp_path / "dev.csv")
    with pytest.raises(UserError, match="2Wiki dataset not found"):
        loader.load(tmp_path / "missing.json")
    with pytest.raises(
        UserError,
        match=r"dataset_loader '2wiki': bad options: selct=True: Extra inputs.*known options: select, quotas, split",
    ):
        loader.load(write_tiny_2wiki(tmp_path / "ok.json"), selct=True)


def test_limit_and_seeded_sampling(tmp_path):
    path = write(tmp_path / "dev.json", many_records(20))
    assert [q.id for q in loader.load(path, limit=3)] == ["q000", "q001", "q002"]
    first = [q.id for q in loader.load(path, limit=5, sample=True, seed=7)]
    assert first == [q.id for q in loader.load(path, limit=5, sample=True, seed=7)]
    assert first != [q.id for q in loader.load(path, limit=5, sample=True, seed=8)]
    assert len(set(first)) == 5 and first != ["q000", "q001", "q002", "q003", "q004"]


def test_selection_applies_quotas_in_file_order(tmp_path):
    records = many_records(9)  # categories cycle: distractor, summary, local
    records[3]["type"] = "bridge"  # not a 2Wiki type: never selected
    records[4]["answer"] = "yes"  # a verdict, not an entity
    path = write(tmp_path / "dev.json", records)
    chosen = loader.load(path, quotas={"distractor-path": 2, "summary-vs-local": 1})
    assert [(q.id, q.category) for q in chosen] == [
        ("q000", "distractor-path"),
        ("q001", "summary-vs-local"),
        ("q006", "distractor-path"),
    ]
    with pytest.raises(UserError, match="unknown categories"):
        loader.load(path, quotas={"global": 1})


def test_a_selection_shortfall_is_warned_and_recorded(tmp_path, caplog):
    path = write(tmp_path / "dev.json", many_records(9))  # 3 of each category
    with caplog.at_level("WARNING"):
        met = loader.load(path, quotas={"distractor-path": 2, "summary-vs-local": 1})
    assert not caplog.records and all("selection_shortfall" not in q.metadata for q in met)
    with caplog.at_level("WARNING"):
        short = loader.load(path, select=True)  # the paper's 12/12/6
    assert "selection shortfall" in caplog.text and "local-path 3 of 12" in caplog.text
    assert short[0].metadata["selection_shortfall"]["summary-vs-local"] == {"quota": 6, "selected": 3}


def test_selection_rule_cases():
    record = copy.deepcopy(TINY_RECORDS[0])
    assert selection.ineligible_reason(record) is None
    assert selection.category(record) == "distractor-path"  # namesake "Glass Harbor (novel)"
    record["context"] = [p for p in record["context"] if p[0] != "Glass Harbor (novel)"]
    record["context"].append(["Sorrel", ["Sorrel is a town on the coast."]])
    assert selection.category(record) == "local-path"  # distractors off the gold route
    record["context"].append(["Dunmere Film School", ["Its first teacher was Orin Vale."]])
    assert selection.category(record) == "distractor-path"  # mentions the bridge entity
    assert "fewer than 2 evidence" in selection.ineligible_reason({**record, "evidences": record["evidences"][:1]})
    assert "not an entity" in selection.ineligible_reason({**record, "answer": "No"})
    assert "longer than" in selection.ineligible_reason({**record, "answer": "a b c d e f"})
    few = {**record, "context": record["context"][:2]}
    assert "distractor paragraphs" in selection.ineligible_reason(few)


def test_sampling_with_selection_fills_quotas_in_seeded_order(tmp_path):
    path = write(tmp_path / "dev.json", many_records(30))  # q000, q003, ... are distractor-path
    shuffled = [f"q{i:03d}" for i in range(30)]
    random.Random(3).shuffle(shuffled)
    expected = [q for q in shuffled if int(q[1:]) % 3 == 0][:2]
    chosen = loader.load(path, quotas={"distractor-path": 2}, sample=True, seed=3)
    assert [q.id for q in chosen] == expected and expected != ["q000", "q003"]
