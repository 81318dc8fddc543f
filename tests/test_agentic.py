"""The agentic systems of paper 000 on a real tiny KB with a scripted LLM: the trace step by step,
every malformed-output path, the budget, visited-only and evidence-first, and extension."""

from __future__ import annotations

import pytest
from systems_helpers import (  # noqa: F401
    Scripted,
    act,
    environment,
    systems_plugin_manager,
    evidence,
    facts,
    kinds,
    question,
    submit,
    systems_kb,
    view,
)

from provbench import hookimpl
from provbench.registry import build_registry
from provbench.agents import CitationProblem, Tool, ToolResult
from provbench_plugins.papers.p000_neighborhoods.agentic import (
    AgenticEvidenceFirst,
    AgenticGraphRAG,
    AgenticVisitedOnly,
)

AGENT_TOOLS = [
    "search_entities",
    "get_entity_details",
    "get_neighbors",
    "read_textunit",
    "search_communities",
    "read_community",
    "submit_answer",
]


def run_agent(system, view, question, replies):
    scripted = Scripted(replies)
    trace = system.run(question, environment(view, scripted))
    return trace, scripted


# -- the loop, step by step -----------------------------------------------------------------------


def test_agent_explores_then_answers_with_a_complete_trace(view, question, facts):
    e, r, t, c = facts.entity.id, facts.relation.id, facts.text_unit, facts.community
    replies = [
        act("search_entities", query=facts.entity.name),
        act("get_entity_details", entity_id=e),
        act("get_neighbors", entity_id=e),
        act("read_textunit", textunit_id=t),
        act("search_communities", query=facts.entity.name),
        act("read_community", community_id=c),
        submit(facts.neighbour.name, entities=[e], relationships=[r], textunits=[t], communities=[c]),
    ]
    trace, scripted = run_agent(AgenticGraphRAG(), view, question, replies)
    assert kinds(trace) == [("tool_call", name) for name in AGENT_TOOLS]
    assert trace.outcome == "answered" and trace.answer == facts.neighbour.name
    # search results do not visit; details visit e; neighbours visit e and every neighbour listed
    assert trace.visited_entities == [e, *[n for n in dict.fromkeys(facts.neighbour_ids) if n != e]]
    assert trace.read_text_units == [t] and trace.read_communities == [c]
    assert trace.citations.model_dump() == {
        "entities": [e],
        "relationships": [r],
        "text_units": [t],
        "communities": [c],
        "paths": [],
        "facts": [],
    }
    assert trace.footprint() == {
        "retrieved_text_units": 1,
        "cited_text_units": 1,
        "visited_entities": len(trace.visited_entities),
        "cited_entities": 1,
    }
    hits = view.search_entities(facts.entity.name, k=5)
    assert trace.steps[0].result == [{"id": h.id, "score": round(h.score, 4)} for h in hits]
    assert {"kind": "entity", "id": hits[0].id, "score": hits[0].score} in [x.model_dump() for x in trace.retrieved]
    assert trace.steps[2].result[0] == {"relation": r, "entity": facts.neighbour.id}
    assert trace.steps[1].arguments == {"entity_id": e} and trace.steps[1].thought == "next step"
    assert len(scripted.calls) == 7 and len(trace.llm_calls) == 7
    # each tool result reaches the model as compact text in the next request
    assert facts.entity.name in scripted.last_user_message(2)
    assert f"{r}:" in scripted.last_user_message(3)
    assert view.text_unit(t).text.split()[0] in scripted.last_user_message(4)
    assert "Steps left: 8." in scripted.last_user_message(4)
    assert question.question in scripted.messages(0)[1]["content"]


def test_agent_requests_are_schema_constrained_to_the_seven_tools(view, question, facts):
    system = AgenticGraphRAG()
    branches = system.action_schema()["anyOf"]
    assert [b["properties"]["tool"]["enum"] for b in branches] == [[name] for name in AGENT_TOOLS]
    assert all(b["required"] == ["thought", "tool", "arguments"] for b in branches)
    arguments = {b["properties"]["tool"]["enum"][0]: b["properties"]["arguments"] for b in branches}
    assert arguments["get_neighbors"]["required"] == ["entity_id"]
    assert arguments["submit_answer"]["required"] == [
        "answer",
        "cited_entities",
        "cited_relationships",
        "cited_textunits",
        "cited_communities",
    ]
    assert arguments["submit_answer"]["properties"]["cited_entities"]["type"] == "array"
    prompt = system.system_prompt()
    for name in AGENT_TOOLS:
        assert f"- {name}(" in prompt
    _, scripted = run_agent(system, view, question, [submit("x")])
    sent = scripted.calls[0]
    assert (sent["schema"] if isinstance(sent, dict) else sent.schema) == system.action_schema()


def test_constrain_ids_limits_id_arguments_to_what_tools_showed(view, question, facts):
    e = facts.entity.id
    replies = [act("search_entities", query=facts.entity.name), act("get_entity_details", entity_id=e), submit("x")]
    trace, scripted = run_agent(AgenticGraphRAG(constrain_ids=True), view, question, replies)
    assert trace.outcome == "answered"

    def branches(index):
        call = scripted.calls[index]
        schema = call["schema"] if isinstance(call, dict) else call.schema
        return {b["properties"]["tool"]["enum"][0]: b["properties"]["arguments"] for b in schema["anyOf"]}

    first = branches(0)
    assert "get_entity_details" not in first and "read_textunit" not in first  # no ids shown yet
    assert first["submit_answer"]["properties"]["cited_entities"] == {
        "type": "array",
        "items": {"type": "string"},
        "maxItems": 0,
    }
    hits = [h["id"] for h in trace.steps[0].result]
    assert branches(1)["get_neighbors"]["properties"]["entity_id"]["enum"] == hits
    after_details = branches(2)
    assert after_details["read_textunit"]["properties"]["textunit_id"]["enum"] == view.text_units_of(e)
    assert "enum" not in after_details["search_entities"]["properties"]["query"]


# -- malformed output: recorded, reported back, bounded ------------------------------------------------

MALFORMED = [
    ("not json", "{this is not json", "rejection", None, "not a JSON object"),
    ("unknown tool", act("delete_graph", entity_id="x"), "rejection", "delete_graph", "unknown tool 'delete_graph'"),
    (
        "missing argument",
        act("get_neighbors"),
        "rejection",
        "get_neighbors",
        "get_neighbors needs a non-empty string argument 'entity_id'",
    ),
    ("empty argument", act("search_entities", query="  "), "rejection", "search_entities", "non-empty string"),
    (
        "unexpected argument",
        act("read_textunit", textunit_id="tu:0", page=2),
        "rejection",
        "read_textunit",
        "unexpected argument(s) ['page']",
    ),
    (
        "mistyped argument",
        act("get_entity_details", entity_id=["a"]),
        "rejection",
        "get_entity_details",
        "non-empty string argument 'entity_id'",
    ),
    (
        "arguments not an object",
        {"thought": "t", "tool": "search_entities", "arguments": "x"},
        "rejection",
        "search_entities",
        "must be a JSON object",
    ),
    (
        "mistyped citation list",
        act("submit_answer", answer="a", cited_entities="ent:x"),
        "rejection",
        "submit_answer",
        "must be a list of id strings",
    ),
    ("empty answer", submit(""), "rejection", "submit_answer", "non-empty string argument 'answer'"),
    (
        "unknown entity",
        act("get_entity_details", entity_id="ent:no-such-entity"),
        "error",
        "get_entity_details",
        "unknown entity id 'ent:no-such-entity'",
    ),
    (
        "unknown neighbours entity",
        act("get_neighbors", entity_id="ent:no-such-entity"),
        "error",
        "get_neighbors",
        "unknown entity id",
    ),
    (
        "unknown text unit",
        act("read_textunit", textunit_id="tu:999999"),
        "error",
        "read_textunit",
        "text unit 'tu:999999' does not exist",
    ),
    (
        "unknown community",
        act("read_community", community_id="com:999999"),
        "error",
        "read_community",
        "community 'com:999999' does not exist",
    ),
    (
        "nonexistent citation",
        submit("a", entities=["ent:no-such-entity"]),
        "rejection",
        "submit_answer",
        "ent:no-such-entity (no such entity)",
    ),
]


@pytest.mark.parametrize("label, reply, kind, tool, message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_output_is_recorded_reported_and_the_run_goes_on(
    view, question, facts, label, reply, kind, tool, message
):
    final = submit("done", entities=[])
    trace, scripted = run_agent(AgenticGraphRAG(check_citations=True), view, question, [reply, final])
    assert kinds(trace) == [(kind, tool), ("tool_call", "submit_answer")]
    assert message in trace.steps[0].error
    assert trace.outcome == "answered" and trace.answer == "done"
    feedback = scripted.last_user_message(1)
    assert message in feedback
    assert feedback.startswith("Error from" if kind == "error" else "Rejected:")
    assert trace.steps[0].result is None and not trace.visited_entities


def test_unknown_entity_by_name_gets_a_hint(view, question, facts):
    trace, _ = run_agent(
        AgenticGraphRAG(), view, question, [act("get_entity_details", entity_id=facts.entity.name), submit("x")]
    )
    assert f"did you mean {facts.entity.id}" in trace.steps[0].error


def test_a_mangled_id_of_a_search_hit_gets_a_hint(view, question, facts):
    e = facts.entity.id
    mangled = e.split(":", 1)[-1]
    trace, _ = run_agent(
        AgenticGraphRAG(),
        view,
        question,
        [act("search_entities", query=facts.entity.name), act("get_neighbors", entity_id=mangled), submit("x")],
    )
    assert e in [h["id"] for h in trace.steps[0].result]
    assert trace.steps[1].kind == "error" and f"did you mean {e}" in trace.steps[1].error


def test_hidden_entities_cannot_be_reached(view, question, facts):
    hidden = view.hide(entities=[facts.entity.id])
    trace, _ = run_agent(
        AgenticGraphRAG(), hidden, question, [act("get_entity_details", entity_id=facts.entity.id), submit("x")]
    )
    assert trace.steps[0].kind == "error" and not trace.visited_entities


def test_malformed_output_counts_against_the_budget(view, question):
    trace, scripted = run_agent(AgenticGraphRAG(max_steps=3), view, question, ["junk", "junk", "junk", "unused"])
    assert kinds(trace) == [("rejection", None)] * 3
    assert trace.outcome == "budget_exhausted" and trace.answer is None
    assert len(scripted.calls) == 3


def test_budget_exhaustion_is_an_outcome_not_a_crash(view, question, facts):
    replies = [act("search_entities", query="a"), act("get_entity_details", entity_id=facts.entity.id), submit("late")]
    trace, scripted = run_agent(AgenticGraphRAG(max_steps=2, force_final_answer=False), view, question, replies)
    assert kinds(trace) == [("tool_call", "search_entities"), ("tool_call", "get_entity_details")]
    assert trace.outcome == "budget_exhausted" and trace.answer is None
    assert "within 2 steps" in trace.error and trace.artifacts["steps_used"] == 2
    assert trace.visited_entities == [facts.entity.id]  # what it did see is still recorded
    assert len(scripted.calls) == 2
    assert "This is your last step" in scripted.last_user_message(1)


def test_an_llm_failure_ends_the_agent_run_as_failed(view, question):
    from provbench.llm import LLMError

    trace, _ = run_agent(
        AgenticGraphRAG(), view, question, [act("search_entities", query="a"), LLMError("scripted outage")]
    )
    assert trace.outcome == "failed" and "scripted outage" in trace.error
    assert kinds(trace) == [("tool_call", "search_entities"), ("error", "llm")]


def test_rejected_citations_are_retried_then_accepted_with_flags(view, question, facts):
    e = facts.entity.id
    bad = submit("guess", entities=[e, "ent:ghost"])
    trace, scripted = run_agent(AgenticGraphRAG(max_retries=1, check_citations=True), view, question, [bad, bad])
    assert kinds(trace) == [("rejection", "submit_answer"), ("tool_call", "submit_answer")]
    assert trace.outcome == "answered" and trace.answer == "guess"
    assert trace.citations.entities == [e]  # the nonexistent citation is dropped
    assert trace.artifacts["flagged_citations"] == [
        {"field": "entities", "id": "ent:ghost", "reason": "no such entity"}
    ]
    assert len(scripted.calls) == 2


def test_the_base_agents_citations_are_not_checked_by_default(view, question, facts):
    """The paper reserves citation control for the two variants: the base agent's submission is
    taken as given, and its forced last step may cite any id."""
    e = facts.entity.id
    trace, _ = run_agent(AgenticGraphRAG(), view, question, [submit("guess", entities=[e, "ent:ghost"])])
    assert kinds(trace) == [("tool_call", "submit_answer")]
    assert trace.citations.entities == [e, "ent:ghost"] and "flagged_citations" not in trace.artifacts
    replies = [act("get_entity_details", entity_id=e), submit("Dunmere", entities=[e, "ent:ghost"])]
    trace, scripted = run_agent(AgenticGraphRAG(max_steps=2), view, question, replies)
    cited = scripted.calls[1]["schema"]["anyOf"][0]["properties"]["arguments"]["properties"]["cited_entities"]
    assert "enum" not in cited["items"] and trace.citations.entities == [e, "ent:ghost"]
    assert AgenticVisitedOnly().options.check_citations and AgenticEvidenceFirst().options.check_citations


# -- visited-only -----------------------------------------------------------------------------------


def test_visited_only_rejects_unvisited_citations_until_they_are_visited(view, question, facts):
    e, far = facts.entity.id, facts.far_entity.id
    replies = [
        act("get_entity_details", entity_id=e),
        submit("A", entities=[e, far]),
        act("get_entity_details", entity_id=far),
        submit("A", entities=[e, far]),
    ]
    trace, scripted = run_agent(AgenticVisitedOnly(), view, question, replies)
    assert kinds(trace) == [
        ("tool_call", "get_entity_details"),
        ("rejection", "submit_answer"),
        ("tool_call", "get_entity_details"),
        ("tool_call", "submit_answer"),
    ]
    assert trace.steps[1].error == (
        f"these citations failed: {far} (not visited). Fix them and call submit_answer again."
    )
    assert f"{far} (not visited)" in scripted.last_user_message(2)
    assert e not in trace.steps[1].error
    assert trace.outcome == "answered" and trace.citations.entities == [e, far]
    assert "flagged_citations" not in trace.artifacts
    assert "cite an entity only after you have visited it" in scripted.messages(0)[0]["content"]


def test_neighbours_count_as_visited(view, question, facts):
    replies = [act("get_neighbors", entity_id=facts.entity.id), submit("A", entities=[facts.neighbour.id])]
    trace, _ = run_agent(AgenticVisitedOnly(), view, question, replies)
    assert kinds(trace)[-1] == ("tool_call", "submit_answer") and trace.citations.entities == [facts.neighbour.id]


def test_search_hits_do_not_count_as_visited(view, question, facts):
    replies = [
        act("search_entities", query=facts.far_entity.name),
        submit("A", entities=[facts.far_entity.id]),
        submit("A", entities=[facts.far_entity.id]),
    ]
    trace, _ = run_agent(AgenticVisitedOnly(max_retries=0), view, question, replies)
    assert kinds(trace) == [("tool_call", "search_entities"), ("tool_call", "submit_answer")]
    assert trace.citations.entities == [] and trace.answer == "A"


def test_visited_only_after_max_retries_answers_with_only_visited_citations_and_flags(view, question, facts):
    e, far = facts.entity.id, facts.far_entity.id
    bad = submit("B", entities=[e, far])
    replies = [act("get_entity_details", entity_id=e), bad, bad, bad, "unused"]
    trace, scripted = run_agent(AgenticVisitedOnly(max_retries=2), view, question, replies)
    assert kinds(trace) == [("tool_call", "get_entity_details")] + [("rejection", "submit_answer")] * 2 + [
        ("tool_call", "submit_answer")
    ]
    assert trace.outcome == "answered" and trace.answer == "B"
    assert trace.citations.entities == [e]
    assert trace.artifacts["flagged_citations"] == [{"field": "entities", "id": far, "reason": "not visited"}]
    assert trace.steps[-1].result["dropped_after_retries"][0]["id"] == far
    assert len(scripted.calls) == 4


# -- evidence-first ---------------------------------------------------------------------------------


def test_evidence_first_orders_evidence_before_answer(view, question, facts):
    e, r, t = facts.entity.id, facts.relation.id, facts.text_unit
    replies = [
        act("submit_answer", answer="too early"),  # answer before evidence
        act("get_neighbors", entity_id=e),
        evidence(entities=[e], textunits=[t]),  # t not read yet
        evidence(),  # empty evidence
        act("read_textunit", textunit_id=t),
        evidence(entities=[e], relationships=[r], textunits=[t]),
        act("submit_answer", answer="C", cited_entities=[e]),  # citations do not belong here
        act("submit_answer", thought="final", answer="C"),
    ]
    trace, scripted = run_agent(AgenticEvidenceFirst(), view, question, replies)
    assert kinds(trace) == [
        ("rejection", "submit_answer"),
        ("tool_call", "get_neighbors"),
        ("rejection", "submit_evidence"),
        ("rejection", "submit_evidence"),
        ("tool_call", "read_textunit"),
        ("tool_call", "submit_evidence"),
        ("rejection", "submit_answer"),
        ("tool_call", "submit_answer"),
    ]
    assert "call submit_evidence first" in trace.steps[0].error
    assert trace.steps[2].error.startswith(f"these citations failed: {t} (not read)")
    assert "at least one" in trace.steps[3].error
    assert "unexpected argument(s) ['cited_entities']" in trace.steps[6].error
    assert "Evidence accepted" in scripted.last_user_message(6)
    assert trace.outcome == "answered" and trace.answer == "C"
    assert trace.citations.model_dump() == {
        "entities": [e],
        "relationships": [r],
        "text_units": [t],
        "communities": [],
        "paths": [],
        "facts": [],
    }
    assert trace.artifacts["evidence_rejections"] == 1


def test_evidence_must_exist_and_have_been_seen(view, question, facts):
    e, far, c = facts.entity.id, facts.far_entity.id, facts.community
    replies = [
        act("get_entity_details", entity_id=e),
        evidence(entities=[e, far, "ent:ghost"], relationships=[facts.relation.id], communities=[c]),
        "unused",
    ]
    trace, _ = run_agent(AgenticEvidenceFirst(max_steps=2, force_final_answer=False), view, question, replies)
    error = trace.steps[1].error
    assert f"{far} (not visited)" in error and "ent:ghost (no such entity)" in error
    assert f"{facts.relation.id} (not listed by get_neighbors)" in error and f"{c} (not read)" in error
    assert f"{e} (" not in error
    assert trace.outcome == "budget_exhausted"


def test_evidence_first_tool_set_and_prompt(view):
    system = AgenticEvidenceFirst()
    names = [t.name for t in system.tools()]
    assert names == AGENT_TOOLS[:-1] + ["submit_evidence", "submit_answer"]
    assert "submit_evidence" in system.system_prompt() and "Before answering" in system.system_prompt()


# -- finishing within the budget -------------------------------------------------------------------


def test_the_last_step_offers_only_the_answer_and_records_that_it_was_forced(view, question, facts):
    e = facts.entity.id
    replies = [act("get_entity_details", entity_id=e), submit("Dunmere", entities=[e, "ent:ghost"])]
    trace, scripted = run_agent(AgenticGraphRAG(max_steps=2, check_citations=True), view, question, replies)
    last = scripted.calls[1]
    branches = (last["schema"] if isinstance(last, dict) else last.schema)["anyOf"]
    assert [b["properties"]["tool"]["enum"] for b in branches] == [["submit_answer"]]
    # a forced submission may only cite what tool results showed
    cited = branches[0]["properties"]["arguments"]["properties"]["cited_entities"]
    assert e in cited["items"]["enum"] and cited["maxItems"] == 3
    assert branches[0]["properties"]["thought"]["maxLength"] == 60
    assert (last["max_tokens"] if isinstance(last, dict) else last.max_tokens) == 2 * 384
    assert "This is your last step: call submit_answer now." in scripted.last_user_message(1)
    # never sent back: the unknown id is dropped and flagged, the answer accepted and marked forced
    assert trace.outcome == "answered" and trace.answer == "Dunmere" and trace.citations.entities == [e]
    assert trace.artifacts["forced_answer"] is True and trace.steps[-1].result["forced"] is True
    assert trace.artifacts["flagged_citations"][0]["id"] == "ent:ghost"


def test_a_tool_not_offered_on_the_last_step_is_rejected(view, question, facts):
    replies = [act("search_entities", query="a"), act("get_entity_details", entity_id=facts.entity.id)]
    trace, _ = run_agent(AgenticGraphRAG(max_steps=2), view, question, replies)
    assert kinds(trace) == [("tool_call", "search_entities"), ("rejection", "get_entity_details")]
    assert "cannot be called now" in trace.steps[1].error and trace.outcome == "budget_exhausted"
    assert "forced_answer" not in trace.artifacts


def test_an_unforced_answer_is_not_marked_forced(view, question):
    trace, _ = run_agent(AgenticGraphRAG(max_steps=3), view, question, [submit("x")])
    assert trace.outcome == "answered" and "forced_answer" not in trace.artifacts


def test_an_exact_repeat_is_rejected_with_a_hint_and_does_not_run(view, question, facts):
    replies = [
        act("search_entities", query="aster"),
        act("search_entities", query="aster"),
        act("search_entities", query="Aster river"),
        submit("x"),
    ]
    trace, scripted = run_agent(AgenticGraphRAG(), view, question, replies)
    assert kinds(trace) == [
        ("tool_call", "search_entities"),
        ("rejection", "search_entities"),
        ("tool_call", "search_entities"),
        ("tool_call", "submit_answer"),
    ]
    assert "already called search_entities with these arguments at step 1" in trace.steps[1].error
    assert "already called" in scripted.last_user_message(2)
    off, _ = run_agent(AgenticGraphRAG(reject_repeats=False), view, question, replies[:2] + [submit("x")])
    assert kinds(off)[1] == ("tool_call", "search_entities")


def test_evidence_first_is_steered_to_evidence_then_answer_at_the_budget_end(view, question, facts):
    e, far = facts.entity.id, facts.far_entity.id
    replies = [
        act("get_entity_details", entity_id=e),
        evidence(entities=[e, far]),
        {"thought": "t", "tool": "submit_answer", "arguments": {"answer": "Dunmere"}},
    ]
    trace, scripted = run_agent(AgenticEvidenceFirst(max_steps=3), view, question, replies)
    schemas = [(c["schema"] if isinstance(c, dict) else c.schema)["anyOf"] for c in scripted.calls]
    assert [b["properties"]["tool"]["enum"] for b in schemas[1]] == [["submit_evidence"]]
    assert [b["properties"]["tool"]["enum"] for b in schemas[2]] == [["submit_answer"]]
    assert "Your next step must call submit_evidence" in scripted.last_user_message(1)
    # the forced evidence keeps what passed (the visited entity) and flags the rest
    assert trace.outcome == "answered" and trace.citations.entities == [e]
    assert trace.artifacts["flagged_evidence"][0]["id"] == far and trace.artifacts["forced_answer"] is True


def test_evidence_first_forced_without_evidence_answers_uncited_and_says_so(view, question):
    replies = [
        act("search_entities", query="a"),
        {"thought": "t", "tool": "submit_answer", "arguments": {"answer": "Dunmere"}},
    ]
    trace, _ = run_agent(AgenticEvidenceFirst(max_steps=2), view, question, replies)
    assert kinds(trace)[0] == ("rejection", "search_entities")  # step 1 of 2 offers only submit_evidence
    assert trace.outcome == "answered" and trace.citations.is_empty()
    assert trace.artifacts["forced_without_evidence"] is True and trace.artifacts["forced_answer"] is True


# -- extension: a variant in under 30 lines, registered through a hook ----------------------------------


class ReadBeforeCiting(AgenticGraphRAG):
    """Agentic GraphRAG that may cite only text units it has read, and can look up an entity by name."""

    name = "agentic-read-before-citing"

    def tools(self):
        lookup = Tool("find_entity", (("name", "string"),), self.find_entity, "an entity's id from its name")
        return [lookup, *super().tools()]

    def find_entity(self, run, args):
        entity = run.env.view.find_entity(args["name"])
        return ToolResult(f"{entity.id} | {entity.name}" if entity else "not found", entity and entity.id)

    def check_submission(self, run, citations):
        unread = [t for t in citations.text_units if t not in run.trace.read_text_units]
        return super().check_submission(run, citations) + [CitationProblem("text_units", t, "not read") for t in unread]


class VariantPlugin:
    @hookimpl
    def provbench_register_systems(self):
        return {ReadBeforeCiting.name: ReadBeforeCiting}


def test_a_variant_plugs_in_through_a_hook_on_a_fresh_plugin_manager(view, question, facts):
    pm = systems_plugin_manager()
    pm.register(VariantPlugin(), name="variant-plugin")
    registry = build_registry(pm)
    assert registry.get("system", "agentic-read-before-citing").source == "variant-plugin"
    system = registry.create("system", "agentic-read-before-citing", max_steps=5)
    t = facts.text_unit
    replies = [
        act("find_entity", name=facts.entity.name.upper()),
        submit("D", textunits=[t]),
        act("read_textunit", textunit_id=t),
        submit("D", textunits=[t]),
    ]
    trace, scripted = run_agent(system, view, question, replies)
    assert kinds(trace) == [
        ("tool_call", "find_entity"),
        ("rejection", "submit_answer"),
        ("tool_call", "read_textunit"),
        ("tool_call", "submit_answer"),
    ]
    assert trace.steps[0].result == facts.entity.id and trace.system == "agentic-read-before-citing"
    assert f"{t} (not read)" in trace.steps[1].error
    assert trace.citations.text_units == [t] and trace.answer == "D"
    assert "- find_entity(name)" in scripted.messages(0)[0]["content"]
