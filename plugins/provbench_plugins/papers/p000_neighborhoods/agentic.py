"""Agentic GraphRAG (paper 000): a ReAct-style tool loop over a graph view, and its two
provenance-constrained variants, visited-only and evidence-first.

The loop, the graph tools, step recording, budgets, the forced final answer and repeat
rejection come from :mod:`provbench.agents` (see :mod:`provbench.agents.loop` and
:mod:`provbench.agents.graph` for what each step records and what visiting means). This module
holds what is paper 000's: its prompts and tool wording, and its two variants' rules.

Submissions
    The base agent's citations are not checked (``check_citations: false``, the paper's reading:
    citation control is what the two variants add); a suite may turn the check on.
    Citations must exist in the view (both variants).
    - agentic-visited-only also rejects citing an entity that was not visited.
    - agentic-evidence-first adds ``submit_evidence``: its citations must exist and have been
      seen (entities visited, relationships listed by get_neighbors, text units and communities
      read). ``submit_answer`` takes only the answer, is rejected until evidence was accepted,
      and cites the accepted evidence. Rejected evidence is bounded by the step budget.

Finishing within the budget (on by default; ``force_final_answer: false`` turns it off)
    The last step offers only ``submit_answer``, with citations limited to what the variant
    accepts (shown ids; visited entities for visited-only; seen items for evidence-first).
    Evidence-first without accepted evidence two steps before the end is offered only
    ``submit_evidence`` (failing items dropped, the rest accepted if any remain), then only
    ``submit_answer``; an answer forced without accepted evidence has no citations and sets
    ``artifacts["forced_without_evidence"]``.

Extending
    Subclass :class:`AgenticGraphRAG` and override ``tools`` (add or replace a
    :class:`~provbench.agents.Tool`), ``check_submission`` (return
    :class:`~provbench.agents.CitationProblem` items) or ``rules`` (extra prompt rules).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from provbench.agents import (
    KIND_OF_FIELD,
    AgentMessages,
    AgentRun,
    CitationProblem,
    GraphAgent,
    GraphAgentOptions,
    SystemOptions,
    Tool,
    ToolResult,
    citations_from,
    rejected,
    without,
)
from provbench.agents.tools import CITED_PARAMS
from provbench.model import Citations

from . import prompts as P
from .systems import PaperSystem

# Re-exported for variants written against this module (README's example).
__all__ = [
    "AgenticGraphRAG",
    "AgenticVisitedOnly",
    "AgenticEvidenceFirst",
    "AgenticOptions",
    "AgentRun",
    "CitationProblem",
    "Tool",
    "ToolResult",
]

PAPER_MESSAGES = AgentMessages(
    system=P.AGENT_SYSTEM,
    rules=P.AGENT_RULES,
    tool_line=P.AGENT_TOOL_LINE,
    observation=P.AGENT_OBSERVATION,
    error=P.AGENT_ERROR,
    rejection=P.AGENT_REJECTION,
    budget=P.AGENT_BUDGET,
    next_step_only=P.AGENT_NEXT_STEP_ONLY,
    last_step=P.AGENT_LAST_STEP,
    citations_rejected=P.AGENT_CITATIONS_REJECTED,
    repeated_call=P.AGENT_REPEATED_CALL,
    not_offered=P.AGENT_NOT_OFFERED,
)


class AgenticOptions(GraphAgentOptions):
    """The paper's agent options (defaults of :class:`~provbench.agents.GraphAgentOptions`: 12 steps).
    The base agent's citations are not checked: the paper reserves citation control for its two
    variants, so ``agentic-graphrag`` records whatever it cites (hallucinated ids included)."""

    check_citations: bool = Field(
        False,
        description="cited ids must exist in the view, and a forced submission "
        "cites only shown ids: off for the base agent, as the paper",
    )


class VariantOptions(AgenticOptions):
    """The variants check citations: that is their design."""

    check_citations: bool = Field(
        True, description="cited ids must exist in the view, and a forced submission cites only ids the variant accepts"
    )


class AgenticGraphRAG(PaperSystem, GraphAgent):
    """Agentic GraphRAG: a ReAct tool loop over the graph (search, details, neighbours, text units,
    communities) ending in submit_answer with cited entities, relationships, text units, communities."""

    name = "agentic-graphrag"
    Options: ClassVar[type[SystemOptions]] = AgenticOptions
    messages: ClassVar[AgentMessages] = PAPER_MESSAGES
    tool_descriptions: ClassVar[dict[str, str]] = P.AGENT_TOOL_DESCRIPTIONS


class AgenticVisitedOnly(AgenticGraphRAG):
    """Agentic GraphRAG that rejects a submission citing entities the agent never visited."""

    name = "agentic-visited-only"
    Options: ClassVar[type[SystemOptions]] = VariantOptions

    def rules(self) -> list[str]:
        return [*super().rules(), P.AGENT_RULES_VISITED_ONLY]

    def check_submission(self, run: AgentRun, citations: Citations) -> list[CitationProblem]:
        problems = super().check_submission(run, citations)
        missing = {p.id for p in problems}
        visited = set(run.trace.visited_entities)
        return problems + [
            CitationProblem("entities", e, "not visited")
            for e in citations.entities
            if e not in visited and e not in missing
        ]

    def citable_ids(self, run: AgentRun) -> dict[str, list[str]]:
        return {**run.shown_ids, "entity": list(run.trace.visited_entities)}


class AgenticEvidenceFirst(AgenticGraphRAG):
    """Agentic GraphRAG that must get its cited evidence validated (exists, was seen) before answering."""

    name = "agentic-evidence-first"
    Options: ClassVar[type[SystemOptions]] = VariantOptions

    def tools(self) -> list[Tool]:
        d = P.AGENT_TOOL_DESCRIPTIONS
        return [
            *self.graph_tools(),
            Tool("submit_evidence", CITED_PARAMS, self.submit_evidence, d["submit_evidence"], submits=True),
            Tool(
                "submit_answer",
                (("answer", "string"),),
                self.submit_answer_after_evidence,
                P.AGENT_SUBMIT_ANSWER_AFTER_EVIDENCE,
                finishes=True,
            ),
        ]

    def rules(self) -> list[str]:
        return [*super().rules(), P.AGENT_RULES_EVIDENCE_FIRST]

    def offered_tools(self, run: AgentRun, steps_left: int) -> list[Tool]:
        """Two steps before the end without accepted evidence: only submit_evidence."""
        if self.options.force_final_answer and steps_left == 2 and run.accepted_evidence is None:
            return [t for t in self.tools() if t.name == "submit_evidence"]
        return super().offered_tools(run, steps_left)

    def seen(self, run: AgentRun) -> dict[str, list[str]]:
        """What the agent has seen, by Citations field."""
        return {
            "entities": list(run.trace.visited_entities),
            "relationships": list(run.shown_ids.get("relationship", [])),
            "text_units": list(run.trace.read_text_units),
            "communities": list(run.trace.read_communities),
        }

    def citable_ids(self, run: AgentRun) -> dict[str, list[str]]:
        seen = self.seen(run)
        return {
            "entity": seen["entities"],
            "relationship": seen["relationships"],
            "text_unit": seen["text_units"],
            "community": seen["communities"],
        }

    def check_submission(self, run: AgentRun, citations: Citations) -> list[CitationProblem]:
        problems = super().check_submission(run, citations)
        missing = {(p.field, p.id) for p in problems}
        seen = {f: set(ids) for f, ids in self.seen(run).items()}
        reasons = {
            "entities": "not visited",
            "relationships": "not listed by get_neighbors",
            "text_units": "not read",
            "communities": "not read",
        }
        return problems + [
            CitationProblem(f, i, reasons[f])
            for f in KIND_OF_FIELD
            for i in getattr(citations, f)
            if i not in seen[f] and (f, i) not in missing
        ]

    def submit_evidence(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        evidence = citations_from(args)
        if evidence.is_empty():
            raise rejected("evidence must cite at least one entity, relationship, text unit or community")
        problems = self.check_submission(run, evidence)
        if problems and run.forced and not without(evidence, problems).is_empty():
            evidence = without(evidence, problems)  # the budget's end: keep what passed
            run.trace.artifacts["flagged_evidence"] = [vars(p) for p in problems]
        elif problems:
            run.trace.artifacts["evidence_rejections"] = run.trace.artifacts.get("evidence_rejections", 0) + 1
            raise rejected(
                self.messages.citations_rejected.format(problems=", ".join(map(str, problems)), tool="submit_evidence")
            )
        run.accepted_evidence = evidence
        items = ", ".join(i for f in KIND_OF_FIELD for i in getattr(evidence, f))
        return ToolResult(P.AGENT_EVIDENCE_ACCEPTED.format(items=items), {"accepted": evidence.model_dump()})

    def submit_answer_after_evidence(self, run: AgentRun, args: dict[str, Any]) -> ToolResult:
        if run.accepted_evidence is None:
            if not run.forced:
                raise rejected("no accepted evidence yet: call submit_evidence first")
            run.trace.artifacts["forced_without_evidence"] = True
            return self.accept(run, args["answer"], Citations())
        return self.accept(run, args["answer"], run.accepted_evidence)
