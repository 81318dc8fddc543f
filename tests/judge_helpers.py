"""A scripted judge for the RAGAS metric tests (tests/test_ragas.py, tests/test_ragas_reference.py)."""

from __future__ import annotations

from provbench.llm import LLMClient, ScriptedBackend


def judge(replies: list) -> tuple[LLMClient, ScriptedBackend]:
    """A judge client answering ``replies`` in order, and its backend (which keeps the calls)."""
    backend = ScriptedBackend(replies=list(replies))
    return LLMClient(backend), backend


def prompt_of(call) -> str:
    """The text a judge call was shown (a backend's recorded request, or a record's LLM call)."""
    messages = call["messages"] if isinstance(call, dict) else call.messages
    return "\n".join(m["content"] for m in messages)
