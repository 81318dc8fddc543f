"""Knowledge base on Kùzu and graph views: persistence, every view method, every hiding mode."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from provbench.testing.kb import FILM_MEMBERS, TINY_BUILD_INFO, TOWN_MEMBERS, build_tiny_kb
from provbench.kb import GraphView, KBError, KnowledgeBase, ViewFilter
from provbench.kb.types import Entity, KBStats, Relation, TextUnit

TINY_STATS = KBStats(documents=2, text_units=6, entities=10, relations=12, communities=2)


@pytest.fixture(scope="session")
def embedding_model():
    """The embedding model, loaded once for the session (the KB caches it per process too)."""
    from provbench.kb.embeddings import embedding_model as load

    return load()


pytestmark = pytest.mark.usefixtures("on_graph_store")  # every test runs on each graph database


@pytest.fixture(scope="session")
def tiny_kb(tmp_path_factory, embedding_model, graph_store):
    from provbench.kb.backends import default_graph_store

    with default_graph_store(graph_store):
        kb = build_tiny_kb(tmp_path_factory.mktemp(f"tiny-{graph_store}") / "kb")
    yield kb
    kb.close()


@pytest.fixture
def view(tiny_kb) -> GraphView:
    return tiny_kb.view()


def small_kb(path: Path, *, entities, relations=(), units=(), finalize=True) -> KnowledgeBase:
    """A KB from the given records, with random vectors (no model): for graph-only tests."""
    kb = KnowledgeBase.create(path)
    kb.add_text_units(units)
    kb.add_entities(entities)
    kb.add_relations(relations)
    kb.detect_communities()
    if finalize:
        kb.finalize({"test": True}, embed=False)
    return kb


def neighbour_ids(view: GraphView, entity_id: str, direction: str = "both") -> set[tuple[str, str, str]]:
    return {(n.direction, n.relation.id, n.entity.id) for n in view.neighbors(entity_id, direction=direction)}


# -- persistence -------------------------------------------------------------------------------------------


def test_tiny_kb_stats_and_build_info(tiny_kb):
    assert tiny_kb.stats() == TINY_STATS
    assert tiny_kb.view().stats() == TINY_STATS
    assert tiny_kb.build_info == TINY_BUILD_INFO
    assert KnowledgeBase.is_complete(tiny_kb.path)


def test_reopen_read_only_without_rebuild_or_model(tmp_path, embedding_model):
    """A fresh process reopens a finished KB, reads the graph, and never loads the embedding model."""
    build_tiny_kb(tmp_path / "kb").close()
    script = f"""
import sys
from provbench.kb import KnowledgeBase
import provbench.kb.embeddings as emb
kb = KnowledgeBase.open({str(tmp_path / "kb")!r}, read_only=True)
other = KnowledgeBase.open({str(tmp_path / "kb")!r}, read_only=True)  # read-only openers coexist
view = kb.view()
assert kb.stats().entities == 10 and other.stats().relations == 12
assert view.entity("ent:orin-vale").name == "Orin Vale"
assert len(view.neighbors("ent:dunmere")) == 5
assert emb._model is None and "sentence_transformers" not in sys.modules
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")
    reopened = build_tiny_kb(tmp_path / "kb")  # a finished KB is reused, not rebuilt
    assert reopened.stats() == TINY_STATS
    reopened.close()


def test_is_complete_and_open_refuse_unfinished(tmp_path):
    path = tmp_path / "kb"
    assert not KnowledgeBase.is_complete(path)
    kb = small_kb(path, entities=[Entity(id="e:1", name="One")], finalize=False)
    assert not KnowledgeBase.is_complete(path)
    kb.close()
    with pytest.raises(KBError, match="not finished"):
        KnowledgeBase.open(path)
    kb = KnowledgeBase.open(path, allow_incomplete=True)
    kb.finalize({"n": 1}, embed=False)
    assert KnowledgeBase.is_complete(path) and kb.build_info == {"n": 1}
    with pytest.raises(KBError, match="finalized"):
        kb.add_entities([Entity(id="e:2", name="Two")])
    kb.close()
    with pytest.raises(KBError, match="no knowledge base"):
        KnowledgeBase.open(tmp_path / "nowhere")


def test_create_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "stray").write_text("x")
    with pytest.raises(KBError, match="not an empty directory"):
        KnowledgeBase.create(tmp_path / "kb")


def test_read_only_open_refuses_writes(tmp_path):
    small_kb(tmp_path / "kb", entities=[Entity(id="e:1", name="One")]).close()
    kb = KnowledgeBase.open(tmp_path / "kb", read_only=True)
    try:
        with pytest.raises(KBError, match="read-only"):
            kb.add_entities([Entity(id="e:2", name="Two")])
        assert kb.stats().entities == 1
    finally:
        kb.close()
    with pytest.raises(KBError, match="closed"):
        kb.stats()


def test_bad_records_get_clear_errors(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb")
    try:
        kb.add_text_units([TextUnit(id="tu:0", text="A met B.", document_id="d", entity_ids=("e:a", "e:ghost"))])
        kb.add_entities([Entity(id="e:a", name="A"), Entity(id="e:b", name="B")])
        with pytest.raises(KBError, match=r"e:b -> tu:9"):
            kb.add_entities([Entity(id="e:b", name="B", text_unit_ids=("tu:9",))])
        with pytest.raises(KBError, match=r"never added \(e:zed\).*r:1"):
            kb.add_relations([Relation(id="r:1", source="e:a", target="e:zed", label="knows")])
        with pytest.raises(KBError, match=r"r:2 cite text units.*tu:7"):
            kb.add_relations([Relation(id="r:2", source="e:a", target="e:b", label="knows", text_unit_id="tu:7")])
        kb.add_relations([Relation(id="r:3", source="e:a", target="e:b", label="knows")])
        with pytest.raises(KBError, match="'r:3' is used twice"):
            kb.add_relations([Relation(id="r:3", source="e:b", target="e:a", label="knows")])
        with pytest.raises(KBError, match="#0 is a dict"):
            kb.add_entities([{"id": "e:c"}])
        with pytest.raises(KBError, match="unknown communities: com:5"):
            kb.set_community_summaries({"com:5": ("t", "s")})
        with pytest.raises(KBError, match=r"tu:0 -> e:ghost"):
            kb.finalize({}, embed=False)
        assert not KnowledgeBase.is_complete(tmp_path / "kb")
    finally:
        kb.close()


class LengthEmbedder:
    """A build embedder that is not the model: row = (1, length of the text, 0, ...), normalised."""

    name = "lengths"

    def __init__(self, short_by: int = 0):
        self.calls: list[list[int]] = []
        self.short_by = short_by

    def embed_groups(self, groups, progress=None):
        self.calls.append([len(group) for group in groups])
        out = []
        for number, texts in enumerate(groups):
            rows = np.zeros((max(0, len(texts) - self.short_by), 384), dtype=np.float32)
            rows[:, 0], rows[:, 1] = 1.0, [len(t) for t in texts][: len(rows)]
            out.append(rows / np.linalg.norm(rows, axis=1, keepdims=True))
            if progress is not None and texts:
                progress(number, len(texts))
        return out


def test_finalize_embeds_with_the_build_embedder_in_effect(tmp_path):
    """`build_embedder` reaches `finalize` without the builder's help: one call for every index."""
    from provbench.kb.embeddings import VectorIndex, build_embedder
    from provbench.kb.graphstore import COMPLETE_MARKER, INDEX_TEXT_UNITS, VECTORS_DIR

    units = [
        TextUnit(id="tu:0", text="One met Two.", document_id="d", entity_ids=("e:1", "e:2")),
        TextUnit(id="tu:1", text="Two.", document_id="d", entity_ids=("e:2",)),
    ]
    entities = [Entity(id="e:1", name="One"), Entity(id="e:2", name="Two")]
    relations = [Relation(id="r:0", source="e:1", target="e:2", label="met", text_unit_id="tu:0")]
    embedder, seen = LengthEmbedder(), []
    kb = small_kb(tmp_path / "kb", entities=entities, relations=relations, units=units, finalize=False)
    with build_embedder(embedder):
        kb.finalize({}, progress=lambda name, done, total: seen.append((name, done, total)))
    communities = kb.stats().communities
    kb.close()
    assert embedder.calls == [[2, 2, 2, communities]]  # text units, entities, names, communities
    assert (INDEX_TEXT_UNITS, 2, 2) in seen
    # every index's size up front, so a log shows it while the embedding model loads
    assert seen[0] == (INDEX_TEXT_UNITS, 0, 2) and len(seen) > 4
    vectors = VectorIndex.load(tmp_path / "kb" / VECTORS_DIR, INDEX_TEXT_UNITS).vectors
    assert np.allclose(vectors[:, 1] / vectors[:, 0], [12, 4])  # ordered by id: "One met Two.", "Two."
    assert json.loads((tmp_path / "kb" / COMPLETE_MARKER).read_text())["embedder"] == "lengths"

    kb = small_kb(tmp_path / "bad", entities=entities, relations=relations, units=units, finalize=False)
    try:
        with pytest.raises(KBError, match=r"build embedder 'lengths' returned arrays of shapes"):
            kb.finalize({}, embedder=LengthEmbedder(short_by=1))
        assert not KnowledgeBase.is_complete(tmp_path / "bad")
    finally:
        kb.close()


def test_text_unit_links_come_from_both_sides_and_from_relations(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb")
    try:
        kb.add_text_units(
            [
                TextUnit(id="tu:0", text="x", document_id="d", entity_ids=("e:late",)),
                TextUnit(id="tu:1", text="y", document_id="d"),
                TextUnit(id="tu:2", text="z", document_id="d"),
            ]
        )
        kb.add_entities(
            [
                Entity(id="e:late", name="Late"),
                Entity(id="e:a", name="A", text_unit_ids=("tu:1",)),
                Entity(id="e:b", name="B"),
            ]
        )
        kb.add_relations([Relation(id="r:0", source="e:a", target="e:b", label="x", text_unit_id="tu:2")])
        view = kb.view()
        assert view.text_units_of("e:late") == ["tu:0"]  # linked once the entity arrived
        assert view.text_units_of("e:a") == ["tu:1", "tu:2"]  # declared + relation source
        assert view.text_unit("tu:2").entity_ids == ("e:a", "e:b")
    finally:
        kb.close()


def test_an_entitys_own_text_is_marked_on_its_links(tmp_path):
    """``own_text_unit_ids`` (the text of the entity's own document) is a label on the link, so an
    existing mention becomes own text when declared later; a hidden unit leaves both lists; a bulk
    load marks it the same way."""
    units = [
        TextUnit(id=f"tu:{i}", text=f"t{i}", document_id="d", entity_ids=("e:a",) if i == 0 else ()) for i in range(3)
    ]
    entity = Entity(id="e:a", name="A", text_unit_ids=("tu:0", "tu:1"), own_text_unit_ids=("tu:1", "tu:2"))
    kb = KnowledgeBase.create(tmp_path / "kb")
    bulk = KnowledgeBase.create(tmp_path / "bulk")
    try:
        kb.add_text_units(units)
        kb.add_entities([Entity(id="e:a", name="A", text_unit_ids=("tu:1",))])
        kb.add_entities([entity])  # upsert: tu:1 was a mention already, tu:2 is new
        bulk.bulk_load(text_units=units, entities=[entity])
        for view in (kb.view(), bulk.view()):
            read = view.entity("e:a")
            assert read.text_unit_ids == ("tu:0", "tu:1", "tu:2") and read.own_text_unit_ids == ("tu:1", "tu:2")
            assert view.hide(text_units=["tu:2"]).entity("e:a").own_text_unit_ids == ("tu:1",)
        assert kb.view().entity("e:a").model_copy(update={"own_text_unit_ids": ()}) == Entity(
            id="e:a", name="A", text_unit_ids=("tu:0", "tu:1", "tu:2")
        )
    finally:
        kb.close()
        bulk.close()


# -- reading through a view ----------------------------------------------------------------------------------


def test_entity_and_find_entity(view):
    orin = view.entity("ent:orin-vale")
    assert orin == Entity(
        id="ent:orin-vale",
        name="Orin Vale",
        label="PERSON",
        description="Orin Vale is a film director born in Dunmere.",
        text_unit_ids=("tu:0", "tu:1", "tu:2"),
        community_ids=(orin.community_ids[0],),
    )
    assert view.community(orin.community_ids[0]).title == "Glass Harbor and its makers"
    assert view.entity("ent:nobody") is None
    assert view.find_entity("Glass Harbor").id == "ent:glass-harbor"
    assert view.find_entity("  glass HARBOR ").id == "ent:glass-harbor"
    assert view.find_entity("Glass") is None and view.find_entity("") is None


def test_neighbors_in_both_directions(view):
    out = {("out", "rel:7", "ent:norland")}
    incoming = {
        ("in", "rel:6", "ent:orin-vale"),
        ("in", "rel:8", "ent:aster-river"),
        ("in", "rel:9", "ent:mara-holt"),
        ("in", "rel:11", "ent:kestrel-bridge"),
    }
    assert neighbour_ids(view, "ent:dunmere", "out") == out
    assert neighbour_ids(view, "ent:dunmere", "in") == incoming
    assert neighbour_ids(view, "ent:dunmere") == out | incoming
    both = view.neighbors("ent:dunmere")
    assert both[0].direction == "out" and both[0].relation == Relation(
        id="rel:7", source="ent:dunmere", target="ent:norland", label="located_in", text_unit_id="tu:3"
    )
    assert both[0].entity.description == "Norland is a cold northern country."
    assert both[0].entity.text_unit_ids == ("tu:3",)
    assert len(view.neighbors("ent:dunmere", limit=2)) == 2 and view.neighbors("ent:dunmere", limit=0) == []
    with pytest.raises(ValueError, match="direction"):
        view.neighbors("ent:dunmere", direction="sideways")
    # a limit counts visible neighbours: rows the view hides are fetched past, not counted
    first_two = [n.entity.id for n in both[:2]]
    hiding = view.hide(entities=first_two)
    assert hiding.neighbors("ent:dunmere", limit=2) == hiding.neighbors("ent:dunmere")[:2]
    assert [n.relation.id for n in view.invalidate([both[0].relation.id]).neighbors("ent:dunmere", limit=1)] == [
        both[1].relation.id
    ]


def test_text_units_relations_and_communities(view):
    assert view.text_units_of("ent:dunmere") == ["tu:0", "tu:3", "tu:4", "tu:5"]
    unit = view.text_unit("tu:4")
    assert unit.document_id == "doc:dunmere" and "Mara Holt" in unit.text
    assert unit.entity_ids == ("ent:aster-river", "ent:dunmere", "ent:mara-holt")
    assert view.text_unit("tu:99") is None
    assert view.relation("rel:10") == Relation(
        id="rel:10", source="ent:kestrel-bridge", target="ent:aster-river", label="crosses", text_unit_id="tu:5"
    )
    assert view.relation("rel:99") is None
    town = view.community(view.communities_of("ent:mara-holt")[0])
    assert set(town.entity_ids) == TOWN_MEMBERS and town.summary.startswith("Dunmere is a coastal town")
    film = view.community(view.communities_of("ent:tessa-quill")[0])
    assert set(film.entity_ids) == FILM_MEMBERS and town.id != film.id
    assert view.community("com:99") is None
    assert sorted(view.entity_ids()) == sorted(FILM_MEMBERS | TOWN_MEMBERS)


def test_similarity_search(view):
    assert view.search_entities("the mayor Mara Holt", k=3)[0].id == "ent:mara-holt"
    units = view.search_text_units("the mayor Mara Holt", k=2)
    assert units[0].id == "tu:4" and units[0].name == "doc:dunmere" and units[0].score >= units[1].score
    communities = view.search_communities("drama film and its director", k=2)
    assert communities[0].name == "Glass Harbor and its makers" and len(communities) == 2
    assert view.search_entities("anything", k=0) == []
    assert len(view.search_entities("anything", k=50)) == 10  # k larger than the graph: all of it
    with pytest.raises(ValueError, match="non-empty query"):
        view.search_entities("  ")
    with pytest.raises(ValueError, match="non-negative int"):
        view.search_text_units("x", k=-1)


def test_search_by_vector_is_the_same_search(view):
    from provbench.kb.embeddings import embed_query

    masked = view.hide(entities=["ent:orin-vale"], hide_metadata_of=["ent:dunmere"])
    for query in ("the mayor Mara Holt", "a coastal town in the north"):
        assert masked.search_entities_by_vector(embed_query(query), k=4) == masked.search_entities(query, k=4)
        scaled = masked.search_entities_by_vector(3 * embed_query(query), k=4)  # normalised first
        assert [h.id for h in scaled] == [h.id for h in masked.search_entities(query, k=4)]
    with pytest.raises(ValueError, match="2 dimensions cannot search entity vectors of 384"):
        view.search_entities_by_vector([0.5, 0.5])


def test_text_unit_ids_lists_the_readable_ones(view):
    assert list(view.text_unit_ids()) == [f"tu:{n}" for n in range(6)]
    assert list(view.hide(text_units=["tu:1"], block_text_of=["ent:norland"]).text_unit_ids()) == [
        "tu:0",
        "tu:2",
        "tu:4",
        "tu:5",
    ]


def test_shortest_paths(view):
    (path,) = view.shortest_paths("ent:tessa-quill", "ent:norland")
    assert path.entities == ("ent:tessa-quill", "ent:orin-vale", "ent:dunmere", "ent:norland")
    assert [r.id for r in path.relations] == ["rel:4", "rel:6", "rel:7"]
    assert path.relations[0].source == "ent:orin-vale"  # direction kept: the path walks rel:4 backwards
    assert view.shortest_paths("ent:tessa-quill", "ent:norland", max_hops=2) == []
    two = view.shortest_paths("ent:lumen-studios", "ent:glass-harbor", max_hops=2)
    assert [[r.id for r in p.relations] for p in two] == [["rel:2"]]  # shortest only
    assert view.shortest_paths("ent:dunmere", "ent:dunmere")[0].entities == ("ent:dunmere",)
    with pytest.raises(ValueError, match="max_hops"):
        view.shortest_paths("ent:dunmere", "ent:norland", max_hops=0)


def test_subgraph(view):
    graph = view.subgraph(["ent:orin-vale", "ent:glass-harbor", "ent:tessa-quill", "ent:nobody"])
    assert set(graph.nodes) == {"ent:orin-vale", "ent:glass-harbor", "ent:tessa-quill"}
    assert graph.nodes["ent:orin-vale"] == {"name": "Orin Vale", "label": "PERSON"}
    assert sorted(graph.edges(keys=True)) == [
        ("ent:orin-vale", "ent:glass-harbor", "rel:0"),
        ("ent:orin-vale", "ent:tessa-quill", "rel:4"),
        ("ent:tessa-quill", "ent:glass-harbor", "rel:1"),
    ]
    assert graph.edges["ent:orin-vale", "ent:glass-harbor", "rel:0"] == {"id": "rel:0", "label": "directed"}


def test_llama_index_store_reads_the_same_graph(tiny_kb):
    (node,) = tiny_kb.property_graph_store.get(ids=["ent:kestrel-bridge"])
    assert node.name == "Kestrel Bridge" and node.label == "LANDMARK"
    triplets = tiny_kb.property_graph_store.get_triplets(entity_names=["Kestrel Bridge"])
    assert {t[1].label for t in triplets} == {"crosses", "located_in"}
    assert type(tiny_kb.index).__name__ == "PropertyGraphIndex"


# -- hiding ---------------------------------------------------------------------------------------------------


def test_hidden_entity_is_invisible_everywhere(view):
    hidden = view.hide(entities=["ent:mara-holt"])
    assert hidden.entity("ent:mara-holt") is None and hidden.find_entity("Mara Holt") is None
    assert hidden.neighbors("ent:mara-holt") == []
    assert ("in", "rel:9", "ent:mara-holt") not in neighbour_ids(hidden, "ent:dunmere")
    assert len(hidden.neighbors("ent:dunmere")) == 4
    assert hidden.relation("rel:9") is None  # its relation goes with it
    hits = hidden.search_entities("the mayor Mara Holt", k=3)
    assert "ent:mara-holt" not in {h.id for h in hits} and len(hits) == 3
    assert "ent:mara-holt" not in hidden.text_unit("tu:4").entity_ids
    assert hidden.text_unit("tu:4") is not None  # its text units stay readable unless hidden too
    town = view.communities_of("ent:dunmere")[0]  # its report was written from Mara Holt too
    assert "ent:mara-holt" in view.community(town).entity_ids
    assert hidden.community(town) is None and town not in hidden.communities_of("ent:dunmere")
    assert town not in {h.id for h in hidden.search_communities(view.community(town).title, k=5)}
    assert town in {h.id for h in view.search_communities(view.community(town).title, k=5)}
    assert hidden.communities_of("ent:mara-holt") == [] and hidden.text_units_of("ent:mara-holt") == []
    assert "ent:mara-holt" not in set(hidden.entity_ids())
    assert "ent:mara-holt" not in hidden.subgraph(["ent:mara-holt", "ent:dunmere"])
    assert hidden.shortest_paths("ent:mara-holt", "ent:dunmere") == []
    assert hidden.stats() == KBStats(documents=2, text_units=6, entities=9, relations=11, communities=1)
    assert view.entity("ent:mara-holt") is not None  # the original view is untouched


def test_hidden_entity_reroutes_or_cuts_paths(view):
    assert view.hide(entities=["ent:orin-vale"]).shortest_paths("ent:tessa-quill", "ent:norland") == []
    assert view.hide(relations=["rel:6"]).shortest_paths("ent:tessa-quill", "ent:norland") == []
    (longer,) = view.hide(relations=["rel:8"]).shortest_paths("ent:aster-river", "ent:dunmere")
    assert [r.id for r in longer.relations] == ["rel:10", "rel:11"]  # around, through Kestrel Bridge


def test_hidden_relations(view):
    hidden = view.hide(relations=["rel:7"])
    assert hidden.relation("rel:7") is None
    assert neighbour_ids(hidden, "ent:dunmere", "out") == set()
    assert neighbour_ids(hidden, "ent:norland") == set()
    assert hidden.entity("ent:norland") is not None  # the entities stay
    assert "rel:7" not in {k for *_, k in hidden.subgraph(["ent:dunmere", "ent:norland"]).edges(keys=True)}
    assert hidden.stats().relations == 11


def test_hidden_text_units(view):
    hidden = view.hide(text_units=["tu:4"])
    assert hidden.text_unit("tu:4") is None
    assert hidden.text_units_of("ent:mara-holt") == [] and hidden.entity("ent:mara-holt").text_unit_ids == ()
    assert "tu:4" not in hidden.text_units_of("ent:dunmere")
    hits = hidden.search_text_units("Who is the mayor of Dunmere?", k=5)
    assert "tu:4" not in {h.id for h in hits} and len(hits) == 5
    assert hidden.entity("ent:mara-holt").description == "Mara Holt is the mayor of Dunmere."  # metadata stays
    assert hidden.stats().text_units == 5


def test_block_text_of_keeps_the_entity_but_not_its_text(view):
    blocked = view.hide(block_text_of=["ent:norland"])
    norland = blocked.entity("ent:norland")
    assert norland.label == "COUNTRY" and norland.description and norland.text_unit_ids == ()
    assert blocked.text_unit("tu:3") is None
    # tu:3 is Dunmere's text too: blocked for everyone, Dunmere's other text units stay readable
    assert blocked.text_units_of("ent:dunmere") == ["tu:0", "tu:4", "tu:5"]
    assert "tu:3" not in {h.id for h in blocked.search_text_units("coastal town in Norland", k=6)}
    assert neighbour_ids(blocked, "ent:norland") == {("in", "rel:7", "ent:dunmere")}
    assert blocked.find_entity("Norland").id == "ent:norland"
    assert blocked.search_entities("Norland", k=1)[0].id == "ent:norland"
    assert blocked.stats() == KBStats(documents=2, text_units=5, entities=10, relations=12, communities=2)


def test_hide_metadata_blanks_label_and_description_everywhere(view):
    from provbench.kb.embeddings import embed_query, embed_texts

    masked = view.hide(hide_metadata_of=["ent:kestrel-bridge"])
    bridge = masked.entity("ent:kestrel-bridge")
    assert (bridge.name, bridge.label, bridge.description) == ("Kestrel Bridge", "", "")
    assert bridge.text_unit_ids == ("tu:5",)  # its text is still readable
    (via_neighbour,) = [n.entity for n in masked.neighbors("ent:aster-river") if n.entity.id == "ent:kestrel-bridge"]
    assert (via_neighbour.label, via_neighbour.description) == ("", "")
    assert masked.find_entity("kestrel bridge").description == ""
    assert view.entity("ent:kestrel-bridge").label == "LANDMARK"
    # search scores a masked entity by its name alone: the hidden description cannot lift it
    query = "a stone bridge over the Aster River"
    by_name = float(embed_texts(["Kestrel Bridge"])[0] @ embed_query(query))
    full = {h.id: h.score for h in view.search_entities(query, k=10)}
    blind = {h.id: h.score for h in masked.search_entities(query, k=10)}
    assert blind["ent:kestrel-bridge"] == pytest.approx(by_name, abs=1e-5)
    assert full["ent:kestrel-bridge"] != pytest.approx(by_name, abs=1e-3)
    assert {k: v for k, v in blind.items() if k != "ent:kestrel-bridge"} == pytest.approx(
        {k: v for k, v in full.items() if k != "ent:kestrel-bridge"}
    )


def test_hide_composes_and_does_not_touch_the_store(view, monkeypatch):
    first = view.hide(entities=["ent:norland"], text_units=["tu:1"])
    second = first.hide(
        entities=["ent:mara-holt"],
        relations=["rel:0"],
        block_text_of=["ent:dunmere"],
        hide_metadata_of=["ent:orin-vale"],
    )
    assert second.hidden == ViewFilter(
        entities=frozenset({"ent:norland", "ent:mara-holt"}),
        relations=frozenset({"rel:0"}),
        text_units=frozenset({"tu:1"}),
        block_text_of=frozenset({"ent:dunmere"}),
        hide_metadata_of=frozenset({"ent:orin-vale"}),
    )
    assert first.hidden.entities == {"ent:norland"} and view.hidden.empty
    assert second.entity("ent:norland") is None and second.entity("ent:orin-vale").label == ""
    assert second.text_units_of("ent:glass-harbor") == ["tu:2"]  # tu:0 blocked (Dunmere), tu:1 hidden

    def no_queries(*args, **kwargs):
        raise AssertionError("creating a view must not query the store")

    monkeypatch.setattr(type(view._store), "rows", no_queries)
    again = second.hide(entities=[f"ent:x{i}" for i in range(100)])
    assert len(again.hidden.entities) == 102
    with pytest.raises(TypeError, match="not one string"):
        view.hide(entities="ent:norland")


# -- awkward input, concurrency, communities ----------------------------------------------------------------


AWKWARD = [
    Entity(id="e:quote'1", name='O\'Brien "The Bard"', label="PERSON", description='It\'s "quoted".'),
    Entity(id="e:back\\slash", name="Back\\slash \\n Name", label="THING", description="C:\\path\\to"),
    Entity(id="e:unicode", name="Zoë Ångström 東京", label="PLACE", description="ünïcödé ✓"),
    Entity(id="e:inject", name="x'}) DETACH DELETE n; //", label="", description="$id {id: 'x'}"),
]


def test_parameterised_queries_with_awkward_names(tmp_path):
    relations = [
        Relation(id="r:'0'", source="e:quote'1", target="e:back\\slash", label='knows "well"'),
        Relation(id="r:1\\", source="e:unicode", target="e:quote'1", label="ünï"),
        Relation(id="r:2", source="e:inject", target="e:unicode", label="'; MATCH"),
    ]
    units = [
        TextUnit(
            id="tu:'a'", text="O'Brien met Zoë in 東京.", document_id='doc:"x"', entity_ids=("e:quote'1", "e:unicode")
        )
    ]
    kb = small_kb(tmp_path / "kb", entities=AWKWARD, relations=relations, units=units)
    try:
        view = kb.view()
        for entity in AWKWARD:
            found = view.find_entity(entity.name)
            assert (found.id, found.name, found.description) == (entity.id, entity.name, entity.description)
        assert view.find_entity("zoë ångström 東京").id == "e:unicode"
        assert neighbour_ids(view, "e:quote'1") == {("out", "r:'0'", "e:back\\slash"), ("in", "r:1\\", "e:unicode")}
        assert view.text_unit("tu:'a'").document_id == 'doc:"x"'
        assert view.relation("r:1\\").label == "ünï"
        assert [r.id for r in view.shortest_paths("e:inject", "e:back\\slash")[0].relations] == [
            "r:2",
            "r:1\\",
            "r:'0'",
        ]
        assert view.hide(entities=["e:unicode"]).shortest_paths("e:inject", "e:back\\slash") == []
        assert kb.stats() == KBStats(
            documents=1, text_units=1, entities=4, relations=3, communities=kb.stats().communities
        )
    finally:
        kb.close()


def test_concurrent_reads_from_one_view(view):
    def snapshot() -> list:
        graph = [sorted(neighbour_ids(view, e)) + view.text_units_of(e) for e in sorted(view.entity_ids())]
        return graph + [[h.id for h in view.search_entities(q, k=3)] for q in ("film director", "river town")]

    expected = snapshot()
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(snapshot())
        except Exception as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 20 and all(r == expected for r in results)


def test_communities_are_deterministic_and_skip_isolated_entities(tmp_path):
    entities = [Entity(id=f"e:{i}", name=f"E{i}") for i in range(7)]
    triangle = [
        ("e:0", "e:1"),
        ("e:1", "e:2"),
        ("e:2", "e:0"),
        ("e:3", "e:4"),
        ("e:4", "e:5"),
        ("e:5", "e:3"),
        ("e:2", "e:3"),
    ]
    relations = [Relation(id=f"r:{i}", source=s, target=t, label="x") for i, (s, t) in enumerate(triangle)]
    kb = small_kb(tmp_path / "kb", entities=entities, relations=relations, finalize=False)
    try:
        first = kb.detect_communities(seed=3)
        assert first == kb.detect_communities(seed=3)  # replaces, does not add
        assert {c.entity_ids for c in first} == {("e:0", "e:1", "e:2"), ("e:3", "e:4", "e:5")}
        assert kb.stats().communities == 2 and kb.view().communities_of("e:6") == []
        kb.set_community_summaries({first[0].id: ("Title", "Summary")})
        assert kb.view().community(first[0].id).title == "Title"
        with pytest.raises(KBError, match="pair of strings"):
            kb.set_community_summaries({first[0].id: "just a title"})
    finally:
        kb.close()


def test_saved_vectors_are_normalised_float32(tiny_kb):
    index = tiny_kb.store.vectors("entities")
    assert index.vectors.dtype == np.float32 and index.vectors.shape == (10, 384)
    assert np.allclose(np.linalg.norm(index.vectors, axis=1), 1.0, atol=1e-5)


def node_columns(entity: Entity) -> tuple:
    """An entity's own columns (its text units' order is the store's, compared apart)."""
    return entity.id, entity.name, entity.label, entity.description, entity.aliases


def test_bulk_load_gives_the_same_graph_as_add(tmp_path):
    from provbench.testing.kb import TINY_ENTITIES, TINY_RELATIONS, TINY_TEXT_UNITS

    odd = TextUnit(
        id="tu:odd",
        text="line one\nline \"two\", C:\\dir, 'quoted' ✓",
        document_id="doc:odd",
        entity_ids=("ent:norland",),
    )
    units = (*TINY_TEXT_UNITS, odd)
    aliased = Entity(id="ent:aliased", name="Aliased", label="THING", description="has aliases", aliases=("A", "B"))
    entities = (*TINY_ENTITIES, aliased)
    added = small_kb(tmp_path / "added", entities=entities, relations=TINY_RELATIONS, units=units)
    bulk = KnowledgeBase.create(tmp_path / "bulk")
    bulk.bulk_load(text_units=units, entities=entities, relations=TINY_RELATIONS)
    try:
        a, b = added.view(), bulk.view()
        assert bulk.stats().model_dump() | {"communities": 0} == added.stats().model_dump() | {"communities": 0}
        assert b.entity("ent:aliased").aliases == ("A", "B")  # every Entity column arrives, both ways
        for entity_id in a.entity_ids():
            assert node_columns(a.entity(entity_id)) == node_columns(b.entity(entity_id))
            assert neighbour_ids(a, entity_id) == neighbour_ids(b, entity_id)
            assert a.text_units_of(entity_id) == b.text_units_of(entity_id)
        assert b.text_unit("tu:odd") == odd
        assert not (tmp_path / "bulk" / ".staging" / "Chunk.parquet").exists()  # staging files are removed
        bulk.finalize({"test": True}, embed=False)
        assert not (tmp_path / "bulk" / ".staging").exists()  # and a finished KB keeps no empty folder
    finally:
        added.close()
        bulk.close()


def test_a_finished_kb_answers_repeated_reads_from_memory(tmp_path):
    """Reads of a finished (immutable) KB are remembered; a KB still being built reads afresh."""
    entities = [Entity(id=f"e{i}", name=f"Entity {i}", label="THING") for i in range(4)]
    relations = [Relation(id=f"r{i}", source=f"e{i}", target=f"e{i + 1}", label="NEXT") for i in range(3)]
    building = small_kb(tmp_path / "kb", entities=entities, relations=relations, finalize=False)
    building.view().neighbors("e1")
    assert building.store.read_cache_info() is None  # unfinished: nothing is kept
    building.finalize({"test": True}, embed=False)
    view = building.view()
    first = neighbour_ids(view, "e1")
    misses = building.store.read_cache_info().misses
    assert neighbour_ids(view, "e1") == first == {("out", "r1", "e2"), ("in", "r0", "e0")}
    info = building.store.read_cache_info()
    assert info.misses == misses and info.hits > 0  # the second call ran no query
    # a view hiding something filters the remembered rows, it does not get the unfiltered answer
    assert neighbour_ids(view.hide(entities=["e2"]), "e1") == {("in", "r0", "e0")}
    building.close()


def test_shortest_paths_cut_after_sorting_and_may_follow_edge_direction(view):
    """``limit`` keeps the first paths in relation-id order, whatever order the database finds
    them in; ``directed`` walks edges only from source to target."""
    ids = sorted(view.entity_ids())
    tied = [(a, b) for a in ids for b in ids if a < b and len(view.shortest_paths(a, b, limit=50)) > 1]
    assert tied  # the tiny KB has pairs joined by several shortest paths
    for a, b in tied:
        every = view.shortest_paths(a, b, limit=50)
        assert view.shortest_paths(a, b, limit=1) == every[:1], (a, b)
    assert view.shortest_paths("ent:tessa-quill", "ent:norland", directed=True) == []  # rel:4 points back
    (forward,) = view.shortest_paths("ent:orin-vale", "ent:norland", directed=True)
    assert all(r.source == e for r, e in zip(forward.relations, forward.entities))
