"""Gold evidence from the loaders that have it: 2Wiki (supporting facts with their sentences, evidence
triples, entities) and FEVER (evidence sets as alternatives, sentence text from the pages)."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, shared_dir
from kb_2wiki_helpers import TINY_RECORDS, write_tiny_2wiki
from provbench.gold import GoldTriple
from provbench.registry import default_registry
from provbench_plugins.datasets.fever.loader import FeverLoader
from provbench_plugins.datasets.fever.pages import read_pages
from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader


def test_both_loaders_declare_gold():
    registry = default_registry()
    assert registry.create("dataset_loader", "2wiki").provides_gold
    assert registry.create("dataset_loader", "fever").provides_gold


def test_2wiki_gold_sentences_come_from_the_records_context(tmp_path):
    q1 = TwoWikiLoader().load(write_tiny_2wiki(tmp_path / "dev.json"))[0]
    record = TINY_RECORDS[0]
    paragraphs = dict((title, sentences) for title, sentences in record["context"])
    assert [(s.document, s.index, s.text) for s in q1.gold.sentences] == [
        (title, index, paragraphs[title][index].strip()) for title, index in record["supporting_facts"]
    ]
    assert q1.gold.groups() == [q1.gold.sentences]  # one group: every supporting fact is needed
    assert q1.gold.triples == [GoldTriple(subject=s, relation=r, object=o) for s, r, o in record["evidences"]]
    assert q1.gold.entities == ["Glass Harbor", "Orin Vale", "Mira Vale"]
    assert q1.gold.held_in("\n".join(s.text for s in q1.gold.sentences))
    assert not q1.gold.held_in(q1.gold.sentences[0].text)


def test_2wiki_fact_past_its_paragraph_keeps_its_position_only(tmp_path):
    record = json.loads(json.dumps(TINY_RECORDS[0]))
    title = record["supporting_facts"][0][0]
    record["supporting_facts"][0] = [title, 99]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    gold = TwoWikiLoader().load(path)[0].gold
    assert (gold.sentences[0].index, gold.sentences[0].text) == (99, "")
    assert not gold.held_in("\n".join(p for _, s in record["context"] for p in s))  # sentences never complete


@pytest.mark.parametrize("name", ["dev.sample1.json", "dev.sample2.data_ids.json"])
def test_2wiki_gold_on_the_real_samples(name):
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared is absent")
    path = shared / "datasets" / "2wikimultihopqa" / name
    for question in TwoWikiLoader().load(path):
        gold = question.gold
        assert gold is not None and gold.sentences and all(s.text for s in gold.sentences)
        texts = {c["title"]: c["sentences"] for c in question.metadata["context"]}
        assert all(s.text == texts[s.document][s.index].strip() for s in gold.sentences)
        assert len(gold.triples) == len(question.metadata["evidences"]) > 0
        assert gold.held_in("\n".join(sentence for c in question.metadata["context"] for sentence in c["sentences"]))
    if name == "dev.sample1.json":
        assert gold.entities == ["Polish-Russian War", "Xawery Żuławski", "Małgorzata Braunek"]


def test_fever_gold_groups_are_the_evidence_sets_with_page_text():
    mini = REPO / "datasets" / "fever-mini"
    questions = FeverLoader().load(mini / "dev.jsonl")
    pages = read_pages(mini / "wiki-pages")
    for q in questions:
        if q.answer == "NOT ENOUGH INFO":
            assert q.gold is None
            continue
        sets = q.metadata["evidence"]
        assert [[(s.document, s.index) for s in group] for group in q.gold.groups()] == [
            [(page, line) for page, line in group] for group in sets
        ]
        for s in q.gold.sentences:
            assert s.text == next(x.text for x in pages[s.document].sentences if x.line == s.index)
        first = q.gold.groups()[0]
        assert q.gold.held_in(" ".join(s.text for s in first))
        if len(first) > 1:
            assert not q.gold.held_in(first[0].text)
        assert q.gold.entities[0] == pages[first[0].document].title


def test_fever_gold_without_pages_has_positions_only(tmp_path):
    mini = REPO / "datasets" / "fever-mini"
    claims = tmp_path / "dev.jsonl"
    claims.write_bytes((mini / "dev.jsonl").read_bytes())  # no wiki-pages beside it
    questions = [q for q in FeverLoader().load(claims) if q.gold is not None]
    assert questions and all(s.text == "" for q in questions for s in q.gold.sentences)
    assert not any(q.gold.held_in("anything") for q in questions)
    off = FeverLoader().load(mini / "dev.jsonl", gold_text=False)
    assert all(s.text == "" for q in off if q.gold for s in q.gold.sentences)


def test_fever_gold_on_the_real_sample():
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared is absent")
    fever = shared / "datasets" / "fever"
    questions = FeverLoader().load(fever / "paper_dev.sample30.jsonl", pages="wiki-pages.sample5.jsonl")
    labelled = [q for q in questions if q.answer != "NOT ENOUGH INFO"]
    assert len(labelled) == 20 and all(q.gold is not None for q in labelled)
    assert all(q.gold is None for q in questions if q.answer == "NOT ENOUGH INFO")
    telemundo = next(q for q in questions if q.id == "111897")
    assert len(telemundo.gold.groups()) == len(telemundo.metadata["evidence"])
    assert ("Hispanic_and_Latino_Americans", 0) in [(s.document, s.index) for s in telemundo.gold.sentences]
    # the sample's pages are not the claims' pages: positions only
    assert all(s.text == "" for q in labelled for s in q.gold.sentences)
