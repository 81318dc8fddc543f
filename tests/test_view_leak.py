"""An intervention reaches a system only through its view: an entity the view hides cannot be
found by any of the seven agent tools, by similarity search, by name, or by neighbour expansion.

Runs on the tiny KB of provbench.testing.kb. Every check is paired with a control on the
unmodified view that finds the entity, so the test fails if the hiding stops working.
"""

from __future__ import annotations

import random

import pytest

from provbench.model import Citations, Question, Trace
from provbench.plugin_api import Environment
from provbench_plugins.papers.p000_neighborhoods.interventions import (
    CitedRemoval,
    EntityRemoval,
    FullIsolation,
    RandomRemoval,
)

HIDDEN, HIDDEN_NAME = "ent:tessa-quill", "Tessa Quill"
ORIN, GLASS = "ent:orin-vale", "ent:glass-harbor"
FILM_COMMUNITY_TITLE = "Glass Harbor and its makers"
QUESTION = Question(id="q-leak", question="Who starred in Glass Harbor?", answer="Tessa Quill")


pytestmark = pytest.mark.usefixtures("on_graph_store")  # every test runs on each graph database


@pytest.fixture(scope="module")
def base_view(tmp_path_factory, graph_store):
    from provbench.testing.kb import build_tiny_kb

    from provbench.kb.backends import default_graph_store

    with default_graph_store(graph_store):
        kb = build_tiny_kb(tmp_path_factory.mktemp(f"leak-kb-{graph_store}") / "kb")
    yield kb.view()
    kb.close()


def baseline(cited=(), visited=()) -> Trace:
    return Trace(question_id=QUESTION.id, system="agentic-graphrag", answer="Tessa Quill",
                 visited_entities=list(visited), citations=Citations(entities=list(cited)))


ALL_TINY = ("ent:orin-vale", "ent:glass-harbor", "ent:tessa-quill", "ent:lumen-studios", "ent:silver-reel-award",
            "ent:dunmere", "ent:norland", "ent:aster-river", "ent:mara-holt", "ent:kestrel-bridge")


def reachable(view, names: dict[str, str]) -> dict[str, set[str]]:
    """Entity ids each view route reaches; ``names`` (id -> name) seeds the searches by name."""
    visible = sorted(view.entity_ids())
    routes = {
        "entity_ids": set(visible),
        "entity": {e for e in ALL_TINY if view.entity(e) is not None},
        "find_entity": {found.id for found in map(view.find_entity, names.values()) if found},
        "search_entities": {h.id for name in names.values() for h in view.search_entities(name, k=50)},
        "neighbors": {n.entity.id for e in visible for n in view.neighbors(e)},
        "shortest_paths": {e for other in visible[1:] for p in view.shortest_paths(visible[0], other, max_hops=4)
                           for e in p.entities},
        "communities": {e for c in ("com:0", "com:1") for e in view.community(c).entity_ids},
        "text_units": {e for t in (f"tu:{i}" for i in range(6)) if view.text_unit(t)
                       for e in view.text_unit(t).entity_ids},
    }
    routes["search_text_units"] = {e for name in names.values() for h in view.search_text_units(name, k=10)
                                   for e in view.text_unit(h.id).entity_ids}
    return routes


def leaks(view, hidden: set[str], names: dict[str, str]) -> dict[str, set[str]]:
    return {route: ids & hidden for route, ids in reachable(view, names).items() if ids & hidden}


def test_control_the_unmodified_view_finds_the_entity(base_view):
    found = leaks(base_view, {HIDDEN}, {HIDDEN: HIDDEN_NAME})
    assert set(found) == {"entity_ids", "entity", "find_entity", "search_entities", "neighbors",
                          "shortest_paths", "communities", "text_units", "search_text_units"}


@pytest.mark.parametrize("ablation, trace, seeds", [
    (CitedRemoval(), baseline(cited=[HIDDEN], visited=[HIDDEN]), 1),
    (FullIsolation(), baseline(cited=[ORIN], visited=[ORIN, HIDDEN]), 1),
    (EntityRemoval(), baseline(cited=[ORIN], visited=[ORIN, HIDDEN]), 1),
    (RandomRemoval(search_k=0, hops=1), baseline(cited=[ORIN, GLASS], visited=[ORIN]), 3),
])
def test_removed_entities_are_unreachable(base_view, ablation, trace, seeds):
    for seed in range(seeds):
        plan = ablation.plan(base_view, QUESTION, trace, random.Random(seed))
        view = ablation.make_view(base_view, QUESTION, trace, random.Random(seed))
        assert plan.entities, "the ablation should remove something here"
        names = {e: base_view.entity(e).name for e in plan.entities}
        assert leaks(view, set(plan.entities), names) == {}, ablation.name


def act(tool: str, **arguments) -> dict:
    return {"thought": "probe", "tool": tool, "arguments": arguments}


def probe_with_every_tool(view, community: str):
    """Run the agent on ``view`` with a script that tries every tool on or around HIDDEN."""
    from provbench.llm import LLMClient, ScriptedBackend
    from provbench_plugins.papers.p000_neighborhoods.agentic import AgenticGraphRAG

    cite = {"cited_relationships": [], "cited_textunits": [], "cited_communities": []}
    replies = [
        act("search_entities", query=HIDDEN_NAME),
        act("get_entity_details", entity_id=HIDDEN),
        act("get_neighbors", entity_id=HIDDEN),
        act("get_neighbors", entity_id=ORIN),
        act("get_neighbors", entity_id=GLASS),
        act("read_textunit", textunit_id="tu:1"),
        act("search_communities", query=FILM_COMMUNITY_TITLE),
        act("read_community", community_id=community),
        act("submit_answer", answer="Tessa Quill", cited_entities=[HIDDEN], **cite),
        act("submit_answer", answer="Tessa Quill", cited_entities=[ORIN], **cite),
    ]
    backend = ScriptedBackend(replies=replies)
    run = AgenticGraphRAG(max_steps=len(replies)).run(QUESTION, Environment(view=view, llm=LLMClient(backend)))
    return run, backend


def observations(run, backend) -> list[str]:
    """What each successful tool call told the model (step j's result is in request j + 1)."""
    texts = []
    for j, step in enumerate(run.steps[:-1]):
        if step.kind == "tool_call":
            call = backend.calls[j + 1]
            messages = call["messages"] if isinstance(call, dict) else call.messages
            texts.append(messages[-1]["content"])
    return texts


@pytest.fixture(scope="module")
def film_community(base_view) -> str:
    return next(h.id for h in base_view.search_communities(FILM_COMMUNITY_TITLE, k=2)
                if HIDDEN in base_view.community(h.id).entity_ids)


def test_control_every_agent_tool_reaches_the_entity_on_the_full_view(base_view, film_community):
    run, backend = probe_with_every_tool(base_view, film_community)
    assert HIDDEN in run.visited_entities and HIDDEN in {item.id for item in run.retrieved}
    assert run.citations.entities == [HIDDEN]  # the first submission is accepted
    assert sum(HIDDEN in text for text in observations(run, backend)) >= 4


def test_no_agent_tool_reaches_a_removed_entity(base_view, film_community):
    trace = baseline(cited=[HIDDEN], visited=[HIDDEN])
    view = CitedRemoval().make_view(base_view, QUESTION, trace, random.Random(0))
    run, backend = probe_with_every_tool(view, film_community)

    tools = {step.tool for step in run.steps}
    assert {"search_entities", "get_entity_details", "get_neighbors", "read_textunit", "search_communities",
            "read_community", "submit_answer"} <= tools  # all seven tools were exercised
    assert HIDDEN not in run.visited_entities
    assert HIDDEN not in {item.id for item in run.retrieved}
    assert run.citations.entities == [ORIN] and run.answer == "Tessa Quill"
    for step in run.steps:
        if step.kind == "tool_call":
            assert HIDDEN not in str(step.result), step
    refused = [s for s in run.steps if s.kind in ("error", "rejection")]
    assert [s.tool for s in refused] == ["get_entity_details", "get_neighbors", "submit_answer"]
    assert all(HIDDEN not in text for text in observations(run, backend))
