"""Fixtures and helpers for the tests of paper 000's systems.

The tests run against a real knowledge base (the tiny KB of ``provbench.testing.kb``) and the scripted
LLM. They do not hard-code the KB's ids: :class:`KBFacts` picks them from the view (an entity
with neighbours and text units, one of its relationships, a text unit it does not link to,
an entity far from it, a community), so the same tests run on any small KB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pluggy
import pytest

from provbench import hookspecs
from provbench.kb.types import Entity, Relation
from provbench.llm import LLMClient, ScriptedBackend
from provbench.model import Question
from provbench.plugin_api import Environment


@dataclass(frozen=True)
class KBFacts:
    entity: Entity  # has neighbours and at least one readable text unit
    relation: Relation  # one of the entity's relationships
    neighbour: Entity  # the entity at the relationship's other end
    neighbour_ids: tuple[str, ...]  # every neighbour the agent's get_neighbors lists
    text_unit: str  # a text unit of the entity
    other_text_unit: str  # a readable text unit the entity does not link to
    far_entity: Entity  # neither the entity nor one of its neighbours
    community: str  # a community whose report can be read


def systems_plugin_manager() -> pluggy.PluginManager:
    """A fresh plugin manager holding only the built-in systems plugin (as the default one names it),
    so these tests do not depend on the other built-in plugins."""
    import provbench_plugins.papers.p000_neighborhoods as p000

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(p000, name="provbench_plugins.papers.p000_neighborhoods")
    return pm


def find_facts(view: Any, neighbor_limit: int = 10) -> KBFacts:
    entity_ids = sorted(view.entity_ids())
    for entity_id in entity_ids:
        neighbours = view.neighbors(entity_id, limit=neighbor_limit)
        units = view.text_units_of(entity_id)
        if not neighbours or not units:
            continue
        near = {entity_id, *(nb.entity.id for nb in neighbours)}
        far = next((e for e in entity_ids if e not in near), None)
        other_units = [t for e in entity_ids for t in view.text_units_of(e) if t not in units]
        communities = [c for e in entity_ids for c in view.communities_of(e)]
        if far is None or not other_units or not communities:
            continue
        return KBFacts(
            entity=view.entity(entity_id),
            relation=neighbours[0].relation,
            neighbour=neighbours[0].entity,
            neighbour_ids=tuple(nb.entity.id for nb in neighbours),
            text_unit=units[0],
            other_text_unit=other_units[0],
            far_entity=view.entity(far),
            community=communities[0],
        )
    raise AssertionError("the test KB has no entity with neighbours, text units, a far entity and a community")


_SHARED: dict[str, Any] = {}


@pytest.fixture(scope="session")
def systems_kb(tmp_path_factory, request):
    """The tiny KB, built once per session even though several test modules import this fixture."""
    if "kb" not in _SHARED:
        from provbench.testing.kb import build_tiny_kb

        _SHARED["kb"] = build_tiny_kb(tmp_path_factory.mktemp("systems-kb"))
        request.config.add_cleanup(lambda: _SHARED.pop("kb").close())
    return _SHARED["kb"]


@pytest.fixture(scope="session")
def view(systems_kb):
    return systems_kb.view()


@pytest.fixture(scope="session")
def facts(view) -> KBFacts:
    return find_facts(view)


@pytest.fixture()
def question(facts) -> Question:
    return Question(id="q-test", question=f"What is {facts.entity.name} related to?", answer=facts.neighbour.name)


class Scripted:
    """A scripted LLM and what it was sent."""

    def __init__(self, replies: list[Any]) -> None:
        self.backend = ScriptedBackend(replies=list(replies))
        self.llm = LLMClient(self.backend)

    @property
    def calls(self) -> list[Any]:
        return self.backend.calls

    def messages(self, index: int) -> list[dict]:
        """The messages of request ``index`` (negative counts from the end)."""
        call = self.calls[index]
        return call["messages"] if isinstance(call, dict) else call.messages

    def last_user_message(self, index: int) -> str:
        return [m for m in self.messages(index) if m["role"] == "user"][-1]["content"]

    def prompt_text(self, index: int) -> str:
        return "\n".join(m["content"] for m in self.messages(index))


def environment(view: Any, scripted: Scripted, seed: int = 0) -> Environment:
    return Environment(view=view, llm=scripted.llm, seed=seed)


def act(tool: str, thought: str = "next step", **arguments: Any) -> dict:
    """One agent reply: the JSON object the schema asks for."""
    return {"thought": thought, "tool": tool, "arguments": arguments}


def submit(answer: str, entities=(), relationships=(), textunits=(), communities=()) -> dict:
    return act(
        "submit_answer",
        thought="answer",
        answer=answer,
        cited_entities=list(entities),
        cited_relationships=list(relationships),
        cited_textunits=list(textunits),
        cited_communities=list(communities),
    )


def evidence(entities=(), relationships=(), textunits=(), communities=()) -> dict:
    return act(
        "submit_evidence",
        thought="evidence",
        cited_entities=list(entities),
        cited_relationships=list(relationships),
        cited_textunits=list(textunits),
        cited_communities=list(communities),
    )


def kinds(trace) -> list[tuple[str, str | None]]:
    return [(s.kind, s.tool) for s in trace.steps]
