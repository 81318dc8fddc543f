"""The RAG-Ex-style baseline of paper 001's cost comparison (Table 5).

``vector-rag`` is paper 000's ``rag`` system unchanged (same retrieval, prompt and answer), made
resumable: it keeps the passages it showed in ``artifacts["passages"]`` and :meth:`resume`
rebuilds the prompt from (perturbed) passages and only re-generates.

``ragex-window`` perturbs that retrieved text as RAG-Ex does: the context's words (punctuation
dropped) are covered by windows of ``window`` words (5 in the paper), one variant per window
start, every ``stride`` words (1 in the authors' code, i.e. every window position); each variant
removes its window and re-asks the model.
"""

from __future__ import annotations

import random
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from provbench.agents import clip
from provbench.model import Question, Trace
from provbench.plugin_api import Environment, Intervention, Variant
from provbench_plugins.papers.p000_neighborhoods import prompts as P000
from provbench_plugins.papers.p000_neighborhoods.systems import RAG

WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


class VectorRAG(RAG):
    """Paper 000's vector RAG, resumable from its passages (the RAG-Ex baseline's target)."""

    name = "vector-rag"
    supports_resume = True

    def run(self, question: Question, env: Environment) -> Trace:
        trace = super().run(question, env)
        trace.artifacts["passages"] = [{"id": uid, "text": clip(env.view.text_unit(uid).text, self.options.text_chars)}
                                       for uid in trace.read_text_units if env.view.text_unit(uid) is not None]
        return trace

    def resume(self, question: Question, env: Environment, perturbed: Trace) -> Trace:
        trace = self.new_trace(question)
        passages = perturbed.artifacts.get("passages")
        trace.artifacts = {**perturbed.artifacts, "resumed": True}
        if not isinstance(passages, list):
            trace.add_step("error", tool="resume", error="perturbed trace has no artifacts['passages']")
            trace.outcome, trace.error = "failed", "nothing to resume from"
            return trace
        trace.read_text_unit(*[p["id"] for p in passages])
        shown = "\n\n".join(P000.RAG_PASSAGE.format(id=p["id"], text=p["text"]) for p in passages)
        user = P000.RAG_USER.format(passages=shown or P000.GRAPHRAG_EMPTY, question=self.question_text(question))
        messages = [{"role": "system", "content": P000.RAG_SYSTEM}, {"role": "user", "content": user}]
        return self.generate(env, trace, messages, shown={"text_units": set(trace.read_text_units)})


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
