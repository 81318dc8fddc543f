"""The invented-world generator (tools/provbench_tools/world_2wiki) and the bundled 2wiki-mini dataset;
its ids and aliases (the data_ids release's form) in tests/test_world_aliases.py."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from provbench_plugins.datasets.twowiki import selection
from provbench_tools import world_2wiki as world
from provbench_tools.world_2wiki.__main__ import main as world_main
from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader

MINI = Path(__file__).resolve().parents[1] / "datasets" / "2wiki-mini" / "dev.json"
CONTROLS = MINI.parents[1] / "2wiki-controls"
TYPES = {"compositional", "inference", "comparison", "bridge_comparison"}


@pytest.fixture(scope="module")
def mini() -> list[dict]:
    return json.loads(MINI.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def medium() -> list[dict]:
    return world.generate_world(200, seed=11)


def categories(records: list[dict]) -> tuple[int, int, int]:
    counts = Counter(selection.category(r) for r in records)
    return tuple(counts[c] for c in selection.CATEGORIES)


def test_same_seed_same_world_other_seed_other_world():
    first = world.generate_world(30, seed=3)
    assert world.generate_world(30, seed=3) == first
    other = world.generate_world(30, seed=4)
    assert other != first
    assert {r["question"] for r in other} != {r["question"] for r in first}


def test_global_random_state_is_left_alone():
    import random

    random.seed(123)
    expected = random.random()
    random.seed(123)
    world.generate_world(10, seed=1)
    assert random.random() == expected


@pytest.mark.parametrize(
    "n, seed, mix",
    [
        (30, 7, None),
        (20, 2, (5, 10, 5)),
        (8, 1, (8, 0, 0)),
        (8, 1, (0, 8, 0)),
        (8, 1, (0, 0, 8)),
        (1, 0, None),
    ],
)
def test_every_record_eligible_and_mix_met(n, seed, mix):
    records = world.generate_world(n, seed=seed, mix=mix)
    assert len(records) == n
    assert all(selection.ineligible_reason(r) is None for r in records)
    assert categories(records) == world.resolve_mix(n, mix)


def test_default_mix_is_12_12_6_for_30():
    assert world.resolve_mix(30, None) == (12, 12, 6)
    assert world.resolve_mix(1000, None) == (400, 400, 200)


@pytest.mark.parametrize("bad", [(1, 2), (10, 10, 11), (-1, 16, 15)])
def test_bad_mix_is_refused(bad):
    with pytest.raises(ValueError, match="mix"):
        world.generate_world(30, mix=bad)


def test_supporting_facts_name_sentences_stating_the_evidence(medium):
    for record in medium:
        context = {title: sentences for title, sentences in record["context"]}
        facts = record["supporting_facts"]
        assert len(facts) >= 2 and len(record["evidences"]) >= 2
        for title, index in facts:
            assert 0 <= index < len(context[title])
            sentence = context[title][index]
            assert any(s in sentence or o in sentence for s, _, o in record["evidences"]), sentence
        for _subject, _, obj in record["evidences"]:  # every triple's object is stated by a fact
            assert any(obj in context[t][i] for t, i in facts), (record["_id"], obj)


def test_titles_unique_within_a_record_and_ten_paragraphs(medium):
    for record in medium:
        titles = [title for title, _ in record["context"]]
        assert len(titles) == len(set(titles))
        assert len(titles) == world.PARAGRAPHS_PER_QUESTION
        assert len(selection.distractor_paragraphs(record)) >= selection.MIN_DISTRACTORS


def test_world_is_shared_across_records(medium):
    texts: dict[str, list[str]] = {}
    records_per_title: Counter[str] = Counter()
    for record in medium:
        for title, sentences in record["context"]:
            assert texts.setdefault(title, sentences) == sentences, f"{title} changed text"
            records_per_title[title] += 1
    assert max(records_per_title.values()) >= 2
    # a gold paragraph of one question turns up in another question too: the graph connects
    gold = {t for r in medium for t, _ in r["supporting_facts"]}
    assert any(records_per_title[t] >= 2 for t in gold)


def test_distractor_path_questions_include_a_namesake_pair(medium, mini):
    for records in (medium, mini):
        pairs = []
        for record in records:
            if selection.category(record) != "distractor-path":
                continue
            by_base = Counter(selection.base_title(t) for t, _ in record["context"])
            pairs += [t for t, _ in record["context"] if by_base[selection.base_title(t)] > 1]
        assert any(t.endswith("(film)") for t in pairs) and any(t.endswith("(novel)") for t in pairs)


def test_answers_are_short_entities_not_verdicts(medium):
    for record in medium:
        answer = record["answer"]
        assert answer.lower() not in {"yes", "no"}
        assert 1 <= len(answer.split()) <= selection.MAX_ANSWER_TOKENS
        if record["type"] in ("comparison", "bridge_comparison"):
            assert answer in record["question"]  # one of the two compared names


def test_questions_are_not_repeated(medium):
    assert len({r["question"] for r in medium}) == len(medium)
    assert len({r["_id"] for r in medium}) == len(medium)


def test_mini_file_is_the_generator_output(tmp_path, mini):
    written = world.write_world(tmp_path / "dev.json", world.MINI_SIZE, world.MINI_SEED)
    assert written.read_bytes() == MINI.read_bytes()
    assert (tmp_path / world.ALIASES_FILE).read_bytes() == (MINI.parent / world.ALIASES_FILE).read_bytes()
    assert len(mini) == world.MINI_SIZE == 30


def test_controls_file_is_the_generator_output(tmp_path):
    """datasets/2wiki-controls/README.md's command rewrites both files byte for byte."""
    world_main([str(tmp_path / "dev.json"), "--questions", "64", "--seed", "64"])
    for name in ("dev.json", world.ALIASES_FILE):
        assert (tmp_path / name).read_bytes() == (CONTROLS / name).read_bytes(), name


def test_main_writes_what_write_world_writes(tmp_path, capsys):
    world_main([str(tmp_path / "cli.json"), "--questions", "12", "--seed", "5"])
    world.write_world(tmp_path / "api.json", 12, 5)
    assert (tmp_path / "cli.json").read_bytes() == (tmp_path / "api.json").read_bytes()
    assert "12 questions" in capsys.readouterr().out


def test_mini_counts(mini):
    assert categories(mini) == (12, 12, 6)
    assert {r["type"] for r in mini} == TYPES
    unique = {(t, json.dumps(s)) for r in mini for t, s in r["context"]}
    assert 120 <= len(unique) <= 250  # the KB build runs on 2 CPU cores


def test_mini_loads_with_paper_selection(mini):
    questions = TwoWikiLoader().load(MINI, select=True)
    assert Counter(q.category for q in questions) == {"local-path": 12, "distractor-path": 12, "summary-vs-local": 6}


def test_a_thousand_questions_generate():
    records = world.generate_world(1000, seed=1)  # seconds, pure Python (time not asserted)
    assert len(records) == 1000
    assert categories(records) == (400, 400, 200)
    paragraphs = {t for r in records for t, _ in r["context"]}
    assert len(paragraphs) > 3000
