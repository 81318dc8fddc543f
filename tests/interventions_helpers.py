"""A hand-built knowledge base whose every id the intervention tests know, and its baseline trace.

Entities (A cited; B, C visited but not cited; D..G not visited)::

    A Ann Lee --directed--> B Blue River <--acted_in-- C Cara Stone
                            B --produced_by--> D Dune Studio --located_in--> E East Haven
                            E --hosts--> F Fox Festival            G Gale Park (no relations)

Text units and the entities they link to (a relation's source text unit links both ends):

    tu:1 {A, B}  shared by the cited A and the visited-but-uncited B
    tu:2 {B, C}  the baseline cites it although it belongs to no cited entity
    tu:3 {B, D}   tu:4 {D, E}   tu:5 {E, F}
    tu:6 {A}      tu:7 {C}      tu:8 {G}      tu:9 {} (no entity)

Each entity's own text (``own_text_unit_ids``, its own paragraph): A tu:1, tu:6; B tu:3; C tu:2,
tu:7; D tu:4; F tu:5; G tu:8; E, a place, has none (tu:4 and tu:5 only name it).

Two hops from the visited/cited set {A, B, C} reach D (1 hop) and E (2 hops); F and G are
farther. Paths: A-B-D-E-F. D's description quotes tu:3; no other description quotes a text unit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from provbench.kb import KnowledgeBase
from provbench.kb.types import Entity, Relation, TextUnit
from provbench.model import Citations, Trace

A, B, C, D, E, F, G = (
    f"ent:{n}"
    for n in ("ann-lee", "blue-river", "cara-stone", "dune-studio", "east-haven", "fox-festival", "gale-park")
)
ALL_ENTITIES = {A, B, C, D, E, F, G}
ALL_TEXT_UNITS = {f"tu:{i}" for i in range(1, 10)}

ENTITIES = [
    (A, "Ann Lee", "person", "Film director born in Oslo.", ("tu:1", "tu:6")),
    (B, "Blue River", "film", "A 1990 drama film.", ("tu:1", "tu:2", "tu:3")),
    (C, "Cara Stone", "person", "Actress known for stage roles.", ("tu:2", "tu:7")),
    # D's description quotes a sentence of its own tu:3 (as a builder quoting its text would)
    (D, "Dune Studio", "company", "Film production company. Blue River was produced by Dune Studio.", ("tu:3", "tu:4")),
    (E, "East Haven", "city", "Coastal city with a harbour.", ("tu:4", "tu:5")),
    (F, "Fox Festival", "event", "Annual film festival.", ("tu:5",)),
    (G, "Gale Park", "place", "Public park with old oak trees.", ("tu:8",)),
]
OWN_TEXT = {A: ("tu:1", "tu:6"), B: ("tu:3",), C: ("tu:2", "tu:7"), D: ("tu:4",), E: (), F: ("tu:5",), G: ("tu:8",)}
TEXTS = {
    "tu:1": "Ann Lee directed the film Blue River, released in 1990.",
    "tu:2": "Cara Stone played the lead role in Blue River.",
    "tu:3": "Blue River was produced by Dune Studio.",
    "tu:4": "Dune Studio has its offices in East Haven.",
    "tu:5": "East Haven hosts the Fox Festival every summer.",
    "tu:6": "Ann Lee was born in Oslo and studied painting before turning to film.",
    "tu:7": "Cara Stone began her career at a small theatre company.",
    "tu:8": "Gale Park is known for its old oak trees.",
    "tu:9": "Tickets for most events can be bought at the door.",
}
RELATIONS = [
    Relation(id="rel:1", source=A, target=B, label="DIRECTED", text_unit_id="tu:1"),
    Relation(id="rel:2", source=C, target=B, label="ACTED_IN", text_unit_id="tu:2"),
    Relation(id="rel:3", source=B, target=D, label="PRODUCED_BY", text_unit_id="tu:3"),
    Relation(id="rel:4", source=D, target=E, label="LOCATED_IN", text_unit_id="tu:4"),
    Relation(id="rel:5", source=E, target=F, label="HOSTS", text_unit_id="tu:5"),
]


def build_ablation_kb(path: Path) -> KnowledgeBase:
    """The graph above, finalised with real embeddings (the session's one embedding model)."""
    kb = KnowledgeBase.create(path)
    kb.add_text_units([TextUnit(id=tu, text=text, document_id=f"doc:{tu}") for tu, text in TEXTS.items()])
    kb.add_entities(
        [
            Entity(id=i, name=n, label=lab, description=d, text_unit_ids=tus, own_text_unit_ids=OWN_TEXT[i])
            for i, n, lab, d, tus in ENTITIES
        ]
    )
    kb.add_relations(RELATIONS)
    communities = kb.detect_communities(seed=0)
    kb.set_community_summaries({c.id: (f"Group {c.id}", "Films, people and places.") for c in communities})
    kb.finalize({"builder": "interventions_helpers"})
    return kb


def baseline_trace(cited=(A,), visited=(A, B, C), cited_text_units=("tu:2",)) -> Trace:
    """The baseline the ablations start from: A cited, B and C visited but not cited."""
    return Trace(
        question_id="q1",
        system="agentic-graphrag",
        answer="Ann Lee",
        visited_entities=list(visited),
        citations=Citations(entities=list(cited), text_units=list(cited_text_units)),
    )


@pytest.fixture(scope="session")
def ablation_kb(tmp_path_factory):
    """One build of the graph above per test session (import this fixture into a test module)."""
    kb = build_ablation_kb(tmp_path_factory.mktemp("ablation-kb") / "kb")
    yield kb
    kb.close()


@pytest.fixture(scope="session")
def ablation_view(ablation_kb):
    return ablation_kb.view()
