"""Concept graphs from plain files, edge validity in the store and views, the curriculum loader and
the edge-invalidation interventions."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from provbench.errors import UserError
from provbench.model import Question, RetrievedItem, Trace
from provbench_plugins.datasets.curriculum.loader import CurriculumLoader
from provbench_plugins.interventions.edges import InvalidateRandomEdges, InvalidateUsedEdges, used_relations
from provbench_plugins.kb_builders.concepts.builder import ConceptGraphBuilder
from provbench_plugins.kb_builders.concepts.files import ConceptFileError, read_concepts, read_edges

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "datasets" / "curriculum-mini"


@pytest.fixture(scope="module")
def mini(curriculum_mini):
    return curriculum_mini


def test_curriculum_mini_loads_with_unanswerable_questions_marked(mini):
    questions, kb = mini
    assert len(questions) == 41
    unanswerable = [q for q in questions if q.metadata["answerable"] is False]
    assert unanswerable and all(q.category == "unanswerable" for q in unanswerable)
    assert {q.metadata["hops"] for q in questions if q.metadata["answerable"]} == {1, 2, 3, 4, 5, 6}
    stats = kb.stats()
    assert stats.entities == 184 and stats.relations == 770 and stats.communities > 1
    assert kb.build_info["invalidated_edges"] == 6
    assert kb.view().entity("ent:rag").aliases == ("RAG",)


def test_answers_of_the_mini_set_name_concepts_of_the_graph(mini):
    questions, kb = mini
    view = kb.view()
    for q in questions:
        if q.metadata["answerable"]:
            assert view.find_entity(q.answer) is not None, q.id


def test_unanswerable_scoring_rewards_abstention_only():
    loader = CurriculumLoader()
    q = Question(id="x", question="?", answer="", metadata={"answerable": False})
    assert loader.score_answer(q, None) == {"accuracy": 1.0}
    assert loader.score_answer(q, "Calibration") == {"accuracy": 0.0}


@pytest.mark.parametrize(
    "qid, prediction, right",
    [
        ("cm-01", "GraphRAG", True),
        ("cm-01", "graph RAG", True),
        ("cm-01", "The answer is GraphRAG.", True),
        ("cm-01", "Agentic GraphRAG", False),  # another concept whose name contains the gold one
        ("cm-12", "prompting", True),
        ("cm-12", "Few-Shot Prompting", False),  # an alias, and a name containing it
        ("cm-03", "fine tuning", True),
        ("cm-03", "the Fine-Tuning", True),  # spelled otherwise, still the concept
        ("cm-02", "LoRA", True),
        ("cm-02", "Low-Rank Adaptation or RLHF", False),  # two concepts name neither
        ("cm-02", "", False),
        ("cm-02", None, False),
        ("cm-01", "not GraphRAG", False),
        ("cm-01", "It is not GraphRAG.", False),  # a negation names nothing
        ("cm-06", "embedding", True),
        ("cm-06", "an embedding", True),  # singular and plural are one name
    ],
)
def test_answers_are_scored_by_the_concept_they_name(mini, qid, prediction, right):
    questions, _ = mini
    question = next(q for q in questions if q.id == qid)
    assert CurriculumLoader().score_answer(question, prediction) == {"accuracy": float(right)}


def test_invalidated_edges_are_stored_but_never_followed(mini):
    _, kb = mini
    view = kb.view()
    assert {"rel:44", "rel:45"} <= kb.store.invalidated_relations()
    assert "ent:graphrag" not in {nb.entity.id for nb in view.neighbors("ent:reranking")}
    assert view.relation("rel:44") is None and not view.relation_active("rel:44")
    assert "rel:44" not in set(view.relation_ids()) and "rel:21" in set(view.relation_ids())
    assert not view.shortest_paths("ent:context-window", "ent:rag", max_hops=1)


def test_neighbours_filter_by_relation_type(mini):
    view = mini[1].view()
    parts = view.neighbors("ent:rag", relation_types=["part_of"])
    assert {nb.entity.id for nb in parts} == {"ent:chunking", "ent:reranking"}
    assert view.neighbors("ent:rag", relation_types=[]) == []
    assert len(view.neighbors("ent:rag", relation_types=["part_of"], limit=1)) == 1


def test_a_view_can_invalidate_more_edges(mini):
    view = mini[1].view()
    narrowed = view.invalidate(["rel:20"])
    assert "ent:chunking" not in {nb.entity.id for nb in narrowed.neighbors("ent:rag")}
    assert "ent:chunking" in {nb.entity.id for nb in view.neighbors("ent:rag")}
    assert narrowed.hidden.summary()["invalidated"]["ids"] == ["rel:20"]
    assert "ent:chunking" not in {nb.entity.id for nb in narrowed.hide(entities=["ent:x"]).neighbors("ent:rag")}


def test_edge_invalidation_interventions(mini):
    view = mini[1].view()
    baseline = Trace(question_id="q", system="any", retrieved=[RetrievedItem(kind="relationship", id="rel:20")])
    baseline.citations.relationships = ["rel:21", "rel:999"]  # rel:999 is unknown: ignored
    assert used_relations(baseline) == ["rel:20", "rel:21", "rel:999"]
    question = Question(id="q", question="?", answer="")
    used = InvalidateUsedEdges().make_view(view, question, baseline, random.Random(0))
    assert {nb.entity.id for nb in used.neighbors("ent:rag", relation_types=["part_of"])} == set()
    control = InvalidateRandomEdges(repeats=2).make_view(view, question, baseline, random.Random(0))
    drawn = control.hidden.invalidated
    assert len(drawn) == 2 and not drawn & {"rel:20", "rel:21"} and not drawn & {"rel:44", "rel:45"}
    with pytest.raises(UserError, match="repeats"):
        InvalidateRandomEdges(repeats=0)


@pytest.mark.parametrize("suffix,line", [(".csv", 3), (".jsonl", 2)])  # a CSV's line 1 is its header
def test_bad_files_name_file_line_and_field(tmp_path, suffix, line):
    concepts = tmp_path / f"concepts{suffix}"
    if suffix == ".csv":
        concepts.write_text("id,name\na,Alpha\nb,\n")
    else:
        concepts.write_text(json.dumps({"id": "a", "name": "Alpha"}) + "\n" + json.dumps({"id": "b"}) + "\n")
    with pytest.raises(ConceptFileError, match=rf"concepts{suffix}:{line}: field 'name' is required"):
        read_concepts(concepts)


def test_bad_edges_are_located(tmp_path):
    edges = tmp_path / "edges.csv"
    edges.write_text("source,relation,target,invalidated_at\na,related,b,\na,related,zz,\n")
    with pytest.raises(ConceptFileError, match=r"edges.csv:3: field 'target': unknown concept id 'zz'"):
        read_edges(edges, {"a", "b"})
    edges.write_text("source,relation,target,valid_from,invalidated_at\na,related,b,2025-01-01,2024-01-01\n")
    with pytest.raises(ConceptFileError, match=r"edges.csv:2: field 'invalidated_at' is before 'valid_from'"):
        read_edges(edges, {"a", "b"})
    edges.write_text("source,relation,target,valid_from\na,related,b,yesterday\n")
    with pytest.raises(ConceptFileError, match=r"edges.csv:2: field 'valid_from' must be an ISO date"):
        read_edges(edges, {"a", "b"})
    # a date beside a zoned timestamp compares (a stamp without a zone is UTC), never a bare TypeError
    edges.write_text(
        "source,relation,target,valid_from,invalidated_at\na,related,b,2025-01-01T00:00:00+00:00,2024-01-01\n"
    )
    with pytest.raises(ConceptFileError, match=r"edges.csv:2: field 'invalidated_at' is before 'valid_from'"):
        read_edges(edges, {"a", "b"})
    edges.write_text(
        "source,relation,target,valid_from,recorded_at,invalidated_at\n"
        "a,related,b,2024-01-01,2024-01-02T09:00:00+01:00,2025-03-01T00:00:00Z\n"
    )
    (edge,) = read_edges(edges, {"a", "b"})
    assert (edge.valid_from, edge.recorded_at, edge.invalidated_at) == (
        "2024-01-01",
        "2024-01-02T09:00:00+01:00",
        "2025-03-01T00:00:00Z",
    )
    edges.write_text("source,relation,target,recorded_at\na,related,b,someday\n")
    with pytest.raises(ConceptFileError, match=r"edges.csv:2: field 'recorded_at' must be an ISO date"):
        read_edges(edges, {"a", "b"})


def test_loader_errors_are_located(tmp_path):
    (tmp_path / "questions.jsonl").write_text(
        '{"id": "a", "question": "?", "answer": "x"}\n{"id": "b", "question": "?"}\n'
    )
    with pytest.raises(UserError, match=r"questions.jsonl:2: field 'answer'"):
        CurriculumLoader().load(tmp_path)


@pytest.mark.parametrize(
    "row, problem",
    [
        ({"answer": "Nobody"}, r"field 'answer': 'Nobody' is not the name or alias of one concept of concepts.csv"),
        ({"chain_from": "a", "chain": ["e1", "e9"]}, r"field 'chain': edge 'e9': unknown edge id"),
        ({"chain_from": "b", "chain": ["e2"]}, r"field 'chain': edge 'e2': does not touch 'b'"),
        ({"chain_from": "a", "chain": ["e3"]}, r"field 'chain': edge 'e3' is invalidated"),
        ({"chain_from": "c", "chain": ["e2"]}, r"field 'chain' never reaches the answer 'Beta'"),
        ({"chain_from": None}, r"fields 'chain_from' and 'chain' go together"),  # None: the field left out
        ({"aliases": ["B"]}, r"field 'aliases': a concept's aliases belong in the concepts file"),
        ({"stale_answer": "B"}, r"field 'stale_answer' names the answer itself"),
    ],
)
def test_gold_chain_and_answer_errors_are_located(tmp_path, row, problem):
    (tmp_path / "concepts.csv").write_text("id,name,aliases\na,Alpha,\nb,Beta,B\nc,Gamma,\n")
    (tmp_path / "edges.csv").write_text(
        "id,source,relation,target,invalidated_at\ne1,a,next,b,\ne2,c,next,a,\ne3,a,next,c,2025-01-01\n"
    )
    good = {"id": "q0", "question": "?", "answer": "Beta", "chain_from": "a", "chain": ["e1"]}
    bad = {k: v for k, v in {**good, "id": "q1", **row}.items() if v is not None}
    (tmp_path / "questions.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(UserError, match=r"questions.jsonl:2: " + problem):
        CurriculumLoader().load(tmp_path)


def test_builder_reuses_a_finished_kb_and_refuses_other_inputs(mini, tmp_path):
    questions, kb = mini
    again = ConceptGraphBuilder().build(questions, kb.path)
    again.close()
    other = tmp_path / "concepts.csv"
    other.write_text("id,name\na,Alpha\n")
    edges = tmp_path / "edges.csv"
    edges.write_text("source,relation,target\n")
    with pytest.raises(UserError, match="other inputs"):
        ConceptGraphBuilder(concepts=str(other), edges=str(edges)).build([], kb.path)


def test_build_time_options_count_and_build_info_has_the_shared_layout(tmp_path):
    concepts, edges = (next(MINI.glob(f"{kind}.*")) for kind in ("concepts", "edges"))
    kb = ConceptGraphBuilder().build([], tmp_path / "kb", concepts=str(concepts), edges=str(edges), communities=False)
    try:
        info = kb.build_info
        assert info["counts"]["entities"] == 184 and info["counts"]["communities"] == 0 == kb.stats().communities
        assert info["problems"] == [] and info["inputs"]["builder"].startswith("concept-graph/")
        assert "llm" not in info and "extraction" not in info  # no LLM: no LLM sections
    finally:
        kb.close()
