"""The LlamaIndex view store and index (provbench.integrations.llamaindex) on the tiny KB: every read
answers what the view shows, none of the Kùzu store's quirks, and LlamaIndex's stock retrievers
find question-relevant results (facts of the tiny KB: provbench.testing.kb)."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core.graph_stores.types import TRIPLET_SOURCE_KEY, ChunkNode, EntityNode
from llama_index.core.indices.property_graph import LLMSynonymRetriever, VectorContextRetriever
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from provbench.integrations.llamaindex import (
    ProvbenchEmbedding,
    ViewStoreRefused,
    llamaindex_embedding,
    llamaindex_llm,
    property_graph_index,
    property_graph_store,
)
from provbench.testing import scripted_llm


@pytest.fixture(scope="module")
def kb(shared_tiny_kb):
    return shared_tiny_kb


def names(triplets):
    return sorted(f"{s.name} -{r.label}-> {t.name}" for s, r, t in triplets)


def triplet_texts(nodes):
    return {line for n in nodes for line in n.node.get_content().splitlines() if " -> " in line}


# -- reads -------------------------------------------------------------------------------------------------


def test_get_takes_ids_or_names_and_hides_what_the_view_hides(kb):
    store = property_graph_store(kb.view())
    [vale] = store.get(ids=["ent:orin-vale"])
    assert isinstance(vale, EntityNode) and vale.name == vale.id == "Orin Vale" and vale.label == "PERSON"
    assert vale.properties == {
        "entity_id": "ent:orin-vale",
        "description": "Orin Vale is a film director born in Dunmere.",
    }
    assert [n.name for n in store.get(ids=["Orin vale", "MARA HOLT", "nobody"])] == ["Orin Vale", "Mara Holt"]
    [unit] = store.get(ids=["tu:3"])
    assert isinstance(unit, ChunkNode) and unit.text == "Dunmere is a coastal town in Norland."
    assert store.get(ids=[]) == []  # the Kùzu store returns every node for an empty list
    assert len(store.get()) == 10 + 6
    assert [n.name for n in store.get(properties={"entity_id": "ent:norland"})] == ["Norland"]

    hidden = property_graph_store(kb.view().hide(entities=["ent:orin-vale"], block_text_of=["ent:norland"]))
    assert hidden.get(ids=["ent:orin-vale", "Orin Vale", "orin vale"]) == []
    assert hidden.get(ids=["tu:3"]) == [] and hidden.get_llama_nodes(["tu:3", "tu:4"])[0].node_id == "tu:4"
    assert len(hidden.get()) == 9 + 5


def test_masked_metadata_stays_masked(kb):
    store = property_graph_store(kb.view().hide(hide_metadata_of=["ent:dunmere"]))
    [dunmere] = store.get(ids=["ent:dunmere"])
    assert dunmere.label == "entity" and "description" not in dunmere.properties
    nodes, _ = store.vector_query(VectorStoreQuery(query_str="a coastal town", similarity_top_k=10))
    assert all("coastal" not in str(n) for n in nodes)


def test_rel_map_follows_both_directions_from_the_given_nodes_only(kb):
    store = property_graph_store(kb.view())
    assert store.get_rel_map([]) == []  # the Kùzu store returns the whole graph here
    [dunmere] = store.get(ids=["ent:dunmere"])
    triplets = store.get_rel_map([dunmere], depth=1)
    assert names(triplets) == [
        "Aster River -flows_through-> Dunmere",
        "Dunmere -located_in-> Norland",
        "Kestrel Bridge -located_in-> Dunmere",
        "Mara Holt -mayor_of-> Dunmere",
        "Orin Vale -born_in-> Dunmere",
    ]  # 1 outgoing, 4 incoming
    born = next(t for t in triplets if t[1].label == "born_in")
    source, relation, target = born
    assert relation.properties == {"relation_id": "rel:6", TRIPLET_SOURCE_KEY: "tu:0"}
    assert source.properties[TRIPLET_SOURCE_KEY] == "tu:0"  # where retrievers look for the text
    assert target.properties["entity_id"] == "ent:dunmere" and TRIPLET_SOURCE_KEY not in target.properties
    assert (relation.source_id, relation.target_id) == ("Orin Vale", "Dunmere")
    assert len(store.get_rel_map([dunmere], depth=2)) == 9 and len(store.get_rel_map([dunmere], depth=2, limit=3)) == 3
    assert "Dunmere -located_in-> Norland" not in names(
        store.get_rel_map([dunmere], depth=1, ignore_rels=["located_in"])
    )


def test_hidden_and_invalidated_relations_never_come_back(kb):
    view = kb.view().hide(entities=["ent:mara-holt"], relations=["rel:8"]).invalidate(["rel:7"])
    store = property_graph_store(view)
    [dunmere] = store.get(ids=["Dunmere"])
    assert (
        names(store.get_rel_map([dunmere], depth=1))
        == names(store.get_triplets(entity_names=["Dunmere"]))
        == ["Kestrel Bridge -located_in-> Dunmere", "Orin Vale -born_in-> Dunmere"]
    )
    assert names(store.get_triplets(relation_names=["mayor_of", "flows_through", "located_in"])) == [
        "Kestrel Bridge -located_in-> Dunmere"
    ]
    assert store.get_triplets() == []
    assert "mayor_of" not in store.get_schema()["relation_labels"]
    assert "mayor_of" in property_graph_store(kb.view()).get_schema()["relation_labels"]


def test_a_triplet_gets_no_source_text_the_view_blocks(kb):
    store = property_graph_store(kb.view().hide(text_units=["tu:0"]))
    [vale] = store.get(ids=["ent:orin-vale"])
    born = next(t for t in store.get_rel_map([vale], depth=1) if t[1].label == "born_in")
    assert TRIPLET_SOURCE_KEY not in born[0].properties and TRIPLET_SOURCE_KEY not in born[1].properties


def test_vector_query_scores_are_the_views_cosines(kb):
    view = kb.view().hide(entities=["ent:glass-harbor"])
    store = property_graph_store(view)
    vector = llamaindex_embedding().get_query_embedding("Which film did Orin Vale direct?")
    nodes, scores = store.vector_query(VectorStoreQuery(query_embedding=vector, similarity_top_k=3))
    hits = view.search_entities("Which film did Orin Vale direct?", k=3)
    assert [n.properties["entity_id"] for n in nodes] == [h.id for h in hits]
    assert scores == pytest.approx([h.score for h in hits]) and all(s > 0.1 for s in scores)
    with pytest.raises(ValueError, match="384"):
        store.vector_query(VectorStoreQuery(query_embedding=[1.0, 0.0], similarity_top_k=3))


def test_raw_cypher_and_writes_are_refused(kb):
    store = property_graph_store(kb.view())
    with pytest.raises(ViewStoreRefused, match="structured_query.*get_rel_map"):
        store.structured_query("MATCH (e:Entity) RETURN e.name")
    with pytest.raises(ViewStoreRefused, match="read-only"):
        store.upsert_nodes([EntityNode(name="Intruder")])
    with pytest.raises(ViewStoreRefused, match="read-only"):
        store.delete(ids=["ent:orin-vale"])
    assert not store.supports_structured_queries and store.supports_vector_queries


def test_async_reads_give_the_same_nodes(kb):
    store = property_graph_store(kb.view())
    nodes = asyncio.run(store.aget_llama_nodes(["tu:0", "ent:orin-vale"]))  # LlamaIndex's default drops them
    assert [n.node_id for n in nodes] == ["tu:0"] and nodes[0].get_content().startswith("Glass Harbor is")


def test_knowledge_base_store_and_index_read_through_the_full_view(kb):
    assert kb.property_graph_store.view.hidden.empty
    assert type(kb.index.property_graph_store).__name__ == "ViewPropertyGraphStore"


# -- LlamaIndex's stock retrievers ---------------------------------------------------------------------


class QueriesOnly(ProvbenchEmbedding):
    """Embeds queries only: retrieval must use the knowledge base's stored entity vectors."""

    def _get_text_embeddings(self, texts):
        raise AssertionError(f"re-embedded {texts[:2]}")

    def _get_text_embedding(self, text):
        raise AssertionError(f"re-embedded {text!r}")


def test_vector_context_retriever_finds_what_each_question_is_about(kb):
    index = property_graph_index(kb.view(), embed_model=QueriesOnly())
    retriever = VectorContextRetriever(
        index.property_graph_store, embed_model=QueriesOnly(), similarity_top_k=2, include_text=False
    )
    river = triplet_texts(retriever.retrieve("Who is the mayor of the town the Aster River flows through?"))
    studio = triplet_texts(retriever.retrieve("Which studio produced the film Glass Harbor?"))
    assert "Mara Holt -> mayor_of -> Dunmere" in river and "Aster River -> flows_through -> Dunmere" in river
    assert "Lumen Studios -> produced -> Glass Harbor" in studio
    assert not river & studio


def test_synonym_retriever_matches_names_not_slugs(kb):
    index = property_graph_index(kb.view())
    llm = llamaindex_llm(scripted_llm(["kestrel BRIDGE^ bridges ^norland"]))
    retriever = LLMSynonymRetriever(index.property_graph_store, llm=llm, include_text=False)
    assert triplet_texts(retriever.retrieve("What crosses the river?")) == {
        "Kestrel Bridge -> crosses -> Aster River",
        "Kestrel Bridge -> located_in -> Dunmere",
        "Dunmere -> located_in -> Norland",
    }


def test_include_text_returns_the_linked_text_units(kb):
    index = property_graph_index(kb.view())
    retriever = LLMSynonymRetriever(
        index.property_graph_store, llm=llamaindex_llm(scripted_llm(["Norland"])), include_text=True
    )
    [node] = retriever.retrieve("Where is Dunmere?")
    assert node.node.node_id == "tu:3"
    assert node.node.get_content() == (
        "Here are some facts extracted from the provided text:\n\n"
        "Dunmere -> located_in -> Norland\n\nDunmere is a coastal town in Norland."
    )


def test_as_retriever_with_defaults_uses_both_stock_retrievers(kb):
    index = property_graph_index(kb.view(), llm=scripted_llm(["Tessa Quill", "Mars"]))
    nodes = index.as_retriever().retrieve("Who starred in Glass Harbor?")
    assert {n.node.node_id for n in nodes} >= {"tu:1"}  # Tessa Quill's relations, with their text
    assert any("Tessa Quill -> starred_in -> Glass Harbor" in n.node.get_content() for n in nodes)
    other = index.as_retriever(include_text=False).retrieve("What is the capital of Mars?")
    assert triplet_texts(other) != triplet_texts(nodes)  # not the same triplets for any question


def test_knowledge_base_index_retrieves_by_question(kb, monkeypatch):
    """The KB's own index: its vector retriever finds what a question is about, and a synonym step
    that finds no keyword adds nothing (LlamaIndex's Kùzu store returned the whole graph)."""
    from llama_index.core import Settings

    monkeypatch.setattr(Settings, "_llm", llamaindex_llm(scripted_llm(["", ""])))
    retriever = kb.index.as_retriever(include_text=False, similarity_top_k=1)
    mayor = triplet_texts(retriever.retrieve("Who is Mara Holt?"))
    film = triplet_texts(retriever.retrieve("What did Tessa Quill star in?"))
    assert mayor == {"Mara Holt -> mayor_of -> Dunmere"}
    assert "Tessa Quill -> starred_in -> Glass Harbor" in film and "Mara Holt -> mayor_of -> Dunmere" not in film


def test_retrieved_nodes_map_back_to_every_relation_they_show(tmp_path, on_graph_store):
    """Two relations with one label between the same two names render as one line: both are in it;
    a node rendered with its properties maps as well."""
    from provbench.kb import KnowledgeBase
    from provbench.kb.types import Entity, Relation, TextUnit

    kb = KnowledgeBase.create(tmp_path / "kb")
    kb.add_text_units([TextUnit(id="tu:1", text="Ada knows Bo.", document_id="d")])
    kb.add_entities([Entity(id="ent:ada", name="Ada"), Entity(id="ent:bo", name="Bo")])
    kb.add_relations(
        [Relation(id=f"rel:{n}", source="ent:ada", target="ent:bo", label="knows", text_unit_id="tu:1") for n in (1, 2)]
    )
    kb.finalize({"builder": "test"}, embed=False)
    store = property_graph_store(kb.view())
    [ada] = store.get(ids=["Ada"])
    lines = {f"{s.id} -> {r.id} -> {t.id}" for s, r, t in store.get_rel_map([ada])}
    assert lines == {"Ada -> knows -> Bo"}
    found = store.evidence_in(TextNode(text="Ada -> knows -> Bo"))
    assert found.relations == ["rel:1", "rel:2"] and found.entities == ["ent:ada", "ent:bo"]
    with_properties = [f"{s!s} -> {r!s} -> {t!s}" for s, r, t in store.get_rel_map([ada])]
    assert store.evidence_in(TextNode(text=with_properties[1])).relations == ["rel:2"]
    assert not store.evidence_in(TextNode(text="Ada -> met -> Bo"))
    kb.close()
