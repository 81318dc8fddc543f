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

``preset: authors`` on both does what the authors' cost notebook does beyond that: the chunk is
shown as Python's ``str.capitalize`` writes it (first letter upper, every other letter lower),
and the windows run over the words of the whole context, the "Chunk 0" label included, so a
window can remove it. Two differences stay: words are provbench's regular-expression words
(letters and digits, inner hyphens and apostrophes kept), where spaCy's ``en_core_web_sm`` splits
"high-salt" into two tokens and "don't" into "do" and "n't"; and a number such as "3.5" is two
words here, one spaCy token there.
"""

from __future__ import annotations

import random
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from provbench.agents import clip, fixed_parts
from provbench.model import Question, RetrievedItem, Trace
from provbench.plugin_api import Environment, Intervention, System, Variant
from provbench_plugins.kb_builders.common.options import with_preset

from . import prompts as P
from .system import answer_letter, guarded_chat

WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


class VectorRAGOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    preset: Literal["default", "authors"] = Field("default", description="'authors': chunks capitalised as theirs")
    top_k: int = Field(1, ge=1, le=50, description="chunks retrieved by similarity to the question (authors: 1)")
    text_chars: int = Field(600, ge=50, description="characters of each chunk shown (the authors' chunk size)")
    capitalize: bool = Field(False, description="show each chunk as str.capitalize() writes it (the authors)")
    max_tokens: int = Field(256, ge=16)
    temperature: float = Field(0.0, ge=0.0, le=2.0)

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        return with_preset(data, {"authors": {"capitalize": True}})


class VectorRAG(System):
    """The authors' RAG-Ex target: the question's nearest chunk in the shared answer prompt."""

    name = "vector-rag"
    Options = VectorRAGOptions
    supports_resume = True

    def instructions(self) -> list[str]:
        return fixed_parts(P.ANSWER_PROMPT)  # the answer prompt KGRAG-Ex shares

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        hits = env.view.search_text_units(question.question, k=self.options.top_k)
        passages = []
        for hit in hits:
            unit = env.view.text_unit(hit.id)
            trace.retrieved.append(RetrievedItem(kind="text_unit", id=hit.id, score=hit.score))
            if unit is not None:
                text = clip(unit.text, self.options.text_chars)
                passages.append({"id": unit.id, "text": text.capitalize() if self.options.capitalize else text})
        trace.add_step(
            "retrieval",
            tool="search_text_units",
            arguments={"query": question.question, "k": self.options.top_k},
            result=[{"id": h.id, "score": h.score} for h in hits],
        )
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
        reply = guarded_chat(
            env, trace, messages, P.answer_schema(max(1, len(question.choices or []))), "answer", self.options
        )
        return trace if reply is None else answer_letter(trace, reply)


def chunk_label(index: int) -> str:
    return P.RAGEX_CHUNK.format(index=index, text="").strip()


def context_text(passages: list[dict]) -> str:
    """The chunks as the authors' RAG-Ex context writes them: "Chunk 0: ..." one per line (a
    perturbed passage's ``label`` holds what a window left of its "Chunk 0" label)."""
    return "\n".join(
        f"{p['label']} {p['text']}".strip() if "label" in p else P.RAGEX_CHUNK.format(index=i, text=p["text"])
        for i, p in enumerate(passages)
    )


def words_of(passages: list[dict], labels: bool = False) -> list[tuple[int, bool, str]]:
    """(passage index, is a label word, word) for every word of the context in reading order: the
    passages' words, and with ``labels`` their "Chunk 0" labels' words before each."""
    found = []
    for i, p in enumerate(passages):
        if labels:
            found += [(i, True, w) for w in WORD.findall(chunk_label(i))]
        found += [(i, False, w) for w in WORD.findall(p["text"])]
    return found


class RagExOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    preset: Literal["default", "authors"] = Field("default", description="'authors': windows over the whole context")
    window: int = Field(5, ge=1, description="words removed per variant (RAG-Ex: 5)")
    stride: int = Field(1, ge=1, description="words between window starts (authors' code: 1)")
    words: Literal["passages", "context"] = Field(
        "passages", description="the words windows run over: the passages', or the context's with its 'Chunk 0' labels"
    )
    max_variants: int | None = Field(None, ge=1, description="cap on variants per question (None: all)")

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        return with_preset(data, {"authors": {"words": "context", "stride": 1}})


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
        words = words_of(passages, self.options.words == "context")
        starts = list(range(0, max(1, len(words) - self.window + 1), self.options.stride))[: self.options.max_variants]
        last = max(1, len(starts) - 1)
        return [
            Variant(
                id=f"window:{s}",
                description=f"remove words {s + 1}-{s + self.window}: "
                + " ".join(w for _, _, w in words[s : s + self.window]),
                data={
                    "kind": "window",
                    "start": s,
                    "size": self.window,
                    "stride": self.options.stride,
                    "position": round(n / last, 6),
                },
            )
            for n, s in enumerate(starts)
        ]

    def perturb(self, question: Question, baseline: Trace, rng: random.Random, **kwargs: Any) -> Trace:
        variant: Variant | None = kwargs.get("variant")
        passages = baseline.artifacts.get("passages")
        if variant is None or not isinstance(passages, list):
            raise ValueError(f"{self.name}: needs a variant and a vector-rag baseline trace")
        start, size, labels = variant.data["start"], variant.data["size"], self.options.words == "context"
        kept: list[dict[bool, list[str]]] = [{True: [], False: []} for _ in passages]
        for n, (i, is_label, word) in enumerate(words_of(passages, labels)):
            if not start <= n < start + size:
                kept[i][is_label].append(word)
        perturbed = baseline.model_copy(deep=True)
        perturbed.artifacts["passages"] = [
            {"id": p["id"], "text": " ".join(k[False]), **({"label": " ".join(k[True])} if labels else {})}
            for p, k in zip(passages, kept)
        ]
        perturbed.artifacts["perturbation"] = {"kind": "window", "variant": variant.id}
        return perturbed
