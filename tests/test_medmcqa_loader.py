"""The medmcqa / mmlu-medical loaders: three source forms, located errors, scoring, sampling."""

from __future__ import annotations

import json

import pytest

from conftest import shared_dir
from provbench.errors import UserError
from provbench.model import Question
from provbench_plugins.datasets.medmcqa.loader import (
    MedMCQALoader,
    MMLUMedicalLoader,
    facet_counts,
    option_letter,
    sample_by_subject,
)

RAW = {
    "id": "q1",
    "question": "Which?",
    "opa": "alpha",
    "opb": "beta",
    "opc": "gamma",
    "opd": "delta",
    "cop": 2,
    "exp": None,
    "subject_name": "Anatomy",
    "topic_name": None,
    "choice_type": "single",
}


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_raw_jsonl_cop_is_one_based(tmp_path):
    q = MedMCQALoader().load(write_jsonl(tmp_path / "d.jsonl", [RAW]))[0]
    assert (q.answer, q.aliases, q.choices, q.category, q.type) == (
        "B",
        ["beta"],
        ["alpha", "beta", "gamma", "delta"],
        "Anatomy",
        "single",
    )


@pytest.mark.parametrize(
    "change, field",
    [
        ({"cop": 5}, "cop"),
        ({"cop": 0}, "cop"),
        ({"opc": None}, "opc"),
        ({"choice_type": "both"}, "choice_type"),
        ({"question": ""}, "question"),
    ],
)
def test_bad_records_get_located_errors(tmp_path, change, field):
    path = write_jsonl(tmp_path / "d.jsonl", [RAW, {**RAW, "id": "q2", **change}])
    with pytest.raises(UserError) as err:
        MedMCQALoader().load(path)
    assert f"{path}:2" in str(err.value) and "'q2'" in str(err.value) and f"field {field}" in str(err.value)


def test_broken_json_line_and_mirage_record_are_located(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(RAW) + "\n{not json\n")
    with pytest.raises(UserError, match=r"d\.jsonl:2: not valid JSON"):
        MedMCQALoader().load(path)
    mirage = tmp_path / "benchmark.json"
    mirage.write_text(
        json.dumps({"mmlu": {"m1": {"question": "?", "options": {"A": "a", "B": "b", "C": "c"}, "answer": "A"}}})
    )
    with pytest.raises(UserError, match=r"benchmark\.json \[mmlu\]: record 'm1': field options: .*lack \['D'\]"):
        MMLUMedicalLoader().load(mirage)


def test_hub_form_is_zero_based_and_skips_unlabelled_rows(tmp_path):
    folder = tmp_path / "hub"
    folder.mkdir()
    write_jsonl(
        folder / "validation.jsonl", [{**RAW, "cop": 0}, {**RAW, "id": "q2", "cop": 3}, {**RAW, "id": "q3", "cop": -1}]
    )
    loader = MedMCQALoader()
    questions = loader.load(str(folder), split="validation")
    assert [q.answer for q in questions] == ["A", "D"] and loader.skipped_unlabelled == 1


def test_scoring_reads_the_option_letter_or_text():
    loader = MedMCQALoader()
    question = Question(id="q", question="?", answer="B", choices=["alpha", "beta", "gamma", "delta"])
    for prediction, ok in (
        ("B", 1.0),
        ("(b) beta", 1.0),
        ("B. beta", 1.0),
        ("beta", 1.0),
        ("A", 0.0),
        ("Because", 0.0),
        (None, 0.0),
    ):
        assert loader.score_answer(question, prediction) == {"accuracy": ok}, prediction
    assert option_letter("d)") == "D" and loader.normalize("c. Gamma") == loader.normalize("C")


# Paper 001's Table 1 options: every one opens with an article a letter regex could misread.
TABLE1 = Question(
    id="t1",
    question="A baby born with pulmonary hypoplasia ... would be classified as having",
    answer="C",
    choices=["an association", "a dysplasia", "a sequence", "a syndrome"],
)


@pytest.mark.parametrize(
    "prediction, letter",
    [
        ("a sequence", "C"),
        ("A sequence", "C"),
        ("a sequence.", "C"),
        ("  A  Sequence ", "C"),
        ("an association", "A"),
        ("a syndrome", "D"),
        ("C", "C"),
        ("C.", "C"),
        ("(C)", "C"),
        ("C)", "C"),
        ("[C]", "C"),
        ("Answer: C", "C"),
        ("The answer is C.", "C"),
        ("C. a sequence", "C"),
        ("(c)", "C"),
        ("c)", "C"),
        ("c.", "C"),
        ("a", "A"),
        ("an", None),
        ("A syndrome-like picture", None),
        ("Because", None),
    ],
)
def test_option_text_is_matched_before_a_letter_and_articles_are_not_letters(prediction, letter):
    assert option_letter(prediction, TABLE1) == letter
    assert MedMCQALoader().score_answer(TABLE1, prediction) == {"accuracy": float(letter == "C")}


@pytest.mark.parametrize(
    "prediction, letter",
    [
        ("A bone marrow", "A"),
        ("a bone marrow", "A"),
        ("the pancreas", "B"),
        ("a pancreas", "B"),
        ("(B) pancreas", "B"),
        ("C pancreas", None),
        ("B bone marrow", None),
    ],
)
def test_an_option_text_after_its_own_letter_or_an_article_names_it(prediction, letter):
    # the embedded model answered "A bone marrow" to mm-06 of medical-mini (A. bone marrow)
    question = Question(id="q", question="?", answer="A", choices=["bone marrow", "pancreas", "inner ear", "nerve"])
    assert option_letter(prediction, question) == letter


def test_a_reply_that_is_a_single_letter_is_that_letter_even_where_options_are_letters():
    # real MedMCQA dev records whose options are letters ('a', 'c', 'bc', 'ad'): "C" is option C, not the text "c"
    question = Question(id="q", question="Which are true?", answer="C", choices=["a", "c", "bc", "ad"])
    for reply in ("C", "c", "(C)", "C.", "c)"):
        assert option_letter(reply, question) == "C", reply
        assert MedMCQALoader().score_answer(question, reply) == {"accuracy": 1.0}, reply
    assert option_letter("bc", question) == "C" and option_letter("ad", question) == "D"  # texts still name options
    assert MedMCQALoader().normalize("c") == MedMCQALoader().normalize("C") == "C"


def test_a_text_naming_options_that_share_it_is_ambiguous():
    question = Question(id="q", question="?", answer="B", choices=["None", "none", "Both", "Aspirin"])
    assert option_letter("none", question) is None
    assert MedMCQALoader().score_answer(question, "None.") == {"accuracy": 0.0, "ambiguous_reply": 1.0}
    assert option_letter("B none", question) == "B"  # its own letter settles it
    assert MedMCQALoader().score_answer(question, "B") == {"accuracy": 1.0}


def test_normalize_keeps_different_options_apart():
    loader = MedMCQALoader()
    assert loader.normalize("a sequence") != loader.normalize("a syndrome")  # both were "A"
    assert loader.normalize("A sequence") == loader.normalize("a sequence.")
    assert loader.normalize("C") == loader.normalize("(C)") == loader.normalize("Answer: C") == "C"


def test_systems_that_show_options_letter_them():
    from provbench.agents import lettered_choices
    from provbench_plugins.papers.p000_neighborhoods.systems import LLMOnly
    from provbench_plugins.papers.p001_kgrag_ex.prompts import options_text
    from provbench_plugins.papers.p002_planning.loop import PlanningLoop

    shown = "A. an association; B. a dysplasia; C. a sequence; D. a syndrome"
    assert lettered_choices(TABLE1.choices) == shown
    assert LLMOnly().question_text(TABLE1).endswith("Options: " + shown)  # llm-only, rag, vector-rag
    assert PlanningLoop().question_text(TABLE1).endswith(shown)  # paper 002's loop
    # a dataset that scores the option text itself (FEVER's labels) keeps them unlettered
    fever = Question(id="f", question="claim", answer="REFUTES", choices=["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"])
    assert LLMOnly().question_text(fever).endswith("Options: SUPPORTS; REFUTES; NOT ENOUGH INFO")
    assert options_text(TABLE1.choices).splitlines()[2] == "C. a sequence"


def test_an_option_text_that_starts_like_a_letter_names_its_own_option():
    # a system that answers with an option's text (paper 002's loop: an enum of the choices)
    question = Question(id="q", question="?", answer="C", choices=["T cells", "Macrophages", "B cells", "A protein"])
    assert MedMCQALoader().score_answer(question, "B cells") == {"accuracy": 1.0}
    assert option_letter("A protein", question) == "D" and option_letter("B", question) == "B"


def test_sampling_spreads_over_subjects_with_the_seed(tmp_path):
    records = [{**RAW, "id": f"{s}{i}", "subject_name": s} for s in ("Anatomy", "Surgery", "ENT") for i in range(4)]
    questions = MedMCQALoader().load(write_jsonl(tmp_path / "d.jsonl", records))
    picked = sample_by_subject(questions, 3, seed=7)
    assert sorted(q.category for q in picked) == ["Anatomy", "ENT", "Surgery"]
    assert [q.id for q in picked] == [q.id for q in sample_by_subject(questions, 3, seed=7)]
    assert {tuple(q.id for q in sample_by_subject(questions, 3, seed=s)) for s in range(6)} != {
        tuple(q.id for q in picked)
    }


def test_facets_count_subjects_and_choice_types(tmp_path):
    records = [RAW, {**RAW, "id": "q2", "choice_type": "multi"}, {**RAW, "id": "q3", "subject_name": "ENT"}]
    questions = MedMCQALoader().load(write_jsonl(tmp_path / "d.jsonl", records))
    assert MedMCQALoader.facets == ("subject", "choice_type", "dataset")
    assert facet_counts(questions, "subject") == {"Anatomy": 2, "ENT": 1}
    assert facet_counts(questions, "choice_type") == {"single": 2, "multi": 1}


@pytest.mark.skipif(shared_dir() is None, reason="../shared/datasets is absent")
def test_shared_samples_load_with_counts():
    folder = shared_dir() / "datasets" / "medmcqa"
    raw = MedMCQALoader().load(folder / "dev.sample50.jsonl")
    assert len(raw) == 50 and sum(facet_counts(raw, "choice_type").values()) == 50
    assert set(facet_counts(raw, "choice_type")) == {"single", "multi"}
    mirage = MedMCQALoader().load(folder / "mirage.medmcqa.sample50.json")
    assert len(mirage) == 50 and {q.answer for q in mirage} <= set("ABCD")
    assert all(q.gold is None for q in raw + mirage)  # real questions carry no gold
    by_id = {q.id: q.answer for q in raw}
    assert all(by_id[q.id] == q.answer for q in mirage if q.id in by_id)  # the two forms agree


def test_bundled_medical_mini_in_both_forms():
    from conftest import REPO

    dev = MedMCQALoader().load(REPO / "datasets" / "medical-mini" / "dev.jsonl")
    mmlu = MMLUMedicalLoader().load(REPO / "datasets" / "medical-mini" / "mirage-benchmark.json")
    assert len(dev) == 30 and facet_counts(dev, "choice_type") == {"single": 28, "multi": 2}
    assert len(mmlu) == 28 and all(q.answer in "ABCD" for q in mmlu)


def test_medical_mini_questions_carry_their_gold_path_in_both_forms(tmp_path):
    from conftest import REPO

    assert MedMCQALoader.provides_gold and MMLUMedicalLoader.provides_gold
    dev = MedMCQALoader().load(REPO / "datasets" / "medical-mini" / "dev.jsonl")
    mmlu = {
        q.id.replace("mmlu-", "mm-"): q
        for q in MMLUMedicalLoader().load(REPO / "datasets" / "medical-mini" / "mirage-benchmark.json")
    }
    for q in dev:
        gold = q.gold
        assert gold is not None and gold.triples and gold.ordered == (q.type == "single")
        if q.id.startswith(("mm-b", "mm-e")):  # a bridge: one inner triple of a path between two named entities
            assert len(gold.triples) == 1 and gold.entities[-1] == q.aliases[0]
            assert not any(e.lower() in q.question.lower() for e in gold.entities)
        elif q.type == "single":  # a chain from a question entity to the answer
            assert gold.entities[0].lower() in q.question.lower() and gold.entities[-1] == q.aliases[0]
            assert len(gold.entities) == len(gold.triples) + 1
            for triple, (a, b) in zip(gold.triples, zip(gold.entities, gold.entities[1:])):
                assert {triple.subject, triple.object} == {a, b}
            assert mmlu[q.id].gold == gold
        else:  # EXCEPT: the disease's links to the three other options
            assert q.aliases[0] not in gold.entities and sum(c in gold.entities for c in q.choices) == 3
    bad = write_jsonl(tmp_path / "bad.jsonl", [{**RAW, "gold": {"triples": [{"subject": "x"}]}}])
    with pytest.raises(UserError, match=r"bad\.jsonl:1: record 'q1': field gold\.triples\.0\.relation"):
        MedMCQALoader().load(bad)


def test_mmlu_loader_reads_every_subject_in_the_hub_layout_and_the_original_csv(tmp_path):
    import csv

    from provbench.registry import default_registry
    from provbench_plugins.datasets.medmcqa.mmlu import MMLULoader

    rows = [
        {"question": "2 + 2?", "subject": "elementary_mathematics", "choices": ["3", "4", "5", "6"], "answer": 1},
        {
            "question": "Capital of France?",
            "subject": "high_school_geography",
            "choices": ["a city", "Paris", "Lyon", "Nice"],
            "answer": 1,
        },
        {
            "question": "Which bone?",
            "subject": "anatomy",
            "choices": ["an ulna", "a femur", "a rib", "a skull"],
            "answer": 2,
        },
    ]
    hub = write_jsonl(tmp_path / "test.jsonl", rows)
    questions = MMLULoader().load(hub)
    assert [(q.answer, q.category, q.dataset) for q in questions] == [
        ("B", "elementary_mathematics", "mmlu"),
        ("B", "high_school_geography", "mmlu"),
        ("C", "anatomy", "mmlu"),
    ]
    assert MMLULoader().claims(hub) and not MedMCQALoader().claims(hub)
    assert MMLULoader().score_answer(questions[2], "a rib") == {"accuracy": 1.0}  # option text, not letter A
    assert "mmlu" in default_registry().names("dataset_loader")

    folder = tmp_path / "data" / "test"
    folder.mkdir(parents=True)
    for subject, answer in (("virology", "D"), ("us_foreign_policy", "A")):
        with (folder / f"{subject}_test.csv").open("w", newline="") as f:
            csv.writer(f).writerow([f"A {subject} question?", "w", "x", "y", "z", answer])
    from_csv = MMLULoader().load(folder)
    assert sorted((q.category, q.answer) for q in from_csv) == [("us_foreign_policy", "A"), ("virology", "D")]

    bad = write_jsonl(tmp_path / "bad.jsonl", [rows[0], {**rows[1], "answer": 4}])
    with pytest.raises(UserError, match=r"bad\.jsonl:2: record bad-2: field answer"):
        MMLULoader().load(bad)
    (folder / "broken_test.csv").write_text("only,three,columns\n")
    with pytest.raises(UserError, match=r"broken_test\.csv:1: expected 6 columns"):
        MMLULoader().load(folder)


def test_mmlu_loader_reads_the_hub_with_its_config_and_split(monkeypatch):
    import sys
    import types

    from provbench_plugins.datasets.medmcqa.mmlu import MMLULoader

    calls = []

    def load_dataset(*args, split):
        calls.append((args, split))
        return [{"question": "Q?", "subject": "virology", "choices": ["a virus", "b", "c", "d"], "answer": 3}]

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    (question,) = MMLULoader().load("cais/mmlu")
    assert (question.id, question.answer, question.category) == ("test-0", "D", "virology")
    MMLULoader().load("cais/mmlu", config="anatomy", split="validation")
    assert calls == [(("cais/mmlu", "all"), "test"), (("cais/mmlu", "anatomy"), "validation")]
