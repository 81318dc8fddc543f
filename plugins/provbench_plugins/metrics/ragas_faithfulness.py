"""RAGAS faithfulness, judged through provbench's own LLM layer, against two evidence sets.

Each answer is scored twice with ``ragas.metrics.collections.Faithfulness``:

* ``faithfulness_cited``: against the evidence the answer cited (cited text units' text,
  cited entities' descriptions, cited communities' summaries, cited relationships as sentences);
* ``faithfulness_trajectory``: against everything the system read on its way (text units read,
  entities visited, communities read, and every retrieved item).

Ragas talks to the model through :class:`ProvbenchRagasLLM`, an ``InstructorBaseRagasLLM`` whose
``agenerate`` calls ``LLMClient.achat`` with the response model's JSON schema: judge calls are
cached, counted and constrained like every other call, and work with the embedded model.

A score ragas cannot give (NaN: no statements; an exception: bad JSON, an LLM error; nothing
to judge: no answer, no evidence) is stored as ``None`` with its reason in
``record.score_notes``; the aggregate reports how many answers were scored and how many not.
ragas is imported only when a score is computed (it is slow to import).
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections import Counter
from functools import lru_cache
from statistics import fmean
from typing import TYPE_CHECKING, Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from provbench.model import BASELINE, Question, RunRecord, Trace
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results

if TYPE_CHECKING:
    from provbench.kb import GraphView
    from provbench.llm import LLMClient

SCORES = {"cited": "faithfulness_cited", "trajectory": "faithfulness_trajectory"}


class JudgeOutputError(ValueError):
    """The judge's reply did not fit the response model ragas asked for."""


# -- ragas <-> provbench LLM -------------------------------------------------------------------


def inline_refs(schema: dict) -> dict:
    """Resolve local ``$ref``s into a self-contained schema (grammar-constrained backends need it)."""
    definitions = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {k: resolve(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    return resolve(schema)


@lru_cache(maxsize=1)
def _adapter_class() -> type:
    from ragas.llms.base import InstructorBaseRagasLLM

    class ProvbenchRagasLLM(InstructorBaseRagasLLM):
        """Ragas' structured-output LLM interface over a provbench ``LLMClient``. A reply that is
        not JSON (one cut off by ``max_tokens``: the client neither caches nor re-asks it) is kept
        for the adapter's life, one record's scoring: both scores ask for the same statements, and
        asking again would spend the whole budget again for the same cut-off reply."""

        def __init__(self, llm: "LLMClient", max_tokens: int = 512, purpose: str = "ragas-faithfulness") -> None:
            self.llm = llm
            self.max_tokens = max_tokens
            self.purpose = purpose
            self.unusable: dict[str, Any] = {}  # prompt and schema -> a reply that was not JSON

        def _request(self, prompt: str, response_model: type) -> dict[str, Any]:
            return {
                "messages": [{"role": "user", "content": prompt}],
                "schema": inline_refs(response_model.model_json_schema()),
                "max_tokens": self.max_tokens,
                "temperature": 0.0,
                "purpose": self.purpose,
            }

        @staticmethod
        def _parse(resp: Any, response_model: type) -> Any:
            if resp.data is None:
                raise JudgeOutputError(f"judge reply is not JSON for {response_model.__name__}: {resp.text[:200]!r}")
            try:
                return response_model.model_validate(resp.data)
            except ValueError as exc:
                raise JudgeOutputError(f"judge reply does not fit {response_model.__name__}: {exc}") from exc

        def generate(self, prompt: str, response_model: type) -> Any:
            key = f"{response_model.__name__}\n{prompt}"
            resp = self.unusable.get(key) or self.llm.chat(**self._request(prompt, response_model))
            return self._parse(self._kept(key, resp), response_model)

        async def agenerate(self, prompt: str, response_model: type) -> Any:
            key = f"{response_model.__name__}\n{prompt}"
            resp = self.unusable.get(key) or await self.llm.achat(**self._request(prompt, response_model))
            return self._parse(self._kept(key, resp), response_model)

        def _kept(self, key: str, resp: Any) -> Any:
            if resp.data is None:
                self.unusable[key] = resp
            return resp

    return ProvbenchRagasLLM


def make_ragas_llm(llm: "LLMClient", max_tokens: int = 512, purpose: str = "ragas-faithfulness") -> Any:
    """A ragas ``InstructorBaseRagasLLM`` whose every call goes through ``llm`` (``purpose`` labels the calls)."""
    return _adapter_class()(llm, max_tokens=max_tokens, purpose=purpose)


def run_sync(coro: Any) -> Any:
    """Run a coroutine from sync code, even if this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- evidence text -----------------------------------------------------------------------------


def _entity_text(view: "GraphView", entity_id: str) -> str | None:
    entity = view.entity(entity_id)
    if entity is None:
        return None
    kind = f" ({entity.label})" if entity.label else ""
    return f"{entity.name}{kind}: {entity.description}" if entity.description else f"{entity.name}{kind}"


def _relation_text(view: "GraphView", relation_id: str) -> str | None:
    relation = view.relation(relation_id)
    if relation is None:
        return None
    name = lambda eid: view.entity(eid).name if view.entity(eid) else eid  # noqa: E731 - a one-line closure
    return f"{name(relation.source)} {relation.label.replace('_', ' ').lower()} {name(relation.target)}."


def _text_unit_text(view: "GraphView", tu_id: str) -> str | None:
    unit = view.text_unit(tu_id)
    return unit.text if unit else None


def _community_text(view: "GraphView", community_id: str) -> str | None:
    community = view.community(community_id)
    if community is None or not (community.title or community.summary):
        return None
    return f"{community.title}: {community.summary}".strip(": ")


READERS = {
    "text_unit": _text_unit_text,
    "entity": _entity_text,
    "relationship": _relation_text,
    "community": _community_text,
}


def evidence_texts(view: "GraphView", items: Iterable[tuple[str, str]]) -> list[str]:
    """Texts of (kind, id) items in order, without duplicates or unknown ids."""
    texts: list[str] = []
    for kind, item_id in dict.fromkeys(items):
        text = READERS[kind](view, item_id)
        if text and text not in texts:
            texts.append(text)
    return texts


def cited_items(trace: Trace) -> list[tuple[str, str]]:
    c = trace.citations
    return (
        [("text_unit", t) for t in c.text_units]
        + [("entity", e) for e in c.entities]
        + [("community", m) for m in c.communities]
        + [("relationship", r) for r in c.relationships]
    )


def trajectory_items(trace: Trace) -> list[tuple[str, str]]:
    return (
        [("text_unit", t) for t in trace.read_text_units]
        + [("entity", e) for e in trace.visited_entities]
        + [("community", m) for m in trace.read_communities]
        + [(item.kind, item.id) for item in trace.retrieved]
    )


# -- the metric --------------------------------------------------------------------------------


class RagasJudged(Metric):
    """What every ragas-judged metric shares: options, which records it judges, why one cannot be judged,
    and the evidence budget (subclasses: faithfulness here, the reference metrics in ragas_reference)."""

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

        conditions: Literal["all"] | tuple[str, ...] = Field(
            (BASELINE,), description="conditions whose records are judged: 'all' or a list of condition names"
        )
        max_tokens: int = Field(512, ge=64, description="cap on each judge reply")
        max_context_chars: int = Field(6000, ge=64, description="evidence text shown to the judge")

        @field_validator("conditions", mode="before")
        @classmethod
        def _list_of_names(cls, value: Any) -> Any:
            return tuple(value) if isinstance(value, list) else value

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        conditions = self.options.conditions
        self.conditions = conditions if conditions == "all" else set(conditions)
        self.max_tokens = self.options.max_tokens
        self.max_context_chars = self.options.max_context_chars

    def applies_to(self, record: RunRecord) -> bool:
        return self.conditions == "all" or record.key.condition in self.conditions

    @staticmethod
    def unscorable(record: RunRecord, context: MetricContext) -> str | None:
        if record.status == "failed" or record.trace is None:
            return "run failed: no trace"
        if not (record.trace.answer or "").strip():
            return f"no answer (outcome {record.trace.outcome})"
        if context.llm is None:
            return "no judge LLM in the metric context"
        if context.view is None:
            return "no knowledge-base view in the metric context"
        return None

    def capped(self, texts: list[str]) -> tuple[list[str], bool]:
        """Keep whole texts in order until the character budget; cut the one that overflows."""
        kept, used = [], 0
        for text in texts:
            room = self.max_context_chars - used
            if room <= 0:
                return kept, True
            kept.append(text[:room])
            used += len(kept[-1])
            if len(text) > room:
                return kept, True
        return kept, False


class RagasFaithfulness(RagasJudged):
    """RAGAS faithfulness of each answer against its cited evidence and its whole trajectory."""

    name = "ragas-faithfulness"
    judged_scores = tuple(SCORES.values())

    def warm_up(self) -> None:
        from ragas.metrics.collections import Faithfulness  # noqa: F401 - seconds to import: not in a unit

    def expected_llm_calls(self, condition: str) -> float:
        """Two scores of two judge calls each (statements, then verdicts) on the conditions it scores."""
        return 4.0 if self.conditions == "all" or condition in self.conditions else 0.0

    def score(self, record: RunRecord, question: Question, context: MetricContext) -> dict[str, float | None]:
        if not self.applies_to(record):
            return {}
        scores, notes = self.score_both(record, question, context)
        for key in SCORES.values():  # a fresh score replaces an earlier note
            record.score_notes.pop(key, None)
        record.score_notes.update(notes)
        return scores

    def score_both(
        self, record: RunRecord, question: Question, context: MetricContext
    ) -> tuple[dict[str, float | None], dict[str, str]]:
        """Both faithfulness scores and, for each missing one, why."""
        reason = self.unscorable(record, context)
        if reason:
            return {key: None for key in SCORES.values()}, {key: reason for key in SCORES.values()}
        trace = record.trace
        evidence = {
            "cited": evidence_texts(context.view, cited_items(trace)),
            "trajectory": evidence_texts(context.view, trajectory_items(trace)),
        }
        return run_sync(self._score_all(question.question, trace.answer, evidence, context.llm))

    async def _score_all(
        self, question: str, answer: str, evidence: dict[str, list[str]], llm: "LLMClient"
    ) -> tuple[dict[str, float | None], dict[str, str]]:
        from ragas.metrics.collections import Faithfulness

        metric = Faithfulness(llm=make_ragas_llm(llm, self.max_tokens))
        scores: dict[str, float | None] = {}
        notes: dict[str, str] = {}
        for which, key in SCORES.items():  # one after the other: deterministic call order
            scores[key], note = await self._score_one(metric, question, answer, evidence[which], which)
            if note:
                notes[key] = note
        return scores, notes

    async def _score_one(
        self, metric: Any, question: str, answer: str, texts: list[str], which: str
    ) -> tuple[float | None, str | None]:
        if not texts:
            return None, f"no {which} evidence text to judge against"
        contexts, truncated = self.capped(texts)
        try:
            value = (await metric.ascore(user_input=question, response=answer, retrieved_contexts=contexts)).value
        except Exception as exc:  # noqa: BLE001 - ragas or the judge failed: record it, never crash the run
            return None, f"ragas failed: {type(exc).__name__}: {exc}"[:500]
        if value is None or math.isnan(value):
            return None, "ragas returned NaN (no statements or no verdicts from the judge)"
        return float(value), (f"context truncated to {self.max_context_chars} characters" if truncated else None)

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        values = []
        for system in results.systems:
            for condition in results.conditions:
                records = [r for r in results.select(system, condition) if self.applies_to(r)]
                for which, key in SCORES.items():
                    value = summarise(records, key)
                    if value is not None:
                        values.append(
                            MetricValue(metric=f"{self.name}.{which}", system=system, condition=condition, **value)
                        )
        return values


def summarise(records: list[RunRecord], key: str) -> dict[str, Any] | None:
    """Mean over scored records; the unscored ones are counted with their reasons, never averaged."""
    seen = [r for r in records if key in r.scores]
    if not seen:
        return None
    scored = [r.scores[key] for r in seen if r.scores[key] is not None]
    reasons = Counter(_reason_kind(r.score_notes.get(key, "unknown")) for r in seen if r.scores[key] is None)
    return {
        "value": fmean(scored) if scored else None,
        "numerator": round(sum(scored), 6),
        "denominator": len(scored),
        "detail": {"scored": len(scored), "missing": len(seen) - len(scored), "missing_reasons": dict(reasons)},
        "note": f"{len(seen) - len(scored)} answer(s) not scored" if len(scored) < len(seen) else "",
    }


def _reason_kind(note: str) -> str:
    """Group notes by their stem ("ragas failed: JudgeOutputError", "no answer", ...)."""
    return ":".join(note.split(":")[:2]).strip() if note.startswith("ragas failed") else note.split(" (")[0]
