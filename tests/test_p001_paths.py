"""Paper 001: shortest-path extraction, variant enumeration, perturbations, relative positions,
degree / betweenness / eq. (1) on a hand-built graph, and the per-question analyses."""

from __future__ import annotations

import random

import pytest

from p001_helpers import baseline, build_graph, four_node_path, grouped, record
from provbench.model import Question, RunRecord, Trace, UnitKey, VariantInfo
from provbench.plugin_api import Environment
from provbench_plugins.kb_builders.medical import graph_metrics
from provbench_plugins.papers.p001_kgrag_ex import analysis as A
from provbench_plugins.papers.p001_kgrag_ex.explain import explain
from provbench_plugins.papers.p001_kgrag_ex.interventions import EdgeRemoval, NodeRemoval, SubpathRemoval
from provbench_plugins.papers.p001_kgrag_ex.paths import (
    apply_variant,
    enumerate_variants,
    make_path,
    relative_position,
    triplet_lines,
)
from provbench_plugins.papers.p001_kgrag_ex.grounding import entity_pairs
from provbench_plugins.papers.p001_kgrag_ex.system import KGRAGEx


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    kb = build_graph(tmp_path_factory.mktemp("p001"))
    yield kb
    kb.close()


def test_shortest_path_between_question_and_option_entities(kb):
    env = Environment(view=kb.view(), llm=None)
    grounded = [
        {"entity": "ent:fasting", "role": "question"},
        {"entity": "ent:spleen", "role": "option"},
        {"entity": "ent:night-cough", "role": "option"},
    ]
    assert KGRAGEx().find_paths(env, Trace(question_id="q", system="kgrag-ex"), grounded) == []  # one query entity
    paths = KGRAGEx(endpoints="options", max_paths=1).find_paths(
        env, Trace(question_id="q", system="kgrag-ex"), grounded
    )
    assert len(paths) == 1  # fasting-night cough (1 hop) is shorter than fasting..spleen (3 hops)
    assert [n["name"] for n in paths[0]["nodes"]] == ["fasting", "night cough"]
    paths = KGRAGEx(endpoints="options", max_paths=2).find_paths(
        env, Trace(question_id="q", system="kgrag-ex"), grounded
    )
    spleen = paths[1]
    assert [n["name"] for n in spleen["nodes"]] == ["fasting", "corvane fever", "mirel disease", "spleen"]
    assert [e["label"] for e in spleen["edges"]] == ["IS RISK FACTOR FOR", "CAN LEAD TO", "AFFECTS"]
    assert [e["source_file"] for e in spleen["edges"]] == ["a.txt", "a.txt", "b.txt"]
    assert [n["label"] for n in spleen["nodes"]] == ["Risk Factors", "Diseases", "Diseases", "Body Parts"]


def test_pairs_join_the_querys_entities_or_as_a_variant_question_to_options():
    grounded = [
        {"entity": "q1", "role": "question"},
        {"entity": "q2", "role": "question"},
        {"entity": "q3", "role": "question"},
        {"entity": "o1", "role": "option"},
        {"entity": "q1", "role": "option"},
    ]
    assert entity_pairs(grounded, "question") == [("q1", "q2"), ("q1", "q3"), ("q2", "q3")]  # the paper
    assert entity_pairs(grounded, "options") == [("q1", "o1"), ("q2", "o1"), ("q2", "q1"), ("q3", "o1"), ("q3", "q1")]
    by_model = [
        {"entity": "a", "role": "question", "pair": 0, "end": 0},
        {"entity": "b", "role": "question", "pair": 0, "end": 1},
        {"entity": "c", "role": "question", "pair": 1, "end": 0},
    ]  # pair 1 lost an end in grounding
    assert entity_pairs(by_model, "question") == [("a", "b")]


def test_variants_n_nodes_give_n_node_and_n_minus_1_edge_and_subpath_variants():
    path = four_node_path()
    counts = {kind: len(enumerate_variants([path], kind)) for kind in ("node", "edge", "subpath")}
    assert counts == {"node": 4, "edge": 3, "subpath": 3}
    trace = Trace(question_id="q", system="kgrag-ex", artifacts={"kgrag": {"paths": [path]}})
    ids = [v.id for v in SubpathRemoval().variants(Question(id="q", question="?", answer="A"), trace, random.Random(0))]
    assert ids == ["subpath:0:0", "subpath:0:1", "subpath:0:2"]
    assert (
        NodeRemoval().variants(
            Question(id="q", question="?", answer="A"), Trace(question_id="q", system="x"), random.Random(0)
        )
        == []
    )


def test_relative_positions_run_from_start_to_end():
    path = four_node_path()
    assert [v["data"]["position"] for v in enumerate_variants([path], "node")] == pytest.approx([0, 1 / 3, 2 / 3, 1])
    assert [v["data"]["position"] for v in enumerate_variants([path], "edge")] == [0.0, 0.5, 1.0]
    assert relative_position(0, 1) == 0.0


def test_each_perturbation_removes_exactly_its_element():
    path = four_node_path()
    assert triplet_lines(path) == ["N0 ->[R0]-> N1", "N1 ->[R1]-> N2", "N2 ->[R2]-> N3"]
    node = enumerate_variants([path], "node")[1]["data"]
    assert triplet_lines(apply_variant([path], node)[0]) == ["N0 ->[R0]-> __", "__ ->[R1]-> N2", "N2 ->[R2]-> N3"]
    edge = enumerate_variants([path], "edge")[1]["data"]
    assert triplet_lines(apply_variant([path], edge)[0]) == ["N0 ->[R0]-> N1", "N1 ->[__]-> N2", "N2 ->[R2]-> N3"]
    sub = enumerate_variants([path], "subpath")[2]["data"]
    assert triplet_lines(apply_variant([path], sub)[0]) == ["N0 ->[R0]-> N1", "N1 ->[R1]-> N2"]
    assert sub["node_ids"] == ["n2", "n3"] and sub["edge_ids"] == ["r2"] and sub["source_files"] == ["f2.txt"]
    assert path["removed"] == {"node": [], "edge": [], "subpath": []}  # the baseline path is untouched


def test_perturbation_reaches_the_resumed_trace():
    path = four_node_path()
    trace = Trace(question_id="q", system="kgrag-ex", artifacts={"kgrag": {"paths": [path]}})
    variant = EdgeRemoval().variants(Question(id="q", question="?", answer="A"), trace, random.Random(0))[0]
    perturbed = EdgeRemoval().perturb(
        Question(id="q", question="?", answer="A"), trace, random.Random(0), variant=variant
    )
    assert perturbed.artifacts["kgrag"]["paths"][0]["removed"]["edge"] == [0]
    assert trace.artifacts["kgrag"]["paths"][0]["removed"]["edge"] == []


def test_degree_betweenness_and_eq1_on_a_path_graph():
    entities = {n: "Diseases" for n in "ABCD"}
    metrics = graph_metrics.compute(entities, [("r0", "A", "B"), ("r1", "B", "C"), ("r2", "C", "D")])
    assert metrics["degree"] == {"A": 1, "B": 2, "C": 2, "D": 1}
    # pairs whose shortest path crosses the edge, over the 6 pairs of 4 nodes
    assert metrics["betweenness"] == pytest.approx({"r0": 3 / 6, "r1": 4 / 6, "r2": 3 / 6})
    assert A.subpath_score(metrics["betweenness"]["r1"], 2, 2) == pytest.approx(1 / 6)
    assert A.subpath_score(metrics["betweenness"]["r0"], 1, 2) == pytest.approx(1 / 6)
    assert A.subpath_score(0.3, 0, 0) == 0.0
    sampled = graph_metrics.compute(entities, [("r0", "A", "B"), ("r1", "B", "C"), ("r2", "C", "D")], k=2, seed=1)
    assert sampled["betweenness_samples"] == 2 and set(sampled["betweenness"]) == {"r0", "r1", "r2"}


def test_relative_ranks_put_the_highest_first_and_share_ties():
    assert A.relative_ranks([5, 1, 3]) == [0.0, 1.0, 0.5]
    assert A.relative_ranks([2, 2, 1]) == [0.25, 0.25, 1.0]
    assert A.relative_ranks([7]) == [0.0]


def test_table4_explanation_and_rank_histograms():
    changes = [
        ("node", 1, True, "C"),
        ("node", 2, False, "A"),
        ("edge", 0, False, "A"),
        ("subpath", 0, True, "B"),
        ("subpath", 1, True, "C"),
    ]
    groups = grouped(four_node_path(), *changes)
    assert A.table4(groups) == {"node": 0, "edge": 0, "subpath": 1, "tied": 0, "examples": 1}
    assert A.table4(groups, measure="count") == A.table4(groups)  # sub-path: 2 changes, share 2/2
    e = explain(groups["q"])
    assert e.most_influential == "N1"  # its node removal and both sub-paths holding it changed the answer
    assert e.influence["n1"] == 3 and "Removing N1 led to a different answer 3 times." in e.technical
    assert e.sources == ["f0.txt", "f1.txt"] and "is N1" in e.for_user
    assert A.position_histogram(groups, "subpath") == [1, 0, 1, 0, 0]  # positions 0 and 0.5
    metrics = {"degree": {"n0": 1, "n1": 5, "n2": 2, "n3": 1}, "betweenness": {"r0": 0.2, "r1": 0.9, "r2": 0.1}}
    # node n1 has the highest degree of the two node variants run (n1, n2): rank 0
    assert A.rank_histogram(groups, metrics, "degree") == [1, 0, 0, 0, 0]
    # eq. 1: r0 -> 0.2/6, r1 -> 0.9/7: the changed sub-paths rank 1 and 0
    assert A.rank_histogram(groups, metrics, "eq1") == [1, 0, 0, 0, 1]


def test_ragex_windows_cover_the_retrieved_words():
    from provbench_plugins.papers.p001_kgrag_ex.ragex import RagExWindow

    passages = [{"id": "tu:1", "text": "One two, three four five."}, {"id": "tu:2", "text": "six seven"}]
    trace = Trace(question_id="q", system="vector-rag", artifacts={"passages": passages})
    question = Question(id="q", question="?", answer="A")
    every = RagExWindow().variants(question, trace, random.Random(0))
    assert [v.id for v in every] == ["window:0", "window:1", "window:2"]  # 7 words, windows of 5, stride 1
    strided = RagExWindow(window=2, stride=3).variants(question, trace, random.Random(0))
    assert [v.data["start"] for v in strided] == [0, 3]
    perturbed = RagExWindow().perturb(question, trace, random.Random(0), variant=every[2])
    assert perturbed.artifacts["passages"] == [{"id": "tu:1", "text": "One two"}, {"id": "tu:2", "text": ""}]
    assert RagExWindow().variants(question, Trace(question_id="q", system="kgrag-ex"), random.Random(0)) == []


def test_the_authors_ragex_capitalises_the_chunk_and_windows_its_chunk_label_too(kb):
    """The authors' cost notebook shows ``c.capitalize()`` and slides its 5-word windows over the
    spaCy words of "Chunk 0: ...", so "Chunk" and "0" are words a window can remove."""
    from provbench.testing import scripted_llm
    from provbench_plugins.papers.p001_kgrag_ex.ragex import RagExWindow, VectorRAG, context_text

    question = Question(id="q", question="What does fasting cause?", answer="A", choices=["night cough", "spleen"])
    trace = VectorRAG(preset="authors").run(question, Environment(view=kb.view(), llm=scripted_llm([{"answer": "A"}])))
    (passage,) = trace.artifacts["passages"]
    original = kb.view().text_unit(passage["id"]).text
    assert passage["text"] == original.capitalize() and VectorRAG(preset="authors").options.capitalize
    assert VectorRAG().options.capitalize is False and RagExWindow(preset="authors").options.stride == 1
    passages = [{"id": "tu:1", "text": "Corvane fever is an uncommon illness."}]
    trace = Trace(question_id="q", system="vector-rag", artifacts={"passages": passages})
    windows = RagExWindow(preset="authors").variants(question, trace, random.Random(0))
    assert len(windows) == 4 and windows[0].description == "remove words 1-5: Chunk 0 Corvane fever is"
    assert len(RagExWindow().variants(question, trace, random.Random(0))) == 2  # the passage's 6 words only
    first, third = (
        RagExWindow(preset="authors").perturb(question, trace, random.Random(0), variant=windows[i]) for i in (0, 2)
    )
    assert context_text(first.artifacts["passages"]) == "an uncommon illness"
    assert context_text(third.artifacts["passages"]) == "Chunk 0 illness"  # punctuation dropped, as spaCy's words
    assert context_text(passages) == "Chunk 0: Corvane fever is an uncommon illness."


def test_table4_ranks_by_share_and_breaks_ties_so_the_columns_sum_to_examples():
    path = four_node_path()  # 4 node variants, 3 edge, 3 sub-path

    def question(qid, changes):  # every variant runs; those in ``changes`` change the answer
        recs = [
            record(kind, k, k in changes.get(kind, []), "B", path)
            for kind, n in (("node", 4), ("edge", 3), ("subpath", 3))
            for k in range(n)
        ]
        return [r.model_copy(update={"key": r.key.model_copy(update={"question_id": qid})}) for r in recs]

    records = (
        question("q1", {"node": [0, 1], "edge": [0, 1]})  # shares 2/4 < 2/3: edge wins (counts tie)
        + question("q2", {"node": [0], "subpath": [0]})  # 1/4 < 1/3: sub-path
        + question("q3", {"node": [0, 1, 2, 3], "edge": [0, 1, 2]})  # 1 = 1: tie, node first
        + question("q4", {"edge": [0], "subpath": [1]})
    )  # 1/3 = 1/3: tie, edge before sub-path
    groups = A.group(records, "kgrag-ex")
    t = A.table4(groups)
    assert t == {"node": 1, "edge": 2, "subpath": 1, "tied": 2, "examples": 4}
    assert t["node"] + t["edge"] + t["subpath"] == t["examples"]
    apart = A.table4(groups, tie_break=None)
    assert apart == {"node": 0, "edge": 1, "subpath": 1, "tied": 2, "examples": 4}
    by_count = A.table4(groups, measure="count", tie_break=None)
    assert by_count["tied"] == 4 - by_count["node"] - by_count["edge"] - by_count["subpath"] and by_count["tied"] == 3
    with pytest.raises(ValueError, match="tie_break"):
        A.table4(groups, tie_break=("node", "edge"))


def test_influence_is_keyed_by_element_not_name():
    nodes = [{"id": f"n{i}", "name": f"N{i}", "label": "Diseases"} for i in range(3)]
    edges = [
        {
            "id": f"r{i}",
            "label": "AFFECTS",
            "source": f"n{i}",
            "target": f"n{i + 1}",
            "text_unit": "tu:x",
            "source_file": f"f{i}.txt",
        }
        for i in range(2)
    ]  # two edges with one text
    path = make_path("path:0", nodes, edges)
    e = explain(grouped(path, ("edge", 0, True, "B"), ("edge", 1, True, "C"), ("subpath", 1, True, "C"))["q"])
    # an edge or sub-path removal credits its two end nodes; relations are counted beside them, by id
    assert e.influence == {"n1": 3, "n2": 2, "n0": 1} and e.relation_influence == {"r1": 2, "r0": 1}
    assert e.names["r0"] == "AFFECTS (N0 – N1)" and e.names["r1"] == "AFFECTS (N1 – N2)" and e.names["n1"] == "N1"
    assert e.most_influential == "N1" and e.most_influential_id == "n1" and e.sources == ["f0.txt", "f1.txt"]


def run_kgrag(kb, question: Question, triplets_reply, **options):
    from provbench.testing import scripted_llm

    llm = scripted_llm([triplets_reply, *["A paragraph."] * options.pop("paths", 1), {"answer": "A"}])
    trace = KGRAGEx(**{"paragraphs": "llm", "top_k": 0, **options}).run(question, Environment(view=kb.view(), llm=llm))
    return trace, llm.backend.calls


def test_the_query_is_parsed_into_triplets_whose_entities_are_grounded(kb):
    question = Question(id="q", question="Why would fasting matter here?", answer="A", choices=["spleen", "nothing"])
    reply = {
        "triplets": [
            {"subject": "fasting", "relation": "affects", "object": "Corvane Fever"},
            {"subject": "", "relation": "x", "object": "dropped"},
        ]
    }
    trace, calls = run_kgrag(kb, question, reply)
    assert calls[0]["schema"]["properties"]["triplets"]["items"]["required"] == ["subject", "relation", "object"]
    assert trace.artifacts["query_triplets"] == [
        {"subject": "fasting", "relation": "affects", "object": "Corvane Fever"}
    ]
    grounded = {(g["mention"], g["role"], g["entity"], g["how"]) for g in trace.artifacts["kgrag"]["grounding"]}
    assert ("Corvane Fever", "question", "ent:corvane-fever", "exact") in grounded  # a triplet's object
    assert ("fasting", "question", "ent:fasting", "exact") in grounded  # its subject
    assert not any(g["role"] == "option" for g in trace.artifacts["kgrag"]["grounding"])  # the paper: the query's
    assert trace.answer == "A" and [p.entities for p in trace.paths] == [["ent:fasting", "ent:corvane-fever"]]
    assert "Chain:\nfasting ->[IS RISK FACTOR FOR]-> corvane fever" in calls[1]["messages"][0]["content"]
    assert (
        "__ is unknown" not in calls[1]["messages"][0]["content"]
    )  # no sentence on "__" unless asked (the authors' prompt has none)
    assert calls[2]["messages"][0]["content"].startswith("You are a medical assistant.")


def test_an_empty_parse_falls_back_to_entities_named_in_the_question(kb):
    question = Question(id="q", question="Is night cough linked to the spleen?", answer="A", choices=["spleen", "no"])
    trace, _ = run_kgrag(kb, question, {"triplets": []})
    grounded = trace.artifacts["kgrag"]["grounding"]
    assert any(g["entity"] == "ent:night-cough" and g["how"] == "named" for g in grounded)
    assert trace.paths and trace.outcome == "answered"


def test_grounding_needs_a_close_score_and_a_shared_word_and_records_every_candidate(kb):
    from provbench_plugins.papers.p001_kgrag_ex.grounding import Grounder

    grounder = Grounder(KGRAGEx().options, Environment(view=kb.view(), llm=None))
    assert grounder.one("coughing at night", "question")["entity"] == "ent:night-cough"  # 0.84, "night"
    assert grounder.one("fever", "question") is None  # 0.67 < 0.8: min_match 0.5 took "corvane fever"
    assert grounder.candidates[-1] == {
        "mention": "fever",
        "role": "question",
        "entity": "ent:corvane-fever",
        "name": "corvane fever",
        "score": pytest.approx(0.665, abs=0.01),
        "how": "score below 0.8",
        "kept": False,
    }
    loose = Grounder(KGRAGEx(min_match=0.0).options, Environment(view=kb.view(), llm=None))
    assert loose.one("Aspirin", "question") is None and loose.candidates[-1]["how"] == "no word in common"
    assert (
        Grounder(KGRAGEx(min_match=0.0, lexical=False).options, Environment(view=kb.view(), llm=None)).one(
            "Aspirin", "question"
        )
        is not None
    )
    exact = Grounder(KGRAGEx(grounding="exact").options, Environment(view=kb.view(), llm=None))
    assert exact.one("Night Cough", "question")["how"] == "exact" and exact.one("coughing at night", "question") is None


def test_kept_paths_are_not_fragments_of_other_paths_and_cover_the_most_grounded_entities(kb):
    env = Environment(view=kb.view(), llm=None)
    names = ["fasting", "night cough", "spleen", "mirel disease", "pale gums"]  # 10 pairs, 10 distinct paths
    grounded = [{"entity": kb.view().find_entity(n).id, "role": "question"} for n in names]
    assert KGRAGEx().options.max_paths == 3
    paths = KGRAGEx().find_paths(env, Trace(question_id="q", system="kgrag-ex"), grounded)
    # one-edge paths (fasting-night cough, mirel-spleen, pale gums-spleen) lie on longer ones: dropped; the first
    # kept passes 3 grounded entities (the shortest such), the second the 2 left; then nothing new is covered
    along = [[n["name"] for n in p["nodes"]] for p in paths]
    assert [min(a, a[::-1]) for a in along] == [
        ["mirel disease", "spleen", "pale gums"],
        ["fasting", "night cough", "tarsik anaemia", "pale gums"],
    ]
    every = KGRAGEx(max_paths=None).find_paths(env, Trace(question_id="q", system="kgrag-ex"), grounded)
    assert [len(p["edges"]) for p in every] == [2, 3]
    one = KGRAGEx(max_paths=1).find_paths(env, Trace(question_id="q", system="kgrag-ex"), grounded[:3] + grounded[4:])
    assert [len(p["edges"]) for p in one] == [3]  # fasting, night cough, spleen, pale gums: a 3-hop path passes 3


def test_a_tie_never_goes_to_the_earlier_option(tmp_path):
    """fasting is one hop from both option entities: the path kept is the same whichever comes first."""
    from provbench.testing import schema_following_llm
    from provbench_plugins.kb_builders.medical.builder import MedicalKGBuilder
    from p001_helpers import write_inputs

    corpus, triples = write_inputs(tmp_path / "in")
    triples.write_text(triples.read_text() + "fasting,Risk Factors,CAUSES,ashen skin,Symptoms,a.txt,a_0\n")
    kb = MedicalKGBuilder(corpus=str(corpus), triples=str(triples)).build([], tmp_path / "kb", schema_following_llm())
    try:
        env = Environment(view=kb.view(), llm=None)
        kept = []
        for options in (["ent:night-cough", "ent:ashen-skin"], ["ent:ashen-skin", "ent:night-cough"]):
            grounded = [{"entity": "ent:fasting", "role": "question"}] + [
                {"entity": o, "role": "option"} for o in options
            ]
            (path,) = KGRAGEx(endpoints="options", max_paths=1).find_paths(
                env, Trace(question_id="q", system="kgrag-ex"), grounded
            )
            kept.append(path["nodes"][-1]["id"])
        assert kept == ["ent:ashen-skin", "ent:ashen-skin"]  # by name ("ashen skin" < "night cough"), not by letter
    finally:
        kb.close()


def test_defaults_search_long_paths(tmp_path):
    from provbench.kb.view import MAX_PATH_HOPS
    from provbench.testing import schema_following_llm
    from provbench_plugins.kb_builders.medical.builder import MedicalKGBuilder
    from p001_helpers import write_inputs

    corpus, triples = write_inputs(tmp_path / "in")
    chain = [f"c{i}" for i in range(7)]  # a 6-hop chain, beyond the old bound of 4
    rows = [f"{a},Diseases,LEADS TO,{b},Diseases,a.txt,a_0" for a, b in zip(chain, chain[1:])]
    triples.write_text(triples.read_text() + "\n".join(rows) + "\n")
    assert KGRAGEx().options.max_hops == MAX_PATH_HOPS
    kb = MedicalKGBuilder(corpus=str(corpus), triples=str(triples)).build([], tmp_path / "kb", schema_following_llm())
    try:
        env = Environment(view=kb.view(), llm=None)
        grounded = [{"entity": "ent:c0", "role": "question"}, {"entity": "ent:c6", "role": "question"}]
        paths = KGRAGEx().find_paths(env, Trace(question_id="q", system="kgrag-ex"), grounded)
        assert [len(p["nodes"]) for p in paths] == [7]
    finally:
        kb.close()


def test_the_authors_preset_asks_for_pairs_and_follows_their_code(kb):
    options = KGRAGEx(preset="authors").options
    assert (
        options.query,
        options.grounding,
        options.named_fallback,
        options.directed,
        options.max_paths,
        options.path_format,
        options.top_k,
    ) == ("pairs", "exact", False, True, None, "chain", 0)
    assert KGRAGEx(preset="authors", top_k=2).options.top_k == 2  # a suite's own option wins
    question = Question(
        id="q",
        question="Can fasting lead to corvane fever or to the spleen?",
        answer="A",
        choices=["spleen", "nothing"],
    )
    reply = {
        "pairs": [
            {"entity1": "fasting", "entity2": "corvane fever"},
            {"entity1": "spleen", "entity2": "fasting"},
            {"entity1": "fasting", "entity2": "Corvane Fever"},  # names are case-sensitive: no entity
            {"entity1": "fasting", "entity2": "unknown thing"},
        ]
    }
    trace, calls = run_kgrag(kb, question, reply, preset="authors")
    assert calls[0]["schema"]["properties"]["pairs"]["items"]["required"] == ["entity1", "entity2"]
    assert "spleen" not in calls[0]["messages"][1]["content"].split("?")[1]  # the options are not shown
    # spleen -> fasting has no path along edge directions; the unknown entity grounds to nothing
    assert [p.description for p in trace.paths] == ["fasting->[IS RISK FACTOR FOR]->corvane fever"]
    assert trace.read_text_units == [] and calls[1]["messages"][0]["content"].count("Chain:\nfasting->[") == 1
    candidates = trace.steps[1].result["candidates"]
    assert {"mention": "unknown thing", "kept": False, "how": "no entity of that name"}.items() <= candidates[
        -1
    ].items()


def test_unknown_instruction_and_a_pathless_variant_logs_its_fallback(kb):
    question = Question(
        id="q", question="Is fasting a risk factor for corvane fever?", answer="A", choices=["yes", "no"]
    )
    trace, calls = run_kgrag(
        kb,
        question,
        {"triplets": [{"subject": "fasting", "relation": "risk", "object": "corvane fever"}]},
        unknown_instruction=True,
        top_k=1,
    )
    assert "written as __ is unknown: do not guess it." in calls[1]["messages"][0]["content"]
    assert [s.tool for s in trace.steps if s.tool.endswith("_search")] == ["pseudo_document_search"]
    variant = SubpathRemoval().variants(question, trace, random.Random(0))[0]  # a 1-edge path: nothing left
    perturbed = SubpathRemoval().perturb(question, trace, random.Random(0), variant=variant)
    from provbench.testing import scripted_llm

    resumed = KGRAGEx(top_k=1).resume(
        question, Environment(view=kb.view(), llm=scripted_llm([{"answer": "B"}])), perturbed
    )
    assert [s.tool for s in resumed.steps if s.tool.endswith("_search")] == ["fallback_search"]
    assert resumed.artifacts["retrieval_query"] == "question" and resumed.answer == "B"


def test_an_edge_without_a_chunk_takes_its_file_from_the_triples_file():
    path = four_node_path()
    for edge in path["edges"]:
        edge["source_file"] = ""
    groups = grouped(path, ("edge", 1, True, "B"))
    assert explain(groups["q"]).sources == []
    assert explain(groups["q"], {"r1": "article-9.jsonl"}).sources == ["article-9.jsonl"]


def test_table4_section_has_a_row_per_dataset_as_the_paper():
    from provbench_plugins.papers.p001_kgrag_ex.report import dataset_label, table4_section

    path = four_node_path()

    def question(qid, kind):
        recs = [
            record(k, i, k == kind and i == 0, "B", path)
            for k, n in (("node", 4), ("edge", 3), ("subpath", 3))
            for i in range(n)
        ]
        return [r.model_copy(update={"key": r.key.model_copy(update={"question_id": qid})}) for r in recs]

    groups = A.group(question("m1", "node") + question("m2", "subpath") + question("u1", "edge"), "kgrag-ex")
    suite = {"dataset": {"path": "/data/MIRAGE/benchmark.json"}}
    labels = {q: dataset_label(d, suite) for q, d in (("m1", "medmcqa"), ("m2", "medmcqa"), ("u1", "mmlu"))}
    section = table4_section({"paper": groups}, "kgrag-ex", labels)
    rows = [[c.text for c in row.cells] for row in section.blocks[0].rows]
    assert rows == [
        ["MMLU form: MIRAGE/benchmark.json", "paper (line dropped)", "1", "0", "1", "0", "0"],
        ["MedMCQA form: MIRAGE/benchmark.json", "paper (line dropped)", "2", "1", "0", "1", "0"],
    ]


def test_table4_under_both_subpath_rules():
    """The same question under the paper's sub-path rule (its removals change nothing) and the
    authors' (blanking both nodes changes the answer): Table 4 reads node, then sub-path."""
    from provbench_plugins.papers.p001_kgrag_ex.report import table4_section

    path = four_node_path()
    records = [record(k, i, k == "node" and i == 0, "B", path) for k, n in (("node", 4), ("edge", 3)) for i in range(n)]
    records += [record("subpath", i, False, "A", path) for i in range(3)]
    for i in range(3):
        data = enumerate_variants([path], "subpath", "authors")[i]
        records.append(
            RunRecord(
                key=UnitKey(question_id="q", system="kgrag-ex", condition="kg-subpath-blanked", variant=data["id"]),
                trace=Trace(question_id="q", system="kgrag-ex", answer="C"),
                scores={"output_changed": 1.0},
                variant=VariantInfo(**data),
            )
        )
    assert A.subpath_rules(records, "kgrag-ex") == ["paper", "authors"]
    by_rule = {rule: A.group(records, "kgrag-ex", rule) for rule in ("paper", "authors")}
    assert A.table4(by_rule["paper"])["node"] == 1 and A.table4(by_rule["authors"])["subpath"] == 1
    section = table4_section(by_rule, "kgrag-ex", {"q": "medmcqa"})
    rows = [[c.text for c in row.cells] for row in section.blocks[0].rows]
    assert [r[1] for r in rows] == ["paper (line dropped)", "authors (blanked in place)"]
    counts = {row.cells[0].text: row.cells[2].text for row in section.blocks[1].rows}
    assert counts == {
        "Node": "1",
        "Edge": "0",
        "Sub-path, paper (line dropped)": "0",
        "Sub-path, authors (blanked in place)": "3",
    }


def test_table5_medians_from_the_authors_result_format():
    """The paper's "average" is the authors' np.median; means beside it can reverse the result."""
    from conftest import REPO
    from provbench_plugins.papers.p001_kgrag_ex import cost as C

    ragex, kg = C.read_authors_comparison(REPO / "tests" / "data" / "p001-authors-comparison.json")
    table = C.table5(ragex, kg)
    calls, tokens = table["authors calls"], table["authors tokens"]
    assert table["questions"] == 5
    assert (calls["RAG-Ex"].median, calls["KGRAG-Ex"].median, calls["Difference"]) == (65, 20, 45)
    assert (tokens["RAG-Ex"].median, tokens["KGRAG-Ex"].median, tokens["Difference"]) == (4000, 2000, 2000)
    assert tokens["RAG-Ex"].mean == 4080 and tokens["KGRAG-Ex"].mean == 7180  # the means reverse the tokens
    assert "provbench calls" not in table  # the authors' files hold their definition only
    with pytest.raises(ValueError, match="comparison_of_x: field kg"):
        C.read_authors_comparison({"comparison_of_x": {"simple": {"llm_calls": 1, "total_tokens": 2}, "kg": {}}})


def test_table5_counts_both_definitions_over_the_questions_both_methods_explained():
    from provbench.model import LLMCall
    from provbench_plugins.papers.p001_kgrag_ex import cost as C

    def rec(qid, calls):
        trace = Trace(
            question_id=qid,
            system="s",
            llm_calls=[
                LLMCall(model="m", purpose="answer", prompt_tokens=10, completion_tokens=2) for _ in range(calls)
            ],
        )
        return RunRecord(key=UnitKey(question_id=qid, system="s", condition="c"), trace=trace)

    ragex = C.per_question([rec("q1", 1)] * 4 + [rec("q2", 1)] * 6 + [rec("q3", 1)], {"q1": 50, "q2": 70, "q3": 9})
    kg = C.per_question([rec("q1", 2)] * 2 + [rec("q2", 2)] * 3, {"q1": 30, "q2": 40})
    table = C.table5(ragex, kg)
    assert table["questions"] == 2  # q3 has no KGRAG-Ex explanation
    assert table["authors calls"]["RAG-Ex"].median == 5 and table["authors calls"]["KGRAG-Ex"].median == 2.5
    assert table["provbench calls"]["KGRAG-Ex"].median == 5  # 2 real calls per perturbation
    assert table["authors tokens"]["RAG-Ex"].median == (4 * 50 + 6 * 70) / 2
    assert table["provbench tokens"]["KGRAG-Ex"].mean == (2 * 2 * 12 + 3 * 2 * 12) / 2


def test_positions_and_rank_ties_by_the_authors_rules():
    assert A.relative_ranks([3, 3, 1], ties="first") == [0.0, 0.5, 1.0]
    assert A.relative_ranks([3, 3, 1]) == [0.25, 0.25, 1.0]
    path = four_node_path()
    groups = grouped(path, *[("node", k, k in (1, 3), "B") for k in range(4)])
    assert A.position_histogram(groups, "node") == [0, 1, 0, 0, 1]  # 1/3 and 1
    authors = A.position_histogram(groups, "node", "authors")
    assert len(authors) == 20 and authors[5] == 1 and authors[15] == 1  # 1/4 and 3/4
    metrics = {"degree": {"n0": 2, "n1": 2, "n2": 2, "n3": 2}, "betweenness": {}}
    # equal degrees: the authors' sorted(...).index keeps path order, so n1 ranks 1/3 and n3 ranks 1
    assert A.rank_histogram(groups, metrics, "degree") == [0, 1, 0, 0, 1]


def table2_path() -> dict:
    """Paper 001's running example (Tables 1 and 2)."""
    names = ["pulmonary hypoplasia", "persistent pulmonary hypertension in the newborn", "oligohydramnios"]
    nodes = [
        {"id": f"e{i}", "name": n, "label": label}
        for i, (n, label) in enumerate(zip(names, ["Diseases", "Diseases", "Symptoms"]))
    ]
    edges = [
        {
            "id": "r0",
            "label": "IS RISK FACTOR FOR",
            "source": "e0",
            "target": "e1",
            "text_unit": "tu:a",
            "source_file": "article-27634.jsonl",
        },
        {
            "id": "r1",
            "label": "HAS RISK FACTOR",
            "source": "e1",
            "target": "e2",
            "text_unit": "tu:b",
            "source_file": "article-22355.jsonl",
        },
    ]
    return make_path("path:0", nodes, edges)


def test_table2_is_reproduced_from_the_papers_own_example():
    """Removing PPHN (node) and HAS RISK FACTOR (edge) changed A to C, removing the sub-path
    (PPHN, HAS RISK FACTOR, oligohydramnios) did not: PPHN 2 times, oligohydramnios 1 time."""
    path = table2_path()
    pphn, tail = path["nodes"][1]["name"], "oligohydramnios"
    changes = {("node", 1): "C", ("edge", 1): "C"}
    records = [baseline(path)]
    records += [
        record(kind, k, (kind, k) in changes, changes.get((kind, k), "A"), path)
        for kind, n in (("node", 3), ("edge", 2), ("subpath", 2))
        for k in range(n)
    ]
    after = {(r.variant.data["kind"], r.variant.data["index"]): r.variant.data["path_after"] for r in records[1:]}
    assert after["node", 1] == ["pulmonary hypoplasia ->[IS RISK FACTOR FOR]-> __", f"__ ->[HAS RISK FACTOR]-> {tail}"]
    assert after["edge", 1] == [f"pulmonary hypoplasia ->[IS RISK FACTOR FOR]-> {pphn}", f"{pphn} ->[__]-> {tail}"]
    assert after["subpath", 1] == [f"pulmonary hypoplasia ->[IS RISK FACTOR FOR]-> {pphn}"]  # the shared node stays
    e = explain(A.group(records, "kgrag-ex")["q"])
    assert e.influence == {"e1": 2, "e2": 1}
    assert e.for_user == (
        f"The most important condition for answering the question is {pphn}. It had the biggest impact on the result."
    )
    assert e.technical == (
        f"Removing {pphn} led to a different answer 2 times. Removing {tail} led to a different answer 1 time."
    )
    assert e.sources == ["article-27634.jsonl", "article-22355.jsonl"]


def test_subpath_rules_and_the_authors_chain():
    path = four_node_path()
    paper, authors = (enumerate_variants([path], "subpath", rule)[1]["data"] for rule in ("paper", "authors"))
    assert paper["path_after"] == ["N0 ->[R0]-> N1", "N2 ->[R2]-> N3"]
    assert paper["blanked"] == {"nodes": [], "edges": ["r1"]}  # N1 and N2 stay on their other lines
    assert authors["path_after"] == ["N0 ->[R0]-> __", "__ ->[__]-> __", "__ ->[R2]-> N3"]
    assert authors["blanked"] == {"nodes": ["n1", "n2"], "edges": ["r1"]} and authors["rule"] == "authors"
    assert paper["credited"] == authors["credited"] == ["n1", "n2"]
    chain = {**path, "format": "chain"}
    assert triplet_lines(chain) == ["N0->[R0]->N1->[R1]->N2->[R2]->N3"]
    assert enumerate_variants([chain], "subpath", "authors")[1]["data"]["path_after"] == [
        "N0->[R0]->__->[__]->__->[R2]->N3"
    ]
    assert enumerate_variants([chain], "subpath", "authors")[0]["data"]["path_after"] == [
        "__->[__]->__->[R1]->N2->[R2]->N3"
    ]
    assert enumerate_variants([chain], "subpath")[1]["data"]["path_after"] == ["N0->[R0]->N1", "N2->[R2]->N3"]
    first = enumerate_variants([path], "subpath")[0]["data"]
    assert first["blanked"] == {"nodes": ["n0"], "edges": ["r0"]}  # N0 was only on the dropped line
    assert [v["data"]["position_authors"] for v in enumerate_variants([path], "node")] == [0, 0.25, 0.5, 0.75]
    question, trace = (
        Question(id="q", question="?", answer="A"),
        Trace(question_id="q", system="kgrag-ex", artifacts={"kgrag": {"paths": [chain]}}),
    )
    variant = SubpathRemoval(rule="authors").variants(question, trace, random.Random(0))[1]
    perturbed = SubpathRemoval(rule="authors").perturb(question, trace, random.Random(0), variant=variant)
    assert triplet_lines(perturbed.artifacts["kgrag"]["paths"][0]) == ["N0->[R0]->__->[__]->__->[R2]->N3"]


def test_the_ragex_target_runs_the_authors_settings_and_prompt(kb):
    from provbench.testing import scripted_llm
    from provbench_plugins.papers.p001_kgrag_ex.ragex import RagExWindow, VectorRAG

    system = VectorRAG()
    assert (system.options.top_k, system.options.text_chars) == (1, 600)  # one chunk of at most 600 characters
    question = Question(id="q", question="What does fasting cause?", answer="A", choices=["night cough", "spleen"])
    llm = scripted_llm([{"answer": "A"}, {"answer": "B"}])
    trace = system.run(question, Environment(view=kb.view(), llm=llm))
    prompt = llm.backend.calls[0]["messages"][0]["content"]
    assert prompt.startswith("You are a medical assistant.") and "Paragraph:\nChunk 0: " in prompt
    assert "A. night cough" in prompt and trace.answer == "A" and len(trace.read_text_units) == 1
    assert trace.artifacts["context_words"] == len(("Chunk 0: " + trace.artifacts["passages"][0]["text"]).split())
    variant = RagExWindow().variants(question, trace, random.Random(0))[0]
    perturbed = RagExWindow().perturb(question, trace, random.Random(0), variant=variant)
    resumed = system.resume(question, Environment(view=kb.view(), llm=llm), perturbed)
    assert resumed.answer == "B" and "Chunk 0: " in llm.backend.calls[1]["messages"][0]["content"]


def tied_graph(folder, parallel: int):
    """The helper graph with ``parallel`` more "fasting IS RISK FACTOR FOR corvane fever" edges
    (rel:7 onwards) beside rel:0: that many + 1 shortest paths tie between the two."""
    from provbench.testing import schema_following_llm
    from provbench_plugins.kb_builders.medical.builder import MedicalKGBuilder
    from p001_helpers import write_inputs

    corpus, triples = write_inputs(folder / "in")
    extra = "fasting,Risk Factors,IS RISK FACTOR FOR,corvane fever,Diseases,a.txt,a_0\n"
    triples.write_text(triples.read_text() + extra * parallel)
    return MedicalKGBuilder(corpus=str(corpus), triples=str(triples)).build([], folder / "kb", schema_following_llm())


def test_a_tie_between_shortest_paths_goes_to_the_lowest_relation_ids(tmp_path):
    """The view sorts the shortest paths before it cuts to ``limit``: Kùzu finds the later of two
    parallel edges first, so a LIMIT inside the query returned rel:7, not rel:0."""
    kb = tied_graph(tmp_path, 1)
    try:
        (path,) = kb.view().shortest_paths("ent:fasting", "ent:corvane-fever", limit=1)
        assert [r.id for r in path.relations] == ["rel:0"]
    finally:
        kb.close()


def test_tied_shortest_paths_are_fetched_up_to_a_cap(tmp_path, monkeypatch):
    """Hubs multiply shortest paths: the view fetches at most max(limit, MAX_TIED_PATHS) of them
    (benchmarks/bench_shortest_paths.py measures the cap), sorted before ``limit`` cuts."""
    from provbench.kb import GraphView
    from provbench.kb import view as view_module

    kb = tied_graph(tmp_path, 5)
    try:
        view, fetched = GraphView(kb.store), []
        rows = kb.store.rows
        monkeypatch.setattr(kb.store, "rows", lambda q, p=None: fetched.append(len(found := rows(q, p))) or found)
        assert len(view.shortest_paths("ent:fasting", "ent:corvane-fever", limit=50)) == 6
        monkeypatch.setattr(view_module, "MAX_TIED_PATHS", 3)
        fetched.clear()
        (path,) = view.shortest_paths("ent:fasting", "ent:corvane-fever", limit=1)
        assert fetched[-1] == 3 and len(view.shortest_paths("ent:fasting", "ent:corvane-fever", limit=4)) == 4
        assert fetched[-1] == 4  # a limit above the cap fetches the limit
    finally:
        kb.close()
