"""A tiny, known knowledge base for tests (real Kùzu, real Leiden, real embeddings).

    from provbench.testing import build_tiny_kb
    kb = build_tiny_kb(tmp_path / "kb")      # KnowledgeBase, finalized; reopens it if already built there
    view = kb.view()

:class:`provbench.testing.TinyKBBuilder` is the same KB as a ``KBBuilder`` plugin, for suites.

Contents (stable: other helpers' tests rely on them). An invented world, two documents.

Entities (id: name, label)
    film cluster                                      town cluster
    ent:orin-vale: Orin Vale, PERSON                  ent:dunmere: Dunmere, CITY
    ent:glass-harbor: Glass Harbor, FILM              ent:norland: Norland, COUNTRY
    ent:tessa-quill: Tessa Quill, PERSON              ent:aster-river: Aster River, RIVER
    ent:lumen-studios: Lumen Studios, ORGANIZATION    ent:mara-holt: Mara Holt, PERSON
    ent:silver-reel-award: Silver Reel Award, AWARD   ent:kestrel-bridge: Kestrel Bridge, LANDMARK
    Every entity has a one-sentence description (see TINY_ENTITIES).

Relations (id: source -label-> target [source text unit])
    rel:0  orin-vale -directed-> glass-harbor [tu:0]       rel:6  orin-vale -born_in-> dunmere [tu:0]  (the bridge)
    rel:1  tessa-quill -starred_in-> glass-harbor [tu:1]   rel:7  dunmere -located_in-> norland [tu:3]
    rel:2  lumen-studios -produced-> glass-harbor [tu:1]   rel:8  aster-river -flows_through-> dunmere [tu:4]
    rel:3  glass-harbor -won-> silver-reel-award [tu:2]    rel:9  mara-holt -mayor_of-> dunmere [tu:4]
    rel:4  orin-vale -worked_with-> tessa-quill [tu:1]     rel:10 kestrel-bridge -crosses-> aster-river [tu:5]
    rel:5  lumen-studios -employed-> orin-vale [tu:2]      rel:11 kestrel-bridge -located_in-> dunmere [tu:5]

Text units (id [document]: entities it mentions)
    tu:0 [doc:glass-harbor]: orin-vale, glass-harbor, dunmere
    tu:1 [doc:glass-harbor]: tessa-quill, glass-harbor, lumen-studios, orin-vale
    tu:2 [doc:glass-harbor]: glass-harbor, silver-reel-award, lumen-studios, orin-vale
    tu:3 [doc:dunmere]: dunmere, norland
    tu:4 [doc:dunmere]: aster-river, dunmere, mara-holt
    tu:5 [doc:dunmere]: kestrel-bridge, aster-river, dunmere

Communities (Leiden, seed 0; both have 5 members, so the one with the smaller first id comes first)
    com:0 "Dunmere and the Aster River": the five town entities
    com:1 "Glass Harbor and its makers": the five film entities

Stats: 2 documents, 6 text units, 10 entities, 12 relations, 2 communities.
Some facts tests use: Orin Vale has 3 outgoing relations (rel:0, rel:4, rel:6) and 1 incoming (rel:5);
Dunmere has 1 outgoing (rel:7) and 4 incoming (rel:6, 8, 9, 11); the shortest path from
ent:tessa-quill to ent:norland is tessa-quill -rel:4- orin-vale -rel:6- dunmere -rel:7- norland.
"""

from __future__ import annotations

from pathlib import Path

from ..kb import KnowledgeBase
from ..kb.types import Entity, Relation, TextUnit

DOC_FILM, DOC_TOWN = "doc:glass-harbor", "doc:dunmere"

TINY_ENTITIES: tuple[Entity, ...] = tuple(
    Entity(id=i, name=n, label=lab, description=d)
    for i, n, lab, d in [
        ("ent:orin-vale", "Orin Vale", "PERSON", "Orin Vale is a film director born in Dunmere."),
        ("ent:glass-harbor", "Glass Harbor", "FILM", "Glass Harbor is a 1987 drama film directed by Orin Vale."),
        ("ent:tessa-quill", "Tessa Quill", "PERSON", "Tessa Quill is an actress who starred in Glass Harbor."),
        (
            "ent:lumen-studios",
            "Lumen Studios",
            "ORGANIZATION",
            "Lumen Studios is a film studio that produced Glass Harbor.",
        ),
        ("ent:silver-reel-award", "Silver Reel Award", "AWARD", "The Silver Reel Award is a prize for drama films."),
        ("ent:dunmere", "Dunmere", "CITY", "Dunmere is a coastal town in Norland."),
        ("ent:norland", "Norland", "COUNTRY", "Norland is a cold northern country."),
        ("ent:aster-river", "Aster River", "RIVER", "The Aster River flows through Dunmere to the sea."),
        ("ent:mara-holt", "Mara Holt", "PERSON", "Mara Holt is the mayor of Dunmere."),
        ("ent:kestrel-bridge", "Kestrel Bridge", "LANDMARK", "Kestrel Bridge is a stone bridge over the Aster River."),
    ]
)

TINY_RELATIONS: tuple[Relation, ...] = tuple(
    Relation(id=f"rel:{n}", source=f"ent:{s}", target=f"ent:{t}", label=lab, text_unit_id=tu)
    for n, (s, lab, t, tu) in enumerate(
        [
            ("orin-vale", "directed", "glass-harbor", "tu:0"),
            ("tessa-quill", "starred_in", "glass-harbor", "tu:1"),
            ("lumen-studios", "produced", "glass-harbor", "tu:1"),
            ("glass-harbor", "won", "silver-reel-award", "tu:2"),
            ("orin-vale", "worked_with", "tessa-quill", "tu:1"),
            ("lumen-studios", "employed", "orin-vale", "tu:2"),
            ("orin-vale", "born_in", "dunmere", "tu:0"),
            ("dunmere", "located_in", "norland", "tu:3"),
            ("aster-river", "flows_through", "dunmere", "tu:4"),
            ("mara-holt", "mayor_of", "dunmere", "tu:4"),
            ("kestrel-bridge", "crosses", "aster-river", "tu:5"),
            ("kestrel-bridge", "located_in", "dunmere", "tu:5"),
        ]
    )
)

TINY_TEXT_UNITS: tuple[TextUnit, ...] = tuple(
    TextUnit(id=f"tu:{n}", text=text, document_id=doc, entity_ids=tuple(f"ent:{e}" for e in ents))
    for n, (doc, text, ents) in enumerate(
        [
            (
                DOC_FILM,
                "Glass Harbor is a 1987 drama film directed by Orin Vale. Orin Vale was born in Dunmere.",
                ["orin-vale", "glass-harbor", "dunmere"],
            ),
            (
                DOC_FILM,
                "Tessa Quill starred in Glass Harbor, which Lumen Studios produced. "
                "Vale and Quill worked together again on later films.",
                ["tessa-quill", "glass-harbor", "lumen-studios", "orin-vale"],
            ),
            (
                DOC_FILM,
                "Glass Harbor won the Silver Reel Award. Lumen Studios employed Orin Vale for a decade.",
                ["glass-harbor", "silver-reel-award", "lumen-studios", "orin-vale"],
            ),
            (DOC_TOWN, "Dunmere is a coastal town in Norland.", ["dunmere", "norland"]),
            (
                DOC_TOWN,
                "The Aster River flows through Dunmere, whose mayor is Mara Holt.",
                ["aster-river", "dunmere", "mara-holt"],
            ),
            (
                DOC_TOWN,
                "Kestrel Bridge crosses the Aster River in the middle of Dunmere.",
                ["kestrel-bridge", "aster-river", "dunmere"],
            ),
        ]
    )
)

FILM_MEMBERS = frozenset(
    {"ent:orin-vale", "ent:glass-harbor", "ent:tessa-quill", "ent:lumen-studios", "ent:silver-reel-award"}
)
TOWN_MEMBERS = frozenset({"ent:dunmere", "ent:norland", "ent:aster-river", "ent:mara-holt", "ent:kestrel-bridge"})

TINY_SUMMARIES = {
    TOWN_MEMBERS: (
        "Dunmere and the Aster River",
        "Dunmere is a coastal town in Norland. The Aster River flows through it under Kestrel Bridge; "
        "Mara Holt is its mayor.",
    ),
    FILM_MEMBERS: (
        "Glass Harbor and its makers",
        "Glass Harbor is a 1987 drama film directed by Orin Vale, starring Tessa Quill and produced by "
        "Lumen Studios. It won the Silver Reel Award.",
    ),
}

TINY_BUILD_INFO = {"builder": "tests.kb_helpers.build_tiny_kb", "version": 1}  # name kept: KBs on disk carry it


def build_tiny_kb(path: str | Path) -> KnowledgeBase:
    """Build the tiny KB at ``path`` (or reopen it if a finished one is already there)."""
    path = Path(path)
    if KnowledgeBase.is_complete(path):
        return KnowledgeBase.open(path)
    kb = KnowledgeBase.create(path)
    kb.add_text_units(TINY_TEXT_UNITS)
    kb.add_entities(TINY_ENTITIES)
    kb.add_relations(TINY_RELATIONS)
    communities = kb.detect_communities(seed=0)
    by_members = {frozenset(c.entity_ids): c.id for c in communities}
    if set(by_members) != set(TINY_SUMMARIES):
        kb.close()
        raise AssertionError(f"Leiden no longer finds the two tiny communities: {communities}")
    kb.set_community_summaries({by_members[m]: pair for m, pair in TINY_SUMMARIES.items()})
    kb.finalize(TINY_BUILD_INFO)
    return kb
