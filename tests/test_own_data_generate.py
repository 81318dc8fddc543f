"""``provbench generate`` (issue 31 item 5): questions along relations a knowledge base holds, each
with its gold chain, in the ``qa`` loader's format, so their gold maps onto the same KB and
``validate`` runs on them. The chains are drawn on the tiny KB and on the own-docs corpus built with
the offline ``schema-following`` model (end to end: init, kb build, generate, validate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from provbench.cli import main
from provbench.errors import UserError
from provbench.question_gen import Hop, generate_questions, sample_chains, write_rows
from provbench.testing import schema_following_llm, scripted_llm
from provbench.testing.kb import build_tiny_kb
from provbench_tools.own_docs import write as write_own_docs


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    kb = build_tiny_kb(tmp_path_factory.mktemp("tiny") / "kb")
    yield kb
    kb.close()


def load_rows(rows: list[dict], path: Path):
    from provbench_plugins.datasets.qa.loader import QALoader

    write_rows(rows, path)
    return QALoader().load(path)


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_chains_follow_the_graph_and_their_gold_maps(tiny, tmp_path, hops):
    from provbench.kb.goldmap import gold_mapping_report, map_gold

    rows = generate_questions(tiny, schema_following_llm(), {}, count=50, hops=hops, seed=0)
    edges = {
        tuple(row) for row in tiny.store.rows("MATCH (a:Entity)-[r:LINKS]->(b:Entity) RETURN a.name, r.label, b.name")
    }
    for row in rows:
        triples = row["gold_triples"]
        assert len(triples) == hops and row["answer"] == triples[-1][2] and row["gold_path"][0] == triples[0][0]
        assert all(a[2] == b[0] for a, b in zip(triples, triples[1:]))  # a chain
        assert len(set(row["gold_path"])) == hops + 1  # through distinct entities
        assert {tuple(t) for t in triples} <= edges  # relations the graph holds
    assert len({(r["gold_path"][0], tuple(t[1] for t in r["gold_triples"])) for r in rows}) == len(rows)
    questions = load_rows(rows, tmp_path / "generated.jsonl")
    assert [q.gold.ordered for q in questions] == [hops > 1] * len(rows)
    assert gold_mapping_report(tiny.view(), questions) == (len(rows), {})  # every sentence, entity and hop maps
    assert all(map_gold(tiny.view(), q).hops for q in questions)


def test_the_draw_is_seeded_and_two_hop_chains_of_the_tiny_kb_are_found(tiny):
    first = generate_questions(tiny, schema_following_llm(), {}, count=3, hops=2, seed=7)
    assert first == generate_questions(tiny, schema_following_llm(), {}, count=3, hops=2, seed=7)
    every = generate_questions(tiny, schema_following_llm(), {}, count=100, hops=2, seed=0)
    chains = {tuple(tuple(t) for t in row["gold_triples"]) for row in every}
    assert (("Orin Vale", "born_in", "Dunmere"), ("Dunmere", "located_in", "Norland")) in chains
    row = next(r for r in every if r["gold_triples"][0][1] == "born_in")
    # the sentence of its text unit that names both ends (tu:0 also says Orin Vale directed Glass Harbor)
    assert row["supporting_sentences"][0] == {"document": "doc:glass-harbor", "text": "Orin Vale was born in Dunmere."}


def hop(a: str, label: str, b: str) -> Hop:
    return Hop(a, a, label, b, b, f"{a} {label} {b}.", "d.md")


def test_a_chain_whose_relation_label_names_its_answer_is_left_out():
    """An extractor may label a relation by its object ('vell harbor' to Vell Harbor): the template
    question would quote the answer, so such a chain is never asked; a label merely containing the
    name's letters ('parent' and E) is no give-away."""
    hops = [hop("Lisk Coast", "vell harbor", "Vell Harbor"), hop("Mira", "works_at", "Halden"), hop("D", "parent", "E")]
    assert sorted(c[0].object for c in sample_chains(hops, 1, 10)) == ["E", "Halden"]


def test_a_chain_with_several_answers_is_left_out():
    hops = [
        hop("A", "parent", "B"),
        hop("A", "parent", "C"),
        hop("B", "born_in", "X"),
        hop("C", "born_in", "Y"),
        hop("D", "parent", "E"),
        hop("E", "born_in", "Z"),
    ]
    chains = sample_chains(hops, 2, 10)
    assert [[h.object for h in c] for c in chains] == [["E", "Z"]]  # A's parent's birthplace is X or Y
    assert sample_chains([hop("A", "near", "B"), hop("B", "near", "A")], 2, 10) == []  # A, B, A: not distinct
    with pytest.raises(UserError, match="--hops must be 1 to 4"):
        sample_chains(hops, 5, 1)


@pytest.mark.parametrize(
    "reply, phrasing",
    [
        ({"question": "Where was the director of Glass Harbor born?"}, "model"),
        (
            {"question": "Was the director of Glass Harbor born in Dunmere?"},
            "template (the model's question names 'Dunmere', which the chain reaches)",
        ),
        (
            {"question": "Where was Orin Vale, who directed Glass Harbor, born?"},
            "template (the model's question names 'Orin Vale', which the chain reaches)",
        ),
        ({"question": "Where was he born?"}, "template (the model's question does not name the first entity)"),
        ({"question": "Glass Harbor"}, "template (the model's question not a question)"),
        (RuntimeError("provider down"), "template (the model's call failed: LLMError)"),
    ],
)
def test_the_model_phrases_and_a_question_that_gives_the_chain_away_is_replaced(tiny, reply, phrasing):
    chain = (hop("Glass Harbor", "directed_by", "Orin Vale"), hop("Orin Vale", "born_in", "Dunmere"))
    from provbench.question_gen import phrase, template_question

    question, how = phrase(scripted_llm([reply]), chain)
    assert how == phrasing
    assert question == (reply["question"] if how == "model" else template_question(chain))
    assert template_question(chain) == (
        "Starting from Glass Harbor, which entity do you reach by following 'directed by' and then 'born in'?"
    )


def test_a_kb_without_relations_yields_no_question_and_says_why(tmp_path):
    from provbench.kb import KnowledgeBase
    from provbench.kb.types import Entity, TextUnit

    kb = KnowledgeBase.create(tmp_path / "kb")
    kb.add_text_units([TextUnit(id="tu:0", text="Ada lives in Brennmoor.", document_id="d")])
    kb.add_entities([Entity(id="e:0", name="Ada", label="PERSON", text_unit_ids=("tu:0",))])
    with pytest.raises(UserError, match=r"holds no chain of 1 relation.*\(0 relation.*need relations"):
        generate_questions(kb, schema_following_llm(), {}, count=3, hops=1)
    kb.close()


def test_bad_gold_triples_name_file_row_and_field(tmp_path):
    from provbench_plugins.datasets.qa.loader import QALoader

    bad = tmp_path / "q.jsonl"
    bad.write_text(
        '{"question": "Q?", "answer": "a", "gold_triples": [["A", "r", "B"]]}\n'
        '{"question": "Q?", "answer": "a", "gold_triples": [["A", "r"]]}\n',
        encoding="utf-8",
    )
    with pytest.raises(UserError) as caught:
        QALoader().load(bad)
    assert f"{bad}:2: field 'gold_triples': item 1 must be [subject, relation, object]" in str(caught.value)


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


def test_init_kb_build_generate_and_validate(tmp_path, monkeypatch):
    from provbench.kb import KnowledgeBase
    from provbench.kb.goldmap import gold_mapping_report
    from provbench_plugins.datasets.qa.loader import QALoader

    monkeypatch.chdir(tmp_path)
    write_own_docs(tmp_path / "data")
    invoke("init", "--docs", "data/docs", "--questions", "data/questions.csv", "--out", "suite.yaml")
    built = invoke("kb", "build", "suite.yaml", "--model", "schema-following")
    kb_dir = Path(built.split("knowledge base built: ")[1].split()[0])
    said = invoke(
        "generate",
        "suite.yaml",
        "--model",
        "schema-following",
        "--hops",
        "1",
        "--count",
        "6",  # a paired test needs 6 questions (5 gives "not enough questions"); this KB has 6 chains
        "--out",
        "generated.jsonl",
        "--suite-out",
        "generated.yaml",
    )
    assert "questions: generated.jsonl (6 of 6 asked, 1 hop(s) each" in said and "suite: generated.yaml" in said
    rows = [json.loads(line) for line in (tmp_path / "generated.jsonl").read_text(encoding="utf-8").splitlines()]
    sources = {
        s["file"] for s in json.loads((kb_dir / "sources.json").read_text(encoding="utf-8"))["text_units"].values()
    }
    assert all(s["document"] in sources for row in rows for s in row["supporting_sentences"])  # the user's files
    questions = QALoader().load(tmp_path / "generated.jsonl")
    with KnowledgeBase.open(kb_dir, read_only=True) as kb:
        assert gold_mapping_report(kb.view(), questions) == (6, {})

    suite = (tmp_path / "generated.yaml").read_text(encoding="utf-8")
    assert "path: generated.jsonl" in suite and f"directory: {kb_dir.relative_to(tmp_path)}" in suite
    validated = invoke("validate", "generated.yaml")
    assert "FAIL" not in validated and "p000/exclusion-reference" in validated

    again = CliRunner().invoke(main, ["generate", "suite.yaml", "--out", "generated.jsonl"])
    assert again.exit_code == 2 and "generated.jsonl exists" in again.output


def test_the_generated_suite_keeps_the_suites_comments_and_layout(tmp_path, monkeypatch):
    """--suite-out edits the init-written suite in place: the dataset block's comments, the lists'
    indentation and long lines stay as written; init's suite speaks of the user's data only."""
    from provbench.question_gen import generated_suite

    monkeypatch.chdir(tmp_path)
    write_own_docs(tmp_path / "data")
    invoke("init", "--docs", "data/docs", "--questions", "data/questions.csv", "--out", "suite.yaml")
    written = (tmp_path / "suite.yaml").read_text(encoding="utf-8")
    assert "did not)" not in written  # a remark about the bundled corpus, not the user's
    text = generated_suite(tmp_path / "suite.yaml", tmp_path / "g.jsonl", tmp_path / "kb", tmp_path / "g.yaml")
    dataset = text.split("\ndataset:\n", 1)[1].split("\n\n", 1)[0]
    assert "path: g.jsonl" in dataset and "loader: qa" in dataset
    assert "# the folder your supporting_documents name" in dataset and "# fields:" in dataset
    assert "\n  - llm-only\n" in text and "\n- llm-only\n" not in text
    assert "description: Questions generated by `provbench generate` from the knowledge base of suite.yaml.\n" in text
