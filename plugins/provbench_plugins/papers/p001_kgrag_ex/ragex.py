"""The RAG-Ex baseline of paper 001's cost comparison (Table 5), as the authors ran it.

``vector-rag`` is p001's own RAG-Ex target with the authors' settings (their
``Cost_KGRAG_Ex_vs_RAG_Ex`` notebook): the ``top_k`` (1) chunk most similar to the question, at
most ``text_chars`` (600, their chunk size) characters, shown as "Chunk 0: ..." in the same answer
prompt KGRAG-Ex uses (the authors' one prompt for both), answered with an option letter. It keeps
the chunks it showed in ``artifacts["passages"]``; :meth:`VectorRAG.resume` rebuilds the prompt
from (perturbed) passages and only re-generates. (Paper 000's ``p000/rag`` is a different system
with its own prompt and 5 passages of 1,500 characters.)

``ragex-window`` perturbs that retrieved text as RAG-Ex does: the context's words (punctuation
dropped, as the authors' spaCy tokens) are covered by windows of ``window`` words (5 in the paper),
one variant per window start, every ``stride`` words (1 in the authors' code, i.e. every window
position); each variant removes its window and re-asks the model.
"""

from __future__ import annotations

import random
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from provbench.agents import clip
from provbench.model import Question, RetrievedItem, Trace
from provbench.plugin_api import Environment, Intervention, System, Variant

from . import prompts as P
from .system import answer_letter, guarded_chat

WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


class VectorRAGOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(1, ge=1, le=50, description="chunks retrieved by similarity to the question (authors: 1)")
    text_chars: int = Field(600, ge=50, description="characters of each chunk shown (the authors' chunk size)")
    max_tokens: int = Field(256, ge=16)
    temperature: float = Field(0.0, ge=0.0, le=2.0)


class VectorRAG(System):
    """The authors' RAG-Ex target: the question's nearest chunk in the shared answer prompt."""

    name = "vector-rag"
    Options = VectorRAGOptions
    supports_resume = True

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        hits = env.view.search_text_units(question.question, k=self.options.top_k)
        passages = []
        for hit in hits:
            unit = env.view.text_unit(hit.id)
            trace.retrieved.append(RetrievedItem(kind="text_unit", id=hit.id, score=hit.score))
            if unit is not None:
                passages.append({"id": unit.id, "text": clip(unit.text, self.options.text_chars)})
        trace.add_step("retrieval", tool="search_text_units", arguments={"query": question.question, "k": self.options.top_k},
                       result=[{"id": h.id, "score": h.score} for h in hits])
        trace.artifacts["passages"] = passages
        return self.answer(question, env, trace, passages)

    def resume(self, question: Question, env: Environment, perturbed: Trace) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        passages = perturbed.artifacts.get("passages")
        trace.artifacts = {**perturbed.artifacts, "resumed": True}
        if not isinstance(passages, list):
            trace.add_step("error", tool="resume", error="perturbed trace has no artifacts['passages']")
            trace.outcome, trace.error = "failed", "nothing to resume from"
            return trace
        return self.answer(question, env, trace, passages)

    def answer(self, question: Question, env: Environment, trace: Trace, passages: list[dict]) -> Trace:
        trace.read_text_unit(*[p["id"] for p in passages])
        context = context_text(passages)
        trace.artifacts["context_words"] = len(context.split())
        messages = P.answer_messages(context, question.question, question.choices or [])
        reply = guarded_chat(env, trace, messages, P.answer_schema(max(1, len(question.choices or []))), "answer",
                             self.options)
        return trace if reply is None else answer_letter(trace, reply)


def context_text(passages: list[dict]) -> str:
    """The chunks as the authors' RAG-Ex context writes them: "Chunk 0: ..." one per line."""
    return "\n".join(P.RAGEX_CHUNK.format(index=i, text=p["text"]) for i, p in enumerate(passages))


def words_of(passages: list[dict]) -> list[tuple[int, str]]:
    """(passage index, word) for every word of the context, in reading order."""
    return [(i, w) for i, p in enumerate(passages) for w in WORD.findall(p["text"])]


class RagExOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    window: int = Field(5, ge=1, description="words removed per variant (RAG-Ex: 5)")
    stride: int = Field(1, ge=1, description="words between window starts (authors' code: 1)")
    max_variants: int | None = Field(None, ge=1, description="cap on variants per question (None: all)")


class RagExWindow(Intervention):
    """RAG-Ex: remove a window of words from the retrieved text; one variant per window position."""

    name = "ragex-window"
    Options = RagExOptions
    level = "context"

    @property
    def window(self) -> int:
        return self.options.window

    def variants(self, question: Question, baseline: Trace, rng: random.Random) -> list[Variant]:
        passages = baseline.artifacts.get("passages")
        if not isinstance(passages, list) or not passages:
            return []
        words = words_of(passages)
        starts = list(range(0, max(1, len(words) - self.window + 1), self.options.stride))[: self.options.max_variants]
        last = max(1, len(starts) - 1)
        return [Variant(id=f"window:{s}", description=f"remove words {s + 1}-{s + self.window}: "
                        + " ".join(w for _, w in words[s:s + self.window]),
                        data={"kind": "window", "start": s, "size": self.window, "stride": self.options.stride,
                              "position": round(n / last, 6)})
                for n, s in enumerate(starts)]

    def perturb(self, question: Question, baseline: Trace, rng: random.Random, **kwargs: Any) -> Trace:
        variant: Variant | None = kwargs.get("variant")
        passages = baseline.artifacts.get("passages")
        if variant is None or not isinstance(passages, list):
            raise ValueError(f"{self.name}: needs a variant and a vector-rag baseline trace")
        start, size = variant.data["start"], variant.data["size"]
        kept: list[list[str]] = [[] for _ in passages]
        for n, (i, word) in enumerate(words_of(passages)):
            if not start <= n < start + size:
                kept[i].append(word)
        perturbed = baseline.model_copy(deep=True)
        perturbed.artifacts["passages"] = [{"id": p["id"], "text": " ".join(k)} for p, k in zip(passages, kept)]
        perturbed.artifacts["perturbation"] = {"kind": "window", "variant": variant.id}
        return perturbed
