"""Paper 003's test helpers: a fever-mini knowledge base (real builder, Kùzu, embeddings) and a
backend whose extraction and answers a test controls, recording every prompt it was sent."""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO
from provbench.llm.backends import reply
from provbench.llm.client import LLMClient
from provbench.plugin_api import Environment

MINI = REPO / "datasets" / "fever-mini" / "dev.jsonl"
PASSAGE = re.compile(r'Passage: "(.*)"\n', re.DOTALL)


class PaperBackend:
    """Extraction: two triples about the passage's title (confidences ``confidences``); the graph
    prompt is answered ``graph_reply`` (a dict, or a function of the prompt), the passages prompt
    ``passages_reply`` (SUPPORTS citing line 1 for both by default). Records every request and
    every extraction passage."""

    model_id = "paper-backend"

    def __init__(
        self,
        confidences=(0.9, 0.5),
        graph_reply=None,
        passages_reply=None,
        extraction_text=None,
        truncated: bool = True,
    ) -> None:
        self.confidences = confidences
        default = {"label": "SUPPORTS", "explanation": "It says so.", "cited": [1]}
        self.graph_reply, self.passages_reply = graph_reply or default, passages_reply or default
        self.extraction_text = extraction_text  # page title -> a raw reply (e.g. broken JSON)
        self.truncated = truncated  # a raw reply used up its token budget
        self.passages: list[str] = []
        self.requests: list[dict] = []

    def config(self) -> dict:
        return {}

    def complete(self, request: dict) -> dict:
        self.requests.append(request)
        prompt = request["messages"][-1]["content"]
        if "triplets" in json.dumps(request.get("schema") or {}):
            passage = PASSAGE.search(prompt).group(1)
            self.passages.append(passage)
            title = passage.split(". ", 1)[0]
            if self.extraction_text and title in self.extraction_text:
                text = self.extraction_text[title]
                return reply(text, completion_tokens=request["max_tokens"] if self.truncated else len(text.split()))
            high, low = self.confidences
            triples = [
                {"subject": title, "relation": "is", "object": "a page", "confidence": high},
                {"subject": title, "relation": "maybe", "object": "a guess", "confidence": low},
            ]
            return reply(json.dumps({"triplets": triples}))
        if not prompt.startswith("Graph facts"):
            return reply(json.dumps(self.passages_reply))
        return reply(json.dumps(self.graph_reply(prompt) if callable(self.graph_reply) else self.graph_reply))

    def answer_prompts(self) -> list[str]:
        return [
            r["messages"][-1]["content"] for r in self.requests if "triplets" not in json.dumps(r.get("schema") or {})
        ]


@pytest.fixture(scope="module")
def mini_kb(tmp_path_factory):
    from provbench.testing import schema_following_llm
    from provbench_plugins.datasets.fever.loader import FeverLoader
    from provbench_plugins.kb_builders.fever.builder import FeverWikiBuilder

    root = tmp_path_factory.mktemp("p003kb")
    questions = FeverLoader().load(MINI, limit=6, sample=True)
    kb = FeverWikiBuilder(link_hops=1).build(questions, root / "kb", schema_following_llm())
    yield kb, questions
    kb.close()


def run(system_cls, kb, question, backend=None, **options):
    backend = backend or PaperBackend()
    llm = LLMClient(backend, max_attempts=1)
    trace = system_cls(**options).run(question, Environment(view=kb.view(), llm=llm, seed=0))
    assert trace.outcome != "failed", trace.error
    return trace, backend
