"""KGRAG-Ex (paper 001, section 3): query triplets -> grounded entities -> shortest KG paths ->
pseudo-paragraphs -> pseudo-document-guided chunk retrieval -> an option letter.

1. The LLM restates the question as (subject, relation, object) triplets (section 3); their
   subjects and objects, and each option, are grounded in the KG: exact name first (score 1.0),
   else the most similar entity when its cosine score reaches ``min_match`` (the score is
   recorded). Entities among the question's nearest by embedding whose name the question contains
   verbatim are added ("named"), which is also the fallback when the parse yields no triplet.
2. Shortest paths (edges in either direction, at most ``max_hops``, by default the view's most)
   join question entities to option entities (question pairs when there are no options); the
   ``max_paths`` shortest are kept (1 by default: the paper's one shortest path per query). None
   found: plain retrieval on the question (recorded as the fallback).
3. Each path's triplet lines become a pseudo-paragraph (an LLM call, or ``paragraphs:
   template``); together they form the pseudo-document that retrieves ``top_k`` chunks; the LLM
   picks an option letter from paragraphs + chunks.
4. The trace keeps the grounding, the paths (``trace.paths`` and ``artifacts["kgrag"]``), the
   paragraphs, the chunks read and the letter. :meth:`KGRAGEx.resume` re-runs steps 3 onwards
   from perturbed paths: the stages after path retrieval, as the paper's perturbations require.
"""

from __future__ import annotations

import re
from itertools import product
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.kb.view import MAX_PATH_HOPS
from provbench.model import EvidencePath, Question, RetrievedItem, Trace
from provbench.plugin_api import Environment, System
from provbench.agents import clip

from . import prompts as P
from .paths import make_path, path_text, triplet_lines


NAMED_SEARCH_K = 12  # nearest entities to the question checked for a verbatim mention


class KGRAGExOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_triplets: int = Field(4, ge=1, le=10, description="triplets the query parse may return")
    min_match: float = Field(0.5, ge=0.0, le=1.0, description="least cosine score to ground by similarity")
    max_hops: int = Field(MAX_PATH_HOPS, ge=1, le=MAX_PATH_HOPS,
                          description="longest path searched (default: the view's most, the paper sets none)")
    max_paths: int = Field(1, ge=1, le=20, description="shortest paths kept (paper: one per query)")
    paragraphs: Literal["llm", "template"] = "llm"
    top_k: int = Field(3, ge=0, le=50, description="chunks retrieved with the pseudo-document")
    text_chars: int = Field(600, ge=50)
    max_tokens: int = Field(256, ge=16)
    temperature: float = Field(0.0, ge=0.0, le=2.0)


class KGRAGEx(System):
    """KGRAG-Ex: shortest KG paths as pseudo-paragraphs guide retrieval; answers an option letter."""

    name = "kgrag-ex"
    Options = KGRAGExOptions
    supports_resume = True

    @property
    def expected_llm_calls(self) -> float:
        paragraphs = 0 if self.options.paragraphs == "template" else self.options.max_paths
        return 2.0 + paragraphs  # parse the query, one pseudo-paragraph per path, answer

    # -- entry points ------------------------------------------------------------------------------
    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        mentions = self.extract_entities(question, env, trace)
        if trace.outcome == "failed":
            return trace
        grounded = self.ground(env, trace, mentions, question.choices or [], question.question)
        paths = self.find_paths(env, trace, grounded)
        trace.artifacts["kgrag"] = {"grounding": grounded, "paths": paths, "fallback": not paths}
        return self.answer_from_paths(question, env, trace, paths)

    def resume(self, question: Question, env: Environment, perturbed: Trace) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        state = perturbed.artifacts.get("kgrag")
        if not isinstance(state, dict) or not isinstance(state.get("paths"), list):
            trace.add_step("error", tool="resume", error="perturbed trace has no artifacts['kgrag']['paths']")
            trace.outcome, trace.error = "failed", "nothing to resume from"
            return trace
        trace.artifacts = {**perturbed.artifacts, "resumed": True}
        trace.add_step("retrieval", tool="restore_paths", result=[p["id"] for p in state["paths"]])
        return self.answer_from_paths(question, env, trace, state["paths"])

    # -- step 1: entities and grounding --------------------------------------------------------------
    def extract_entities(self, question: Question, env: Environment, trace: Trace) -> list[str]:
        """The subjects and objects of the query's triplets (section 3), in order, once each."""
        messages = [{"role": "system", "content": P.TRIPLET_SYSTEM},
                    {"role": "user", "content": P.TRIPLET_USER.format(question=question.question)}]
        reply = self.chat(env, trace, messages, P.triplet_schema(self.options.max_triplets), "triplets")
        if reply is None:
            return []
        triplets = parse_triplets(reply)[: self.options.max_triplets]
        trace.add_step("generation", tool="extract_triplets", result=triplets)
        trace.artifacts["query_triplets"] = triplets
        return list(dict.fromkeys(t[end] for t in triplets for end in ("subject", "object") if t[end]))

    def ground(self, env: Environment, trace: Trace, mentions: list[str], choices: list[str],
               question_text: str) -> list[dict]:
        grounded = []
        for role, texts in (("question", mentions), ("option", choices)):
            for i, text in enumerate(texts):
                match = self.ground_one(env, text)
                if match is None:
                    continue
                entity_id, name, score, how = match
                item = {"mention": text, "role": role, "entity": entity_id, "name": name, "score": score, "how": how}
                if role == "option":
                    item["option"] = P.LETTERS[i]
                grounded.append(item)
        grounded += self.named_in_question(env, question_text, {g["entity"] for g in grounded})
        for g in grounded:
            if not any(r.kind == "entity" and r.id == g["entity"] for r in trace.retrieved):
                trace.retrieved.append(RetrievedItem(kind="entity", id=g["entity"], score=g["score"]))
        trace.add_step("retrieval", tool="ground_entities", result=grounded)
        return grounded

    def named_in_question(self, env: Environment, text: str, known: set[str]) -> list[dict]:
        """Entities the question names verbatim among its nearest by embedding, so grounding does
        not hinge on the model listing them (a small model often does not)."""
        words, found = f" {_words(text)} ", []
        for hit in env.view.search_entities(text, k=NAMED_SEARCH_K):
            name = _words(hit.name)
            if hit.id not in known and name and f" {name} " in words:
                found.append({"mention": hit.name, "role": "question", "entity": hit.id, "name": hit.name,
                              "score": 1.0, "how": "named"})
                known.add(hit.id)
        return found

    def ground_one(self, env: Environment, text: str) -> tuple[str, str, float, str] | None:
        exact = env.view.find_entity(text)
        if exact is not None:
            return exact.id, exact.name, 1.0, "exact"
        hits = env.view.search_entities(text, k=1)
        if hits and hits[0].score >= self.options.min_match:
            return hits[0].id, hits[0].name, round(float(hits[0].score), 4), "similarity"
        return None

    # -- step 2: shortest paths ----------------------------------------------------------------------
    def find_paths(self, env: Environment, trace: Trace, grounded: list[dict]) -> list[dict]:
        found: dict[tuple[str, ...], Any] = {}
        for a, b in self.pairs(grounded):
            for path in env.view.shortest_paths(a, b, max_hops=self.options.max_hops, limit=1):
                if len(path.entities) >= 2:
                    found.setdefault(tuple(path.entities), path)
        kept = sorted(found.values(), key=lambda p: len(p.entities))[: self.options.max_paths]
        paths = [self.describe_path(env, f"path:{i}", p) for i, p in enumerate(kept)]
        trace.add_step("retrieval", tool="shortest_paths", result=[triplet_lines(p) for p in paths])
        return paths

    @staticmethod
    def pairs(grounded: list[dict]) -> list[tuple[str, str]]:
        question = list(dict.fromkeys(g["entity"] for g in grounded if g["role"] == "question"))
        options = list(dict.fromkeys(g["entity"] for g in grounded if g["role"] == "option"))
        if options:
            candidates = list(product(question, options))
        else:
            candidates = [(a, b) for i, a in enumerate(question) for b in question[i + 1:]]
        return [(a, b) for a, b in candidates if a != b]

    @staticmethod
    def describe_path(env: Environment, path_id: str, path: Any) -> dict:
        nodes = []
        for eid in path.entities:
            entity = env.view.entity(eid)
            nodes.append({"id": eid, "name": entity.name if entity else eid, "label": entity.label if entity else ""})
        edges = []
        for rel in path.relations:
            unit = env.view.text_unit(rel.text_unit_id) if rel.text_unit_id else None
            edges.append({"id": rel.id, "label": rel.label, "source": rel.source, "target": rel.target,
                          "text_unit": rel.text_unit_id, "source_file": unit.document_id if unit else ""})
        return make_path(path_id, nodes, edges)

    # -- step 3: paragraphs, retrieval, answer -----------------------------------------------------
    def answer_from_paths(self, question: Question, env: Environment, trace: Trace, paths: list[dict]) -> Trace:
        paragraphs = [self.paragraph(env, trace, p) for p in paths]
        if trace.outcome == "failed":
            return trace
        for path, paragraph in zip(paths, paragraphs):
            entities = [n["id"] for n in path["nodes"]]
            trace.paths.append(EvidencePath(id=path["id"], entities=entities, relations=[e["id"] for e in path["edges"]],
                                            description=path_text(path)))
            trace.visit(*entities)
        trace.artifacts["pseudo_paragraphs"] = paragraphs
        query = "\n".join(p for p in paragraphs if p.strip()) or question.question
        passages = self.retrieve(env, trace, query, fallback=not paths)
        user = P.ANSWER_USER.format(paragraphs="\n\n".join(paragraphs) or P.NOTHING,
                                    passages="\n".join(passages) or P.NOTHING, question=question.question,
                                    options=P.options_text(question.choices or []))
        messages = [{"role": "system", "content": P.ANSWER_SYSTEM}, {"role": "user", "content": user}]
        reply = self.chat(env, trace, messages, P.answer_schema(max(1, len(question.choices or []))), "answer")
        if reply is None:
            return trace
        letter = reply.get("answer") if isinstance(reply, dict) else None
        letter = letter.strip().upper() if isinstance(letter, str) else ""
        trace.add_step("generation", tool="answer", result={"answer": letter})
        trace.answer = letter or None
        trace.outcome = "answered" if letter else "abstained"
        return trace

    def paragraph(self, env: Environment, trace: Trace, path: dict) -> str:
        lines = triplet_lines(path)
        if self.options.paragraphs == "template" or not lines:
            return " ".join(_sentence(line) for line in lines)
        messages = [{"role": "system", "content": P.PARAGRAPH_SYSTEM},
                    {"role": "user", "content": P.PARAGRAPH_USER.format(chain=path_text(path))}]
        resp = self.chat(env, trace, messages, None, "pseudo-paragraph", raw=True)
        return (getattr(resp, "text", "") or "").strip() if resp is not None else ""

    def retrieve(self, env: Environment, trace: Trace, query: str, fallback: bool) -> list[str]:
        if self.options.top_k == 0:
            return []
        hits = env.view.search_text_units(query, k=self.options.top_k)
        passages = []
        for hit in hits:
            unit = env.view.text_unit(hit.id)
            if unit is None:
                continue
            trace.read_text_unit(unit.id)
            trace.retrieved.append(RetrievedItem(kind="text_unit", id=unit.id, score=hit.score))
            passages.append(P.PASSAGE.format(id=unit.id, text=clip(unit.text, self.options.text_chars)))
        trace.add_step("retrieval", tool="fallback_search" if fallback else "pseudo_document_search",
                       arguments={"k": self.options.top_k}, result=[{"id": h.id, "score": h.score} for h in hits])
        return passages

    # -- one guarded LLM call ----------------------------------------------------------------------
    def chat(self, env: Environment, trace: Trace, messages: list[dict], schema: dict | None, purpose: str,
             raw: bool = False) -> Any:
        from provbench.llm import LLMError

        try:
            resp = env.llm.chat(messages, schema=schema, max_tokens=self.options.max_tokens,
                                temperature=self.options.temperature, seed=env.seed, purpose=purpose, trace=trace)
        except LLMError as err:
            trace.add_step("error", tool="llm", error=str(err))
            trace.outcome, trace.error = "failed", f"LLM call failed ({purpose}): {err}"
            return None
        if raw:
            return resp
        if isinstance(resp.data, dict):
            return resp.data
        trace.add_step("rejection", tool=purpose, error="the reply was not a JSON object")
        return {}


def parse_triplets(reply: Any) -> list[dict[str, str]]:
    """The reply's well-formed triplets (subject and object non-empty; relation may be empty)."""
    items = reply.get("triplets") if isinstance(reply, dict) else None
    found = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        triplet = {k: item[k].strip() if isinstance(item.get(k), str) else "" for k in ("subject", "relation", "object")}
        if triplet["subject"] and triplet["object"]:
            found.append(triplet)
    return found


def _words(text: str) -> str:
    return " ".join(re.findall(r"[\w-]+", text.lower()))


def _sentence(line: str) -> str:
    match = re.match(r"^(.*) ->\[(.*)\]-> (.*)$", line)
    if not match:
        return line
    head, relation, tail = match.groups()
    return P.TEMPLATE_SENTENCE.format(head=head, relation=relation.lower(), tail=tail)

