"""The invented world's ids and aliases in the form of 2WikiMultihopQA's data_ids release (issue 34
item 5): each record's entity_ids, evidences_id and answer_id, an id_aliases.json beside dev.json,
read by the 2wiki loader's ``id_aliases`` option, accepted by EM, F1 and accuracy, and named in
paper 000's Table 1 caption for the suite that reads datasets/2wiki-mini."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from provbench.model import RunManifest
from provbench.report.data import RunData
from provbench.suite import load_suite
from provbench_plugins.datasets.twowiki.loader import TwoWikiLoader
from provbench_plugins.papers.p000_neighborhoods.report import aliases_note
from provbench_tools import world_2wiki as world
from provbench_tools.world_2wiki import identities

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "datasets" / "2wiki-mini" / "dev.json"


@pytest.fixture(scope="module")
def release() -> tuple[list[dict], dict[str, dict]]:
    records, lines = world.generate_release(200, seed=11)
    return records, {line["Q_id"]: line for line in lines}


def test_every_record_carries_the_data_ids_fields(release):
    records, lines = release
    for r in records:
        holders = r["entity_ids"].split("_")
        assert len(holders) == len(dict.fromkeys(s for s, _, _ in r["evidences"]))  # one id per evidence subject
        assert [rel for _, rel, _ in r["evidences_id"]] == [rel for _, rel, _ in r["evidences"]]
        dated = r["answer"][:1].isdigit()
        assert (r["answer_id"] is None) == dated, r["answer"]  # a date has no id, as in the release
        named = {i for s, _, o in r["evidences_id"] for i in (s, o)} | set(holders) | {r["answer_id"]}
        assert named - {None, identities.DATE_ID} <= set(lines)  # every id has its line


def test_one_id_per_entity_one_entity_per_id(release):
    """Ids follow the entity, not the text: a name keeps its id across records, and only a film and
    its namesake novel share a name under two ids."""
    records, _ = release
    ids_of, names_of = defaultdict(set), defaultdict(set)
    for r in records:
        for (s, _, o), (s_id, _, o_id) in zip(r["evidences"], r["evidences_id"]):
            for name, q_id in ((s, s_id), (o, o_id)):
                if q_id != identities.DATE_ID:
                    ids_of[name].add(q_id)
                    names_of[q_id].add(name)
    assert all(len(names) == 1 for names in names_of.values())
    shared = [name for name, ids in ids_of.items() if len(ids) > 1]
    assert all(len(ids_of[name]) == 2 for name in shared)  # a namesake pair


def test_aliases_are_other_names_of_the_same_entity(release):
    records, lines = release
    kinds = defaultdict(int)
    for r in records:
        line = lines.get(r["answer_id"])
        for alias in (line or {}).get("aliases", []):
            answer = r["answer"]
            if answer.startswith("The "):
                assert alias == answer[4:]
                kinds["title"] += 1
            elif " of " in alias and alias.endswith(answer):
                kinds["country"] += 1
            else:  # "Orin Tavel Vale", "Orin T. Vale" for Orin Vale
                first, *middle, last = alias.split()
                assert f"{first} {last}" == answer and len(middle) == 1
                kinds["person"] += 1
        for demonym in (line or {}).get("demonyms", []):
            assert demonym[:3] == r["answer"][:3] and demonym != r["answer"]
    assert kinds["person"] and kinds["country"]


def test_aliases_leave_the_world_alone(monkeypatch):
    """Aliases are drawn apart from the world's generator: with none at all, the records are the same."""
    records, lines = world.generate_release(30, seed=3)
    monkeypatch.setattr(identities, "MIDDLE_NAME_SHARE", 0.0)
    bare_records, bare_lines = world.generate_release(30, seed=3)
    assert bare_records == records and bare_lines != lines
    assert not any(" " in a for line in bare_lines if line["aliases"] for a in line["aliases"] if " of " not in a)


# -- the bundled mini data, read as a suite reads it ---------------------------------------------


def mini_questions(**options):
    return {q.id: q for q in TwoWikiLoader().load(MINI, **options)}


def test_the_loader_reads_the_minis_aliases_and_scoring_accepts_them():
    plain, aliased = mini_questions(), mini_questions(id_aliases="id_aliases.json")
    assert sum(bool(q.aliases) for q in aliased.values()) == 12 and not any(q.aliases for q in plain.values())
    country = next(q for q in aliased.values() if q.question.startswith("Which country"))
    assert country.answer == "Jaitrene" and country.aliases == ["Commonwealth of Jaitrene", "Jaitrenian"]
    person = next(q for q in aliased.values() if q.answer == "Eaba Geamuwick")
    assert person.aliases == ["Eaba Dreakas Geamuwick", "Eaba D. Geamuwick"]
    loader = TwoWikiLoader()
    for reply in ("Jaitrenian", "the Commonwealth of Jaitrene"):  # as the official evaluation accepts them
        assert loader.score_answer(country, reply) == {"accuracy": 1.0, "em": 1.0, "f1": 1.0}, reply
        assert loader.score_answer(plain[country.id], reply)["em"] == 0.0
    assert loader.score_answer(person, "Eaba D. Geamuwick")["em"] == 1.0
    dated = next(q for q in aliased.values() if q.answer[:1].isdigit())
    assert dated.aliases == [] and "answer_id" not in dated.metadata  # a date: no id, no aliases


def test_paper000s_suite_reads_the_aliases_and_its_caption_says_so():
    loaded = load_suite(REPO / "suites" / "2wiki-provenance.yaml")
    dataset = loaded.suite.dataset
    assert dataset.options["id_aliases"] == "id_aliases.json"
    questions = TwoWikiLoader().load(loaded.dataset_source(), **dataset.options)
    run = RunData(Path("."), RunManifest(run_id="r", suite_name="s", suite={}), {q.id: q for q in questions}, [], {})
    assert aliases_note(run) == "best over the answer and its aliases; 12 of 30 questions have aliases"
    unread = RunData(Path("."), run.manifest, mini_questions(), [], {})  # a suite without the option
    assert aliases_note(unread).startswith("no aliases: the records carry answer_id but the suite read no id_aliases")


def test_the_alias_file_is_json_lines_in_the_releases_form():
    lines = (MINI.parent / "id_aliases.json").read_text(encoding="utf-8").splitlines()
    for line in lines:
        record = json.loads(line)
        assert set(record) == {"Q_id", "aliases", "demonyms"} and record["Q_id"].startswith("Q")
