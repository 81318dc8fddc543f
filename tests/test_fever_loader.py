"""The FEVER loader and pages reader: official forms, hub rows, located errors, sampling, streaming."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO, shared_dir
from provbench.errors import UserError
from provbench_plugins.datasets.fever.claim_records import regroup_hub_rows, stratified_sample, read_jsonl
from provbench_plugins.datasets.fever.loader import FeverLoader
from provbench_plugins.datasets.fever.pages import (
    evidence_of,
    iter_pages,
    page_id_of,
    parse_lines,
    read_pages,
    sentence_id,
    title_matcher,
    title_of,
)

MINI = REPO / "datasets" / "fever-mini"


def write(tmp_path: Path, lines: list, name: str = "claims.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_real_paper_dev_sample():
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared is absent")
    questions = FeverLoader().load(shared / "datasets" / "fever" / "paper_dev.sample30.jsonl")
    assert Counter(q.metadata["label"] for q in questions) == {"SUPPORTS": 10, "REFUTES": 10, "NOT ENOUGH INFO": 10}
    telemundo = next(q for q in questions if q.id == "111897")
    assert ["Hispanic_and_Latino_Americans", 0] in telemundo.metadata["evidence"][2]
    assert all(q.metadata["evidence"] == [] for q in questions if q.answer == "NOT ENOUGH INFO")


def test_real_pages_sample():
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared is absent")
    pages = read_pages(shared / "datasets" / "fever" / "wiki-pages.sample5.jsonl")
    assert "" not in pages and "Cumberland_Bandits" in pages
    bandits = pages["Cumberland_Bandits"].sentences
    assert [s.line for s in bandits] == [0, 1]
    assert ("Cumberland", "Orleans, Ontario") in bandits[0].links  # an anchor spanning a newline
    assert "( The Great Trial of Strength )" in pages["Styrkeprøven"].sentences[0].text


def test_test_file_without_labels(tmp_path):
    path = write(tmp_path, [{"id": 1, "claim": "A claim."}, {"id": 2, "claim": "Another."}])
    loader = FeverLoader()
    questions = loader.load(path)
    assert [q.answer for q in questions] == ["", ""]
    assert loader.score_answer(questions[0], "SUPPORTS") == {}


@pytest.mark.parametrize(
    "line, where",
    [
        ("{not json", "claims.jsonl:2: not valid JSON"),
        ({"id": 5, "label": "SUPPORTS", "evidence": []}, "claims.jsonl:2 (claim id 5): field claim"),
        ({"id": 6, "claim": "c", "label": "MAYBE"}, "field label"),
        (
            {"id": 7, "claim": "c", "label": "SUPPORTS", "evidence": [[[1, None, None, None]]]},
            "evidence[0][0] has no page or sentence",
        ),
        ({"id": 8, "claim": "c", "label": "REFUTES", "evidence": [[[1, 2, "P", "zero"]]]}, "field evidence.0.0.3"),
    ],
)
def test_malformed_records_are_located(tmp_path, line, where):
    path = write(
        tmp_path, [{"id": 1, "claim": "fine", "label": "NOT ENOUGH INFO", "evidence": [[[1, None, None, None]]]}, line]
    )
    with pytest.raises(UserError) as err:
        FeverLoader().load(path)
    assert str(path) in str(err.value) and where in str(err.value)


def test_hub_rows_regrouped_by_claim_and_annotation():
    rows = [
        {
            "id": 9,
            "label": "SUPPORTS",
            "claim": "c9",
            "evidence_annotation_id": 1,
            "evidence_id": 10,
            "evidence_wiki_url": "Page_A",
            "evidence_sentence_id": 0,
        },
        {
            "id": 9,
            "label": "SUPPORTS",
            "claim": "c9",
            "evidence_annotation_id": 1,
            "evidence_id": 11,
            "evidence_wiki_url": "Page_B",
            "evidence_sentence_id": 3,
        },
        {
            "id": 9,
            "label": "SUPPORTS",
            "claim": "c9",
            "evidence_annotation_id": 2,
            "evidence_id": 12,
            "evidence_wiki_url": "Page_A",
            "evidence_sentence_id": 1,
        },
        {
            "id": 4,
            "label": "NOT ENOUGH INFO",
            "claim": "c4",
            "evidence_annotation_id": 3,
            "evidence_id": -1,
            "evidence_wiki_url": "",
            "evidence_sentence_id": -1,
        },
    ]
    datasets = pytest.importorskip("datasets")
    records = regroup_hub_rows(datasets.Dataset.from_list(rows), "fever[paper_dev]")
    assert [r.id for r in records] == [9, 4]
    assert records[0].gold_sets() == [[["Page_A", 0], ["Page_B", 3]], [["Page_A", 1]]]
    assert records[1].gold_sets() == []
    with pytest.raises(UserError, match=r"fever\[x\], row 0: field 'claim'"):
        regroup_hub_rows([{"id": 1, "label": "SUPPORTS"}], "fever[x]")


def test_stratified_sample_is_balanced_seeded_and_in_file_order():
    records = list(read_jsonl(MINI / "dev.jsonl"))
    picked = stratified_sample(records, 9, seed=4)
    assert Counter(r.label for r in picked) == {"SUPPORTS": 3, "REFUTES": 3, "NOT ENOUGH INFO": 3}
    assert [r.id for r in picked] == sorted(r.id for r in picked)
    assert picked == stratified_sample(records, 9, seed=4) != stratified_sample(records, 9, seed=5)


def test_fever_mini_balanced_with_two_page_sets_and_pages_found():
    questions = FeverLoader().load(MINI / "dev.jsonl")
    assert Counter(q.answer for q in questions) == {"SUPPORTS": 12, "REFUTES": 12, "NOT ENOUGH INFO": 12}
    two_page = [q for q in questions if any(len({p for p, _ in g}) == 2 for g in q.metadata["evidence"])]
    assert {q.answer for q in two_page} == {"SUPPORTS", "REFUTES"}
    pages = read_pages(questions[0].metadata["pages"])
    for q in questions:
        for group in q.metadata["evidence"]:
            for page, line in group:
                assert line in [s.line for s in pages[page].sentences]


def test_fever_mini_regenerates_byte_for_byte(tmp_path):
    from provbench_tools.world_fever import write_world

    write_world(tmp_path / "mini")
    for name in ("dev.jsonl", "wiki-pages/wiki-001.jsonl"):
        assert (tmp_path / "mini" / name).read_bytes() == (MINI / name).read_bytes()


def test_titles_lines_and_ids():
    assert title_of("Soul_Food_-LRB-film-RRB-") == "Soul Food (film)"
    assert page_id_of("Soul Food (film)") == "Soul_Food_-LRB-film-RRB-"
    sentences = parse_lines("0\tFirst -LRB-x-RRB- .\tFirst\tFirst Page\n1\t\n2\tThird .")
    assert [(s.line, s.text) for s in sentences] == [(0, "First (x) ."), (2, "Third .")]
    assert sentences[0].links == (("First", "First Page"),)
    assert evidence_of(sentence_id("A_-LRB-b-RRB-", 12)) == ("A_-LRB-b-RRB-", 12)
    assert evidence_of("p:A") is None
    names = title_matcher(["The film Soul Food is by Fox 2000 Pictures."])
    assert names("Soul_Food_-LRB-film-RRB-") and names("Fox_2000_Pictures") and not names("The")


def test_read_pages_streams_only_what_is_asked(tmp_path):
    lines = [{"id": f"Page_{i}", "text": "", "lines": f"0\tPage {i} text ."} for i in range(50)]
    lines.insert(10, '{"id": "Skipped", "text": "", "lines": "unterminated')  # never parsed: id not wanted
    path = write(tmp_path, lines, "wiki-001.jsonl")
    got = read_pages(path, ids={"Page_3"}, also=title_matcher(["Something about page 7 here"]))
    assert sorted(got) == ["Page_3", "Page_7"]  # by id, and by a title the claim names
    with pytest.raises(UserError, match=r"wiki-001.jsonl:11: not valid JSON"):
        read_pages(path)


def test_problems_lists_every_bad_line(tmp_path):
    good = {"id": 1, "claim": "fine", "label": "NOT ENOUGH INFO", "evidence": [[[1, None, None, None]]]}
    path = write(tmp_path, [good, "{bad", good, {"id": 3, "claim": ""}, {"id": 4, "claim": "c", "label": "X"}])
    problems = FeverLoader().problems(path, limit=2)
    assert len(problems) == 2
    assert "claims.jsonl:2: not valid JSON" in problems[0] and "claims.jsonl:4 (claim id 3): field claim" in problems[1]
    assert len(FeverLoader().problems(path)) == 3


def test_a_gzipped_pages_directory_is_streamed(tmp_path):
    import gzip

    (tmp_path / "wiki-pages").mkdir()
    with gzip.open(tmp_path / "wiki-pages" / "wiki-001.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.writelines(
            json.dumps({"id": f"Page_{i}", "text": "", "lines": f"0\tPage {i} text ."}) + "\n" for i in range(3)
        )
    assert [p.id for p in iter_pages(tmp_path / "wiki-pages")] == ["Page_0", "Page_1", "Page_2"]
    assert sorted(read_pages(tmp_path / "wiki-pages", ids={"Page_1"})) == ["Page_1"]
