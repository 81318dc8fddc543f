"""Per-document triple extraction with confidence (paper 003, section VII's extraction prompt):
one LLM call per document, a JSON schema for the reply, items validated one by one.

Used by the ``fever-wiki`` builder (triples stored with the KB) and by paper 003's GA-RAG
(triples of the retrieved documents, at question time). A reply that holds no triple list (not
JSON, often because it was cut at the token budget) is a *problem*, named by
:func:`reply_problem`, never silently "no triples".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError

if TYPE_CHECKING:
    from provbench.llm import LLMClient
    from provbench.model import Trace

EXTRACT_SYSTEM = "You extract factual triplets from text. Reply with JSON only."
EXTRACT_USER = (
    "Extract factual triplets from the following passage.\n"
    'Passage: "{text}"\n'
    'Return a JSON object {{"triplets": [{{"subject": "...", "relation": "...", "object": "...", '
    '"confidence": 0.0-1.0}}]}}.\n'
    "Only include concrete factual statements; avoid speculation. At most {limit} triplets."
)
MAX_FIELD_CHARS = 80


class Triple(BaseModel):
    subject: str = Field(min_length=1, max_length=200)
    relation: str = Field(min_length=1, max_length=200)
    object: str = Field(min_length=1, max_length=200)
    confidence: float = Field(ge=0.0, le=1.0)


def triple_schema(limit: int) -> dict:
    text = {"type": "string", "maxLength": MAX_FIELD_CHARS}
    item = {
        "type": "object",
        "properties": {
            "subject": text,
            "relation": text,
            "object": text,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["subject", "relation", "object", "confidence"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"triplets": {"type": "array", "items": item, "maxItems": limit}},
        "required": ["triplets"],
        "additionalProperties": False,
    }


def parse_triples(data: Any, limit: int) -> tuple[list[Triple], int]:
    """Valid triples of a reply (stripped, de-duplicated) and how many items were dropped."""
    items = data.get("triplets") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return [], 0
    kept: list[Triple] = []
    dropped = 0
    seen: set[tuple[str, str, str]] = set()
    for item in items[:limit]:
        try:
            triple = Triple.model_validate({k: v.strip() if isinstance(v, str) else v for k, v in item.items()})
        except (ValidationError, AttributeError):
            dropped += 1
            continue
        key = (triple.subject.lower(), triple.relation.lower(), triple.object.lower())
        if key not in seen:
            seen.add(key)
            kept.append(triple)
    return kept, dropped + max(0, len(items) - limit)


def triple_messages(text: str, limit: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": EXTRACT_SYSTEM},
        {"role": "user", "content": EXTRACT_USER.format(text=" ".join(text.split()), limit=limit)},
    ]


def reply_data(resp: Any) -> Any:
    """A chat response's JSON (None when it holds none)."""
    from provbench.llm.client import parse_json

    return resp.data if getattr(resp, "data", None) is not None else parse_json(resp.text or "")


def reply_problem(resp: Any, data: Any, max_tokens: int) -> str | None:
    """Why a reply gave no triple list (None when it did): truncated, not JSON, or no list."""
    if isinstance(data, list) or (isinstance(data, dict) and isinstance(data.get("triplets"), list)):
        return None
    if data is None:
        used = getattr(resp, "completion_tokens", 0) or 0
        if used >= max_tokens:
            return f"reply cut at the {max_tokens}-token budget (not valid JSON)"
        return f"reply is not JSON: {(getattr(resp, 'text', '') or '')[:80]!r}"
    return "reply has no 'triplets' list"


@dataclass
class Extraction:
    triples: list[Triple]
    dropped: int  # items that were not valid triples (or over the limit)
    problem: str | None = None  # the reply held no triple list at all (see reply_problem)


def extract_triples(
    llm: "LLMClient",
    text: str,
    *,
    limit: int = 8,
    max_tokens: int = 400,
    seed: int = 0,
    purpose: str = "triples",
    trace: "Trace | None" = None,
) -> Extraction:
    """Triples of one document; raises the LLM layer's LLMError when the call fails for good."""
    resp = llm.chat(
        triple_messages(text, limit),
        schema=triple_schema(limit),
        max_tokens=max_tokens,
        temperature=0.0,
        seed=seed,
        purpose=purpose,
        trace=trace,
    )
    data = reply_data(resp)
    triples, dropped = parse_triples(data, limit)
    return Extraction(triples, dropped, reply_problem(resp, data, max_tokens))
