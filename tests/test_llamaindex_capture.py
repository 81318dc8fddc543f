"""LlamaIndex adapters of provbench's LLM client and embedding, and the capture of a pipeline's
trace from LlamaIndex's instrumentation events: mapped to provbench ids, and attributed to the
right unit when units run at once (tiny KB, scripted LLMs)."""

from __future__ import annotations

import asyncio
import logging
import threading

import numpy as np
import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms import MockLLM

from provbench.integrations.llamaindex import capture_trace, llamaindex_embedding, llamaindex_llm, property_graph_index
from provbench.kb.embeddings import embed_query
from provbench.llm import LLMError
from provbench.model import Trace
from provbench.testing import scripted_llm

KEYWORDS = {"Who is the mayor of Dunmere?": "Mara Holt", "Which studio produced Glass Harbor?": "Lumen Studios"}


@pytest.fixture(scope="module")
def kb(shared_tiny_kb):
    return shared_tiny_kb


def model(messages, barrier=None):
    """Keywords for a synonym prompt (after both units reached it, with a barrier), else an answer."""
    prompt = messages[-1]["content"]
    for question, keyword in KEYWORDS.items():
        if "KEYWORDS:" in prompt and question in prompt:
            if barrier is not None:
                barrier.wait(timeout=30)
            return keyword
    return "an answer"


def ask(kb, llm_client, question, trace):
    """An unchanged LlamaIndex pipeline: the index's default query engine, with source text."""
    llm = llamaindex_llm(llm_client)
    with capture_trace(trace):
        engine = property_graph_index(kb.view(), llm=llm).as_query_engine(llm=llm, include_text=True)
        return engine.query(question)


def summary(trace):
    return {
        "steps": [(s.tool, s.arguments, s.result) for s in trace.steps],
        "visited": trace.visited_entities,
        "read": trace.read_text_units,
        "retrieved": [(r.kind, r.id) for r in trace.retrieved],
        "calls": len(trace.llm_calls),
        "artifacts": trace.artifacts,
    }


# -- adapters -------------------------------------------------------------------------------------------


def test_llm_adapter_goes_through_the_client_cached_counted_and_traced(tmp_path):
    client = scripted_llm(["first", "second"], cache_dir=tmp_path / "cache")
    trace = Trace(question_id="q", system="s")
    llm = llamaindex_llm(client, trace=trace, purpose="synonyms", max_tokens=32)
    assert llm.chat([ChatMessage(role="user", content="hello")]).message.content == "first"
    assert llm.chat([ChatMessage(role="user", content="hello")]).message.content == "first"  # from the cache
    assert llm.complete("hello").text == "first"  # the same request: a completion is one user message
    assert asyncio.run(llm.acomplete("again")).text == "second"
    assert [(c.purpose, c.cached) for c in trace.llm_calls] == [
        ("synonyms", False),
        ("synonyms", True),
        ("synonyms", True),
        ("synonyms", False),
    ]
    assert client.stats.calls == 2 and client.backend.calls[0]["max_tokens"] == 32
    assert llm.metadata.is_chat_model and llm.metadata.model_name == "scripted" and llm.metadata.num_output == 32
    assert [r.delta for r in llm.stream_complete("hello")] == ["first"]


def test_a_failing_llm_call_is_recorded_then_raised():
    trace = Trace(question_id="q", system="s")
    llm = llamaindex_llm(scripted_llm([RuntimeError("backend down")]), trace=trace)
    with pytest.raises(LLMError, match="backend down"):
        llm.complete("hello")
    assert trace.llm_calls[0].error and "backend down" in trace.llm_calls[0].error


def test_embedding_adapter_gives_the_views_query_vectors():
    embed = llamaindex_embedding()
    query = "Who directed Glass Harbor?"
    assert np.allclose(embed.get_query_embedding(query), embed_query(query))
    vectors = np.asarray(embed.get_text_embedding_batch(["Dunmere", "a coastal town"]))
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


# -- the capture -------------------------------------------------------------------------------------------


def test_events_become_the_trace_in_provbench_ids(kb):
    trace = Trace(question_id="q", system="s")
    response = ask(kb, scripted_llm([model] * 2), "Who is the mayor of Dunmere?", trace)
    tools = [s.tool for s in trace.steps]
    assert {"llamaindex:LLMSynonymRetriever", "llamaindex:VectorContextRetriever", "llamaindex:PGRetriever"} <= set(
        tools
    )
    synonym = next(s for s in trace.steps if s.tool == "llamaindex:LLMSynonymRetriever")
    assert synonym.arguments == {"query": "Who is the mayor of Dunmere?"}
    assert {"kind": "relationship", "id": "rel:9", "score": 1.0} in synonym.result  # Mara Holt -mayor_of-> Dunmere
    sources = {n.node.node_id for n in response.source_nodes}
    assert set(trace.read_text_units) == sources and "tu:4" in sources  # what the synthesis was given
    assert {"ent:mara-holt", "ent:dunmere"} <= set(trace.visited_entities)
    assert all(r.kind in ("relationship", "text_unit") and r.score > 0 for r in trace.retrieved)
    assert [c.purpose for c in trace.llm_calls] == ["llamaindex", "llamaindex"] and trace.artifacts == {}


def test_nodes_marked_as_reached_replace_what_was_retrieved(kb):
    trace = Trace(question_id="q", system="s")
    with capture_trace(trace) as capture:
        index = property_graph_index(kb.view(), llm=scripted_llm(["Norland"]))
        nodes = index.as_retriever(include_text=False).retrieve("Where is Dunmere?")
        chosen = [n for n in nodes if "Norland" in n.node.get_content()]
        capture.mark_reached(chosen)
        assert capture.evidence(chosen).relations == ["rel:7"]
    assert sorted(trace.visited_entities) == ["ent:dunmere", "ent:norland"] and trace.read_text_units == []
    assert len({r.id for r in trace.retrieved}) > 1


def test_llm_calls_outside_provbench_and_unknown_nodes_are_counted(kb):
    trace = Trace(question_id="q", system="s")
    with capture_trace(trace):
        index = property_graph_index(kb.view(), llm=MockLLM())
        index.as_query_engine(llm=MockLLM(max_tokens=4)).query("Who is the mayor of Dunmere?")
        from llama_index.core.retrievers import BaseRetriever
        from llama_index.core.schema import NodeWithScore, TextNode

        class Foreign(BaseRetriever):
            def _retrieve(self, query_bundle):
                return [NodeWithScore(node=TextNode(text="from elsewhere"), score=0.5)]

        Foreign().retrieve("anything")
    assert trace.artifacts["llamaindex"]["llm_events_outside_provbench"] >= 2 and trace.llm_calls == []
    assert trace.artifacts["llamaindex"]["unmapped_nodes"] >= 1


def test_units_running_at_once_get_their_own_events(kb):
    """Two pipelines in two threads, both inside their synonym LLM call at the same moment: each
    trace equals the trace of the same pipeline run alone."""
    alone = {}
    for question in KEYWORDS:
        alone[question] = Trace(question_id=question, system="s")
        ask(kb, scripted_llm([model] * 2), question, alone[question])
    barrier = threading.Barrier(2)
    client = scripted_llm([lambda m: model(m, barrier)] * 4, max_concurrency=2)
    together = {q: Trace(question_id=q, system="s") for q in KEYWORDS}
    threads = [threading.Thread(target=ask, args=(kb, client, q, together[q])) for q in KEYWORDS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for question in KEYWORDS:
        assert summary(together[question]) == summary(alone[question])
    assert summary(together["Who is the mayor of Dunmere?"]) != summary(together["Which studio produced Glass Harbor?"])


def test_events_from_a_thread_without_the_units_context_are_not_guessed(kb, caplog):
    trace = Trace(question_id="q", system="s")
    with caplog.at_level(logging.WARNING), capture_trace(trace):
        retriever = property_graph_index(kb.view(), llm=scripted_llm(["Norland"])).as_retriever(include_text=False)
        thread = threading.Thread(target=retriever.retrieve, args=("Where is Dunmere?",))
        thread.start()
        thread.join()
    assert trace.steps == [] and trace.visited_entities == []
    assert trace.artifacts["llamaindex"]["unattributed_events"] >= 1
    assert "without a unit's context" in caplog.text
