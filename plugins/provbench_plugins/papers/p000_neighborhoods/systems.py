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

from typing import Any, ClassVar

from pydantic import Field

from provbench.agents import (
    CITATION_FIELDS,
    LLMSystem,
    OneShotOptions,
    OneShotSystem,
    SystemOptions,
    clip,
    fixed_parts,
    string_list,
)
from provbench.kb.types import Entity
from provbench.model import Question, Trace
from provbench.plugin_api import Environment

from . import prompts as P

__all__ = ["PaperSystem", "LLMOnly", "RAG", "GraphRAG", "SystemOptions"]


class PaperSystem(LLMSystem):
    """What paper 000's six systems share beyond :class:`~provbench.agents.LLMSystem`: the
    question's wording."""

    question_template: ClassVar[str] = P.QUESTION
    choices_template: ClassVar[str] = P.CHOICES


class PaperOneShot(PaperSystem, OneShotSystem):
    """A paper-000 system that prompts once (llm-only, rag, graphrag)."""

    confidence_request: ClassVar[str] = P.CONFIDENCE


# ---------------------------------------------------------------------------------------------
# llm-only


class LLMOnly(PaperOneShot):
    """Answers from the model's own knowledge, without retrieval (paper 000's LLM baseline)."""

    name = "llm-only"

    def instructions(self) -> list[str]:
        return [*super().instructions(), P.LLM_ONLY_SYSTEM]

    def run(self, question: Question, env: Environment) -> Trace:
        trace = self.new_trace(question)
        messages = [
            {"role": "system", "content": P.LLM_ONLY_SYSTEM},
            {"role": "user", "content": self.question_text(question)},
        ]
        return self.generate(env, trace, messages, shown={})


# ---------------------------------------------------------------------------------------------
# rag


class RAGOptions(OneShotOptions):
    top_k: int = Field(5, ge=1, le=100, description="text units retrieved by similarity")
    text_chars: int = Field(1500, ge=50, description="characters of each text unit shown")


class RAG(PaperOneShot):
    """Top-k text units by embedding similarity; answers from them only and cites their ids."""

    name = "rag"
    Options = RAGOptions
    citation_keys = ("cited_textunits",)

    def instructions(self) -> list[str]:
        return [*super().instructions(), P.RAG_SYSTEM, *fixed_parts(P.RAG_USER), P.GRAPHRAG_EMPTY]

    def run(self, question: Question, env: Environment) -> Trace:
        trace = self.new_trace(question)
        hits = env.view.search_text_units(question.question, k=self.options.top_k)
        passages = []
        readable = {unit.id: unit for unit in env.view.text_units([h.id for h in hits])}  # one batch
        for hit in hits:
            trace.record_retrieved("text_unit", hit.id, hit.score)
            unit = readable.get(hit.id)
            if unit is not None:
                trace.read_text_unit(unit.id)
                passages.append(P.RAG_PASSAGE.format(id=unit.id, text=clip(unit.text, self.options.text_chars)))
        trace.add_step(
            "retrieval",
            tool="search_text_units",
            arguments={"query": question.question, "k": self.options.top_k},
            result=[{"id": h.id, "score": h.score} for h in hits],
        )
        user = P.RAG_USER.format(
            passages="\n\n".join(passages) or P.GRAPHRAG_EMPTY, question=self.question_text(question)
        )
        messages = [{"role": "system", "content": P.RAG_SYSTEM}, {"role": "user", "content": user}]
        return self.generate(env, trace, messages, shown={"text_units": set(trace.read_text_units)})


# ---------------------------------------------------------------------------------------------
# graphrag (one-shot)


class GraphRAGOptions(OneShotOptions):
    entity_k: int = Field(5, ge=1, le=100, description="entities found by similarity (the seeds)")
    community_k: int = Field(2, ge=0, le=50, description="community reports found by similarity")
    neighbor_limit: int = Field(5, ge=0, le=100, description="relationships expanded per seed entity")
    # The paper reports means of 15.6 visited entities and 13.3 retrieved text units per answer but
    # states no caps: caps of 20 leave both means reachable (a cap of 10 text units could not be).
    max_entities: int = Field(20, ge=1, le=500, description="entities put in the context")
    max_text_units: int = Field(20, ge=0, le=200, description="text units put in the context")
    text_chars: int = Field(800, ge=50, description="characters of each text unit shown")


class GraphRAG(PaperOneShot):
    """One-shot GraphRAG: entities and communities by similarity, their nearby relationships and
    linked text units, one prompt, one answer with citations."""

    name = "graphrag"
    Options = GraphRAGOptions
    supports_resume = True
    citation_keys = tuple(CITATION_FIELDS)

    def instructions(self) -> list[str]:
        headings = [P.GRAPHRAG_SECTION.format(title=title, lines="") for title in P.GRAPHRAG_TITLES]
        return [*super().instructions(), P.GRAPHRAG_SYSTEM, P.GRAPHRAG_EMPTY, *headings]

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
            trace.record_retrieved(hit.kind, hit.id, hit.score)
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
        trace.add_step(
            "retrieval",
            tool="graph_context",
            arguments={"query": question.question},
            result={k: list(v) for k, v in context.items()},
        )
        return context

    def linked_text_units(self, view: Any, seeds: list[str], relations: list, neighbours: list[str]) -> list[str]:
        """The relationships' source text first (the text behind the expanded edges), then the seeds'
        text units, then the neighbours'; ``max_text_units`` of them. Relation sources lead because
        a hub seed linked to many text units would otherwise fill every slot."""
        ordered = [r.text_unit_id for r in relations if r.text_unit_id]
        for entity in view.entities(seeds):
            ordered += entity.text_unit_ids
        for entity in view.entities(neighbours):  # duplicates dropped: the result is deduplicated anyway
            ordered += entity.text_unit_ids
        return list(dict.fromkeys(ordered))[: self.options.max_text_units]

    # -- generation ------------------------------------------------------------------------
    def answer_from_context(
        self, question: Question, env: Environment, trace: Trace, context: dict[str, list[str]]
    ) -> Trace:
        text, shown = self.render_context(env.view, context)
        trace.visit(*shown["entities"])
        trace.read_text_unit(*shown["text_units"])
        trace.read_community(*shown["communities"])
        for kind, field in (
            ("entity", "entities"),
            ("relationship", "relationships"),
            ("text_unit", "text_units"),
            ("community", "communities"),
        ):
            for item_id in shown[field]:
                trace.record_retrieved(kind, item_id)
        user = P.GRAPHRAG_USER.format(context=text, question=self.question_text(question))
        messages = [{"role": "system", "content": P.GRAPHRAG_SYSTEM}, {"role": "user", "content": user}]
        return self.generate(env, trace, messages, shown={k: set(v) for k, v in shown.items()})

    def render_context(self, view: Any, context: dict[str, list[str]]) -> tuple[str, dict[str, list[str]]]:
        """The prompt's context from ids, through the view: an id the view no longer shows is left
        out, and a relationship is shown only when both its ends are entities in the context."""
        entities: dict[str, Entity] = {e.id: e for e in view.entities(context.get("entity_ids", []))}
        relations = [
            r for r in view.relations(context.get("relation_ids", [])) if r.source in entities and r.target in entities
        ]
        units = view.text_units(context.get("text_unit_ids", []))
        communities = [c for c in (view.community(i) for i in context.get("community_ids", [])) if c is not None]
        sections = zip(
            P.GRAPHRAG_TITLES,
            [
                [
                    P.GRAPHRAG_ENTITY.format(
                        id=e.id, name=e.name, label=e.label or "entity", description=e.description or "-"
                    )
                    for e in entities.values()
                ],
                [
                    P.GRAPHRAG_RELATION.format(
                        id=r.id, source=entities[r.source].name, label=r.label, target=entities[r.target].name
                    )
                    for r in relations
                ],
                [P.GRAPHRAG_TEXT_UNIT.format(id=u.id, text=clip(u.text, self.options.text_chars)) for u in units],
                [
                    P.GRAPHRAG_COMMUNITY.format(id=c.id, title=c.title or "-", summary=c.summary or "-")
                    for c in communities
                ],
            ],
        )
        text = "\n\n".join(
            P.GRAPHRAG_SECTION.format(title=title, lines="\n".join(lines) or P.GRAPHRAG_EMPTY)
            for title, lines in sections
        )
        shown = {
            "entities": list(entities),
            "relationships": [r.id for r in relations],
            "text_units": [u.id for u in units],
            "communities": [c.id for c in communities],
        }
        return text, shown


CONTEXT_KEYS = ("entity_ids", "relation_ids", "text_unit_ids", "community_ids")
