"""Paper 000's non-agentic systems: llm-only, rag and one-shot graphrag, and the parts all six share.

What each system records in its :class:`~provbench.model.Trace` (Table 1's footprint comes from
``trace.footprint()``):

- **llm-only**: one generation step and the answer; nothing retrieved, read, visited or cited.
- **rag**: a retrieval step; ``retrieved`` = the top-k text-unit hits with scores;
  ``read_text_units`` = the hits whose text reached the prompt; ``citations.text_units`` = the
  cited ids that were in the prompt (other cited ids are dropped and noted in a rejection step).
- **graphrag**: a retrieval step; ``visited_entities`` = entities put in the context (search hits
  and their neighbours), ``read_text_units`` / ``read_communities`` = text units and community
  reports put in the context, citations of any kind limited to ids shown in the context. Its
  context ids live in ``trace.artifacts["context"]`` so :meth:`GraphRAG.resume` can rebuild the
  prompt from a perturbed copy and only re-generate (context-level interventions).

A model that misbehaves (invalid JSON, LLM failure) never raises: the trace says what happened,
with ``outcome="failed"``. An empty answer is recorded as ``outcome="abstained"``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from provbench.kb.types import Entity
from provbench.llm.client import parse_json
from provbench.model import Citations, Question, RetrievedItem, Trace
from provbench.plugin_api import Environment, System

from . import prompts as P

# ---------------------------------------------------------------------------------------------
# shared by every paper-000 system


class SystemOptions(BaseModel):
    """Options every paper-000 system accepts. Subclasses add their own fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # 512 fits the longest reply answer_schema allows (~450 tokens), so the cap never cuts its JSON.
    max_tokens: int = Field(512, ge=16, le=8192, description="cap on each generated reply")
    temperature: float = Field(0.0, ge=0.0, le=2.0)


class PaperSystem(System):
    """Base of the six systems: validated options, one guarded LLM call, answer parsing."""

    Options: ClassVar[type[SystemOptions]] = SystemOptions  # self.options: validated by System's __init__

    def new_trace(self, question: Question) -> Trace:
        return Trace(question_id=question.id, system=self.name)

    def chat(self, env: Environment, trace: Trace, messages: list[dict], *, schema: dict | None,
             purpose: str, max_tokens: int | None = None) -> Any | None:
        """One LLM call; on a persistent LLM failure the trace is marked failed and None returned."""
        from provbench.llm import LLMError

        try:
            return env.llm.chat(
                messages, schema=schema, max_tokens=max_tokens or self.options.max_tokens,
                temperature=self.options.temperature, seed=env.seed, purpose=purpose, trace=trace,
            )
        except LLMError as err:
            trace.add_step("error", tool="llm", error=str(err))
            trace.outcome, trace.error = "failed", f"LLM call failed: {err}"
            return None

    def finish_answer(self, trace: Trace, answer: Any) -> None:
        if isinstance(answer, (int, float)) and not isinstance(answer, bool):
            answer = str(answer)  # a year or a count given as a JSON number
        text = answer.strip() if isinstance(answer, str) else ""
        trace.answer = text or None
        trace.outcome = "answered" if text else "abstained"


def question_text(question: Question) -> str:
    text = P.QUESTION.format(question=question.question)
    if question.choices:
        text += "\n" + P.CHOICES.format(choices="; ".join(question.choices))
    return text


def reply_object(resp: Any) -> dict | None:
    """The reply as a JSON object: the LLM layer's parse, else the first {...} in the text."""
    if isinstance(getattr(resp, "data", None), dict):
        return resp.data
    text = getattr(resp, "text", "") or ""
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if not match:
        return None
    value = parse_json(match.group(0))
    return value if isinstance(value, dict) else None


def record_retrieved(trace: Trace, kind: str, item_id: str, score: float | None = None) -> None:
    """Add to ``trace.retrieved`` once per (kind, id)."""
    if not any(r.kind == kind and r.id == item_id for r in trace.retrieved):
        trace.retrieved.append(RetrievedItem(kind=kind, id=item_id, score=score))


# Names of the citation lists in model replies and tool arguments, and the Citations field each fills.
CITATION_FIELDS = {
    "cited_entities": "entities",
    "cited_relationships": "relationships",
    "cited_textunits": "text_units",
    "cited_communities": "communities",
}


def string_list(value: Any) -> list[str]:
    """A reply's citation list as unique non-empty strings; anything else becomes empty."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return list(dict.fromkeys(v.strip() for v in value if isinstance(v, str) and v.strip()))


def split_citations(reply: dict, shown: dict[str, set[str]]) -> tuple[Citations, dict[str, list[str]]]:
    """Citations whose ids were shown to the model, and the ones that were not (by field)."""
    kept: dict[str, list[str]] = {}
    dropped: dict[str, list[str]] = {}
    for reply_key, field in CITATION_FIELDS.items():
        ids = string_list(reply.get(reply_key))
        kept[field] = [i for i in ids if i in shown.get(field, set())]
        bad = [i for i in ids if i not in shown.get(field, set())]
        if bad:
            dropped[field] = bad
    return Citations(**kept), dropped


MAX_ANSWER_CHARS = 200
MAX_CITATIONS = 5
MAX_CITATION_CHARS = 64


def answer_schema(*citation_keys: str, confidence: bool = False) -> dict:
    """Bounded lengths, so a grammar-constrained reply closes its JSON before max_tokens cuts it;
    ``confidence`` adds a stated confidence in [0, 1] (paper 002's calibration comparison)."""
    properties: dict[str, Any] = {"answer": {"type": "string", "maxLength": MAX_ANSWER_CHARS}}
    if confidence:
        properties["confidence"] = {"type": "number", "minimum": 0, "maximum": 1}
    for key in citation_keys:
        properties[key] = {"type": "array", "maxItems": MAX_CITATIONS,
                           "items": {"type": "string", "maxLength": MAX_CITATION_CHARS}}
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


class OneShotOptions(SystemOptions):
    ask_confidence: bool = Field(False, description="also ask for a confidence in [0, 1] (off: prompts unchanged)")


class OneShotSystem(PaperSystem):
    """Build a prompt once, generate once, parse the answer and the citations shown in the prompt."""

    Options: ClassVar[type[SystemOptions]] = OneShotOptions
    citation_keys: ClassVar[tuple[str, ...]] = ()

    def generate(self, env: Environment, trace: Trace, messages: list[dict], shown: dict[str, set[str]]) -> Trace:
        ask = getattr(self.options, "ask_confidence", False)
        if ask:
            messages = [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + "\n" + P.CONFIDENCE}]
        resp = self.chat(env, trace, messages, schema=answer_schema(*self.citation_keys, confidence=ask),
                         purpose="answer")
        if resp is None:
            return trace
        reply = reply_object(resp)
        if reply is None:
            trace.add_step("error", tool="generate", error=f"reply is not a JSON object: {_snippet(resp.text)}")
            trace.outcome, trace.error = "failed", "the model's reply was not valid JSON"
            return trace
        citations, dropped = split_citations(reply, shown)
        trace.citations = citations
        trace.add_step("generation", tool="generate", result={"answer": reply.get("answer"),
                                                              "citations": citations.model_dump()})
        if dropped:
            trace.add_step("rejection", tool="generate", arguments={"dropped_citations": dropped},
                           error="cited ids that were not in the prompt were dropped")
        self.finish_answer(trace, reply.get("answer"))
        if ask:
            trace.confidence = stated_confidence(reply.get("confidence"))
        return trace


def stated_confidence(value: Any) -> float | None:
    """A confidence in [0, 1] as the model stated it; None when it gave none or an invalid one."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0
    return float(value) if ok else None


def _snippet(text: str | None, limit: int = 120) -> str:
    text = (text or "").strip().replace("\n", " ")
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


# ---------------------------------------------------------------------------------------------
# llm-only


class LLMOnly(OneShotSystem):
    """Answers from the model's own knowledge, without retrieval (paper 000's LLM baseline)."""

    name = "llm-only"

    def run(self, question: Question, env: Environment) -> Trace:
        trace = self.new_trace(question)
        messages = [{"role": "system", "content": P.LLM_ONLY_SYSTEM},
                    {"role": "user", "content": question_text(question)}]
        return self.generate(env, trace, messages, shown={})


# ---------------------------------------------------------------------------------------------
# rag


class RAGOptions(OneShotOptions):
    top_k: int = Field(5, ge=1, le=100, description="text units retrieved by similarity")
    text_chars: int = Field(1500, ge=50, description="characters of each text unit shown")


class RAG(OneShotSystem):
    """Top-k text units by embedding similarity; answers from them only and cites their ids."""

    name = "rag"
    Options = RAGOptions
    citation_keys = ("cited_textunits",)

    def run(self, question: Question, env: Environment) -> Trace:
        trace = self.new_trace(question)
        hits = env.view.search_text_units(question.question, k=self.options.top_k)
        passages = []
        readable = {unit.id: unit for unit in env.view.text_units([h.id for h in hits])}  # one batch
        for hit in hits:
            record_retrieved(trace, "text_unit", hit.id, hit.score)
            unit = readable.get(hit.id)
            if unit is not None:
                trace.read_text_unit(unit.id)
                passages.append(P.RAG_PASSAGE.format(id=unit.id, text=clip(unit.text, self.options.text_chars)))
        trace.add_step("retrieval", tool="search_text_units",
                       arguments={"query": question.question, "k": self.options.top_k},
                       result=[{"id": h.id, "score": h.score} for h in hits])
        user = P.RAG_USER.format(passages="\n\n".join(passages) or P.GRAPHRAG_EMPTY, question=question_text(question))
        messages = [{"role": "system", "content": P.RAG_SYSTEM}, {"role": "user", "content": user}]
        return self.generate(env, trace, messages, shown={"text_units": set(trace.read_text_units)})


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# graphrag (one-shot)


class GraphRAGOptions(OneShotOptions):
    entity_k: int = Field(5, ge=1, le=100, description="entities found by similarity (the seeds)")
    community_k: int = Field(2, ge=0, le=50, description="community reports found by similarity")
    neighbor_limit: int = Field(5, ge=0, le=100, description="relationships expanded per seed entity")
    max_entities: int = Field(20, ge=1, le=500)
    max_text_units: int = Field(10, ge=0, le=200)
    text_chars: int = Field(800, ge=50, description="characters of each text unit shown")


class GraphRAG(OneShotSystem):
    """One-shot GraphRAG: entities and communities by similarity, their nearby relationships and
    linked text units, one prompt, one answer with citations."""

    name = "graphrag"
    Options = GraphRAGOptions
    supports_resume = True
    citation_keys = tuple(CITATION_FIELDS)

    def run(self, question: Question, env: Environment) -> Trace:
        trace = self.new_trace(question)
        context = self.retrieve(question, env, trace)
        trace.artifacts["context"] = context
        return self.answer_from_context(question, env, trace, context)

    def resume(self, question: Question, env: Environment, perturbed: Trace) -> Trace:
        """Rebuild the prompt from ``perturbed.artifacts["context"]`` and only re-generate."""
        context = perturbed.artifacts.get("context")
        trace = self.new_trace(question)
        trace.artifacts = {**perturbed.artifacts, "resumed": True}
        if not isinstance(context, dict):
            trace.add_step("error", tool="resume", error="perturbed trace has no artifacts['context']")
            trace.outcome, trace.error = "failed", "nothing to resume from"
            return trace
        context = {key: string_list(context.get(key)) for key in CONTEXT_KEYS}
        trace.add_step("retrieval", tool="restore_context", arguments={k: len(v) for k, v in context.items()})
        return self.answer_from_context(question, env, trace, context)

    # -- retrieval -------------------------------------------------------------------------
    def retrieve(self, question: Question, env: Environment, trace: Trace) -> dict[str, list[str]]:
        """Context ids: seed entities, their neighbours and relationships, linked text units, communities."""
        opts, view = self.options, env.view
        entity_hits = view.search_entities(question.question, k=opts.entity_k)
        community_hits = view.search_communities(question.question, k=opts.community_k) if opts.community_k else []
        for hit in [*entity_hits, *community_hits]:
            record_retrieved(trace, hit.kind, hit.id, hit.score)
        seeds = [h.id for h in entity_hits]
        entities, relations, neighbour_ids = list(seeds), [], []
        for seed in seeds:
            for nb in view.neighbors(seed, limit=opts.neighbor_limit) if opts.neighbor_limit else []:
                relations.append(nb.relation)
                neighbour_ids.append(nb.entity.id)
        entities = list(dict.fromkeys(entities + neighbour_ids))[: opts.max_entities]
        kept = set(entities)
        relations = [r for r in relations if r.source in kept and r.target in kept]
        text_units = self.linked_text_units(view, seeds, relations, neighbour_ids)
        context = {
            "entity_ids": entities,
            "relation_ids": list(dict.fromkeys(r.id for r in relations)),
            "text_unit_ids": text_units,
            "community_ids": [h.id for h in community_hits],
        }
        trace.add_step("retrieval", tool="graph_context", arguments={"query": question.question},
                       result={k: list(v) for k, v in context.items()})
        return context

    def linked_text_units(self, view: Any, seeds: list[str], relations: list, neighbours: list[str]) -> list[str]:
        """Text units of the seeds first, then the relationships' source text, then the neighbours'."""
        ordered: list[str] = []
        for entity in view.entities(seeds):
            ordered += entity.text_unit_ids
        ordered += [r.text_unit_id for r in relations if r.text_unit_id]
        for entity in view.entities(neighbours):  # duplicates dropped: the result is deduplicated anyway
            ordered += entity.text_unit_ids
        return list(dict.fromkeys(ordered))[: self.options.max_text_units]

    # -- generation ------------------------------------------------------------------------
    def answer_from_context(self, question: Question, env: Environment, trace: Trace,
                            context: dict[str, list[str]]) -> Trace:
        text, shown = self.render_context(env.view, context)
        trace.visit(*shown["entities"])
        trace.read_text_unit(*shown["text_units"])
        trace.read_community(*shown["communities"])
        for kind, field in (("entity", "entities"), ("relationship", "relationships"),
                            ("text_unit", "text_units"), ("community", "communities")):
            for item_id in shown[field]:
                record_retrieved(trace, kind, item_id)
        user = P.GRAPHRAG_USER.format(context=text, question=question_text(question))
        messages = [{"role": "system", "content": P.GRAPHRAG_SYSTEM}, {"role": "user", "content": user}]
        return self.generate(env, trace, messages, shown={k: set(v) for k, v in shown.items()})

    def render_context(self, view: Any, context: dict[str, list[str]]) -> tuple[str, dict[str, list[str]]]:
        """The prompt's context from ids, through the view: an id the view no longer shows is left
        out, and a relationship is shown only when both its ends are entities in the context."""
        entities: dict[str, Entity] = {e.id: e for e in view.entities(context.get("entity_ids", []))}
        relations = [r for r in view.relations(context.get("relation_ids", []))
                     if r.source in entities and r.target in entities]
        units = view.text_units(context.get("text_unit_ids", []))
        communities = [c for c in (view.community(i) for i in context.get("community_ids", [])) if c is not None]
        sections = [
            ("Entities", [P.GRAPHRAG_ENTITY.format(id=e.id, name=e.name, label=e.label or "entity",
                                                   description=e.description or "-") for e in entities.values()]),
            ("Relationships", [P.GRAPHRAG_RELATION.format(id=r.id, source=entities[r.source].name, label=r.label,
                                                          target=entities[r.target].name) for r in relations]),
            ("Text units", [P.GRAPHRAG_TEXT_UNIT.format(id=u.id, text=clip(u.text, self.options.text_chars))
                            for u in units]),
            ("Communities", [P.GRAPHRAG_COMMUNITY.format(id=c.id, title=c.title or "-", summary=c.summary or "-")
                             for c in communities]),
        ]
        text = "\n\n".join(P.GRAPHRAG_SECTION.format(title=title, lines="\n".join(lines) or P.GRAPHRAG_EMPTY)
                           for title, lines in sections)
        shown = {"entities": list(entities), "relationships": [r.id for r in relations],
                 "text_units": [u.id for u in units], "communities": [c.id for c in communities]}
        return text, shown


CONTEXT_KEYS = ("entity_ids", "relation_ids", "text_unit_ids", "community_ids")
