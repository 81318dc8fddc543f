"""Bi-temporal edges: ``valid_from`` / ``recorded_at`` / ``invalidated_at`` in the store, and a view's
``as_of`` time honoured by every query kind (neighbours, relation(s), relation ids, paths, subgraphs),
exposed as ``hidden.out_of_time``; aliases stored and matched by ``entities_named``.

The graph (a -> x: relation id, stamps):

    r1  a -> b   valid 2024-01-01, recorded 2024-01-05
    r2  a -> c   valid 2024-01-01, invalidated 2025-03-01      (stale: replaced by r3)
    r3  a -> d   valid 2025-03-01, recorded 2025-03-02
    r4  a -> e   invalidated 2999-01-01                         (a future invalidation)
    r5  a -> f   valid 2999-01-01                               (not valid yet)
    r6  c -> d   no stamps
    r7  d -> e   valid 2025-03-01T12:00:00+02:00                (a zoned timestamp beside dates)
"""

from __future__ import annotations

import pytest

from provbench.kb import KBError, KnowledgeBase
from provbench.kb.temporal import InstantError, active_at, parse_instant
from provbench.kb.types import Entity, Relation

pytestmark = pytest.mark.usefixtures("on_graph_store")

STAMPS = {
    "r1": ("2024-01-01", "2024-01-05", None),
    "r2": ("2024-01-01", None, "2025-03-01"),
    "r3": ("2025-03-01", "2025-03-02", None),
    "r4": (None, None, "2999-01-01"),
    "r5": ("2999-01-01", None, None),
    "r6": (None, None, None),
    "r7": ("2025-03-01T12:00:00+02:00", None, None),
}
ENDS = {
    "r1": ("a", "b"),
    "r2": ("a", "c"),
    "r3": ("a", "d"),
    "r4": ("a", "e"),
    "r5": ("a", "f"),
    "r6": ("c", "d"),
    "r7": ("d", "e"),
}


def relations() -> list[Relation]:
    return [
        Relation(
            id=rid,
            source=ENDS[rid][0],
            target=ENDS[rid][1],
            label="next",
            valid_from=vf,
            recorded_at=ra,
            invalidated_at=ia,
        )
        for rid, (vf, ra, ia) in STAMPS.items()
    ]


@pytest.fixture(scope="module")
def kb(tmp_path_factory, graph_store):
    from provbench.kb.backends import default_graph_store

    with default_graph_store(graph_store):
        kb = KnowledgeBase.create(tmp_path_factory.mktemp(f"time-{graph_store}") / "kb")
    kb.add_entities([Entity(id=e, name=f"Node {e.upper()}", aliases=(f"N{e}",) if e == "a" else ()) for e in "abcdef"])
    kb.add_relations(relations())
    kb.finalize({"inputs": {"fingerprint": "abc123"}}, embed=False)
    yield kb
    kb.close()


def out_ids(view, entity="a"):
    return sorted(nb.relation.id for nb in view.neighbors(entity, direction="out"))


def test_instants_compare_dates_and_zoned_timestamps():
    assert parse_instant("2025-03-01") < parse_instant("2025-03-01T12:00:00+02:00") < parse_instant("2025-03-02")
    assert parse_instant("2025-03-01T10:00:00Z") == parse_instant("2025-03-01T10:00:00")  # naive is UTC
    with pytest.raises(InstantError, match="not an ISO date"):
        parse_instant("yesterday")
    when = parse_instant("2025-01-01")
    assert active_at(when, parse_instant("2024-01-01"), parse_instant("2024-06-01"), None)
    assert not active_at(when, parse_instant("2024-01-01"), parse_instant("2025-06-01"), None)  # not recorded yet
    assert not active_at(when, None, None, when)  # invalidated at that very moment


def test_default_view_reads_the_graph_now(kb):
    view = kb.view()
    assert view.as_of_time is None and view.hidden.out_of_time == frozenset()
    # r2 was invalidated in the past; r4's invalidation is in the future, so it still applies; r5 is not valid yet
    assert out_ids(view) == ["r1", "r3", "r4"]
    assert kb.store.invalidated_relations() == {"r2", "r4"}


def test_as_of_follows_both_stamps_in_every_query(kb):
    then = kb.view().as_of("2024-06-01")
    assert then.as_of_time == "2024-06-01T00:00:00+00:00"
    assert then.hidden.out_of_time == {"r3", "r5", "r7"}
    assert then.hidden.summary()["out_of_time"]["count"] == 3  # what the leak guard reads
    # neighbours: the stale r2 is active again, its replacement r3 is not valid yet
    assert out_ids(then) == ["r1", "r2", "r4"]
    # relation() / relations() / relation_ids()
    assert then.relation("r3") is None and then.relation("r2") is not None
    assert [r.id for r in then.relations(["r3", "r2", "r6"])] == ["r2", "r6"]
    assert sorted(then.relation_ids()) == ["r1", "r2", "r4", "r6"]
    # paths: a -> c -> d through the stale edge then; only a -> d now
    (path,) = then.shortest_paths("a", "d")
    assert [r.id for r in path.relations] == ["r2", "r6"]
    assert [[r.id for r in p.relations] for p in kb.view().shortest_paths("a", "d")] == [["r3"]]
    # subgraphs
    assert sorted(k for *_, k in then.subgraph("abcdef").edges(keys=True)) == ["r1", "r2", "r4", "r6"]
    assert sorted(k for *_, k in kb.view().subgraph("abcdef").edges(keys=True)) == ["r1", "r3", "r4", "r6", "r7"]


def test_recorded_at_is_compared_too(kb):
    # r1 was true from 2024-01-01 but the graph recorded it on 2024-01-05
    assert "r1" not in out_ids(kb.view().as_of("2024-01-03"))
    assert "r1" in out_ids(kb.view().as_of("2024-01-05"))
    # r7 holds from 10:00 UTC on 2025-03-01: a date-only as_of that day is before it
    assert kb.view().as_of("2025-03-01").relation("r7") is None
    assert kb.view().as_of("2025-03-01T10:00:00Z").relation("r7") is not None


def test_returned_relations_carry_their_stamps(kb):
    view = kb.view()
    (r1,) = [nb.relation for nb in view.neighbors("a") if nb.relation.id == "r1"]
    assert (r1.valid_from, r1.recorded_at, r1.invalidated_at) == ("2024-01-01", "2024-01-05", None)
    assert view.relation("r4").invalidated_at == "2999-01-01"
    (path,) = view.shortest_paths("a", "e", max_hops=1)
    assert path.relations[0].invalidated_at == "2999-01-01"
    edge = view.subgraph(["a", "b"]).edges["a", "b", "r1"]
    assert edge == {"id": "r1", "label": "next", "valid_from": "2024-01-01", "recorded_at": "2024-01-05"}
    assert view.relation("r6") == Relation(id="r6", source="c", target="d", label="next")


def test_as_of_composes_with_hiding_and_invalidation(kb):
    then = kb.view().hide(entities=["b"]).as_of("2024-06-01")
    assert out_ids(then) == ["r2", "r4"] and then.hidden.entities == {"b"}
    narrowed = then.invalidate(["r2"]).hide(relations=["r4"])
    assert out_ids(narrowed) == [] and narrowed.as_of_time == then.as_of_time
    later = narrowed.as_of("2025-06-01")
    assert out_ids(later) == ["r3"] and later.hidden.invalidated == {"r2"}
    with pytest.raises(InstantError):
        kb.view().as_of("soon")


def test_aliases_are_stored_and_name_entities(kb):
    view = kb.view()
    assert view.entity("a").aliases == ("Na",)
    assert [e.id for e in view.entities_named(["na"])] == ["a"]
    assert [e.id for e in view.entities_named(["Node B", "NA"])] == ["a", "b"]
    assert [e.id for e in view.hide(entities=["a"]).entities_named(["na"])] == []


def test_fingerprint_of_the_build(kb):
    assert kb.view().knowledge_base_fingerprint == "abc123"


def test_a_kb_made_before_the_stamp_and_alias_columns_still_reads(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "old")
    kb.store.rows("ALTER TABLE LINKS DROP recorded_at")
    kb.store.rows("ALTER TABLE Entity DROP aliases")
    kb.store.rows("CREATE (:Entity {id: 'a', name: 'A'}), (:Entity {id: 'b', name: 'B'})")
    kb.store.rows(
        "MATCH (a:Entity {id: 'a'}), (b:Entity {id: 'b'}) "
        "CREATE (a)-[:LINKS {id: 'r', label: 'next', valid_from: '2024-01-01'}]->(b)"
    )
    kb.finalize({}, embed=False)
    try:
        view = kb.view()
        (nb,) = view.neighbors("a")
        assert nb.relation.valid_from == "2024-01-01" and nb.relation.recorded_at is None
        assert view.entity("a").aliases == () and [e.id for e in view.entities_named(["a"])] == ["a"]
        assert view.as_of("2023-01-01").neighbors("a") == []
    finally:
        kb.close()


def test_a_bad_stored_stamp_is_named(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "bad")
    kb.add_entities([Entity(id="a", name="A"), Entity(id="b", name="B")])
    kb.add_relations([Relation(id="r", source="a", target="b", label="next", recorded_at="last week")])
    kb.finalize({}, embed=False)
    try:
        with pytest.raises(KBError, match="relation 'r'.*last week"):
            kb.view().neighbors("a")
    finally:
        kb.close()


def test_the_llamaindex_store_over_a_view_reads_the_graph_as_of_its_time(kb):
    from provbench.integrations.llamaindex import property_graph_store

    def targets(view):
        store = property_graph_store(view)
        [a] = store.get(ids=["a"])
        return sorted(t.name for s, _, t in store.get_rel_map([a], depth=1) if s.name == "Node A")

    # then: the stale r2 (a -> c) is active and its replacement r3 (a -> d) is not valid yet; now: the reverse
    assert targets(kb.view().as_of("2024-06-01")) == ["Node B", "Node C", "Node E"]
    assert targets(kb.view()) == ["Node B", "Node D", "Node E"]
