"""Agentic GraphRAG (paper 000): a ReAct-style tool loop over a graph view, and its two
provenance-constrained variants, visited-only and evidence-first.

The loop
    Each step is one LLM call whose reply is constrained by a JSON schema to
    ``{"thought": str, "tool": <one of the tools>, "arguments": {...}}``. The tool runs against
    ``env.view`` (never the store) and its result goes back to the model as compact text. Every
    step, good or bad, uses one unit of the ``max_steps`` budget; when the budget is spent without
    an accepted answer the trace ends with ``outcome="budget_exhausted"`` and ``answer=None``
    (the last rejected answer, if any, is kept in ``artifacts["last_rejected_answer"]``).
    The option ``constrain_ids`` (off by default, as in the paper) narrows the schema so id
    arguments can only be ids that earlier tool results showed; it lets very small local
    models navigate, and makes "unknown id" errors impossible for backends that honour schemas.

What each step records (a :class:`~provbench.model.Step`)
    ``tool_call``  a well-formed call that ran; ``result`` is a compact summary (ids, scores).
    ``rejection``  the reply broke the protocol or a rule: not a JSON object, unknown tool,
                   missing / unexpected / mistyped arguments, an empty answer, citations that
                   fail :meth:`AgenticGraphRAG.check_submission`, an answer before evidence.
    ``error``      a well-formed call the view could not serve: unknown or hidden entity,
                   text unit or community id; or the LLM call itself failed (the run then ends
                   with ``outcome="failed"``).
    Rejections and errors are reported to the model in the next message.

Visiting (what ``trace.visited_entities`` means here)
    ``get_entity_details(e)`` visits ``e``; ``get_neighbors(e)`` visits ``e`` and every
    neighbour it lists. Search results and community member lists do not visit.
    ``read_textunit(t)`` adds ``t`` to ``trace.read_text_units``; ``read_community(c)`` adds ``c``
    to ``trace.read_communities``. Relationships count as seen when ``get_neighbors`` lists them.

Submissions
    Citations must exist in the view (every variant). A rejected ``submit_answer`` may be
    retried ``max_retries`` times; the next rejection ends the run as ``answered`` with the last
    answer, keeping only the citations that passed, and the failed ones listed in
    ``artifacts["flagged_citations"]``.
    - agentic-visited-only also rejects citing an entity that was not visited.
    - agentic-evidence-first adds ``submit_evidence``: its citations must exist and have been
      seen (entities visited, relationships listed by get_neighbors, text units and communities
      read). ``submit_answer`` takes only the answer, is rejected until evidence was accepted,
      and cites the accepted evidence. Rejected evidence is bounded by the step budget.

Extending
    Subclass :class:`AgenticGraphRAG` and override :meth:`~AgenticGraphRAG.tools` (add or replace
    a :class:`Tool`), :meth:`~AgenticGraphRAG.check_submission` (return
    :class:`CitationProblem` items) or :meth:`~AgenticGraphRAG.rules` (extra prompt rules).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Literal

from pydantic import Field

from provbench.model import Citations, Question, Trace
from provbench.plugin_api import Environment

from . import prompts as P
from .systems import (
    CITATION_FIELDS,
    PaperSystem,
    SystemOptions,
    clip,
    question_text,
    record_retrieved,
    reply_object,
    string_list,
)

ParamType = Literal["string", "string_list"]
MAX_THOUGHT_CHARS = 200
MAX_STRING_CHARS = 200  # an answer or a query
MAX_ID_CHARS = 100
MAX_CITED_IDS = 20
# Parameters that name an item of the graph, and its kind (for the constrain_ids option).
ID_KIND_OF_PARAM = {"entity_id": "entity", "textunit_id": "text_unit", "community_id": "community",
                    "cited_entities": "entity", "cited_relationships": "relationship",
                    "cited_textunits": "text_unit", "cited_communities": "community"}


def free_text(param: str) -> dict:
    # Length caps keep a small constrained model from rambling inside a string.
    return {"type": "string", "maxLength": MAX_ID_CHARS if param in ID_KIND_OF_PARAM else MAX_STRING_CHARS}


class ToolFailure(Exception):
    """A tool call that cannot go ahead; ``kind`` is the Step kind it is recorded as."""

    def __init__(self, message: str, kind: Literal["rejection", "error"] = "error") -> None:
        super().__init__(message)
        self.message, self.kind = message, kind


def rejected(message: str) -> ToolFailure:
    return ToolFailure(message, kind="rejection")


@dataclass(frozen=True)
class ToolResult:
    text: str  # what the model reads
    summary: Any = None  # what the trace keeps (ids, scores)


@dataclass(frozen=True)
class Tool:
    """A tool the agent may call. String parameters are required; list parameters default to []."""

    name: str
    params: tuple[tuple[str, ParamType], ...]
    handler: Callable[["AgentRun", dict[str, Any]], ToolResult]
    description: str

    def arguments_schema(self, allowed_ids: dict[str, list[str]] | None = None) -> dict | None:
        """JSON schema of the arguments. With ``allowed_ids`` (kind -> ids), id parameters may only
        take those ids; None if an id parameter has no allowed value (the tool cannot be called)."""
        properties = {}
        for name, kind in self.params:
            constrained = allowed_ids is not None and name in ID_KIND_OF_PARAM
            ids = allowed_ids.get(ID_KIND_OF_PARAM[name], []) if constrained else None
            if kind == "string":
                if ids == []:
                    return None
                properties[name] = {"type": "string", "enum": ids} if ids else free_text(name)
            elif ids == []:
                properties[name] = {"type": "array", "maxItems": 0}
            else:
                item = {"type": "string", "enum": ids} if ids else free_text(name)
                properties[name] = {"type": "array", "items": item, "maxItems": MAX_CITED_IDS}
        return {"type": "object", "properties": properties, "required": list(properties),
                "additionalProperties": False}

    def action_schema(self, allowed_ids: dict[str, list[str]] | None = None) -> dict | None:
        """The schema of a reply calling this tool: the tool name fixes the arguments' shape."""
        arguments = self.arguments_schema(allowed_ids)
        if arguments is None:
            return None
        return {
            "type": "object",
            "properties": {"thought": {"type": "string", "maxLength": MAX_THOUGHT_CHARS},
                           "tool": {"type": "string", "enum": [self.name]},
                           "arguments": arguments},
            "required": ["thought", "tool", "arguments"],
            "additionalProperties": False,
        }

    def prompt_line(self) -> str:
        params = ", ".join(name for name, _ in self.params)
        return P.AGENT_TOOL_LINE.format(name=self.name, params=params, description=self.description)

    def check_arguments(self, arguments: Any) -> dict[str, Any]:
        """Validated arguments, or a rejection naming what is wrong."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise rejected(f"'arguments' of {self.name} must be a JSON object")
        names = [name for name, _ in self.params]
        unexpected = sorted(set(arguments) - set(names))
        if unexpected:
            raise rejected(f"{self.name} got unexpected argument(s) {unexpected}; it takes {names}")
        clean: dict[str, Any] = {}
        for name, kind in self.params:
            value = arguments.get(name)
            if kind == "string":
                if not isinstance(value, str) or not value.strip():
                    raise rejected(f"{self.name} needs a non-empty string argument '{name}'")
                clean[name] = value.strip()
            elif value is None:
                clean[name] = []
            elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise rejected(f"argument '{name}' of {self.name} must be a list of id strings")
            else:
                clean[name] = string_list(value)
        return clean


@dataclass(frozen=True)
class CitationProblem:
    field: str  # a Citations field: entities, relationships, text_units, communities
    id: str
    reason: str

    def __str__(self) -> str:
        return f"{self.id} ({self.reason})"


@dataclass
class AgentRun:
    """The state of one agent run."""

    question: Question
    env: Environment
    trace: Trace
    messages: list[dict[str, str]]
    steps_used: int = 0
    accepted_evidence: Citations | None = None
    rejected_submissions: int = 0
    finished: bool = False
    shown_ids: dict[str, list[str]] = field(default_factory=dict)  # kind -> ids tool results showed

    def show(self, kind: str, *ids: str) -> None:
        known = self.shown_ids.setdefault(kind, [])
        known.extend(i for i in dict.fromkeys(ids) if i not in known)


CITED_PARAMS: tuple[tuple[str, ParamType], ...] = tuple((key, "string_list") for key in CITATION_FIELDS)
KIND_OF_FIELD = {"entities": "entity", "relationships": "relationship", "text_units": "text unit",
                 "communities": "community"}


class AgenticOptions(SystemOptions):
    max_tokens: int = Field(384, ge=16, le=8192, description="cap on each agent reply")
    max_steps: int = Field(12, ge=1, le=200, description="LLM turns before the run counts as budget_exhausted")
    max_retries: int = Field(2, ge=0, le=50, description="re-submissions allowed after a rejected submit_answer")
    search_k: int = Field(5, ge=1, le=50, description="hits per search tool call")
    neighbor_limit: int = Field(10, ge=1, le=200, description="neighbours listed per get_neighbors call")
    text_chars: int = Field(1200, ge=50, description="characters of a text unit shown by read_textunit")
    community_members: int = Field(10, ge=0, le=200, description="member entities listed by read_community")
    constrain_ids: bool = Field(False, description="let the reply schema allow only ids that tool results "
                                                   "showed (helps very small models; off for the paper)")


class AgenticGraphRAG(PaperSystem):
    """Agentic GraphRAG: a ReAct tool loop over the graph (search, details, neighbours, text units,
    communities) ending in submit_answer with cited entities, relationships, text units, communities."""

    name = "agentic-graphrag"
    Options: ClassVar[type[SystemOptions]] = AgenticOptions

    # -- what a variant overrides -------------------------------------------------------------
    def tools(self) -> list[Tool]:
        """The tools offered to the agent, in prompt order."""
        d = P.AGENT_TOOL_DESCRIPTIONS
        return [
            Tool("search_entities", (("query", "string"),), self.search_entities, d["search_entities"]),
            Tool("get_entity_details", (("entity_id", "string"),), self.get_entity_details, d["get_entity_details"]),
            Tool("get_neighbors", (("entity_id", "string"),), self.get_neighbors, d["get_neighbors"]),
            Tool("read_textunit", (("textunit_id", "string"),), self.read_textunit, d["read_textunit"]),
            Tool("search_communities", (("query", "string"),), self.search_communities, d["search_communities"]),
            Tool("read_community", (("community_id", "string"),), self.read_community, d["read_community"]),
            Tool("submit_answer", (("answer", "string"), *CITED_PARAMS), self.submit_answer, d["submit_answer"]),
        ]

    def rules(self) -> list[str]:
        return [P.AGENT_RULES.format(max_steps=self.options.max_steps)]

    def check_submission(self, run: AgentRun, citations: Citations) -> list[CitationProblem]:
        """Problems with submitted citations; here: every cited id must exist in the view."""
        view = run.env.view
        lookups = {"entities": view.entity, "relationships": view.relation,
                   "text_units": view.text_unit, "communities": view.community}
        return [
            CitationProblem(field_name, item_id, f"no such {KIND_OF_FIELD[field_name]}")
            for field_name, lookup in lookups.items()
            for item_id in getattr(citations, field_name)
            if lookup(item_id) is None
        ]

    # -- the loop -------------------------------------------------------------------------------
    def run(self, question: Question, env: Environment) -> Trace:
        trace = self.new_trace(question)
        messages = [{"role": "system", "content": self.system_prompt()},
                    {"role": "user", "content": question_text(question)}]
        run = AgentRun(question, env, trace, messages)
        while not run.finished and run.steps_used < self.options.max_steps:
            self.step(run)
        trace.artifacts["steps_used"] = run.steps_used
        if not run.finished:
            trace.outcome, trace.answer = "budget_exhausted", None
            trace.error = f"no accepted answer within {self.options.max_steps} steps"
        return trace

    def system_prompt(self) -> str:
        tools = "\n".join(t.prompt_line() for t in self.tools())
        return P.AGENT_SYSTEM.format(tools=tools, rules="\n".join(self.rules()))

    def action_schema(self, run: AgentRun | None = None) -> dict:
        """One branch per tool, so constrained decoding pairs each tool with its own arguments.
        With ``constrain_ids``, id arguments are limited to what ``run``'s tool results showed."""
        allowed = run.shown_ids if run is not None and self.options.constrain_ids else None
        branches = [tool.action_schema(allowed) for tool in self.tools()]
        return {"anyOf": [branch for branch in branches if branch is not None]}

    def step(self, run: AgentRun) -> None:
        """One LLM turn: ask for an action, run it, record the Step, report back."""
        run.steps_used += 1
        resp = self.chat(run.env, run.trace, run.messages, schema=self.action_schema(run),
                         purpose=f"agent step {run.steps_used}")
        if resp is None:  # the LLM failed for good; chat() marked the trace failed
            run.finished = True
            return
        run.messages.append({"role": "assistant", "content": resp.text or ""})
        action: dict[str, Any] = {"thought": None, "tool": None, "arguments": {}}
        try:
            tool, arguments = self.parse_action(resp, action)
            result = tool.handler(run, arguments)
        except ToolFailure as failure:
            run.trace.add_step(failure.kind, tool=action["tool"], arguments=action["arguments"],
                               error=failure.message, thought=action["thought"])
            template = P.AGENT_ERROR if failure.kind == "error" else P.AGENT_REJECTION
            feedback = template.format(tool=action["tool"] or "your reply", error=failure.message,
                                       budget=self.budget_note(run))
        else:
            run.trace.add_step("tool_call", tool=tool.name, arguments=arguments, result=result.summary,
                               thought=action["thought"])
            feedback = P.AGENT_OBSERVATION.format(tool=tool.name, result=result.text, budget=self.budget_note(run))
        if not run.finished:
            run.messages.append({"role": "user", "content": feedback})

    def parse_action(self, resp: Any, action: dict[str, Any]) -> tuple[Tool, dict[str, Any]]:
        """The tool and validated arguments of a reply; fills ``action`` with what could be read."""
        reply = reply_object(resp)
        if reply is None:
            raise rejected(f"your reply was not a JSON object: {clip(resp.text or '', 200)!r}")
        thought = reply.get("thought")
        action["thought"] = thought if isinstance(thought, str) else None
        raw_arguments = reply.get("arguments")
        if raw_arguments is not None:
            action["arguments"] = raw_arguments if isinstance(raw_arguments, dict) else {"raw": raw_arguments}
        tools = {t.name: t for t in self.tools()}
        name = reply.get("tool")
        action["tool"] = name if isinstance(name, str) else None
        if not isinstance(name, str) or name not in tools:
            raise rejected(f"unknown tool {name!r}; the tools are {sorted(tools)}")
        return tools[name], tools[name].check_arguments(raw_arguments)

    def budget_note(self, run: AgentRun) -> str:
        left = self.options.max_steps - run.steps_used
        return P.AGENT_LAST_STEP if left == 1 else P.AGENT_BUDGET.format(left=left)

    # -- graph tools ----------------------------------------------------------------------------
    def search_entities(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        hits = run.env.view.search_entities(args["query"], k=self.options.search_k)
        return self.hits_result(run, hits, "entities")

    def search_communities(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        hits = run.env.view.search_communities(args["query"], k=self.options.search_k)
        return self.hits_result(run, hits, "communities")

    def hits_result(self, run: AgentRun, hits: list, what: str) -> ToolResult:
        for hit in hits:
            record_retrieved(run.trace, hit.kind, hit.id, hit.score)
            run.show(hit.kind, hit.id)
        lines = [f"- {h.id} | {h.name} (score {h.score:.2f})" for h in hits]
        text = "\n".join(lines) if lines else f"no {what} found"
        return ToolResult(text, [{"id": h.id, "score": round(h.score, 4)} for h in hits])

    def get_entity_details(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        view, entity = run.env.view, self.entity_or_fail(run, args["entity_id"])
        run.trace.visit(entity.id)
        record_retrieved(run.trace, "entity", entity.id)
        text_units, communities = view.text_units_of(entity.id), view.communities_of(entity.id)
        run.show("entity", entity.id)
        run.show("text_unit", *text_units)
        run.show("community", *communities)
        text = "\n".join([
            f"{entity.id} | {entity.name} | type: {entity.label or '-'}",
            f"description: {entity.description or '-'}",
            f"text units: {', '.join(text_units) or '-'}",
            f"communities: {', '.join(communities) or '-'}",
        ])
        return ToolResult(text, {"entity": entity.id, "text_units": text_units, "communities": communities})

    def get_neighbors(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        entity = self.entity_or_fail(run, args["entity_id"])
        neighbours = run.env.view.neighbors(entity.id, limit=self.options.neighbor_limit)
        run.trace.visit(entity.id, *(nb.entity.id for nb in neighbours))
        lines = []
        for nb in neighbours:
            relation, other = nb.relation, f"{nb.entity.name} [{nb.entity.id}]"
            record_retrieved(run.trace, "relationship", relation.id)
            record_retrieved(run.trace, "entity", nb.entity.id)
            run.show("relationship", relation.id)
            run.show("entity", nb.entity.id)
            left, right = (entity.name, other) if nb.direction == "out" else (other, entity.name)
            lines.append(f"- {relation.id}: {left} -[{relation.label}]-> {right}")
        text = f"neighbours of {entity.id} ({entity.name}):\n" + ("\n".join(lines) or "none")
        return ToolResult(text, [{"relation": nb.relation.id, "entity": nb.entity.id} for nb in neighbours])

    def read_textunit(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        unit = run.env.view.text_unit(args["textunit_id"])
        if unit is None:
            raise ToolFailure(f"text unit {args['textunit_id']!r} does not exist or cannot be read")
        run.trace.read_text_unit(unit.id)
        record_retrieved(run.trace, "text_unit", unit.id)
        run.show("text_unit", unit.id)
        return ToolResult(f"[{unit.id}] {clip(unit.text, self.options.text_chars)}", {"text_unit": unit.id})

    def read_community(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        view = run.env.view
        community = view.community(args["community_id"])
        if community is None:
            raise ToolFailure(f"community {args['community_id']!r} does not exist")
        run.trace.read_community(community.id)
        record_retrieved(run.trace, "community", community.id)
        run.show("community", community.id)
        members = [e for e in (view.entity(i) for i in community.entity_ids[: self.options.community_members]) if e]
        run.show("entity", *(e.id for e in members))
        text = "\n".join([
            f"{community.id} | {community.title or '-'}",
            f"summary: {community.summary or '-'}",
            "members: " + (", ".join(f"{e.name} [{e.id}]" for e in members) or "-"),
        ])
        return ToolResult(text, {"community": community.id})

    def entity_or_fail(self, run: AgentRun, entity_id: str):
        entity = run.env.view.entity(entity_id)
        if entity is None:
            raise ToolFailure(f"unknown entity id {entity_id!r}{self.entity_hint(run, entity_id)}")
        return entity

    def entity_hint(self, run: AgentRun, wrong_id: str) -> str:
        """A suggestion for a wrong entity id: an entity of that name, else a close id already shown."""
        named = run.env.view.find_entity(wrong_id)
        if named is not None:
            return f"; did you mean {named.id} ({named.name})?"
        shown = [r.id for r in run.trace.retrieved if r.kind == "entity"]
        close = difflib.get_close_matches(wrong_id, shown, n=1, cutoff=0.6)
        return f"; did you mean {close[0]}?" if close else ""

    # -- submission -----------------------------------------------------------------------------
    def submit_answer(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        citations = citations_from(args)
        problems = self.check_submission(run, citations)
        if not problems:
            return self.accept(run, args["answer"], citations)
        run.rejected_submissions += 1
        run.trace.artifacts["last_rejected_answer"] = args["answer"]
        if run.rejected_submissions > self.options.max_retries:
            return self.accept(run, args["answer"], without(citations, problems), flagged=problems)
        raise rejected(P.AGENT_CITATIONS_REJECTED.format(problems=", ".join(map(str, problems)),
                                                          tool="submit_answer"))

    def accept(self, run: AgentRun, answer: str, citations: Citations,
               flagged: list[CitationProblem] = ()) -> ToolResult:
        run.trace.citations = citations
        self.finish_answer(run.trace, answer)
        run.finished = True
        summary: dict[str, Any] = {"answer": answer, "citations": citations.model_dump()}
        if flagged:
            run.trace.artifacts["flagged_citations"] = [vars(p) for p in flagged]
            summary["dropped_after_retries"] = [vars(p) for p in flagged]
        return ToolResult("answer accepted", summary)


def citations_from(args: dict[str, Any]) -> Citations:
    return Citations(**{field_name: args.get(key, []) for key, field_name in CITATION_FIELDS.items()})


def without(citations: Citations, problems: list[CitationProblem]) -> Citations:
    bad = {(p.field, p.id) for p in problems}
    return Citations(**{f: [i for i in getattr(citations, f) if (f, i) not in bad] for f in KIND_OF_FIELD})


class AgenticVisitedOnly(AgenticGraphRAG):
    """Agentic GraphRAG that rejects a submission citing entities the agent never visited."""

    name = "agentic-visited-only"

    def rules(self) -> list[str]:
        return [*super().rules(), P.AGENT_RULES_VISITED_ONLY]

    def check_submission(self, run: AgentRun, citations: Citations) -> list[CitationProblem]:
        problems = super().check_submission(run, citations)
        missing = {p.id for p in problems}
        visited = set(run.trace.visited_entities)
        return problems + [CitationProblem("entities", e, "not visited") for e in citations.entities
                           if e not in visited and e not in missing]


class AgenticEvidenceFirst(AgenticGraphRAG):
    """Agentic GraphRAG that must get its cited evidence validated (exists, was seen) before answering."""

    name = "agentic-evidence-first"

    def tools(self) -> list[Tool]:
        d = P.AGENT_TOOL_DESCRIPTIONS
        graph_tools = [t for t in super().tools() if t.name != "submit_answer"]
        return [
            *graph_tools,
            Tool("submit_evidence", CITED_PARAMS, self.submit_evidence, d["submit_evidence"]),
            Tool("submit_answer", (("answer", "string"),), self.submit_answer_after_evidence,
                 P.AGENT_SUBMIT_ANSWER_AFTER_EVIDENCE),
        ]

    def rules(self) -> list[str]:
        return [*super().rules(), P.AGENT_RULES_EVIDENCE_FIRST]

    def check_submission(self, run: AgentRun, citations: Citations) -> list[CitationProblem]:
        problems = super().check_submission(run, citations)
        missing = {(p.field, p.id) for p in problems}
        seen = {"entities": set(run.trace.visited_entities),
                "relationships": set(run.shown_ids.get("relationship", [])),
                "text_units": set(run.trace.read_text_units),
                "communities": set(run.trace.read_communities)}
        reasons = {"entities": "not visited", "relationships": "not listed by get_neighbors",
                   "text_units": "not read", "communities": "not read"}
        return problems + [
            CitationProblem(f, i, reasons[f]) for f in KIND_OF_FIELD for i in getattr(citations, f)
            if i not in seen[f] and (f, i) not in missing
        ]

    def submit_evidence(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        evidence = citations_from(args)
        if evidence.is_empty():
            raise rejected("evidence must cite at least one entity, relationship, text unit or community")
        problems = self.check_submission(run, evidence)
        if problems:
            run.trace.artifacts["evidence_rejections"] = run.trace.artifacts.get("evidence_rejections", 0) + 1
            raise rejected(P.AGENT_CITATIONS_REJECTED.format(problems=", ".join(map(str, problems)),
                                                              tool="submit_evidence"))
        run.accepted_evidence = evidence
        items = ", ".join(i for f in KIND_OF_FIELD for i in getattr(evidence, f))
        return ToolResult(P.AGENT_EVIDENCE_ACCEPTED.format(items=items), {"accepted": evidence.model_dump()})

    def submit_answer_after_evidence(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        if run.accepted_evidence is None:
            raise rejected("no accepted evidence yet: call submit_evidence first")
        return self.accept(run, args["answer"], run.accepted_evidence)
