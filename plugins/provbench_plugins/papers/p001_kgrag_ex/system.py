"""KGRAG-Ex (paper 001, section 3): query -> grounded entity pairs -> shortest KG paths ->
pseudo-paragraphs -> pseudo-document-guided chunk retrieval -> an option letter.

1. The query is parsed and its entities grounded (:mod:`.grounding`): triplets and every pair of
   the query's entities (paper), or the model's entity pairs (``preset: authors``).
2. One shortest path per pair (edges in either direction, or only forward with ``directed``; at
   most ``max_hops``); a path lying wholly on another is dropped, then paths are kept one at a
   time, each passing the most grounded entities not yet covered (ties: shorter, then the names
   along them; never the order of the options), until ``max_paths`` or nothing new is covered
   (:func:`choose_paths`); with ``path_order: pairs``
   (the authors) every pair's path is kept in the model's pair order. None found: plain retrieval on the
   question (recorded as the fallback).
3. Each path becomes a pseudo-paragraph (an LLM call with the authors' prompt, or ``paragraphs:
   template``); together they form the pseudo-document that retrieves ``top_k`` chunks; the LLM
   picks an option letter from paragraphs + chunks (the authors' answer prompt). A query left
   with no paragraph text retrieves with the question and is logged as ``fallback_search``.
4. The trace keeps the grounding (every candidate with its score), the paths (``trace.paths``
   and ``artifacts["kgrag"]``), the paragraphs, the chunks read and the letter.
   :meth:`KGRAGEx.resume` re-runs steps 3 onwards from perturbed paths.
"""

from __future__ import annotations

import re
from typing import Any

from provbench.agents import clip, fixed_parts
from provbench.model import EvidencePath, Question, RetrievedItem, Trace
from provbench.plugin_api import Environment, System

from . import prompts as P
from .grounding import Grounder, entity_pairs, parse_items, record_grounding
from .options import KGRAGExOptions
from .paths import make_path, path_text, triplet_lines


class KGRAGEx(System):
    """KGRAG-Ex: shortest KG paths as pseudo-paragraphs guide retrieval; answers an option letter."""

    name = "kgrag-ex"
    Options = KGRAGExOptions
    supports_resume = True

    def instructions(self) -> list[str]:
        """Its prompts' fixed text: the query parse, the pseudo-paragraph and the answer prompt."""
        return [
            P.TRIPLET_SYSTEM,
            P.PAIRS_SYSTEM,
            P.UNKNOWN_INSTRUCTION,
            *fixed_parts(P.TRIPLET_USER, P.PAIRS_USER, P.PARAGRAPH_PROMPT, P.ANSWER_PROMPT),
        ]

    @property
    def expected_llm_calls(self) -> float:
        paragraphs = 0 if self.options.paragraphs == "template" else (self.options.max_paths or 3)
        return 2.0 + paragraphs  # parse the query, one pseudo-paragraph per path, answer

    # -- entry points ------------------------------------------------------------------------------
    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        grounded = self.ground(question, env, trace)
        if trace.outcome == "failed":
            return trace
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

    # -- step 1: the query's entities, grounded ------------------------------------------------------
    def ground(self, question: Question, env: Environment, trace: Trace) -> list[dict]:
        grounder, grounded = Grounder(self.options, env), []
        if self.options.query == "pairs":
            for n, pair in enumerate(self.parse_query(question, env, trace, "pairs")):
                ends = [grounder.one(pair[f"entity{i + 1}"], "question") for i in range(2)]
                grounded += [{**g, "pair": n, "end": i} for i, g in enumerate(ends) if g is not None]
        else:
            triplets = self.parse_query(question, env, trace, "triplets")
            mentions = dict.fromkeys(t[end] for t in triplets for end in ("subject", "object"))
            grounded = [g for m in mentions if (g := grounder.one(m, "question")) is not None]
        if trace.outcome == "failed":
            return []
        if self.options.endpoints == "options":
            for letter, text in zip(P.LETTERS, question.choices or []):
                if (g := grounder.one(text, "option")) is not None:
                    grounded.append({**g, "option": letter})
        if self.options.named_fallback:
            grounded += grounder.named_in_question(question.question, {g["entity"] for g in grounded})
        record_grounding(trace, grounded, grounder.candidates)
        return grounded

    def parse_query(self, question: Question, env: Environment, trace: Trace, kind: str) -> list[dict[str, str]]:
        """The query's triplets (subject and object non-empty) or entity pairs, as the LLM gives them."""
        n = self.options.max_triplets
        if kind == "pairs":
            system, user, schema, ends = P.PAIRS_SYSTEM, P.PAIRS_USER, P.pairs_schema(n), ("entity1", "entity2")
        else:
            system, user, schema, ends = P.TRIPLET_SYSTEM, P.TRIPLET_USER, P.triplet_schema(n), ("subject", "object")
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": user.format(question=question.question)},
        ]
        reply = self.chat(env, trace, messages, schema, kind)
        if reply is None:
            return []
        keys = ends if kind == "pairs" else ("subject", "relation", "object")
        items = [{k: item.get(k, "") for k in keys} for item in parse_items(reply, kind, ends)][:n]
        trace.add_step("generation", tool=f"extract_{kind}", result=items)
        trace.artifacts[f"query_{kind}"] = items
        return items

    # -- step 2: shortest paths ----------------------------------------------------------------------
    def find_paths(self, env: Environment, trace: Trace, grounded: list[dict]) -> list[dict]:
        found: dict[tuple[str, ...], Any] = {}
        for a, b in entity_pairs(grounded, self.options.endpoints):
            for path in env.view.shortest_paths(
                a, b, max_hops=self.options.max_hops, limit=1, directed=self.options.directed
            ):
                if len(path.entities) >= 2:
                    found.setdefault(tuple(sorted(r.id for r in path.relations)), path)
        if self.options.path_order == "pairs":  # the authors: every pair's path, in the model's pair order
            kept = list(found.values())[: self.options.max_paths]
        else:
            kept = choose_paths(
                list(found.values()),
                {g["entity"] for g in grounded},
                self.options.max_paths,
                lambda eid: env.view.entity(eid).name if env.view.entity(eid) else eid,
            )
        paths = [self.describe_path(env, f"path:{i}", p) for i, p in enumerate(kept)]
        trace.add_step("retrieval", tool="shortest_paths", result=[triplet_lines(p) for p in paths])
        return paths

    def describe_path(self, env: Environment, path_id: str, path: Any) -> dict:
        nodes = []
        for eid in path.entities:
            entity = env.view.entity(eid)
            nodes.append({"id": eid, "name": entity.name if entity else eid, "label": entity.label if entity else ""})
        edges = []
        for rel in path.relations:
            unit = env.view.text_unit(rel.text_unit_id) if rel.text_unit_id else None
            edges.append(
                {
                    "id": rel.id,
                    "label": rel.label,
                    "source": rel.source,
                    "target": rel.target,
                    "text_unit": rel.text_unit_id,
                    "source_file": unit.document_id if unit else "",
                }
            )
        return make_path(path_id, nodes, edges, self.options.path_format)

    # -- step 3: paragraphs, retrieval, answer -----------------------------------------------------
    def answer_from_paths(self, question: Question, env: Environment, trace: Trace, paths: list[dict]) -> Trace:
        paragraphs = [self.paragraph(env, trace, p) for p in paths]
        if trace.outcome == "failed":
            return trace
        for path, _paragraph in zip(paths, paragraphs):
            entities = [n["id"] for n in path["nodes"]]
            trace.paths.append(
                EvidencePath(
                    id=path["id"],
                    entities=entities,
                    relations=[e["id"] for e in path["edges"]],
                    description=path_text(path),
                )
            )
            trace.visit(*entities)
        trace.artifacts["pseudo_paragraphs"] = paragraphs
        pseudo_document = "\n".join(p for p in paragraphs if p.strip())
        passages = self.retrieve(env, trace, pseudo_document or question.question, fallback=not pseudo_document)
        context = "\n".join([pseudo_document, *passages]).strip()
        # the authors' "tokens" per call: the words of the context the model reads (paragraphs and chunks)
        trace.artifacts["context_words"] = len(context.split())
        messages = P.answer_messages(context, question.question, question.choices or [])
        reply = self.chat(env, trace, messages, P.answer_schema(max(1, len(question.choices or []))), "answer")
        return trace if reply is None else answer_letter(trace, reply)

    def paragraph(self, env: Environment, trace: Trace, path: dict) -> str:
        lines = triplet_lines(path)
        if self.options.paragraphs == "template" or not lines:
            return " ".join(_sentence(line) for line in lines)
        messages = P.paragraph_messages(path_text(path), self.options.unknown_instruction)
        resp = self.chat(env, trace, messages, None, "pseudo-paragraph", raw=True)
        return (getattr(resp, "text", "") or "").strip() if resp is not None else ""

    def retrieve(self, env: Environment, trace: Trace, query: str, fallback: bool) -> list[str]:
        """``top_k`` chunks for the pseudo-document, or for the question when there is none."""
        trace.artifacts["retrieval_query"] = "question" if fallback else "pseudo_document"
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
        trace.add_step(
            "retrieval",
            tool="fallback_search" if fallback else "pseudo_document_search",
            arguments={"k": self.options.top_k},
            result=[{"id": h.id, "score": h.score} for h in hits],
        )
        return passages

    def chat(
        self, env: Environment, trace: Trace, messages: list[dict], schema: dict | None, purpose: str, raw: bool = False
    ) -> Any:
        return guarded_chat(env, trace, messages, schema, purpose, self.options, raw)


def guarded_chat(
    env: Environment,
    trace: Trace,
    messages: list[dict],
    schema: dict | None,
    purpose: str,
    options: Any,
    raw: bool = False,
) -> Any:
    """One LLM call (``options``' max_tokens and temperature): a failure is recorded as the
    trace's failure and gives None; a reply that is no JSON object is a rejection and gives {}."""
    from provbench.llm import LLMError

    try:
        resp = env.llm.chat(
            messages,
            schema=schema,
            max_tokens=options.max_tokens,
            temperature=options.temperature,
            seed=env.seed,
            purpose=purpose,
            trace=trace,
        )
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


def answer_letter(trace: Trace, reply: Any) -> Trace:
    """The option letter of an answer reply into the trace (no letter: abstained)."""
    letter = reply.get("answer") if isinstance(reply, dict) else None
    letter = letter.strip().upper() if isinstance(letter, str) else ""
    trace.add_step("generation", tool="answer", result={"answer": letter})
    trace.answer = letter or None
    trace.outcome = "answered" if letter else "abstained"
    return trace


def choose_paths(found: list[Any], grounded: set[str], max_paths: int | None, name_of: Any) -> list[Any]:
    """The paths kept (provbench's rule: with many grounded entities the pairs' shortest paths are
    mostly one-edge fragments of longer ones, and overlapping paths repeat each other's triplets,
    so one removal changes nothing). A path whose nodes all lie on another found path is dropped
    (of two with the same nodes, the first ranked stays); then, one at a time, the path passing the
    most grounded entities not yet on a kept path is kept (ties: shorter, then by the names along
    it), until ``max_paths`` are kept or no path adds a grounded entity. The order of the options
    or pairs never decides."""
    names = {eid: str(name_of(eid)).casefold() for path in found for eid in path.entities}
    left = not_lying_on_another(sorted(found, key=lambda p: rank_key(p, names)))
    kept: list[Any] = []
    covered: set[str] = set()
    while left and (max_paths is None or len(kept) < max_paths):
        best = max(left, key=lambda p: len(grounded & set(p.entities) - covered))  # the first ranked of equals
        if kept and not grounded & set(best.entities) - covered:
            break
        kept.append(best)
        covered |= grounded & set(best.entities)
        left.remove(best)
    return kept


def not_lying_on_another(ranked: list[Any]) -> list[Any]:
    """The paths whose nodes are not all on another path (of equal node sets, the first stays)."""
    nodes = [set(p.entities) for p in ranked]
    return [
        p
        for i, p in enumerate(ranked)
        if not any(nodes[i] < nodes[j] or (nodes[i] == nodes[j] and j < i) for j in range(len(ranked)) if j != i)
    ]


def rank_key(path: Any, names: dict[str, str]) -> tuple:
    """Shorter first; among equals, by the names along the path read from its smaller end, so the
    order in which the options (or pairs) came never decides a tie."""
    along = tuple(names[e] for e in path.entities)
    return len(path.relations), min(along, along[::-1]), sorted(r.id for r in path.relations)


def _sentence(line: str) -> str:
    """One plain sentence per triplet of a line ("a ->[R]-> b") or chain ("a->[R]->b->[S]->c")."""
    parts = re.split(r"\s*->\[(.*?)\]->\s*", line)
    if len(parts) < 3:
        return line
    return " ".join(
        P.TEMPLATE_SENTENCE.format(head=parts[i], relation=parts[i + 1].lower(), tail=parts[i + 2])
        for i in range(0, len(parts) - 2, 2)
    )
