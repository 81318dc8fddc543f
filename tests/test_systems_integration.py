"""agentic-graphrag end to end with the real embedded model (llama.cpp) on the tiny KB.

The embedded model is tiny: this proves the loop runs with schema-constrained tool calls against a
real model, not that it answers well.
"""

from __future__ import annotations

import pytest
from systems_helpers import facts, question, systems_kb, view  # noqa: F401

from provbench.plugin_api import Environment
from provbench_plugins.papers.p000_neighborhoods.agentic import AgenticGraphRAG

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def embedded_llm(tmp_path_factory):
    from provbench.llm import make_llm

    return make_llm("embedded", cache_dir=tmp_path_factory.mktemp("llm-cache"), n_ctx=4096, n_threads=1)


def test_agentic_graphrag_runs_end_to_end_with_the_embedded_model(view, question, embedded_llm):
    system = AgenticGraphRAG(max_steps=4, max_tokens=96, search_k=3, neighbor_limit=4, text_chars=300)
    trace = system.run(question, Environment(view=view, llm=embedded_llm, seed=0))
    assert trace.outcome in {"answered", "budget_exhausted"}, (trace.outcome, trace.error, trace.steps)
    assert 1 <= len(trace.steps) <= 4
    assert len(trace.llm_calls) == len(trace.steps)
    assert any(step.kind == "tool_call" for step in trace.steps), [s.model_dump() for s in trace.steps]
    # the last step of the budget offers only the answer and gets twice the token cap (its JSON must close)
    caps = [96] * 3 + [2 * 96]
    # a call's tokens sum every attempt (a JSON re-ask included: issue 33 item 17), each attempt within the cap
    assert all(call.completion_tokens <= cap * call.attempts for call, cap in zip(trace.llm_calls, caps)), [
        (c.completion_tokens, c.attempts) for c in trace.llm_calls
    ]
    if trace.outcome == "answered":
        assert trace.answer and trace.steps[-1].tool == "submit_answer"
    else:
        assert trace.answer is None
