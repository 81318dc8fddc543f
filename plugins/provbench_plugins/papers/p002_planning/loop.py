"""Paper 002's confidence-gated planning loop (``planning-loop``).

State: the question, the visited concepts, the frontier, the evidence subgraph (concepts and the
edges used), the last stated confidence. Seeds: up to ``max_seeds`` concepts named in the
question, most specific first (:mod:`.seeds`). Each round, at most ``max_rounds``:

1. **expand**: follow the active edges (both directions; invalidated edges are never returned by
   the view) of the concepts to expand, collecting concepts never visited until the round's
   frontier holds ``frontier_cap`` concepts (round 1's frontier counts the seeds). From round
   ``narrow_from_round`` on (the paper: rounds 3-4) only the relation types the previous round
   chose are followed (from those on the edges of the concepts to expand next, which the prompt
   lists); when they lead nowhere new, the round follows every type. Edges to concepts already in
   the evidence are recorded too. Visited concepts are never re-added, so at most
   ``max_rounds x frontier_cap`` concepts are examined.
2. **synthesize**: one LLM call answers from the evidence subgraph only and states a confidence,
   a focus for the next round and the relation types to follow.
3. **verify**: from round ``exit_from_round`` on (the paper: round 2; and always in the last
   round) an answer at confidence >= ``confidence_bar`` is returned with the evidence subgraph as
   its citations; otherwise the focus and relation types carry into the next round. A round that
   finds nothing new to examine makes no call: the previous reply, over the same evidence, is
   verified as this round's. After the last round the loop abstains (``outcome="abstained"``, no
   answer, ``confidence`` = the last stated one; the held-back answer is kept in
   ``artifacts["candidate_answer"]`` for risk-coverage analysis).

``artifacts["rounds"]`` records each round: the concepts expanded, the new frontier, the edges
used, the focused query, the relation types followed and chosen, the answer and confidence.
A reply that is not valid JSON counts as confidence 0 for its round; an LLM failure fails the trace.

Each seed and expand step records in ``Step.shown`` the concepts, edges and text units it brought
into the evidence; each synthesize step its reply (``Step.reply``). That is what resuming needs
(:meth:`PlanningLoop.resume_from_step`, the leave-one-step-out intervention): the loop runs again
against the run's view, the synthesize steps before the resume step take their recorded replies
(no LLM call), so the expansions follow the recorded plans, and the rounds after it decide again;
with ``replay_rest`` every recorded reply but the last is replayed, so only the final answer is
decided again. A replayed step before the resume step whose result differs from the recorded one
(the hidden items changed what an earlier expansion found) is listed in
``artifacts["resumed"]["diverged"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from provbench.agents import LLMSystem, SystemOptions, replayed_reply, reply_object, string_list
from provbench.agents.base import stated_confidence
from provbench.kb.types import Entity, Neighbor, Relation
from provbench.model import Question, RetrievedItem, Trace
from provbench.plugin_api import Environment, ResumePoint

from . import prompts as P
from .seeds import select_seeds


class PlanningOptions(SystemOptions):
    """Every number of the paper is an option; defaults are the paper's."""

    frontier_cap: int = Field(12, ge=1, le=1000, description="concepts in one round's frontier")
    max_seeds: int = Field(3, ge=1, le=50, description="seed concepts named in the question")
    confidence_bar: float = Field(0.80, ge=0.0, le=1.0, description="answer at or above this confidence")
    max_rounds: int = Field(4, ge=1, le=50, description="rounds (one LLM call each) before abstaining")
    relation_focus: bool = Field(True, description="follow only the relation types the last round chose")
    exit_from_round: int = Field(2, ge=1, le=50, description="first round whose confident answer is returned")
    narrow_from_round: int = Field(3, ge=2, le=50, description="first round following only the chosen relation types")
    seed_min_chars: int = Field(3, ge=1, description="shorter concept names never seed")
    fallback_search_k: int = Field(3, ge=0, le=50, description="entities found by similarity when no name occurs")
    text_units_per_concept: int = Field(0, ge=0, le=20, description="linked text shown per concept (0: graph only)")
    text_chars: int = Field(400, ge=50)
    max_tokens: int = Field(256, ge=32, le=8192)


@dataclass
class LoopState:
    question: str
    visited: dict[str, Entity] = field(default_factory=dict)  # also the evidence concepts, in order
    edges: dict[str, Relation] = field(default_factory=dict)  # evidence edges, in order
    texts: dict[str, str] = field(default_factory=dict)  # text units shown
    relation_vocab: list[str] = field(default_factory=list)  # types on the next frontier's edges
    neighbours: dict[str, list[Neighbor]] = field(default_factory=dict)  # per concept, fetched once
    frontier: list[str] = field(default_factory=list)  # the concepts the next expansion starts from
    frontier_before: list[str] = field(default_factory=list)  # what the current round expanded
    focus: str = ""
    relation_types: list[str] = field(default_factory=list)
    confidence: float | None = None
    answer: str | None = None
    shown: dict[str, list[str]] = field(default_factory=dict)  # kind -> ids the current step brought in
    replies: list[str] = field(default_factory=list)  # recorded synthesize replies still to replay, in order


@dataclass
class Expansion:
    added: list[str]
    edges: list[str]
    followed: list[str] | None  # relation types followed (None: all)
    widened: bool = False  # the chosen types led nowhere new, so every type was followed
    capped: bool = False


class PlanningLoop(LLMSystem):
    """Paper 002: a bounded frontier expanded round by round; answers at a confidence bar, else abstains."""

    name = "planning-loop"
    Options = PlanningOptions
    question_template = "{question}"  # the prompt says "Question:" itself
    choices_template = P.CHOICES

    def run(self, question: Question, env: Environment) -> Trace:
        return self.loop(question, env, self.new_trace(question), replies=[])

    supports_step_resume = True

    def resume_from_step(self, question: Question, env: Environment, recorded: Trace, point: ResumePoint) -> Trace:
        """The loop again against ``env.view``, with recorded replies replayed (module docstring)."""
        if not 0 <= point.step < len(recorded.steps):
            raise ValueError(f"cannot resume from step {point.step}: the recorded trace has {len(recorded.steps)} steps")
        plans = [s for s in recorded.steps if s.tool == "synthesize" and s.kind == "generation"]
        replayed = plans[:-1] if point.replay_rest else [s for s in plans if s.index < point.step]
        missing = [s.index for s in replayed if s.reply is None]
        if missing:
            raise ValueError(f"cannot replay step(s) {missing}: the recorded trace holds no reply for them "
                             "(recorded by an earlier provbench); run its baseline again")
        trace = self.loop(question, env, self.new_trace(question), replies=[s.reply for s in replayed])
        diverged = [s.index for s in recorded.steps[: point.step]
                    if s.index >= len(trace.steps) or (trace.steps[s.index].tool, trace.steps[s.index].result)
                    != (s.tool, s.result)]
        trace.artifacts["resumed"] = {"from_step": point.step, "replay_rest": point.replay_rest,
                                      "replayed_steps": len(replayed), "diverged": diverged}
        return trace

    def loop(self, question: Question, env: Environment, trace: Trace, replies: list[str]) -> Trace:
        state = LoopState(question=self.question_text(question), focus=question.question, replies=list(replies))
        if not self.seed(question, env, trace, state):
            trace.add_step("error", tool="seed", error="no concept is named in the question and search found none")
            return self.abstain(trace, state, "no seed concept")
        opts = self.options
        for number in range(1, opts.max_rounds + 1):
            budget = opts.frontier_cap - (len(state.frontier) if number == 1 else 0)
            expansion = self.expand(env, trace, state, budget, narrow=number >= opts.narrow_from_round)
            if number > 1 and not expansion.added and not expansion.edges:
                # the evidence is the last round's: its reply stands as this round's
                if self.confident(state, number):
                    return self.emit(trace, state)
                return self.abstain(trace, state, f"round {number} found nothing new to examine")
            reply = self.synthesize(question, env, trace, state, number)
            if reply is None:
                return trace  # the LLM failed for good: the trace says so
            self.record_round(trace, state, number, expansion, reply)
            if self.confident(state, number):
                return self.emit(trace, state)
            state.focus = reply["focus"] or state.focus
            state.relation_types = reply["relation_types"] if opts.relation_focus else []
        return self.abstain(trace, state, f"confidence below {opts.confidence_bar} after {opts.max_rounds} rounds")

    @property
    def expected_llm_calls(self) -> float:
        return float(self.options.max_rounds)  # the runner's scheduling hint: an abstention uses every round

    def confident(self, state: LoopState, number: int) -> bool:
        """The verify step: may this round answer (the paper: from round 2 on), and is the bar cleared?"""
        opts = self.options
        may_exit = number >= min(opts.exit_from_round, opts.max_rounds)
        return may_exit and state.confidence is not None and state.confidence >= opts.confidence_bar

    # -- seeding ---------------------------------------------------------------------------
    def seed(self, question: Question, env: Environment, trace: Trace, state: LoopState) -> bool:
        matches = select_seeds(env.view, question.question, self.options.max_seeds, self.options.seed_min_chars)
        seeds = [(m.entity, "named") for m in matches]
        if not seeds and self.options.fallback_search_k:
            hits = env.view.search_entities(question.question, k=self.options.fallback_search_k)
            seeds = [(e, "search") for e in (env.view.entity(h.id) for h in hits[: self.options.max_seeds]) if e]
        state.shown = {}
        for entity, _ in seeds:
            self.examine(env, trace, state, entity)
        state.frontier = [e.id for e, _ in seeds]
        trace.add_step("retrieval", tool="seed", arguments={"question": question.question},
                       result=[{"id": e.id, "name": e.name, "how": how} for e, how in seeds], shown=state.shown)
        return bool(seeds)

    # -- expand ----------------------------------------------------------------------------
    def expand(self, env: Environment, trace: Trace, state: LoopState, budget: int, narrow: bool) -> Expansion:
        types = (list(state.relation_types) or None) if narrow else None
        state.shown = {}
        expansion = self.collect(env, trace, state, budget, types)
        if types is not None and not expansion.added and not expansion.edges:
            expansion = self.collect(env, trace, state, budget, None)
            expansion.widened = True
        state.frontier = expansion.added
        state.relation_vocab = list(dict.fromkeys(nb.relation.label for concept in state.frontier
                                                  for nb in self.neighbours(env, state, concept) if nb.relation.label))
        trace.add_step("retrieval", tool="expand",
                       arguments={"expand": list(state.frontier_before), "relation_types": types},
                       result={"added": expansion.added, "edges": expansion.edges, "widened": expansion.widened,
                               "capped": expansion.capped}, shown=state.shown)
        return expansion

    def collect(self, env: Environment, trace: Trace, state: LoopState, budget: int,
                types: list[str] | None) -> Expansion:
        expansion = Expansion(added=[], edges=[], followed=types)
        state.frontier_before = list(state.frontier)
        for concept in state.frontier:
            for nb in self.neighbours(env, state, concept):
                if types is not None and nb.relation.label not in types:
                    continue
                other = nb.entity
                if other.id not in state.visited:
                    if len(expansion.added) >= budget:
                        expansion.capped = True
                        continue
                    self.examine(env, trace, state, other)
                    expansion.added.append(other.id)
                if nb.relation.id not in state.edges:
                    state.edges[nb.relation.id] = nb.relation
                    expansion.edges.append(nb.relation.id)
                    trace.retrieved.append(RetrievedItem(kind="relationship", id=nb.relation.id))
                    state.shown.setdefault("relationship", []).append(nb.relation.id)
        return expansion

    def neighbours(self, env: Environment, state: LoopState, concept: str) -> list[Neighbor]:
        """The concept's active edges, both directions (the view never returns invalidated ones)."""
        if concept not in state.neighbours:
            state.neighbours[concept] = env.view.neighbors(concept)
        return state.neighbours[concept]

    def examine(self, env: Environment, trace: Trace, state: LoopState, entity: Entity) -> None:
        """A concept enters the evidence (and is never re-added), with its first linked text units."""
        state.visited[entity.id] = entity
        state.shown.setdefault("entity", []).append(entity.id)
        trace.visit(entity.id)
        trace.retrieved.append(RetrievedItem(kind="entity", id=entity.id))
        for unit_id in entity.text_unit_ids[: self.options.text_units_per_concept]:
            unit = env.view.text_unit(unit_id)
            if unit is not None and unit.id not in state.texts:
                state.texts[unit.id] = " ".join(unit.text.split())[: self.options.text_chars]
                trace.read_text_unit(unit.id)
                state.shown.setdefault("text_unit", []).append(unit.id)

    # -- synthesize ------------------------------------------------------------------------
    def synthesize(self, question: Question, env: Environment, trace: Trace, state: LoopState,
                   number: int) -> dict[str, Any] | None:
        messages = [{"role": "system", "content": P.SYNTHESIZE_SYSTEM},
                    {"role": "user", "content": self.render(state, number)}]
        resp = replayed_reply(state.replies.pop(0)) if state.replies else self.chat(
            env, trace, messages, schema=P.reply_schema(state.relation_vocab, question.choices),
            purpose=f"synthesize round {number}")
        if resp is None:
            return None
        data = reply_object(resp)
        if data is None:
            trace.add_step("rejection", tool="synthesize", error="reply is not a JSON object: counted as confidence 0")
            data = {}
        return {"text": resp.text or "", "answer": _text(data.get("answer")),
                "confidence": stated_confidence(data.get("confidence")) or 0.0, "focus": _text(data.get("focus")),
                "relation_types": [t for t in string_list(data.get("relation_types")) if t in state.relation_vocab]}

    def render(self, state: LoopState, number: int) -> str:
        names = {eid: e.name for eid, e in state.visited.items()}
        concepts = [P.CONCEPT_LINE.format(id=e.id, name=e.name, label=e.label or "concept",
                                          description=e.description or "-") for e in state.visited.values()]
        concepts += [P.TEXT_LINE.format(id=tid, text=text) for tid, text in state.texts.items()]
        relations = [P.RELATION_LINE.format(id=r.id, source=names.get(r.source, r.source), label=r.label,
                                            target=names.get(r.target, r.target)) for r in state.edges.values()]
        return P.SYNTHESIZE_USER.format(question=state.question, round=number, max_rounds=self.options.max_rounds,
                                        focus=state.focus, concepts="\n".join(concepts) or P.NONE,
                                        relations="\n".join(relations) or P.NONE,
                                        relation_types=", ".join(state.relation_vocab) or P.NONE)

    # -- verify and finish -----------------------------------------------------------------
    def record_round(self, trace: Trace, state: LoopState, number: int, expansion: Expansion,
                     reply: dict[str, Any]) -> None:
        state.answer, state.confidence = reply["answer"] or None, reply["confidence"]
        rounds = trace.artifacts.setdefault("rounds", [])
        rounds.append({"round": number, "expanded": state.frontier_before, "frontier": expansion.added,
                       "edges_used": expansion.edges, "focused_query": state.focus,
                       "relation_types_followed": expansion.followed, "widened": expansion.widened,
                       "capped": expansion.capped, "answer": state.answer, "confidence": state.confidence,
                       "relation_types_chosen": reply["relation_types"], "next_focus": reply["focus"],
                       "concepts_examined": len(state.visited)})
        trace.add_step("generation", tool="synthesize", arguments={"round": number, "focus": state.focus},
                       result={"answer": state.answer, "confidence": state.confidence,
                               "focus": reply["focus"], "relation_types": reply["relation_types"]}, reply=reply["text"])

    def emit(self, trace: Trace, state: LoopState) -> Trace:
        if state.answer is None:  # confident but empty: nothing to return
            return self.abstain(trace, state, "confident reply without an answer")
        trace.answer, trace.confidence, trace.outcome = state.answer, state.confidence, "answered"
        self.cite_evidence(trace, state)
        return trace

    def abstain(self, trace: Trace, state: LoopState, reason: str) -> Trace:
        trace.answer, trace.confidence, trace.outcome = None, state.confidence, "abstained"
        trace.artifacts["abstention_reason"] = reason
        if state.answer is not None:
            trace.artifacts["candidate_answer"] = state.answer
        self.cite_evidence(trace, state, cite=False)
        return trace

    def cite_evidence(self, trace: Trace, state: LoopState, cite: bool = True) -> None:
        """The evidence subgraph goes into the artifacts, and into the citations of an answer."""
        trace.artifacts["evidence"] = {"entities": list(state.visited), "relations": list(state.edges),
                                       "text_units": list(state.texts)}
        if cite:
            trace.citations.entities = list(state.visited)
            trace.citations.relationships = list(state.edges)
            trace.citations.text_units = list(state.texts)


def _text(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)  # a year or a count given as a JSON number
    return value.strip() if isinstance(value, str) else ""
