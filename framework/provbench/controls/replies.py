"""A control's reply to one request: the JSON schema says what is asked, the behaviour says how.

* no schema: a relation chain (``head ->[rel]-> tail`` lines or ``a->[r]->b->[s]->c`` chains,
  paper 001's pseudo-paragraph prompt) is rewritten one sentence per triplet and line; otherwise
  the answer as plain text;
* an agent's action (``anyOf`` branches, each fixing ``tool``): :func:`agent_action`;
* ``triplets``: a question restated as its gold triples (``Behaviour.query`` "gold": it looks up
  the gold chain the question starts), or a passage's sentences each restated as one (subject,
  relation, object) that reads back as the sentence (paper 003's extraction, confidence 0.9 for
  every sentence alike); ``pairs``: each gold triple's subject and object, in its direction
  (paper 001's authors' parse);
* any other object: field by field (:data:`FIELDS`): the answer (or label), its confidence, the
  citations by kind (``cited_entities`` ... or numbered ``cited`` lines; paper 002's
  ``supporting_concepts`` / ``supporting_relations`` / ``supporting_texts`` alike), paper 002's ``focus``
  (a gold entity not yet in the prompt) and ``relation_types`` (the gold relations offered);
  fields no control knows get a minimal valid value.
"""

from __future__ import annotations

import re
from typing import Any

from ..gold import normalize_relation, normalize_text
from .behaviours import Behaviour, chain_triplets
from .reading import PromptReading

CITED_KINDS = {
    "cited_entities": "entity",
    "cited_relationships": "relationship",
    "cited_textunits": "text_unit",
    "cited_communities": "community",
    # paper 002's loop names its supporting subgraph among the ids it was shown
    "supporting_concepts": "entity",
    "supporting_relations": "relationship",
    "supporting_texts": "text_unit",
}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
PASSAGE = re.compile(r'Passage:\s*"(.*)"', re.S)


def text_reply(behaviour: Behaviour, r: PromptReading) -> str:
    """A reply without a schema: a relation chain rewritten, else the answer as plain text."""
    chain = [line.strip() for line in r.lines if chain_triplets(line)]
    if chain and r.question is None:
        return behaviour.paragraph(chain)
    return behaviour.answer_text(r)


def is_action_schema(schema: dict) -> bool:
    """An agent's action: ``anyOf`` branches, each fixing a ``tool``."""
    return "anyOf" in schema and all("tool" in b.get("properties", {}) for b in schema["anyOf"])


def fill_object(behaviour: Behaviour, r: PromptReading, schema: dict) -> dict[str, Any]:
    props = schema.get("properties", {})
    if "triplets" in props:
        return {"triplets": triplets(behaviour, r, props["triplets"])}
    if "pairs" in props:
        return {"pairs": entity_pairs(behaviour, r, props["pairs"])}
    return {key: fill_field(behaviour, r, key, sub) for key, sub in props.items()}


def fill_field(behaviour: Behaviour, r: PromptReading, key: str, schema: dict) -> Any:
    if key in ("answer", "label"):
        if "enum" in schema:
            return behaviour.choose(r, list(schema["enum"]))
        return _clip(behaviour.answer_text(r), schema)
    if key == "confidence":
        return behaviour.confidence(r)
    if key in CITED_KINDS:
        return cited(behaviour.citations(r).get(CITED_KINDS[key], []), schema, r)
    if key == "cited":
        numbers = [int(n) for n in behaviour.citations(r).get("number", [])]
        item = schema.get("items", {})
        low, high = item.get("minimum", 1), item.get("maximum", 10**9)
        return [n for n in numbers if low <= n <= high][: schema.get("maxItems", len(numbers))]
    if key == "explanation":
        return _clip(behaviour.explanation(r), schema)
    if key == "focus":
        return _clip(next_focus(r), schema)
    if key == "relation_types":
        return relation_types(r, schema)
    return minimal(schema)


def cited(ids: list[str], schema: dict, r: PromptReading) -> list[str]:
    """Citation ids the schema accepts (an enum, when ids are constrained), not rejected before, capped."""
    allowed = schema.get("items", {}).get("enum")
    rejected = r.rejected_ids()
    kept = [i for i in ids if i not in rejected and (allowed is None or i in allowed)]
    return kept[: schema.get("maxItems", len(kept))]


def next_focus(r: PromptReading) -> str:
    """A gold entity whose name the prompt does not show yet (where to look next)."""
    if r.gold is None:
        return ""
    shown = normalize_text(r.text)
    return next((name for name in r.gold.entities if normalize_text(name) not in shown), "")


def relation_types(r: PromptReading, schema: dict) -> list[str]:
    """The gold relations among the offered types (an enum), so a loop follows the gold chain."""
    offered = schema.get("items", {}).get("enum") or []
    gold = {normalize_relation(t.relation) for t in r.gold.triples} if r.gold is not None else set()
    return [t for t in offered if normalize_relation(t) in gold][: schema.get("maxItems", len(offered))]


def triplets(behaviour: Behaviour, r: PromptReading, schema: dict) -> list[dict[str, Any]]:
    props = schema.get("items", {}).get("properties", {})
    limit = schema.get("maxItems", 8)
    if r.question is not None:  # a query parse reads the question, which every control does
        found = question_triplets(r, behaviour.query == "gold")
    elif behaviour.reads:
        found = passage_triplets(r, props)
    else:
        return []
    width = props.get("subject", {}).get("maxLength", 200)
    out = []
    for subject, relation, obj in found[:limit]:
        item = {"subject": subject[:width], "relation": relation[:width], "object": obj[:width]}
        if "confidence" in props:
            item["confidence"] = 0.9
        out.append(item)
    return out


def named_gold_entities(r: PromptReading) -> list[str]:
    """The gold entities the question names, in gold order."""
    if r.gold is None or r.question is None:
        return []
    asked = normalize_text(r.question.question)
    return [name for name in r.gold.entities if normalize_text(name) in asked]


def question_triplets(r: PromptReading, towards_gold: bool) -> list[tuple[str, str, str]]:
    """A question restated as triplets. Towards the gold (a control that explores, when the
    question names a gold entity): the gold triples, so the system looks up the gold chain;
    otherwise the gold triples between entities the question names, else those entities paired."""
    named = named_gold_entities(r)
    if named and towards_gold:
        return [(t.subject, t.relation, t.object) for t in r.gold.triples]
    both = [(t.subject, t.relation, t.object) for t in r.gold.triples if t.subject in named and t.object in named]
    pairs = [(a, "related to", b) for a, b in zip(named, named[1:])] or [(n, "related to", n) for n in named[:1]]
    return both or pairs


def entity_pairs(behaviour: Behaviour, r: PromptReading, schema: dict) -> list[dict[str, str]]:
    """Entity pairs of the question (paper 001's authors' query parse): with ``query`` "gold",
    each gold triple's subject and object (in the triple's direction, so a directed search finds
    it; each triple on one pair, as the triplets parse gives them), else the gold entities the
    question names, paired; an entity is never paired with itself."""
    item = schema.get("items", {}).get("properties", {})
    first, second = list(item)[:2] if len(item) >= 2 else ("entity1", "entity2")
    named = named_gold_entities(r)
    if named and behaviour.query == "gold":
        found = [(t.subject, t.object) for t in r.gold.triples]
    else:
        found = [(a, b) for i, a in enumerate(named) for b in named[i + 1 :]]
    pairs = [{first: a, second: b} for a, b in dict.fromkeys(found) if a != b]
    return pairs[: schema.get("maxItems", len(pairs))]


def passage_triplets(r: PromptReading, props: dict) -> list[tuple[str, str, str]]:
    """Each sentence of the passage as three word runs that read back as the sentence."""
    match = PASSAGE.search(r.text)
    passage = " ".join((match.group(1) if match else r.text).split())
    width = props.get("subject", {}).get("maxLength", 200)
    return [_three_parts(s, width) for s in SENTENCE_END.split(passage) if len(s.split()) >= 3]


def _three_parts(sentence: str, width: int) -> tuple[str, str, str]:
    """A sentence of 3 words or more cut into thirds (a part longer than ``width`` is cut short,
    and the triple no longer reads back as the whole sentence)."""
    words = sentence.split()
    a, b = max(1, len(words) // 3), max(2, 2 * len(words) // 3)
    return " ".join(words[:a])[:width], " ".join(words[a:b])[:width], " ".join(words[b:])[:width]


def minimal(schema: dict) -> Any:
    """A small value valid against ``schema``, for fields no control reasons about."""
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema or "oneOf" in schema:
        return minimal((schema.get("anyOf") or schema["oneOf"])[0])
    kind = schema.get("type", "string")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object":
        return {k: minimal(v) for k, v in schema.get("properties", {}).items()}
    defaults = {
        "array": [],
        "number": schema.get("minimum", 0),
        "integer": schema.get("minimum", 0),
        "boolean": False,
        "null": None,
    }
    return defaults.get(kind, "")


def _clip(text: str, schema: dict) -> str:
    return text[: schema.get("maxLength", len(text))]
