"""Reusable machinery for LLM systems and tool-using agents.

* :mod:`.base`: :class:`LLMSystem` (validated options, guarded LLM call, answer finishing),
  :class:`OneShotSystem` (prompt once, answer once, keep only citations shown in the prompt).
* :mod:`.tools`: :class:`Tool`, :class:`ToolResult`, :class:`ToolFailure`, :class:`CitationProblem`.
* :mod:`.loop`: :class:`ToolAgent`, the schema-constrained action loop (steps, rejections,
  budget, forced final answer, repeat rejection, citation checks as a hook).
* :mod:`.graph`: :class:`GraphAgent`, a ToolAgent with graph tools over a view.

A new agent is a subclass: give it tools, a check_submission and its prompts (``messages``).
"""

from .base import (
    CITATION_FIELDS,
    LLMSystem,
    OneShotOptions,
    OneShotSystem,
    SystemOptions,
    answer_schema,
    choices_text,
    clip,
    fixed_parts,
    lettered_choices,
    record_retrieved,
    replayed_reply,
    reply_object,
    split_citations,
    string_list,
)
from .graph import GraphAgent, GraphAgentOptions
from .loop import AgentMessages, AgentOptions, AgentRun, ToolAgent
from .tools import (
    CITED_PARAMS,
    KIND_OF_FIELD,
    CitationProblem,
    Tool,
    ToolFailure,
    ToolResult,
    citations_from,
    rejected,
    without,
)

__all__ = [
    "CITATION_FIELDS",
    "CITED_PARAMS",
    "KIND_OF_FIELD",
    "AgentMessages",
    "AgentOptions",
    "AgentRun",
    "CitationProblem",
    "GraphAgent",
    "GraphAgentOptions",
    "LLMSystem",
    "OneShotOptions",
    "OneShotSystem",
    "SystemOptions",
    "Tool",
    "ToolAgent",
    "ToolFailure",
    "ToolResult",
    "answer_schema",
    "choices_text",
    "citations_from",
    "clip",
    "fixed_parts",
    "lettered_choices",
    "record_retrieved",
    "rejected",
    "replayed_reply",
    "reply_object",
    "split_citations",
    "string_list",
    "without",
]
