"""Paper 003's two systems: ``ga-rag`` (the graph-augmented pipeline) and ``vanilla-rag`` (its
baseline with the same retrieval and the same prompt shape; not called ``rag``, which would make
paper 000's short name ambiguous).

Both retrieve the top ``k_retrieve`` documents (FEVER pages) of the ``fever-wiki`` KB, ranked
by their best sentence's cosine similarity to the claim (eq. 1; :mod:`.retrieval`), and ask for
a label, an explanation and the evidence numbers used (one schema-constrained call). RAG shows
the documents' sentences as numbered passages. GA-RAG extracts triples with confidence from
each document's text (one call per document, section III.2; :mod:`.extraction`), drops those
under ``triple_confidence_threshold`` (the authors' 0.6), builds the per-query local graph,
ranks the facts by eqs. (2)-(4) (:mod:`.graph`: d_i and r_i are the document and its rank) or,
with ``ranking: authors``, by the authors' released formula, and shows the top ``top_facts``
facts as ``[n] S | r | O (conf)``. With fewer than ``low_coverage_facts`` facts shown its
explanation starts with the meta-note "[Graph coverage low (N facts)]" (section IX.C). With
``fallback_to_baseline`` it applies the authors' gate (:mod:`.gate`): under 5 facts, a
consistency score under ``consistency_threshold`` (0.7) or a grounding under
``grounding_threshold`` (0.2), the answer is the baseline's (the passages prompt on the same
documents), behind the gate's note.

What the trace holds (so paper 000's graph ablations and the provenance metrics apply):
``retrieved`` = the sentence hits of the chosen documents, ``read_text_units`` = every sentence
passed on, ``visited_entities`` = the pages; GA-RAG's ``facts`` = every node of the local graph
(source = the document's sentence restating the triple, :func:`.extraction.source_sentence`; none
when no sentence does),
``artifacts["graph"]`` = nodes with s(0), s(T), centrality, confidence and final score, the
edges and the parameters, ``artifacts["shown"]`` = the fact ids shown, ``artifacts["filtered"]``
= triples dropped by the filter, ``artifacts["extraction_failures"]`` = documents whose reply
held no triple list, ``artifacts["gate"]`` and ``artifacts["answer_source"]`` ("graph" or
"baseline"); ``citations.facts`` = cited facts (GA-RAG), ``citations.text_units`` / ``entities``
= the sentences and pages behind what was cited. Both systems: ``answer`` = the label; "I don't
know" is an abstention (answer None); ``artifacts["explanation"]`` = the explanation;
``artifacts["prompt_digests"]`` = a digest of each answer prompt sent (the sweep compares them).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.agents import fixed_parts
from provbench.model import Fact, Question, Trace
from provbench.plugin_api import Environment, System, parse_options

from provbench_plugins.datasets.fever.pages import evidence_of
from provbench_plugins.kb_builders.fever.builder import entity_id
from provbench_plugins.kb_builders.fever.triples import EXTRACT_SYSTEM, EXTRACT_USER

from . import prompts as P
from .extraction import extract_facts
from .gate import Gate, consistency_score, grounding_score, pre_answer_reason
from .graph import FactNode, Scored, authors_ranking, isolated_facts, score_facts
from .retrieval import Document, retrieve_documents
from .tokens import strip_meta


class RAGOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    k_retrieve: int = Field(4, ge=1, le=50, description="documents (pages) retrieved (paper: 4)")
    sentence_pool: int = Field(50, ge=1, le=1000, description="sentences ranked to find the top documents")
    max_document_chars: int = Field(
        3000, ge=100, le=100_000, description="text kept per document: retrieved sentences first, then page order"
    )
    allow_idk: bool = Field(True, description='let the model answer "I don\'t know" (an abstention)')
    max_tokens: int = Field(400, ge=32, le=4096, description="reply budget of the answer call")
    temperature: float = Field(0.0, ge=0.0, le=2.0)


class GARAGOptions(RAGOptions):
    ranking: Literal["equations", "authors"] = Field(
        "equations", description="'equations': eqs. (2)-(4); 'authors': the authors' released formula"
    )
    alpha: float = Field(0.8, ge=0, description="eq. (2) weight of sim(q, d_i) (paper: 0.8)")
    beta: float = Field(0.2, ge=0, description="eq. (2) weight of 1/r_i (paper: 0.2)")
    gamma: float = Field(0.5, ge=0, le=1, description="eq. (3) propagation strength; 0 = no propagation")
    iterations: int = Field(2, ge=0, le=50, description="eq. (3) T")
    isolated: Literal["decay", "keep"] = Field(
        "decay", description="eq. (3) for a fact with no edge: 'decay' by (1 - gamma)^T as printed, or 'keep' s(0)"
    )
    lambda1: float = Field(0.6, ge=0, description="eq. (4) weight of s(T)")
    lambda2: float = Field(0.2, ge=0, description="eq. (4) weight of centrality")
    lambda3: float = Field(0.2, ge=0, description="eq. (4) weight of the extractor's confidence")
    centrality: Literal["degree", "pagerank"] = "degree"
    weighted_centrality: bool = Field(True, description="degree and PageRank over the edge weights")
    w_cooccur: float = Field(1.0, ge=0, description="edge weight: facts of the same document")
    w_entity: float = Field(1.0, ge=0, description="edge weight: facts sharing an entity")
    triples_per_document: int = Field(8, ge=1, le=50, description="triples asked of each document (authors: 4)")
    triples_max_tokens: int = Field(400, ge=32, le=4096, description="reply budget of one document's extraction")
    extraction_seed: int = Field(
        0,
        description="seed of every extraction call: a page's triples are shared by "
        "all settings, claims and ablations (through the LLM cache)",
    )
    min_source_overlap: int = Field(
        1,
        ge=1,
        le=20,
        description="content words of a triple's relation and object (not its subject) that its "
        "source sentence must hold; a triple no sentence restates is unsourced",
    )
    triple_confidence_threshold: float | None = Field(
        0.6, ge=0, le=1, description="drop triples whose confidence is below it (authors: 0.6); null keeps all"
    )
    top_facts: int = Field(10, ge=1, le=100, description="facts linearised into the prompt (authors: 4)")
    low_coverage_facts: int = Field(
        5, ge=0, le=100, description="fewer facts shown: the coverage note (and the gate's fallback); 0 = never"
    )
    fallback_to_baseline: bool = Field(
        False, description="the authors' gate: the baseline's answer when coverage, consistency or grounding is low"
    )
    consistency_threshold: float = Field(
        0.7, ge=0, le=1, description="the gate's bar on the authors' consistency score (authors: 0.7)"
    )
    grounding_threshold: float = Field(
        0.2, ge=0, le=1, description="the gate's bar on the answer's grounding in the facts (authors: 0.2)"
    )


class P003System(System):
    Options: ClassVar[type[RAGOptions]] = RAGOptions

    def instructions(self) -> list[str]:
        """The label call's fixed text, and GA-RAG's triple extraction's."""
        headings = [f"{heading}:\n" for heading in (P.PASSAGES, P.FACTS)]
        return [P.SYSTEM, *fixed_parts(P.USER), P.IDK_LINE, *headings, EXTRACT_SYSTEM, *fixed_parts(EXTRACT_USER)]

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(self.Options, options, f"system {self.name!r}")

    def retrieve(self, env: Environment, question: Question, trace: Trace) -> list[Document]:
        o = self.options
        return retrieve_documents(env.view, question, o.k_retrieve, o.sentence_pool, o.max_document_chars, trace)

    def chat(self, env: Environment, trace: Trace, messages: list[dict], schema: dict, purpose: str) -> Any | None:
        from provbench.llm import LLMError

        try:
            return env.llm.chat(
                messages,
                schema=schema,
                max_tokens=self.options.max_tokens,
                temperature=self.options.temperature,
                seed=env.seed,
                purpose=purpose,
                trace=trace,
            )
        except LLMError as err:
            fail(trace, f"LLM call failed ({purpose}): {err}")
            return None

    def generate(
        self, env: Environment, trace: Trace, question: Question, heading: str, lines: list[str]
    ) -> dict | None:
        """The label call; returns the reply with ``cited`` as valid 1-based line numbers."""
        user = P.USER.format(
            heading=heading,
            lines="\n".join(lines) or P.EMPTY,
            claim=question.question,
            idk=P.IDK_LINE if self.options.allow_idk else "",
        )
        messages = [{"role": "system", "content": P.SYSTEM}, {"role": "user", "content": user}]
        trace.artifacts.setdefault("prompt_digests", []).append(prompt_digest(messages))
        resp = self.chat(env, trace, messages, P.answer_schema(len(lines), self.options.allow_idk), "answer")
        if resp is None:
            return None
        reply = resp.data if isinstance(resp.data, dict) else None
        if reply is None or reply.get("label") not in (*P.LABELS, P.IDK):
            fail(trace, f"the model's reply is not a valid label object: {(resp.text or '')[:120]!r}")
            return None
        cited = [n for n in reply.get("cited") or [] if isinstance(n, int) and 1 <= n <= len(lines)]
        reply["cited"] = list(dict.fromkeys(cited))
        label = reply["label"]
        trace.artifacts["explanation"] = str(reply.get("explanation") or "")
        trace.answer, trace.outcome = (None, "abstained") if label == P.IDK else (label, "answered")
        trace.add_step("generation", tool="generate", result=reply)
        return reply

    def answer_from_passages(
        self, env: Environment, trace: Trace, question: Question, documents: list[Document]
    ) -> dict | None:
        """The baseline's answer: the documents' sentences as numbered passages, one label call."""
        units = [unit for doc in documents for unit in doc.units]
        lines = [P.PASSAGE_LINE.format(n=n, text=unit.text) for n, unit in enumerate(units, 1)]
        reply = self.generate(env, trace, question, P.PASSAGES, lines)
        if reply is not None:
            cite_units(trace, env.view, [units[n - 1].id for n in reply["cited"]])
        return reply


def prompt_digest(messages: list[dict]) -> str:
    """A short digest of a prompt: equal digests, identical prompts."""
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]


def page_entity(view: Any, unit: Any) -> list[str]:
    """The page entity of a sentence, when the view shows it (the KB names it ``p:<page id>``)."""
    entity = view.entity(entity_id(unit.document_id))
    return [entity.id] if entity is not None else []


def fail(trace: Trace, message: str) -> None:
    trace.add_step("error", error=message)
    trace.outcome, trace.error = "failed", message


def cite_units(trace: Trace, view: Any, unit_ids: list[str]) -> None:
    trace.citations.text_units = list(dict.fromkeys(unit_ids))
    pages = []
    for unit in view.text_units(trace.citations.text_units):
        pages += page_entity(view, unit)
    trace.citations.entities = list(dict.fromkeys(pages))


def with_note(trace: Trace, note: str) -> None:
    """A meta-note before the explanation (section IX.C), as the pipeline writes it."""
    trace.artifacts["meta_note"] = note
    trace.artifacts["explanation"] = f"{note} {trace.artifacts.get('explanation', '')}".strip()


class VanillaRAG(P003System):
    """Paper 003's baseline: the top-k documents' sentences as numbered passages, one label call."""

    name = "vanilla-rag"  # not "rag": paper 000's suites name its rag by the short name

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        self.answer_from_passages(env, trace, question, self.retrieve(env, question, trace))
        return trace


class GARAG(P003System):
    """Paper 003's GA-RAG: per-document triples, local graph, eqs. (2)-(4), linearised facts."""

    name = "ga-rag"
    Options = GARAGOptions

    @property
    def expected_llm_calls(self) -> float:
        return self.options.k_retrieve + 1.0  # one extraction per page, then the label call

    def run(self, question: Question, env: Environment) -> Trace:
        from provbench.llm import LLMError

        trace = Trace(question_id=question.id, system=self.name)
        documents = self.retrieve(env, question, trace)
        try:
            nodes = extract_facts(env, trace, documents, self.options)
        except LLMError as err:
            fail(trace, f"LLM call failed (triples): {err}")
            return trace
        scored = self.score(nodes, question)
        shown = scored.ranked[: self.options.top_facts]
        trace.facts = [
            Fact(
                id=n.id,
                subject=n.subject,
                relation=n.relation,
                object=n.object,
                confidence=n.confidence,
                source_ids=list(n.sources),
            )
            for n in nodes
        ]
        trace.artifacts["graph"] = graph_artifact(scored, self.options)
        trace.artifacts["shown"] = [n.id for n in shown]
        self.answer(env, trace, question, documents, nodes, shown)
        return trace

    def score(self, nodes: list[FactNode], question: Question) -> Scored:
        o = self.options
        if o.ranking == "authors":
            return authors_ranking(nodes, question.question, o.w_cooccur, o.w_entity)
        return score_facts(
            nodes,
            alpha=o.alpha,
            beta=o.beta,
            gamma=o.gamma,
            iterations=o.iterations,
            lambdas=(o.lambda1, o.lambda2, o.lambda3),
            centrality_kind=o.centrality,
            weighted=o.weighted_centrality,
            w_cooccur=o.w_cooccur,
            w_entity=o.w_entity,
            isolated=o.isolated,
        )

    def answer(
        self,
        env: Environment,
        trace: Trace,
        question: Question,
        documents: list[Document],
        nodes: list[FactNode],
        shown: list[FactNode],
    ) -> None:
        """The graph answer, or (fallback on and the gate failing) the baseline's, behind the note."""
        o = self.options
        gate = Gate(
            facts_shown=len(shown), consistency=round(consistency_score(nodes), 6), fallback=o.fallback_to_baseline
        )
        trace.artifacts["gate"] = gate.as_dict()
        gate.reason = pre_answer_reason(gate, o.low_coverage_facts, o.consistency_threshold)
        if gate.reason and o.fallback_to_baseline:
            self.fall_back(env, trace, question, documents, gate)
            return
        lines = [
            P.FACT_LINE.format(n=k, subject=n.subject, relation=n.relation, object=n.object, confidence=n.confidence)
            for k, n in enumerate(shown, 1)
        ]
        reply = self.generate(env, trace, question, P.FACTS, lines)
        if reply is None:
            return
        cited = [shown[k - 1] for k in reply["cited"]]
        trace.citations.facts = [n.id for n in cited]
        cite_units(trace, env.view, [s for n in cited for s in n.sources])
        gate.grounding = round(grounding_score(shown, strip_meta(trace.artifacts["explanation"])), 6)
        if o.fallback_to_baseline and gate.grounding < o.grounding_threshold:
            gate.reason = f"[Low grounding {gate.grounding:.2f}]"
            self.fall_back(env, trace, question, documents, gate)
            return
        trace.artifacts.update(gate=gate.as_dict(), answer_source="graph")
        if len(shown) < o.low_coverage_facts:
            with_note(trace, f"[Graph coverage low ({len(shown)} facts)]")

    def fall_back(
        self, env: Environment, trace: Trace, question: Question, documents: list[Document], gate: Gate
    ) -> None:
        trace.citations.facts = []
        trace.artifacts.update(gate=gate.as_dict(), answer_source="baseline")
        if self.answer_from_passages(env, trace, question, documents) is not None:
            with_note(trace, gate.reason or "")


def graph_artifact(scored: Scored, options: GARAGOptions) -> dict:
    nodes = [
        {
            "id": n.id,
            "document": n.document,
            "sources": list(n.sources),
            "evidence": [evidence_of(s) for s in n.sources],
            "rank": n.rank,
            "sim": n.similarity,
            "s0": scored.s0.get(n.id),
            "sT": scored.sT.get(n.id),
            "centrality": scored.centrality.get(n.id),
            "conf": n.confidence,
            "final": scored.final[n.id],
        }
        for n in scored.ranked
    ]
    edges = [[a, b, w] for a, b, w in scored.graph.edges(data="weight")]
    params = options.model_dump(
        include={
            "ranking",
            "alpha",
            "beta",
            "gamma",
            "iterations",
            "isolated",
            "lambda1",
            "lambda2",
            "lambda3",
            "centrality",
            "weighted_centrality",
            "w_cooccur",
            "w_entity",
            "top_facts",
            "k_retrieve",
            "triple_confidence_threshold",
            "low_coverage_facts",
            "fallback_to_baseline",
            "consistency_threshold",
            "grounding_threshold",
        }
    )
    propagation = options.ranking == "equations" and options.gamma > 0 and options.iterations > 0
    return {
        "nodes": nodes,
        "edges": edges,
        "params": params,
        "propagation": propagation,
        "isolated": isolated_facts(scored.graph),
    }
