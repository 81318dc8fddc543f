"""Paper 000's non-agentic systems (llm-only, rag, graphrag) on a real tiny KB with a scripted LLM,
plus the registration and option checks of all six systems."""

from __future__ import annotations

import pytest
from interventions_helpers import ablation_kb, ablation_view  # noqa: F401 (fixtures)
from systems_helpers import (  # noqa: F401
    Scripted,
    environment,
    facts,
    question,
    systems_kb,
    systems_plugin_manager,
    view,
)

from provbench.model import Trace
from provbench.plugin_api import System
from provbench.registry import PluginError, build_registry
from provbench_plugins.papers.p000_neighborhoods.systems import RAG, GraphRAG, LLMOnly

SIX = ["llm-only", "rag", "graphrag", "agentic-graphrag", "agentic-visited-only", "agentic-evidence-first"]


# -- registration and options ----------------------------------------------------------------


def test_the_six_systems_are_registered_by_the_builtin_plugin():
    registry = build_registry(systems_plugin_manager())
    for name in SIX:
        registration = registry.get("system", name)
        assert registration.source == "builtin (provbench_plugins.papers.p000_neighborhoods)"
        system = registration.factory()
        assert isinstance(system, System) and system.name == name
    assert registry.get("system", "graphrag").factory.supports_resume is True
    assert registry.get("system", "rag").factory.supports_resume is False


@pytest.mark.parametrize(
    "name, options, message",
    [
        ("rag", {"top_k": 0}, r"system 'p000/rag': bad options: top_k=0: .*greater than or equal to 1"),
        ("rag", {"topk": 3}, r"system 'p000/rag': bad options: topk=3: Extra inputs.*known options: .*top_k"),
        ("graphrag", {"entity_k": "five"}, r"system 'p000/graphrag': bad options: entity_k='five'"),
        ("agentic-graphrag", {"max_steps": 0}, r"system 'p000/agentic-graphrag': bad options: max_steps=0"),
        ("agentic-visited-only", {"max_retries": -1}, r"max_retries=-1"),
        ("llm-only", {"temperature": 5.0}, r"system 'p000/llm-only': bad options: temperature=5.0"),
    ],
)
def test_bad_options_are_clear_errors(name, options, message):
    registry = build_registry(systems_plugin_manager())
    with pytest.raises(PluginError, match=message):
        registry.create("system", name, **options)
    with pytest.raises(PluginError, match=message.replace("p000/", "")):  # built directly: same check
        registry.get("system", name).factory(**options)


def test_options_are_kept():
    assert RAG(top_k=3).options.top_k == 3
    assert GraphRAG(entity_k=2, max_text_units=4).options.max_text_units == 4


# -- llm-only --------------------------------------------------------------------------------


def test_llm_only_answers_from_the_model_alone(view, question):
    scripted = Scripted([{"answer": " Paris "}])
    trace = LLMOnly().run(question, environment(view, scripted))
    assert isinstance(trace, Trace) and trace.system == "llm-only" and trace.question_id == question.id
    assert trace.answer == "Paris" and trace.outcome == "answered"
    assert [(s.kind, s.tool) for s in trace.steps] == [("generation", "generate")]
    assert trace.footprint() == {
        "retrieved_text_units": 0,
        "cited_text_units": 0,
        "visited_entities": 0,
        "cited_entities": 0,
    }
    assert trace.citations.is_empty() and not trace.retrieved
    assert len(scripted.calls) == 1 and len(trace.llm_calls) == 1
    assert question.question in scripted.prompt_text(0)


def test_llm_only_records_invalid_json_as_a_failed_run(view, question):
    trace = LLMOnly().run(question, environment(view, Scripted(["I think it is Paris"])))
    assert trace.outcome == "failed" and trace.answer is None
    assert trace.steps[-1].kind == "error" and "not a JSON object" in trace.steps[-1].error


def test_llm_only_reads_json_wrapped_in_prose(view, question):
    trace = LLMOnly().run(question, environment(view, Scripted(['Sure: {"answer": "Oslo"} done'])))
    assert trace.answer == "Oslo" and trace.outcome == "answered"


def test_llm_only_empty_answer_is_an_abstention(view, question):
    trace = LLMOnly().run(question, environment(view, Scripted([{"answer": "  "}])))
    assert trace.outcome == "abstained" and trace.answer is None


def test_a_failing_llm_never_crashes_a_run(view, question):
    from provbench.llm import LLMError

    trace = LLMOnly().run(question, environment(view, Scripted([LLMError("scripted outage")])))
    assert trace.outcome == "failed" and "scripted outage" in trace.error
    assert trace.steps[-1].kind == "error"


# -- rag -------------------------------------------------------------------------------------


def test_rag_reads_top_k_text_units_and_keeps_only_shown_citations(view, question, facts):
    hits = view.search_text_units(question.question, k=2)
    shown = [h.id for h in hits]
    assert len(shown) == 2
    scripted = Scripted([{"answer": "X", "cited_textunits": [shown[1], "tu:does-not-exist"]}])
    trace = RAG(top_k=2).run(question, environment(view, scripted))
    assert [(s.kind, s.tool) for s in trace.steps] == [
        ("retrieval", "search_text_units"),
        ("generation", "generate"),
        ("rejection", "generate"),
    ]
    assert trace.steps[0].result == [{"id": h.id, "score": h.score} for h in hits]
    assert [(r.kind, r.id) for r in trace.retrieved] == [("text_unit", i) for i in shown]
    assert trace.read_text_units == shown
    assert trace.citations.text_units == [shown[1]]
    assert trace.steps[2].arguments == {"dropped_citations": {"text_units": ["tu:does-not-exist"]}}
    assert trace.footprint() == {
        "retrieved_text_units": 2,
        "cited_text_units": 1,
        "visited_entities": 0,
        "cited_entities": 0,
    }
    prompt = scripted.prompt_text(0)
    for tu_id in shown:
        assert f"[{tu_id}]" in prompt and view.text_unit(tu_id).text.split()[0] in prompt
    assert trace.answer == "X"


def test_rag_does_not_show_text_units_the_view_blocks(view, question):
    first = view.search_text_units(question.question, k=1)[0].id
    blocked = view.hide(text_units=[first])
    scripted = Scripted([{"answer": "X", "cited_textunits": [first]}])
    trace = RAG(top_k=3).run(question, environment(blocked, scripted))
    assert first not in trace.read_text_units and f"[{first}]" not in scripted.prompt_text(0)
    assert trace.citations.text_units == []


# -- graphrag --------------------------------------------------------------------------------


def graphrag_reply(context: dict, bogus: bool = False) -> dict:
    return {
        "answer": "Y",
        "cited_entities": context["entity_ids"][:1] + (["ent:not-there"] if bogus else []),
        "cited_relationships": context["relation_ids"][:1],
        "cited_textunits": context["text_unit_ids"][:1],
        "cited_communities": context["community_ids"][:1],
    }


def run_graphrag(view, question, **options):
    """Run graphrag once to learn its context, then again with a reply citing from it."""
    probe = GraphRAG(**options).run(question, environment(view, Scripted([{"answer": "probe"}])))
    context = probe.artifacts["context"]
    scripted = Scripted([graphrag_reply(context, bogus=True)])
    return GraphRAG(**options).run(question, environment(view, scripted)), context, scripted


def test_graphrag_builds_one_context_from_entities_neighbours_text_units_and_communities(view, question):
    trace, context, scripted = run_graphrag(view, question, entity_k=2, community_k=1, neighbor_limit=3)
    seeds = [h.id for h in view.search_entities(question.question, k=2)]
    neighbours = [nb.entity.id for s in seeds for nb in view.neighbors(s, limit=3)]
    assert context["entity_ids"] == list(dict.fromkeys(seeds + neighbours))
    assert context["community_ids"] == [h.id for h in view.search_communities(question.question, k=1)]
    sources = [r.text_unit_id for r in view.relations(context["relation_ids"]) if r.text_unit_id]
    seed_units = [t for s in seeds for t in view.text_units_of(s)]
    assert (
        context["text_unit_ids"]
        == list(dict.fromkeys(sources + seed_units + [t for n in neighbours for t in view.text_units_of(n)]))[:20]
    )
    assert [(s.kind, s.tool) for s in trace.steps] == [
        ("retrieval", "graph_context"),
        ("generation", "generate"),
        ("rejection", "generate"),
    ]
    # footprint: visited = entities in the context; read = text units in the context
    assert trace.visited_entities == context["entity_ids"]
    assert trace.read_text_units == context["text_unit_ids"]
    assert trace.read_communities == context["community_ids"]
    expected = graphrag_reply(context)
    assert trace.citations.entities == expected["cited_entities"]
    assert trace.citations.relationships == expected["cited_relationships"]
    assert trace.citations.text_units == expected["cited_textunits"]
    assert trace.citations.communities == expected["cited_communities"]
    assert trace.steps[2].arguments == {"dropped_citations": {"entities": ["ent:not-there"]}}
    assert trace.footprint()["visited_entities"] == len(context["entity_ids"])
    assert len(scripted.calls) == 1
    prompt = scripted.prompt_text(0)
    for item in context["entity_ids"] + context["relation_ids"] + context["text_unit_ids"] + context["community_ids"]:
        assert f"[{item}]" in prompt
    relation = view.relation(context["relation_ids"][0])
    assert f"-[{relation.label}]->" in prompt


def test_graphrag_fills_its_text_slots_with_relation_sources_first(ablation_view):
    """A hub seed linked to many text units must not crowd out the text behind the expanded edges
    (the hand-built KB of interventions_helpers: B has tu:1-3, the relation D -> E comes from tu:4)."""
    from interventions_helpers import B

    units = GraphRAG(max_text_units=2).linked_text_units(ablation_view, [B], [ablation_view.relation("rel:4")], [])
    assert units == ["tu:4", "tu:1"]


def test_the_context_systems_do_not_invite_a_guess():
    """RAG, GraphRAG and the agents answer from what they are given alike: no prompt licenses a
    parametric guess that the others do not (the llm-only baseline measures parametric knowledge)."""
    from provbench_plugins.papers.p000_neighborhoods import prompts as P

    for prompt in (P.RAG_SYSTEM, P.GRAPHRAG_SYSTEM, P.AGENT_SYSTEM, P.AGENT_RULES):
        assert "guess" not in prompt.lower() and "own knowledge" not in prompt.lower()
    assert "using only the passages" in P.RAG_SYSTEM and "using only the knowledge-graph context" in P.GRAPHRAG_SYSTEM


def test_graphrag_resume_rebuilds_the_prompt_from_perturbed_artifacts(view, question):
    baseline, context, _ = run_graphrag(view, question, entity_k=2, neighbor_limit=3)
    removed = view.relation(context["relation_ids"][0]).target
    perturbed = baseline.model_copy(deep=True)
    perturbed.artifacts["context"]["entity_ids"].remove(removed)
    scripted = Scripted([{"answer": "Z", "cited_entities": [removed]}])
    trace = GraphRAG(entity_k=2, neighbor_limit=3).resume(question, environment(view, scripted), perturbed)
    assert [(s.kind, s.tool) for s in trace.steps] == [
        ("retrieval", "restore_context"),
        ("generation", "generate"),
        ("rejection", "generate"),
    ]
    assert len(scripted.calls) == 1 and trace.answer == "Z"
    assert removed not in trace.visited_entities and f"[{removed}]" not in scripted.prompt_text(0)
    # a relationship is shown only when both of its ends are still in the context
    for rel_id in context["relation_ids"]:
        relation = view.relation(rel_id)
        shown = f"[{rel_id}]" in scripted.prompt_text(0)
        assert shown == (removed not in (relation.source, relation.target))
    assert trace.citations.entities == []
    assert trace.artifacts["resumed"] is True
    assert baseline.artifacts["context"]["entity_ids"].count(removed) == 1  # the baseline is untouched


def test_graphrag_resume_without_artifacts_fails_cleanly(view, question):
    empty = Trace(question_id=question.id, system="graphrag")
    trace = GraphRAG().resume(question, environment(view, Scripted([])), empty)
    assert trace.outcome == "failed" and "artifacts" in trace.steps[-1].error


def test_graphrag_leaves_out_what_the_view_hides(view, question):
    _, context, _ = run_graphrag(view, question, entity_k=2, neighbor_limit=3)
    hidden = context["entity_ids"][0]
    scripted = Scripted([{"answer": "W"}])
    trace = GraphRAG(entity_k=2, neighbor_limit=3).run(question, environment(view.hide(entities=[hidden]), scripted))
    assert hidden not in trace.visited_entities and f"[{hidden}]" not in scripted.prompt_text(0)


# -- a one-shot system that states a confidence, gated at a bar (paper 002's comparison) ----------


@pytest.mark.parametrize("confidence, outcome", [(0.5, "abstained"), (0.85, "answered"), ("high", "abstained")])
def test_graphrag_abstains_below_its_confidence_bar(view, question, confidence, outcome):
    scripted = Scripted([{"answer": "Paris", "confidence": confidence, "cited_entities": []}])
    trace = GraphRAG(ask_confidence=True, confidence_bar=0.8).run(question, environment(view, scripted))
    assert trace.outcome == outcome
    if outcome == "abstained":  # the answer is held back (calibration scores it), nothing is cited
        assert trace.answer is None and trace.artifacts["candidate_answer"] == "Paris"
        assert trace.citations.is_empty() and "below 0.8" in trace.artifacts["abstention_reason"]
    else:
        assert trace.answer == "Paris" and trace.confidence == 0.85


def test_a_confidence_bar_needs_a_stated_confidence():
    with pytest.raises(PluginError, match="confidence_bar needs ask_confidence"):
        GraphRAG(confidence_bar=0.8)
    assert GraphRAG(ask_confidence=True).options.confidence_bar is None  # off by default: every answer stands
