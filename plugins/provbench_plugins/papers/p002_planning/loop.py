"""Paper 002's confidence-gated planning loop (``planning-loop``).

State: the question, the visited concepts, the frontier, the evidence subgraph (concepts and the
edges used), the last stated confidence, and the best answer so far. Seeds: up to ``max_seeds``
concepts named in the question (names or aliases), most specific first (:mod:`.seeds`); none
named, none searched for (``fallback_search_k`` 0, the paper), and the loop abstains without a
call. Each round, at most ``max_rounds``:

1. **expand**: follow the active edges (both directions; the view returns only edges active at
   its time) of the concepts to expand, collecting concepts never visited; when more are reachable
   than the round's frontier holds (``frontier_cap``; round 1's frontier counts the seeds), the
   most relevant to the focus are kept (:mod:`.frontier`). From round ``narrow_from_round`` on
   (the paper: rounds 3-4) only the relation types the previous round chose are followed; when
   they lead nowhere new, the round follows every type. Edges to concepts already in the evidence
   are recorded too. Visited concepts are never re-added, so at most ``max_rounds x frontier_cap``
   concepts are examined.
2. **synthesize**: one LLM call answers from the evidence subgraph only (edges with their
   bi-temporal stamps) and states a confidence, a reason, the supporting subgraph (ids chosen
   from those shown), a focus for the next round and the relation types to follow.
3. **verify**: from round ``exit_from_round`` on (the paper: round 2; and always in the last
   round) the current round's answer is returned once its confidence reaches ``confidence_bar``
   (the article's check; ``keep_best`` verifies the most confident answer so far instead), cited
   by its supporting subgraph; otherwise the focus and relation types carry into the next round.
   A round that finds nothing new to examine makes no call: the last answer is verified again.
   After the last round the loop abstains (``outcome="abstained"``, no answer; the held-back
   answer and its confidence in ``artifacts["candidate_answer"]`` and ``trace.confidence``), or,
   with ``abstain: false`` (the gate isolated: every round run, no abstention), answers with it.

``artifacts``: ``rounds`` (per round: the concepts expanded, the new frontier, the edges used, the
focused query, the relation types followed and chosen, the answer, confidence, reason and
support), ``evidence`` (everything examined), ``grounding`` (the answer's confidence, reason,
source: the knowledge base's fingerprint, when the graph was read (the view's time, or the
moment the loop began for a view of the current graph) and the model, and its evidence: the
supporting subgraph). A reply that is not valid JSON counts as confidence 0 without an answer; an
LLM failure fails the trace.

Each seed and expand step records in ``Step.shown`` the concepts, edges and text units it brought
into the evidence; each synthesize step its reply (``Step.reply``). That is what resuming needs
(:meth:`PlanningLoop.resume_from_step`, the leave-one-step-out intervention): the loop runs again
against the run's view, the synthesize steps before the resume step take their recorded replies
(no LLM call), so the expansions follow the recorded plans, and the rounds after it decide again;
with ``replay_rest`` every recorded reply but the last is replayed, so only the final answer is
decided again, unless a reply after the resume step shows something the view hides (written having
seen what the view now hides, its focus would reach the next prompt): replay stops before it and the
model decides from there (``artifacts["resumed"]["withheld"]``). A replayed step before the resume step whose result differs from the recorded one
(the hidden items changed what an earlier expansion found) is listed in
``artifacts["resumed"]["diverged"]``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from provbench.agents import LLMSystem, SystemOptions, fixed_parts, replayed_reply, reply_object, string_list
from provbench.agents.base import stated_confidence
from provbench.kb.temporal import instant_text, now
from provbench.leakguard import shows_hidden
from provbench.kb.types import Entity, Neighbor
from provbench.model import Question, RetrievedItem, Trace
from provbench.plugin_api import Environment, ResumePoint

from . import prompts as P
from .frontier import Focus, rank_candidates
from .seeds import select_seeds
from .state import Candidate, Expansion, LoopState

SUPPORT_KINDS = {
    "supporting_concepts": "entities",
    "supporting_relations": "relationships",
    "supporting_texts": "text_units",
}


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
    fallback_search_k: int = Field(
        0,
        ge=0,
        le=50,
        description="entities found by similarity when no name occurs "
        "(0: the paper's loop seeds only from named concepts)",
    )
    text_units_per_concept: int = Field(0, ge=0, le=20, description="linked text shown per concept (0: graph only)")
    text_chars: int = Field(400, ge=50)
    max_tokens: int = Field(512, ge=32, le=8192)
    keep_best: bool = Field(
        False,
        description="verify the most confident answer so far, not the current round's "
        "(a round-2 answer on more evidence, or a retraction, is then lost)",
    )
    hops_per_round: int = Field(
        1,
        ge=1,
        le=10,
        description="expansions before each synthesis (a one-round loop "
        "with 4 hops and cap 48: one-shot with the loop's budget)",
    )
    abstain: bool = Field(
        True,
        description="abstain when no round's answer cleared the bar (false: answer with the "
        "held-back one after every round: the loop without its abstention)",
    )

    @model_validator(mode="after")
    def _seeds_fit_the_frontier(self) -> "PlanningOptions":
        if self.max_seeds > self.frontier_cap:
            raise ValueError(
                f"max_seeds ({self.max_seeds}) must not exceed frontier_cap ({self.frontier_cap}): "
                "round 1's frontier counts the seeds"
            )
        return self


class PlanningLoop(LLMSystem):
    """Paper 002: a bounded frontier expanded round by round; answers at a confidence bar, else abstains."""

    name = "planning-loop"
    Options = PlanningOptions
    question_template = "{question}"  # the prompt says "Question:" itself
    choices_template = P.CHOICES

    def run(self, question: Question, env: Environment) -> Trace:
        return self.loop(question, env, self.new_trace(question), replies=[])

    supports_step_resume = True

    def instructions(self) -> list[str]:
        return [*super().instructions(), P.SYNTHESIZE_SYSTEM, P.SUPPORTING_TEXTS, *fixed_parts(P.SYNTHESIZE_USER)]

    def resume_from_step(self, question: Question, env: Environment, recorded: Trace, point: ResumePoint) -> Trace:
        """The loop again against ``env.view``, with recorded replies replayed (module docstring)."""
        if not 0 <= point.step < len(recorded.steps):
            raise ValueError(
                f"cannot resume from step {point.step}: the recorded trace has {len(recorded.steps)} steps"
            )
        plans = [s for s in recorded.steps if s.tool == "synthesize" and s.kind == "generation"]
        replayed = plans[:-1] if point.replay_rest else [s for s in plans if s.index < point.step]
        leaking = [
            s.index for s in replayed if s.index > point.step and s.reply and shows_hidden(env.view, question, s.reply)
        ]
        if leaking:  # its focus reaches the next prompt: the model decides from there on
            replayed = [s for s in replayed if s.index < leaking[0]]
        missing = [s.index for s in replayed if s.reply is None]
        if missing:
            raise ValueError(
                f"cannot replay step(s) {missing}: the recorded trace holds no reply for them "
                "(recorded by an earlier provbench); run its baseline again"
            )
        trace = self.loop(question, env, self.new_trace(question), replies=[s.reply for s in replayed])
        diverged = [
            s.index
            for s in recorded.steps[: point.step]
            if s.index >= len(trace.steps)
            or (trace.steps[s.index].tool, trace.steps[s.index].result) != (s.tool, s.result)
        ]
        trace.artifacts["resumed"] = {
            "from_step": point.step,
            "replay_rest": point.replay_rest,
            "replayed_steps": len(replayed),
            "diverged": diverged,
            "withheld": leaking,
        }
        return trace

    def loop(self, question: Question, env: Environment, trace: Trace, replies: list[str]) -> Trace:
        state = LoopState(
            question=self.question_text(question),
            focus=question.question,
            replies=list(replies),
            read_at=env.view.as_of_time or instant_text(now()),
        )
        if not self.seed(question, env, trace, state):
            trace.add_step("error", tool="seed", error="no concept is named in the question")
            return self.abstain(trace, state, env, "no seed concept")
        opts = self.options
        for number in range(1, opts.max_rounds + 1):
            budget = opts.frontier_cap - (len(state.frontier) if number == 1 else 0)
            expansion = self.expand_hops(env, trace, state, budget, narrow=number >= opts.narrow_from_round)
            if number > 1 and not expansion.added and not expansion.edges:
                # the evidence is the last round's: its answers stand as this round's
                if self.confident(state, number):
                    return self.emit(trace, state, env, self.verified(state))
                return self.abstain(trace, state, env, f"round {number} found nothing new to examine")
            reply = self.synthesize(question, env, trace, state, number)
            if reply is None:
                return trace  # the LLM failed for good: the trace says so
            self.record_round(trace, state, number, expansion, reply)
            if self.confident(state, number):
                return self.emit(trace, state, env, self.verified(state))
            state.focus = reply["focus"] or state.focus
            state.relation_types = reply["relation_types"] if opts.relation_focus else []
        reason = f"confidence below {opts.confidence_bar} after {opts.max_rounds} rounds"
        if not opts.abstain and self.held(state) is not None:
            trace.artifacts["abstention_skipped"] = reason
            return self.emit(trace, state, env, self.held(state))
        return self.abstain(trace, state, env, reason)

    @property
    def expected_llm_calls(self) -> float:
        return float(self.options.max_rounds)  # the runner's scheduling hint: an abstention uses every round

    def confident(self, state: LoopState, number: int) -> bool:
        """The verify step: may this round answer (the paper: from round 2 on), and does the answer
        it verifies (the current round's; with ``keep_best`` the most confident so far) clear the bar?"""
        opts = self.options
        may_exit = number >= min(opts.exit_from_round, opts.max_rounds)
        verified = self.verified(state)
        return may_exit and verified is not None and verified.confidence >= opts.confidence_bar

    def verified(self, state: LoopState) -> Candidate | None:
        return state.best if self.options.keep_best else state.current

    def held(self, state: LoopState) -> Candidate | None:
        """The answer held back at an abstention: the verified one, else the last one given."""
        return self.verified(state) or state.latest

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
        trace.add_step(
            "retrieval",
            tool="seed",
            arguments={"question": question.question},
            result=[{"id": e.id, "name": e.name, "how": how} for e, how in seeds],
            shown=state.shown,
        )
        return bool(seeds)

    # -- expand ----------------------------------------------------------------------------
    def expand_hops(self, env: Environment, trace: Trace, state: LoopState, budget: int, narrow: bool) -> Expansion:
        """``hops_per_round`` expansions sharing the round's budget, as one expansion."""
        expansion = self.expand(env, trace, state, budget, narrow)
        expanded = list(state.frontier_before)
        for _ in range(self.options.hops_per_round - 1):
            more = self.expand(env, trace, state, budget - len(expansion.added), narrow)
            if not more.added and not more.edges:
                break
            expansion.added += more.added
            expansion.edges += more.edges
            expansion.capped = more.capped
        state.frontier_before = expanded
        return expansion

    def expand(self, env: Environment, trace: Trace, state: LoopState, budget: int, narrow: bool) -> Expansion:
        types = (list(state.relation_types) or None) if narrow else None
        state.shown = {}
        expansion = self.collect(env, trace, state, budget, types)
        if types is not None and not expansion.added and not expansion.edges:
            expansion = self.collect(env, trace, state, budget, None)
            expansion.widened = True
        state.frontier = expansion.added
        state.relation_vocab = list(
            dict.fromkeys(
                nb.relation.label
                for concept in state.frontier
                for nb in self.neighbours(env, state, concept)
                if nb.relation.label
            )
        )
        trace.add_step(
            "retrieval",
            tool="expand",
            arguments={"expand": list(state.frontier_before), "relation_types": types},
            result={
                "added": expansion.added,
                "edges": expansion.edges,
                "widened": expansion.widened,
                "capped": expansion.capped,
            },
            shown=state.shown,
        )
        return expansion

    def collect(
        self, env: Environment, trace: Trace, state: LoopState, budget: int, types: list[str] | None
    ) -> Expansion:
        """New concepts up to ``budget``, the most relevant first, and every edge among the evidence."""
        expansion = Expansion(added=[], edges=[], followed=types)
        state.frontier_before = list(state.frontier)
        followed = [
            nb
            for concept in state.frontier
            for nb in self.neighbours(env, state, concept)
            if types is None or nb.relation.label in types
        ]
        fresh = [nb for nb in followed if nb.entity.id not in state.visited]
        ranked = rank_candidates(fresh, Focus(state.question, state.focus, state.relation_types))
        expansion.capped = len(ranked) > budget
        for nb in ranked[: max(budget, 0)]:
            self.examine(env, trace, state, nb.entity)
            expansion.added.append(nb.entity.id)
        for nb in followed:
            if nb.entity.id in state.visited and nb.relation.id not in state.edges:
                state.edges[nb.relation.id] = nb.relation
                expansion.edges.append(nb.relation.id)
                trace.retrieved.append(RetrievedItem(kind="relationship", id=nb.relation.id))
                state.shown.setdefault("relationship", []).append(nb.relation.id)
        return expansion

    def neighbours(self, env: Environment, state: LoopState, concept: str) -> list[Neighbor]:
        """The concept's active edges, both directions (the view returns only active ones)."""
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
    def synthesize(
        self, question: Question, env: Environment, trace: Trace, state: LoopState, number: int
    ) -> dict[str, Any] | None:
        system = P.SYNTHESIZE_SYSTEM + (P.SUPPORTING_TEXTS if state.texts else "")
        messages = [{"role": "system", "content": system}, {"role": "user", "content": self.render(state, number)}]
        schema = P.reply_schema(
            state.relation_vocab, question.choices, list(state.visited), list(state.edges), list(state.texts)
        )
        resp = (
            replayed_reply(state.replies.pop(0))
            if state.replies
            else self.chat(env, trace, messages, schema=schema, purpose=f"synthesize round {number}")
        )
        if resp is None:
            return None
        data = reply_object(resp)
        if data is None:
            trace.add_step("rejection", tool="synthesize", error="reply is not a JSON object: counted as confidence 0")
            data = {}
        return {
            "text": resp.text or "",
            "answer": _text(data.get("answer")),
            "confidence": stated_confidence(data.get("confidence")) or 0.0,
            "reason": _text(data.get("reason")),
            "focus": _text(data.get("focus")),
            "support": self.support(trace, state, data),
            "relation_types": [t for t in string_list(data.get("relation_types")) if t in state.relation_vocab],
        }

    def support(self, trace: Trace, state: LoopState, data: dict[str, Any]) -> dict[str, list[str]]:
        """The supporting subgraph the reply names, kept to ids shown (others noted and dropped)."""
        shown = {"entities": state.visited, "relationships": state.edges, "text_units": state.texts}
        support, dropped = {}, {}
        for key, kind in SUPPORT_KINDS.items():
            ids = string_list(data.get(key))
            support[kind] = [i for i in ids if i in shown[kind]]
            if len(support[kind]) < len(ids):
                dropped[kind] = [i for i in ids if i not in shown[kind]]
        if dropped:
            trace.add_step(
                "rejection",
                tool="synthesize",
                arguments={"dropped_support": dropped},
                error="supporting ids that were not shown were dropped",
            )
        return support

    def render(self, state: LoopState, number: int) -> str:
        names = {eid: e.name for eid, e in state.visited.items()}
        concepts = [
            P.CONCEPT_LINE.format(id=e.id, name=e.name, label=e.label or "concept", description=e.description or "-")
            for e in state.visited.values()
        ]
        concepts += [P.TEXT_LINE.format(id=tid, text=text) for tid, text in state.texts.items()]
        relations = [
            P.RELATION_LINE.format(
                id=r.id,
                source=names.get(r.source, r.source),
                label=r.label,
                target=names.get(r.target, r.target),
                stamps=P.stamps_text(r),
            )
            for r in state.edges.values()
        ]
        return P.SYNTHESIZE_USER.format(
            question=state.question,
            round=number,
            max_rounds=self.options.max_rounds,
            focus=state.focus,
            concepts="\n".join(concepts) or P.NONE,
            relations="\n".join(relations) or P.NONE,
            relation_types=", ".join(state.relation_vocab) or P.NONE,
        )

    # -- verify and finish -----------------------------------------------------------------
    def record_round(
        self, trace: Trace, state: LoopState, number: int, expansion: Expansion, reply: dict[str, Any]
    ) -> None:
        state.confidence = reply["confidence"]
        given = Candidate(reply["answer"], reply["confidence"], number, reply["reason"], reply["support"])
        state.current = given if reply["answer"] else None
        state.latest = state.current or state.latest
        if state.current and (state.best is None or given.confidence >= state.best.confidence):
            state.best = given
        rounds = trace.artifacts.setdefault("rounds", [])
        rounds.append(
            {
                "round": number,
                "expanded": state.frontier_before,
                "frontier": expansion.added,
                "edges_used": expansion.edges,
                "focused_query": state.focus,
                "relation_types_followed": expansion.followed,
                "widened": expansion.widened,
                "capped": expansion.capped,
                "answer": reply["answer"] or None,
                "confidence": reply["confidence"],
                "reason": reply["reason"],
                "support": reply["support"],
                "relation_types_chosen": reply["relation_types"],
                "next_focus": reply["focus"],
                "concepts_examined": len(state.visited),
            }
        )
        trace.add_step(
            "generation",
            tool="synthesize",
            arguments={"round": number, "focus": state.focus},
            result={
                "answer": reply["answer"] or None,
                "confidence": reply["confidence"],
                "focus": reply["focus"],
                "relation_types": reply["relation_types"],
            },
            reply=reply["text"],
        )

    def emit(self, trace: Trace, state: LoopState, env: Environment, answer: Candidate) -> Trace:
        trace.answer, trace.confidence, trace.outcome = answer.answer, answer.confidence, "answered"
        for kind, ids in answer.support.items():
            setattr(trace.citations, kind, list(ids))
        self.keep_evidence(trace, state, env, answer)
        return trace

    def abstain(self, trace: Trace, state: LoopState, env: Environment, reason: str) -> Trace:
        held = self.held(state)
        trace.answer, trace.outcome = None, "abstained"
        trace.confidence = held.confidence if held is not None else state.confidence
        trace.artifacts["abstention_reason"] = reason
        if held is not None:
            trace.artifacts["candidate_answer"] = held.answer
        self.keep_evidence(trace, state, env, held)
        return trace

    def keep_evidence(self, trace: Trace, state: LoopState, env: Environment, best: Candidate | None) -> None:
        """Everything examined, and the grounding record of the answer (or of the one held back)."""
        trace.artifacts["evidence"] = {
            "entities": list(state.visited),
            "relations": list(state.edges),
            "text_units": list(state.texts),
        }
        if best is None:
            return
        trace.artifacts["grounding"] = {
            "answer": best.answer,
            "confidence": best.confidence,
            "reason": best.reason,
            "round": best.round,
            "held_back": trace.outcome == "abstained",
            "source": {
                "knowledge_base": env.view.knowledge_base_fingerprint,
                "as_of": state.read_at,
                "model": env.llm.model_id,
            },
            "evidence": best.support,
        }


def _text(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)  # a year or a count given as a JSON number
    return value.strip() if isinstance(value, str) else ""
