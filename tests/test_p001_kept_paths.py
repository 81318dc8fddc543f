"""Paper 001: what the kept paths are and how the report reads them (issue 34 items 7-9, 11):
sub-path labels in the relation's own direction, the `authors` preset's grounding, pair cap,
pair order and centrality, ranks that leave lone elements out, the path-length table, Table 4's
dataset label and the words the authors' "tokens" count."""

from __future__ import annotations

from pathlib import Path

import pytest

from p001_helpers import build_graph, four_node_path, record
from provbench.model import Question, RunManifest, RunRecord, Trace, UnitKey
from provbench.plugin_api import Environment
from provbench.report.data import RunData
from provbench_plugins.kb_builders.medical import graph_metrics
from provbench_plugins.papers.p001_kgrag_ex import analysis as A
from provbench_plugins.papers.p001_kgrag_ex import report as R
from provbench_plugins.papers.p001_kgrag_ex.grounding import Grounder
from provbench_plugins.papers.p001_kgrag_ex.paths import enumerate_variants, make_path, triplet_lines
from provbench_plugins.papers.p001_kgrag_ex.prompts import pairs_schema
from provbench_plugins.papers.p001_kgrag_ex.system import KGRAGEx


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    kb = build_graph(tmp_path_factory.mktemp("p001-kept"))
    yield kb
    kb.close()


def backwards_path() -> dict:
    """spleen <-AFFECTS- mirel disease <-CAN LEAD TO- corvane fever, walked from the spleen."""
    nodes = [
        {"id": i, "name": i.removeprefix("ent:").replace("-", " "), "label": ""}
        for i in ("ent:spleen", "ent:mirel-disease", "ent:corvane-fever")
    ]
    edges = [
        {"id": "r1", "label": "AFFECTS", "source": "ent:mirel-disease", "target": "ent:spleen"},
        {"id": "r0", "label": "CAN LEAD TO", "source": "ent:corvane-fever", "target": "ent:mirel-disease"},
    ]
    return make_path("path:0", nodes, edges)


def test_a_subpath_label_states_the_relation_in_its_stored_direction():
    path = backwards_path()
    assert triplet_lines(path)[0] == "mirel disease ->[AFFECTS]-> spleen"
    labels = [v["data"]["element"] for v in enumerate_variants([path], "subpath")]
    assert labels == ["mirel disease ->[AFFECTS]-> spleen", "corvane fever ->[CAN LEAD TO]-> mirel disease"]


def test_the_authors_preset_sets_each_of_their_choices():
    o = KGRAGEx(preset="authors").options
    assert (o.case_sensitive, o.max_triplets, o.path_order, o.grounding) == (True, None, "pairs", "exact")
    o = KGRAGEx().options
    assert (o.case_sensitive, o.max_triplets, o.path_order) == (False, 4, "covering")
    assert (
        "maxItems" not in pairs_schema(None)["properties"]["pairs"]
        and pairs_schema(4)["properties"]["pairs"]["maxItems"] == 4
    )


def test_the_authors_grounding_matches_names_case_sensitively(kb):
    env = Environment(view=kb.view(), llm=None)
    authors = Grounder(KGRAGEx(preset="authors").options, env)
    assert authors.one("Night Cough", "question") is None  # nx.shortest_path on "Night Cough" finds no node
    assert authors.one("night cough", "question")["entity"] == "ent:night-cough"
    assert Grounder(KGRAGEx(grounding="exact").options, env).one("Night Cough", "question")["how"] == "exact"


def test_the_authors_keep_every_pair_in_the_models_order(kb):
    from provbench.testing import scripted_llm

    pairs = [
        ("fasting", "spleen"),
        ("fasting", "night cough"),
        ("night cough", "tarsik anaemia"),
        ("tarsik anaemia", "pale gums"),
        ("corvane fever", "mirel disease"),
        ("mirel disease", "spleen"),
    ]
    reply = {"pairs": [{"entity1": a, "entity2": b} for a, b in pairs]}  # six pairs: beyond the default cap of 4
    llm = scripted_llm([reply, *["A paragraph."] * 6, {"answer": "A"}])
    question = Question(id="q", question="?", answer="A", choices=["x", "y"])
    trace = KGRAGEx(preset="authors").run(question, Environment(view=kb.view(), llm=llm))
    kept = [(p["nodes"][0]["name"], p["nodes"][-1]["name"]) for p in trace.artifacts["kgrag"]["paths"]]
    assert kept == pairs  # the 3-hop fasting-spleen path first, as the model listed it; none dropped or capped
    assert len(trace.artifacts["query_pairs"]) == 6


def test_ranks_leave_out_paths_with_one_ranked_element():
    nodes = [{"id": f"n{i}", "name": f"N{i}", "label": ""} for i in range(2)]
    one_edge = make_path("path:0", nodes, [{"id": "r0", "label": "R0", "source": "n0", "target": "n1"}])
    base = RunRecord(
        key=UnitKey(question_id="q", system="kgrag-ex"),
        trace=Trace(question_id="q", system="kgrag-ex", answer="A", artifacts={"kgrag": {"paths": [one_edge]}}),
    )
    groups = A.group(
        [base, record("edge", 0, True, "B", one_edge), record("subpath", 0, True, "B", one_edge)], "kgrag-ex"
    )
    metrics = {"degree": {"n0": 1, "n1": 1}, "betweenness": {"r0": 0.5}}
    assert A.rank_histogram(groups, metrics, "betweenness") == [0, 0, 0, 0, 0]  # was [1, 0, 0, 0, 0]
    assert A.rank_histogram(groups, metrics, "eq1") == [0, 0, 0, 0, 0]
    assert A.path_lengths(groups) == {1: 1}


def test_the_authors_centrality_ranks_per_question_unique_nodes_by_digraph_degree():
    # two triples on one ordered pair are one DiGraph edge: B's degree 3 with multiplicity, 2 in a DiGraph
    metrics = graph_metrics.compute(
        {n: "" for n in "ABCD"}, [("r0", "A", "B"), ("r0b", "A", "B"), ("r1", "B", "C"), ("r2", "C", "D")]
    )
    assert metrics["degree"]["B"] == 3 and metrics["digraph_degree"] == {"A": 1, "B": 2, "C": 2, "D": 1}
    first = make_path(
        "path:0",
        [{"id": i, "name": i, "label": ""} for i in "ABC"],
        [
            {"id": "r0", "label": "R", "source": "A", "target": "B"},
            {"id": "r1", "label": "S", "source": "B", "target": "C"},
        ],
    )
    second = make_path(
        "path:1",
        [{"id": i, "name": i, "label": ""} for i in "CD"],
        [{"id": "r2", "label": "T", "source": "C", "target": "D"}],
    )
    base = RunRecord(
        key=UnitKey(question_id="q", system="kgrag-ex"),
        trace=Trace(question_id="q", system="kgrag-ex", answer="A", artifacts={"kgrag": {"paths": [first, second]}}),
    )
    nodes = [record("node", k, k == 1, "B", first) for k in range(3)]
    second_nodes = [record("node", k, k == 0, "B", second) for k in range(2)]
    for r in second_nodes:
        r.variant.data.update(path="path:1", path_index=1)
    groups = A.group([base, *nodes, *second_nodes], "kgrag-ex")
    # per question, each node once: A 1, B 2, C 2, D 1 -> B rank 0 (first of the tie), C rank 1/3
    histogram = A.authors_rank_histogram(groups, metrics, "degree")
    assert sum(histogram) == 2 and histogram[0] == 1 and histogram[A.bin_of(1 / 3, A.AUTHORS_BINS)] == 1
    # per path (the paper's scope): the second path's C and D tie at degree 2 and 1: C ranks 0
    assert A.rank_histogram(groups, metrics, "degree")[0] == 2
    assert A.authors_rank_histogram(groups, {"degree": {}}, "degree") is None  # a KB built before digraph_degree


def run_with(records: list[RunRecord], suite: dict, questions: dict) -> RunData:
    return RunData(Path("."), RunManifest(run_id="r", suite_name="s", suite=suite), questions, records, {})


def test_report_labels_the_dataset_by_its_source_and_shows_path_lengths_and_the_tie_rule(tmp_path):
    path = four_node_path()
    graph_metrics.save(
        tmp_path,
        graph_metrics.compute({f"n{i}": "" for i in range(4)}, [(f"r{i}", f"n{i}", f"n{i + 1}") for i in range(3)]),
    )
    base = RunRecord(
        key=UnitKey(question_id="q", system="kgrag-ex"),
        trace=Trace(question_id="q", system="kgrag-ex", answer="A", artifacts={"kgrag": {"paths": [path]}}),
    )
    suite = {
        "systems": ["kgrag-ex"],
        "interventions": ["kg-node-removal"],
        "dataset": {"loader": "medmcqa", "path": "../datasets/medical-mini/dev.jsonl"},
        "knowledge_base": {"directory": str(tmp_path)},
    }
    questions = {"q": Question(id="q", question="?", answer="A", dataset="medmcqa")}
    nodes = [record("node", k, k == 1, "B", path) for k in range(4)]
    sections = {s.id: s for s in R.sections(run_with([base, *nodes], suite, questions))}
    (row,) = sections["p001-table4-kgrag-ex"].blocks[0].rows
    assert row.cells[0].text == "MedMCQA form: medical-mini/dev.jsonl"  # not plain "MedMCQA"
    assert [[c.text for c in r.cells] for r in sections["p001-path-lengths-kgrag-ex"].blocks[0].rows] == [["3", "1"]]
    caption = sections["p001-centrality-kgrag-ex"].blocks[0].caption
    assert "nodes and edges keep path order" in caption and "ties share their average rank" not in caption
    authors = [[c.text for c in r.cells] for r in sections["p001-centrality-kgrag-ex"].blocks[1].rows]
    assert authors[0][0] == "Node degree rank" and authors[0][1] == "1"  # N1: degree 2, first of the tie


def test_the_authors_tokens_count_every_word_the_model_reads(kb):
    from provbench.agents import clip
    from provbench.testing import scripted_llm
    from provbench_plugins.papers.p001_kgrag_ex import prompts as P

    question = Question(id="q", question="Why would fasting matter?", answer="A", choices=["spleen", "nothing"])
    reply = {"triplets": [{"subject": "fasting", "relation": "causes", "object": "night cough"}]}
    llm = scripted_llm([reply, "A short paragraph.", {"answer": "A"}])
    trace = KGRAGEx(top_k=1).run(question, Environment(view=kb.view(), llm=llm))
    unit = kb.view().text_unit(next(r.id for r in trace.retrieved if r.kind == "text_unit"))
    passage = P.PASSAGE.format(id=unit.id, text=clip(unit.text, KGRAGEx().options.text_chars))
    assert passage in llm.backend.calls[-1]["messages"][-1]["content"] + llm.backend.calls[-1]["messages"][0]["content"]
    assert trace.artifacts["context_words"] == len("A short paragraph.".split()) + len(passage.split())


def test_the_authors_builder_keeps_names_differing_in_case_apart(tmp_path):
    from p001_helpers import write_inputs
    from provbench.testing import schema_following_llm
    from provbench_plugins.kb_builders.medical.builder import MedicalKGBuilder

    corpus, triples = write_inputs(tmp_path / "in")
    triples.write_text(triples.read_text() + "Fasting,Risk Factors,CAUSES,ashen skin,Symptoms,a.txt,a_0\n")
    assert (
        MedicalKGBuilder(corpus=str(corpus), triples=str(triples), preset="authors").build_options({}).entity_names
        == "exact"
    )
    for rule, expected in (("merged", None), ("exact", "ent:fasting-2")):
        kb = MedicalKGBuilder(corpus=str(corpus), triples=str(triples), entity_names=rule).build(
            [], tmp_path / rule, schema_following_llm()
        )
        try:
            view = kb.view()
            found = view.find_entity("Fasting", case_sensitive=True)
            assert (found.id if found else None) == expected  # merged: "Fasting" became "fasting"
            assert view.find_entity("fasting", case_sensitive=True).id == "ent:fasting"
        finally:
            kb.close()
