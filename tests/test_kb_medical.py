"""The medical-kg builder: LLM triples with the paper's labels, edges keeping chunk and file,
graph metrics at build time, Table 3 statistics, reuse, and located errors."""

from __future__ import annotations

import json

import pytest

from p001_helpers import write_inputs
from provbench.errors import UserError
from provbench.testing import schema_following_llm
from provbench_plugins.kb_builders.medical import graph_metrics
from provbench_plugins.kb_builders.medical.builder import MedicalKGBuilder
from provbench_plugins.kb_builders.medical.corpus import read_chunks
from provbench_plugins.kb_builders.medical.prompts import LABELS


def test_llm_extraction_builds_a_labelled_graph_and_reuses_it(tmp_path):
    corpus, _ = write_inputs(tmp_path / "in")
    llm = schema_following_llm(cache_dir=tmp_path / "llm")
    kb = MedicalKGBuilder(corpus=str(corpus)).build([], tmp_path / "kb", llm)
    try:
        view, info = kb.view(), kb.build_info
        assert info["llm"]["calls"] == info["extraction"]["text_units"] == info["chunks"] == 3
        assert info["problems"] == [] and info["paper"]["counts"]["entities"] == 53411
        entities = [view.entity(e) for e in view.entity_ids()]
        assert entities and all(e.label in LABELS for e in entities)
        metrics = graph_metrics.load(tmp_path / "kb")
        assert set(metrics["degree"]) == {e.id for e in entities}
        rel = view.relation(next(iter(metrics["betweenness"])))
        assert rel.text_unit_id.startswith("tu:") and view.text_unit(rel.text_unit_id).document_id.endswith(".txt")
        graph = info["graph"]
        assert graph["nodes"] == len(entities) and graph["edges"] == len(metrics["betweenness"])
        assert sum(graph["label_shares_percent"].values()) == pytest.approx(100, abs=0.1)
        assert info["paper_001_graph"]["nodes"] == 53411
    finally:
        kb.close()
    calls = len(llm.backend.calls)
    again = MedicalKGBuilder(corpus=str(corpus)).build([], tmp_path / "kb", llm)
    again.close()
    assert calls == 3 and len(llm.backend.calls) == calls  # reused: no new extraction


def test_triples_file_graph_statistics(tmp_path):
    corpus, triples = write_inputs(tmp_path / "in")
    kb = MedicalKGBuilder(corpus=str(corpus), triples=str(triples)).build([], tmp_path / "kb", schema_following_llm())
    try:
        graph = kb.build_info["graph"]
        assert (graph["nodes"], graph["edges"]) == (7, 7)
        assert graph["mean_total_degree"] == pytest.approx(2.0, abs=1e-3)
        assert graph["label_shares_percent"]["Diseases"] == pytest.approx(100 * 3 / 7, abs=0.01)
        table3 = kb.build_info["table3 (this KB / paper 001)"]
        assert table3["nodes"] == "7 / 53,411" and table3["Diseases %"] == "42.86 / 30.73"
        assert table3["Medications %"] == "0.00 / 6.83" and table3["mean_in_degree"] == "1.000 / 2.495"
        assert graph["corpus"] == {
            "documents": 3,
            "chunks": 3,
            "mean_chunks_per_document": 1.0,
            "std_chunks_per_document": 0.0,
            "min_chunks_per_document": 1,
            "max_chunks_per_document": 1,
        }
        assert table3["documents"] == "3 / 9,552" and table3["text chunks"] == "3 / 445,454"
        assert table3["chunks per document: mean"] == "1.00 / 46.63" and table3["chunks per document: max"] == "1 / 556"
    finally:
        kb.close()
    with pytest.raises(UserError, match="other inputs"):
        MedicalKGBuilder(corpus=str(corpus)).build([], tmp_path / "kb", schema_following_llm())


def test_bad_inputs_get_located_errors(tmp_path):
    corpus, triples = write_inputs(tmp_path / "in")
    triples.write_text(triples.read_text().replace("b_0", "zz_9", 1))
    with pytest.raises(UserError, match=r"triple #3 .*ChunkID: 'zz_9' is not a chunk"):
        MedicalKGBuilder(corpus=str(corpus), triples=str(triples)).build([], tmp_path / "kb", schema_following_llm())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "a_0", "title": "t", "content": "ok"}) + "\n" + json.dumps({"title": "x"}) + "\n")
    with pytest.raises(UserError, match=r"bad\.jsonl:2: record #2: field id"):
        read_chunks(bad)
    with pytest.raises(UserError, match=r"bogus=1.*known options: .*corpus"):
        MedicalKGBuilder(corpus=str(corpus), bogus=1).build([], tmp_path / "kb2", schema_following_llm())


def test_text_files_are_chunked_with_their_file_as_source(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "heart.txt").write_text("First paragraph.\n\n" + "x" * 150 + "\n\nThird.")
    chunks = read_chunks(tmp_path / "docs", chunk_chars=100)
    assert [c.source for c in chunks] == ["heart.txt"] * 3 and chunks[0].id == "heart_0"


def test_corpus_half_of_table3_counts_chunks_per_document():
    summary = graph_metrics.corpus_summary(["a.jsonl"] * 3 + ["b.jsonl"] + ["c.jsonl"] * 2)
    assert summary == {
        "documents": 3,
        "chunks": 6,
        "mean_chunks_per_document": 2.0,
        "std_chunks_per_document": 0.82,
        "min_chunks_per_document": 1,
        "max_chunks_per_document": 3,
    }
    assert graph_metrics.corpus_summary([])["documents"] == 0


def test_authors_chunk_ids_are_sha256_of_the_chunk_text_and_source_files_are_kept(tmp_path):
    import csv
    import hashlib

    from p001_helpers import CHUNKS

    corpus, triples = write_inputs(tmp_path / "in")
    digest = {c["id"]: hashlib.sha256(c["content"].encode("utf-8")).hexdigest() for c in CHUNKS}
    with triples.open("w", newline="") as f:  # the authors' form: ChunkID = sha256(chunk text)
        writer = csv.writer(f)
        writer.writerow(["Entity1", "Label1", "Relationship", "Entity2", "Label2", "SourceFilename", "ChunkID"])
        writer.writerow(
            ["fasting", "Risk Factors", "CAUSES", "night cough", "Symptoms", "article-7.jsonl", digest["c_0"]]
        )
        writer.writerow(["mirel disease", "Diseases", "AFFECTS", "spleen", "Body Parts", "article-9.jsonl", "b_0"])
        writer.writerow(["spleen", "Body Parts", "PART OF", "abdomen", "Body Parts", "article-9.jsonl", ""])
    kb = MedicalKGBuilder(corpus=str(corpus), triples=str(triples)).build([], tmp_path / "kb", schema_following_llm())
    try:
        view = kb.view()
        assert view.relation("rel:0").text_unit_id == "tu:c_0"  # matched by the text's digest
        assert view.relation("rel:1").text_unit_id == "tu:b_0"  # matched by id
        assert view.relation("rel:2").text_unit_id is None
        sources = graph_metrics.load(tmp_path / "kb")["relation_sources"]
        assert sources == {"rel:0": "article-7.jsonl", "rel:1": "article-9.jsonl", "rel:2": "article-9.jsonl"}
    finally:
        kb.close()
    triples.write_text(triples.read_text().replace(digest["c_0"], "0" * 64))
    with pytest.raises(UserError, match=r"triple #1 .*ChunkID: '0{64}' is not a chunk.*sha256"):
        MedicalKGBuilder(corpus=str(corpus), triples=str(triples), overwrite=True).build(
            [], tmp_path / "kb2", schema_following_llm()
        )


def test_failed_and_bad_replies_are_counted_and_a_dead_model_stops_the_build(tmp_path):
    from provbench.kb import KnowledgeBase
    from provbench.testing import scripted_llm

    corpus, _ = write_inputs(tmp_path / "in")
    good = json.dumps(
        {
            "triples": [
                {
                    "head": "Asthma",
                    "head_label": "Diseases",
                    "relation": "CAUSES",
                    "tail": "Wheezing",
                    "tail_label": "Symptoms",
                }
            ]
        }
    )
    llm = scripted_llm([ConnectionError("down"), "not json at all", good])
    kb = MedicalKGBuilder(corpus=str(corpus), max_workers=1).build([], tmp_path / "kb", llm)
    try:
        info = kb.build_info
        assert (info["extraction"]["failed_calls"], info["extraction"]["invalid_outputs"]) == (1, 1)
        assert info["llm"]["failed"] == 1 and kb.stats().relations == 1
        assert any("1 extraction call failed" in p for p in info["problems"])
    finally:
        kb.close()
    dead = scripted_llm([ConnectionError("down")] * 3)
    with pytest.raises(UserError, match="every LLM call to .* failed"):
        MedicalKGBuilder(corpus=str(corpus)).build([], tmp_path / "dead", dead)
    assert not KnowledgeBase.is_complete(tmp_path / "dead")


def test_every_medical_mini_gold_path_is_in_the_kb_the_builder_makes(tmp_path):
    """Each gold triple is a relation of the graph built from the bundled corpus and triples,
    between the entities it names, with its label; an ordered chain walks its entities in order."""
    from conftest import REPO
    from provbench_plugins.datasets.medmcqa.loader import MedMCQALoader
    from provbench_plugins.kb_builders.medical.builder import entity_id

    folder = REPO / "datasets" / "medical-mini"
    kb = MedicalKGBuilder(corpus=str(folder / "corpus.jsonl"), triples=str(folder / "kg_triples.csv")).build(
        [], tmp_path / "kb", schema_following_llm()
    )
    try:
        view = kb.view()
        edges = {}
        for eid in view.entity_ids():
            for n in view.neighbors(eid, direction="out"):
                edges[(eid, n.relation.label, n.entity.id)] = n.relation.id
        questions = MedMCQALoader().load(folder / "dev.jsonl")
        assert questions and all(q.gold for q in questions)
        for q in questions:
            for t in q.gold.triples:
                assert (entity_id(t.subject), t.relation, entity_id(t.object)) in edges, (q.id, t)
                assert view.find_entity(t.subject).name == t.subject and view.find_entity(t.object).name == t.object
            if q.gold.ordered:
                walk = [entity_id(e) for e in q.gold.entities]
                for t, (a, b) in zip(q.gold.triples, zip(walk, walk[1:])):
                    assert {entity_id(t.subject), entity_id(t.object)} == {a, b}
                (path,) = view.shortest_paths(walk[0], walk[-1], limit=1)
                assert len(path.relations) == len(q.gold.triples)  # the gold chain is a shortest path
    finally:
        kb.close()


def test_the_authors_chunker_extraction_rules_and_unmatched_chunks(tmp_path):
    import csv
    import hashlib

    from provbench_plugins.kb_builders.medical.prompts import AUTHORS_LABELS, AUTHORS_RELATIONS

    corpus = tmp_path / "corpus.jsonl"
    body = " ".join(f"Sentence {i} says that fasting can cause night cough in adults." for i in range(30))
    corpus.write_text(
        json.dumps({"id": "art_0", "title": "Fasting", "content": body[:900], "source": "article-1.jsonl"})
        + "\n"
        + json.dumps({"id": "art_1", "title": "Fasting", "content": body[900:], "source": "article-1.jsonl"})
        + "\n"
    )
    chunks = read_chunks(corpus, chunking="authors")
    assert len(chunks) > 3 and all(len(c.text) <= 600 for c in chunks)
    assert chunks[0].text == "Fasting"  # the title, then "\n\n": too long together, so a chunk of its own
    assert all(
        c.id == hashlib.sha256(c.text.encode("utf-8")).hexdigest() and c.source == "article-1.jsonl" for c in chunks
    )
    assert chunks[1].text[-60:] in chunks[2].text  # neighbours overlap (up to 100 characters)

    llm = schema_following_llm()
    kb = MedicalKGBuilder(corpus=str(corpus), preset="authors", max_chunks=2).build([], tmp_path / "kb", llm)
    try:
        schema = llm.backend.calls[0]["schema"]["properties"]["triples"]
        assert "maxItems" not in schema and schema["items"]["properties"]["relation"]["enum"] == list(AUTHORS_RELATIONS)
        assert len(AUTHORS_RELATIONS) == 19 and len(AUTHORS_LABELS) == 7
        view = kb.view()
        assert kb.build_info["chunks"] == len(chunks) and kb.build_info["options"]["chunking"] == "authors"
        assert {view.entity(e).label for e in view.entity_ids()} <= set(AUTHORS_LABELS)
    finally:
        kb.close()

    corpus, triples = write_inputs(tmp_path / "in")
    with triples.open("a", newline="") as f:  # a triple of the authors' arch_kg.csv from another cut of the corpus
        csv.writer(f).writerow(
            ["spleen", "Body Parts**", "PART_OF", "abdomen", "Body Parts", "article-5.jsonl", "f" * 64]
        )
    with pytest.raises(UserError, match="unmatched_chunks: keep"):
        MedicalKGBuilder(corpus=str(corpus), triples=str(triples)).build([], tmp_path / "kb2", schema_following_llm())
    kb = MedicalKGBuilder(corpus=str(corpus), triples=str(triples), unmatched_chunks="keep").build(
        [], tmp_path / "kb3", schema_following_llm()
    )
    try:
        kept = kb.view().relation("rel:7")
        assert (
            kept.label == "PART_OF"
            and kept.text_unit_id is None
            and kb.view().entity("ent:spleen").label == "Body Parts"
        )
        assert graph_metrics.load(tmp_path / "kb3")["relation_sources"]["rel:7"] == "article-5.jsonl"
    finally:
        kb.close()
