"""A control driving a tool agent (:class:`provbench.agents.GraphAgent`'s tools): one action per
request, from the tools the schema offers this step, never repeating an earlier call.

A behaviour that explores, while its prompt lacks the gold evidence, moves towards it with the
ids the conversation has shown: for the first gold triple no line holds yet, the neighbours of
its subject or object (``get_neighbors``; a ``search_entities`` by name when neither id is
known yet); then, for the sentences, each gold entity's details and the text units they list
(``get_entity_details``, ``read_textunit``). With the evidence in its prompt, or with nothing
left to try, it finishes: ``submit_evidence`` with its citations first when the agent asks for
evidence, then ``submit_answer``. A behaviour that does not explore finishes at once.
"""

from __future__ import annotations

from typing import Any, Iterator

from .behaviours import Behaviour
from .reading import Action, PromptReading
from .replies import CITED_KINDS, cited, minimal

THOUGHT = {"explore": "Looking for the evidence.", "finish": "Answering."}
FINISHING = ("submit_evidence", "submit_answer")


def agent_action(behaviour: Behaviour, r: PromptReading, schema: dict) -> dict[str, Any]:
    offered = {b["properties"]["tool"]["enum"][0]: b["properties"]["arguments"] for b in schema["anyOf"]}
    done = {a.key for a in r.actions}
    for tool, arguments in plan(behaviour, r, offered):
        if tool not in offered or not _fits(arguments, offered[tool]):
            continue
        if tool not in FINISHING and Action(tool, arguments).key in done:
            continue
        return _action(r, tool, arguments, offered[tool], "finish" if tool in FINISHING else "explore")
    tool = next((t for t in FINISHING if t in offered), next(iter(offered)))
    return _action(r, tool, {}, offered[tool], "finish")


def plan(behaviour: Behaviour, r: PromptReading, offered: dict[str, dict]) -> Iterator[tuple[str, dict]]:
    if behaviour.explores and r.gold is not None and not r.held:
        yield from explore(r)
    yield from finish(behaviour, r, offered)


def explore(r: PromptReading) -> Iterator[tuple[str, dict]]:
    gold = r.gold
    for triple in gold.triples:
        if r.lines_holding(triple):
            continue
        for name in (triple.subject, triple.object):
            for entity_id in r.entity_ids(name):
                yield "get_neighbors", {"entity_id": entity_id}
        for name in (triple.subject, triple.object):
            yield "search_entities", {"query": name}
    for name in gold.entities:
        for entity_id in r.entity_ids(name):
            yield "get_entity_details", {"entity_id": entity_id}
            for unit in r.listed_text_units(entity_id):
                yield "read_textunit", {"textunit_id": unit}
        yield "search_entities", {"query": name}


def finish(behaviour: Behaviour, r: PromptReading, offered: dict[str, dict]) -> Iterator[tuple[str, dict]]:
    citations = {key: behaviour.citations(r).get(kind, []) for key, kind in CITED_KINDS.items()}
    if "submit_evidence" in offered and not r.said("Evidence accepted") and any(citations.values()):
        yield "submit_evidence", citations
    yield "submit_answer", {"answer": behaviour.answer_text(r), **citations}


def _fits(arguments: dict, schema: dict) -> bool:
    """String arguments an enum constrains must be among its values."""
    props = schema.get("properties", {})
    return all(
        value in props[key]["enum"]
        for key, value in arguments.items()
        if isinstance(value, str) and "enum" in props.get(key, {})
    )


def _action(r: PromptReading, tool: str, arguments: dict, schema: dict, why: str) -> dict[str, Any]:
    """The reply: ``arguments`` fitted to the tool's schema (citation lists cut to what it allows,
    without ids a rejection named)."""
    fitted = {}
    for key, sub in schema.get("properties", {}).items():
        value = arguments.get(key)
        if isinstance(value, list):
            fitted[key] = cited(value, sub, r)
        elif isinstance(value, str) and value:
            fitted[key] = value[: sub.get("maxLength", len(value))]
        else:
            fitted[key] = minimal(sub)
    return {"thought": THOUGHT[why], "tool": tool, "arguments": fitted}
