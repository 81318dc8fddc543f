"""Tools an agent may call, their results and failures, and citation problems.

A :class:`Tool` declares its parameters (strings are required, id lists default to ``[]``),
builds the JSON schema a constrained reply must follow, and validates the arguments a reply
gives. A handler returns a :class:`ToolResult` (text for the model, a summary for the trace) or
raises :class:`ToolFailure`: a ``rejection`` (the call broke a rule) or an ``error`` (a
well-formed call the environment could not serve).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

from ..model import Citations
from .base import CITATION_FIELDS, string_list

if TYPE_CHECKING:
    from .loop import AgentRun

ParamType = Literal["string", "string_list"]
MAX_THOUGHT_CHARS = 200
MAX_STRING_CHARS = 200  # an answer or a query
MAX_ID_CHARS = 100
MAX_CITED_IDS = 20
# A forced final reply must fit its token cap whatever a small model writes into each string.
FORCED_LIMITS = {"thought": 60, "string": 100, "ids": 3}
# Parameters that name an item of the graph, and its kind (for schemas that allow only shown ids).
ID_KIND_OF_PARAM = {
    "entity_id": "entity",
    "textunit_id": "text_unit",
    "community_id": "community",
    "cited_entities": "entity",
    "cited_relationships": "relationship",
    "cited_textunits": "text_unit",
    "cited_communities": "community",
}
# Citations fields and the words used for their kind in messages.
KIND_OF_FIELD = {
    "entities": "entity",
    "relationships": "relationship",
    "text_units": "text unit",
    "communities": "community",
}
CITED_PARAMS: tuple[tuple[str, ParamType], ...] = tuple((key, "string_list") for key in CITATION_FIELDS)


def free_text(param: str, max_chars: int = MAX_STRING_CHARS) -> dict:
    # Length caps keep a small constrained model from rambling inside a string.
    return {"type": "string", "maxLength": MAX_ID_CHARS if param in ID_KIND_OF_PARAM else max_chars}


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
    """A tool the agent may call. String parameters are required; list parameters default to [].
    ``finishes`` marks a tool that may end the run (an answer): the last step offers only those.
    ``submits`` marks a tool that only submits (an answer, evidence; default: the finishing ones):
    it does not :attr:`reads`, so its steps record no ``shown`` items and the gold-trajectory
    scores do not count them as retrieval steps."""

    name: str
    params: tuple[tuple[str, ParamType], ...]
    handler: Callable[["AgentRun", dict[str, Any]], ToolResult]
    description: str
    finishes: bool = False
    submits: bool | None = None

    @property
    def reads(self) -> bool:
        return not (self.finishes if self.submits is None else self.submits)

    def arguments_schema(self, allowed_ids: dict[str, list[str]] | None = None, compact: bool = False) -> dict | None:
        """JSON schema of the arguments. With ``allowed_ids`` (kind -> ids), id parameters may only
        take those ids; None if an id parameter has no allowed value (the tool cannot be called).
        ``compact``: the tighter FORCED_LIMITS of a forced final reply."""
        max_items = FORCED_LIMITS["ids"] if compact else MAX_CITED_IDS
        max_chars = FORCED_LIMITS["string"] if compact else MAX_STRING_CHARS
        properties = {}
        for name, kind in self.params:
            constrained = allowed_ids is not None and name in ID_KIND_OF_PARAM
            ids = allowed_ids.get(ID_KIND_OF_PARAM[name], []) if constrained else None
            if kind == "string":
                if ids == []:
                    return None
                properties[name] = {"type": "string", "enum": ids} if ids else free_text(name, max_chars)
            elif ids == []:  # "items" too: llama.cpp ignores maxItems on an array without items
                properties[name] = {"type": "array", "items": {"type": "string"}, "maxItems": 0}
            else:
                item = {"type": "string", "enum": ids} if ids else free_text(name)
                properties[name] = {"type": "array", "items": item, "maxItems": max_items}
        return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}

    def action_schema(self, allowed_ids: dict[str, list[str]] | None = None, compact: bool = False) -> dict | None:
        """The schema of a reply calling this tool: the tool name fixes the arguments' shape."""
        arguments = self.arguments_schema(allowed_ids, compact)
        if arguments is None:
            return None
        thought = FORCED_LIMITS["thought"] if compact else MAX_THOUGHT_CHARS
        return {
            "type": "object",
            "properties": {
                "thought": {"type": "string", "maxLength": thought},
                "tool": {"type": "string", "enum": [self.name]},
                "arguments": arguments,
            },
            "required": ["thought", "tool", "arguments"],
            "additionalProperties": False,
        }

    def prompt_line(self, template: str = "- {name}({params}): {description}") -> str:
        params = ", ".join(name for name, _ in self.params)
        return template.format(name=self.name, params=params, description=self.description)

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


def citations_from(args: dict[str, Any]) -> Citations:
    """Citations from tool arguments named as in CITATION_FIELDS."""
    return Citations(**{field_name: args.get(key, []) for key, field_name in CITATION_FIELDS.items()})


def without(citations: Citations, problems: list[CitationProblem]) -> Citations:
    """``citations`` minus the items named by ``problems``."""
    bad = {(p.field, p.id) for p in problems}
    return Citations(**{f: [i for i in getattr(citations, f) if (f, i) not in bad] for f in KIND_OF_FIELD})
