"""A scripted judge for the RAGAS metric tests (tests/test_ragas.py, tests/test_ragas_reference.py), and
a recording control judge (tests/test_metric_validity.py, tests/test_controls_judge.py)."""

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


class Recording:
    """A backend that passes requests to a control (``control:judge`` by default) and keeps each
    request with its reply."""

    def __init__(self, model_id: str = "control:judge") -> None:
        from provbench.controls import make_control

        self.inner, self.model_id, self.exchanges = make_control(model_id), model_id, []

    def config(self):
        return self.inner.config()

    def complete(self, request):
        reply = self.inner.complete(request)
        self.exchanges.append((request, reply))
        return reply
