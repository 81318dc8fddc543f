"""From the query to grounded entity pairs (paper 001, section 3).

1. The LLM restates the question as triplets (paper) or lists entity pairs (the authors' code).
2. Each mention is grounded: an entity of exactly that name (case aside, unless
   ``case_sensitive``: the authors') scores 1.0; otherwise,
   with ``grounding: similarity``, the nearest entity by embedding when its cosine score reaches
   ``min_match`` and, with ``lexical``, the two share a word (its first five letters), so
   "Aspirin" is not grounded to "fenquarin" (0.53) nor "kidney" to "left kidney" (0.72), while
   "coughing at night" still finds "night cough" (0.84). Every mention's best candidate, its
   score and why it was kept or not go to the trace (``candidates``).
3. Pairs: with triplets, every pair of grounded query entities (the paper: shortest paths
   "between them"), or with ``endpoints: options`` each query entity with each grounded option;
   with pairs, the model's own pairs.
"""

from __future__ import annotations

import re
from itertools import product
from typing import Any

from provbench.model import RetrievedItem, Trace
from provbench.plugin_api import Environment

NAMED_SEARCH_K = 12  # nearest entities to the question checked for a verbatim mention
STEM = 5  # words match on their first five letters ("coughing" ~ "cough")
STOPWORDS = frozenset({"the", "and", "with", "for", "from", "that", "this", "into", "after", "its", "his", "her"})


def words(text: str) -> str:
    return " ".join(re.findall(r"[\w-]+", text.lower()))


def stems(text: str) -> set[str]:
    return {w[:STEM] for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in STOPWORDS}


def parse_items(reply: Any, key: str, ends: tuple[str, str]) -> list[dict[str, str]]:
    """The reply's well-formed items under ``key`` (both ``ends`` non-empty)."""
    items = reply.get(key) if isinstance(reply, dict) else None
    found = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        clean = {k: v.strip() for k, v in item.items() if isinstance(v, str)}
        if all(clean.get(end) for end in ends):
            found.append(clean)
    return found


class Grounder:
    """Grounds mentions in the view under the system's options, recording every candidate."""

    def __init__(self, options: Any, env: Environment) -> None:
        self.options, self.env = options, env
        self.candidates: list[dict] = []

    def one(self, text: str, role: str) -> dict | None:
        exact = self.env.view.find_entity(text, case_sensitive=self.options.case_sensitive)
        if exact is not None:
            return self._note(text, role, exact.id, exact.name, 1.0, "exact", True)
        if self.options.grounding == "exact":
            return self._note(text, role, None, None, None, "no entity of that name", False)
        hits = self.env.view.search_entities(text, k=1)
        if not hits:
            return self._note(text, role, None, None, None, "no entity", False)
        hit, score = hits[0], round(float(hits[0].score), 4)
        if score < self.options.min_match:
            return self._note(text, role, hit.id, hit.name, score, f"score below {self.options.min_match}", False)
        if self.options.lexical and not stems(text) & stems(hit.name):
            return self._note(text, role, hit.id, hit.name, score, "no word in common", False)
        return self._note(text, role, hit.id, hit.name, score, "similarity", True)

    def _note(self, text, role, entity, name, score, how, kept) -> dict | None:
        self.candidates.append(
            {"mention": text, "role": role, "entity": entity, "name": name, "score": score, "how": how, "kept": kept}
        )
        if not kept:
            return None
        return {"mention": text, "role": role, "entity": entity, "name": name, "score": score, "how": how}

    def named_in_question(self, text: str, known: set[str]) -> list[dict]:
        """Entities the question names verbatim among its nearest by embedding, so grounding does
        not hinge on the model listing them (a small model often does not)."""
        said, found = f" {words(text)} ", []
        for hit in self.env.view.search_entities(text, k=NAMED_SEARCH_K):
            name = words(hit.name)
            if hit.id not in known and name and f" {name} " in said:
                found.append(self._note(hit.name, "question", hit.id, hit.name, 1.0, "named", True))
                known.add(hit.id)
        return found


def record_grounding(trace: Trace, grounded: list[dict], candidates: list[dict]) -> None:
    for g in grounded:
        if not any(r.kind == "entity" and r.id == g["entity"] for r in trace.retrieved):
            trace.retrieved.append(RetrievedItem(kind="entity", id=g["entity"], score=g["score"]))
    trace.add_step("retrieval", tool="ground_entities", result={"grounded": grounded, "candidates": candidates})


def entity_pairs(grounded: list[dict], endpoints: str) -> list[tuple[str, str]]:
    """Pairs of entity ids to join: the model's own pairs when it gave pairs (``pair`` set on the
    grounded items), else every pair of query entities, or query x option entities."""
    paired: dict[int, dict[int, str]] = {}
    for g in grounded:
        if "pair" in g:
            paired.setdefault(g["pair"], {})[g["end"]] = g["entity"]
    if paired:
        candidates = [(ends[0], ends[1]) for _, ends in sorted(paired.items()) if len(ends) == 2]
    else:
        question = list(dict.fromkeys(g["entity"] for g in grounded if g["role"] == "question"))
        options = list(dict.fromkeys(g["entity"] for g in grounded if g["role"] == "option"))
        if endpoints == "options":
            candidates = list(product(question, options))
        else:
            candidates = [(a, b) for i, a in enumerate(question) for b in question[i + 1 :]]
    return list(dict.fromkeys((a, b) for a, b in candidates if a != b))
