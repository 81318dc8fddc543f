"""A tool agent over a graph view: search, entity details, neighbours, text units, communities.

Every tool reads ``env.view`` (never the store), so an intervention's view decides what the
agent can obtain.

Visiting (what ``trace.visited_entities`` means here)
    ``get_entity_details(e)`` visits ``e``; ``get_neighbors(e)`` visits ``e`` and every
    neighbour it lists. Search results and community member lists do not visit.
    ``read_textunit(t)`` adds ``t`` to ``trace.read_text_units``; ``read_community(c)`` adds ``c``
    to ``trace.read_communities``. Relationships count as seen when ``get_neighbors`` lists them.
    A well-formed call for an unknown or hidden id is recorded as an ``error`` step.

What a step shows (``Step.shown``)
    Search hits, an entity's details, neighbours (relations and their other ends), a text unit's
    text, a community report and its listed members. The text units and communities an entity's
    details list are ids only: they are shown by the step that reads them.
"""

from __future__ import annotations

import difflib
from typing import Any, ClassVar

from pydantic import Field

from .base import SystemOptions, clip
from .loop import AgentOptions, AgentRun, ToolAgent
from .tools import CITED_PARAMS, Tool, ToolFailure, ToolResult


class GraphAgentOptions(AgentOptions):
    search_k: int = Field(5, ge=1, le=50, description="hits per search tool call")
    neighbor_limit: int = Field(10, ge=1, le=200, description="neighbours listed per get_neighbors call")
    text_chars: int = Field(1200, ge=50, description="characters of a text unit shown by read_textunit")
    community_members: int = Field(10, ge=0, le=200, description="member entities listed by read_community")


class GraphAgent(ToolAgent):
    """Graph tools ending in submit_answer with cited entities, relationships, text units and
    communities. ``tool_descriptions`` words each tool for the model."""

    Options: ClassVar[type[SystemOptions]] = GraphAgentOptions
    tool_descriptions: ClassVar[dict[str, str]] = {
        "search_entities": "entities matching a query",
        "get_entity_details": "an entity's name, type, description, text units and communities",
        "get_neighbors": "an entity's relationships and the entities at their other end",
        "read_textunit": "a text unit's text",
        "search_communities": "community reports matching a query",
        "read_community": "a community report and some member entities",
        "submit_answer": "the final answer with the ids it relies on; ends the run",
    }

    def tools(self) -> list[Tool]:
        return [
            *self.graph_tools(),
            Tool(
                "submit_answer",
                (("answer", "string"), *CITED_PARAMS),
                self.submit_answer,
                self.tool_descriptions["submit_answer"],
                finishes=True,
            ),
        ]

    def graph_tools(self) -> list[Tool]:
        d = self.tool_descriptions
        return [
            Tool("search_entities", (("query", "string"),), self.search_entities, d["search_entities"]),
            Tool("get_entity_details", (("entity_id", "string"),), self.get_entity_details, d["get_entity_details"]),
            Tool("get_neighbors", (("entity_id", "string"),), self.get_neighbors, d["get_neighbors"]),
            Tool("read_textunit", (("textunit_id", "string"),), self.read_textunit, d["read_textunit"]),
            Tool("search_communities", (("query", "string"),), self.search_communities, d["search_communities"]),
            Tool("read_community", (("community_id", "string"),), self.read_community, d["read_community"]),
        ]

    # -- graph tools ----------------------------------------------------------------------------
    def search_entities(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        hits = run.env.view.search_entities(args["query"], k=self.options.search_k)
        return self.hits_result(run, hits, "entities")

    def search_communities(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        hits = run.env.view.search_communities(args["query"], k=self.options.search_k)
        return self.hits_result(run, hits, "communities")

    def hits_result(self, run: AgentRun, hits: list, what: str) -> ToolResult:
        for hit in hits:
            run.trace.record_retrieved(hit.kind, hit.id, hit.score)
            run.show(hit.kind, hit.id)
        lines = [f"- {h.id} | {h.name} (score {h.score:.2f})" for h in hits]
        text = "\n".join(lines) if lines else f"no {what} found"
        return ToolResult(text, [{"id": h.id, "score": round(h.score, 4)} for h in hits])

    def get_entity_details(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        view, entity = run.env.view, self.entity_or_fail(run, args["entity_id"])
        run.trace.visit(entity.id)
        run.trace.record_retrieved("entity", entity.id)
        text_units, communities = view.text_units_of(entity.id), view.communities_of(entity.id)
        run.show("entity", entity.id)
        run.show("text_unit", *text_units, content=False)  # listed: their text is read_textunit's
        run.show("community", *communities, content=False)
        text = "\n".join(
            [
                f"{entity.id} | {entity.name} | type: {entity.label or '-'}",
                f"description: {entity.description or '-'}",
                f"text units: {', '.join(text_units) or '-'}",
                f"communities: {', '.join(communities) or '-'}",
            ]
        )
        return ToolResult(text, {"entity": entity.id, "text_units": text_units, "communities": communities})

    def get_neighbors(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        entity = self.entity_or_fail(run, args["entity_id"])
        neighbours = run.env.view.neighbors(entity.id, limit=self.options.neighbor_limit)
        run.trace.visit(entity.id, *(nb.entity.id for nb in neighbours))
        lines = []
        for nb in neighbours:
            relation, other = nb.relation, f"{nb.entity.name} [{nb.entity.id}]"
            run.trace.record_retrieved("relationship", relation.id)
            run.trace.record_retrieved("entity", nb.entity.id)
            run.show("relationship", relation.id)
            run.show("entity", nb.entity.id)
            left, right = (entity.name, other) if nb.direction == "out" else (other, entity.name)
            lines.append(f"- {relation.id}: {left} -[{relation.label}]-> {right}")
        text = f"neighbours of {entity.id} ({entity.name}):\n" + ("\n".join(lines) or "none")
        return ToolResult(text, [{"relation": nb.relation.id, "entity": nb.entity.id} for nb in neighbours])

    def read_textunit(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        unit = run.env.view.text_unit(args["textunit_id"])
        if unit is None:
            raise ToolFailure(f"text unit {args['textunit_id']!r} does not exist or cannot be read")
        run.trace.read_text_unit(unit.id)
        run.trace.record_retrieved("text_unit", unit.id)
        run.show("text_unit", unit.id)
        return ToolResult(f"[{unit.id}] {clip(unit.text, self.options.text_chars)}", {"text_unit": unit.id})

    def read_community(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        view = run.env.view
        community = view.community(args["community_id"])
        if community is None:
            raise ToolFailure(f"community {args['community_id']!r} does not exist or cannot be read")
        run.trace.read_community(community.id)
        run.trace.record_retrieved("community", community.id)
        run.show("community", community.id)
        members = [e for e in (view.entity(i) for i in community.entity_ids[: self.options.community_members]) if e]
        run.show("entity", *(e.id for e in members))
        text = "\n".join(
            [
                f"{community.id} | {community.title or '-'}",
                f"summary: {community.summary or '-'}",
                "members: " + (", ".join(f"{e.name} [{e.id}]" for e in members) or "-"),
            ]
        )
        return ToolResult(text, {"community": community.id})

    def entity_or_fail(self, run: AgentRun, entity_id: str):
        entity = run.env.view.entity(entity_id)
        if entity is None:
            raise ToolFailure(f"unknown entity id {entity_id!r}{self.entity_hint(run, entity_id)}")
        return entity

    def entity_hint(self, run: AgentRun, wrong_id: str) -> str:
        """A suggestion for a wrong entity id: an entity of that name, else a close id already shown."""
        named = run.env.view.find_entity(wrong_id)
        if named is not None:
            return f"; did you mean {named.id} ({named.name})?"
        shown = [r.id for r in run.trace.retrieved if r.kind == "entity"]
        close = difflib.get_close_matches(wrong_id, shown, n=1, cutoff=0.6)
        return f"; did you mean {close[0]}?" if close else ""
