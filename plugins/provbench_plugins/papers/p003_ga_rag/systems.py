"""Paper 003's two systems: ``ga-rag`` (the graph-augmented pipeline) and ``vanilla-rag`` (its
baseline with the same retrieval and the same prompt shape; not called ``rag``, which would make
paper 000's short name ambiguous).

Both retrieve the top ``k_retrieve`` documents (FEVER pages) of the ``fever-wiki`` KB, ranked
by their best sentence's cosine similarity to the claim (eq. 1; :mod:`.retrieval`), and ask for
a label, an explanation and the evidence numbers used (one schema-constrained call). RAG shows
the documents' sentences as numbered passages. GA-RAG extracts triples with confidence from
each document's text (one call per document, section III.2), drops those under
``consistency_threshold`` (section VIII), builds the per-query local graph, scores the facts by
eqs. (2)-(4) (:mod:`.graph`: d_i and r_i are the document and its rank) and shows the top
``top_facts`` facts as ``[n] S | r | O (conf)``; with fewer than ``low_coverage_facts`` facts
its explanation starts with the meta-note "[Graph coverage low (N facts)]" (section IX.C).

What the trace holds (so paper 000's graph ablations and the provenance metrics apply):
``retrieved`` = the sentence hits of the chosen documents, ``read_text_units`` = every sentence
passed on, ``visited_entities`` = the pages; GA-RAG's ``facts`` = every node of the local graph
(source = the document's sentence sharing most content words with the triple),
``artifacts["graph"]`` = nodes with s(0), s(T), centrality, confidence and final score, the
edges and the parameters, ``artifacts["shown"]`` = the fact ids shown, ``artifacts["filtered"]``
= triples dropped by the threshold; ``citations.facts`` = cited facts (GA-RAG),
``citations.text_units`` / ``entities`` = the sentences and pages behind what was cited.
``answer`` = the label; "I don't know" is an abstention (answer None);
``artifacts["explanation"]`` = the explanation.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import Fact, Question, Trace
from provbench.plugin_api import Environment, System, parse_options

from provbench_plugins.datasets.fever.pages import evidence_of
from provbench_plugins.kb_builders.fever.builder import entity_id
from provbench_plugins.kb_builders.fever.triples import Triple, extract_triples

from . import prompts as P
from .graph import FactNode, score_facts
from .retrieval import Document, retrieve_documents
from .tokens import content_tokens


class RAGOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    k_retrieve: int = Field(4, ge=1, le=50, description="documents (pages) retrieved (paper: 4)")
    sentence_pool: int = Field(50, ge=1, le=1000, description="sentences ranked to find the top documents")
    max_document_chars: int = Field(3000, ge=100, le=100_000,
                                    description="text kept per document: retrieved sentences first, then page order")
    allow_idk: bool = Field(True, description="let the model answer \"I don't know\" (an abstention)")
    max_tokens: int = Field(400, ge=32, le=4096)
    temperature: float = Field(0.0, ge=0.0, le=2.0)


class GARAGOptions(RAGOptions):
    alpha: float = Field(0.8, ge=0, description="eq. (2) weight of sim(q, d_i) (paper: 0.8)")
    beta: float = Field(0.2, ge=0, description="eq. (2) weight of 1/r_i (paper: 0.2)")
    gamma: float = Field(0.5, ge=0, le=1, description="eq. (3) propagation strength; 0 = the authors' code")
    iterations: int = Field(2, ge=0, le=50, description="eq. (3) T")
    lambda1: float = Field(0.6, ge=0, description="eq. (4) weight of s(T)")
    lambda2: float = Field(0.2, ge=0, description="eq. (4) weight of centrality")
    lambda3: float = Field(0.2, ge=0, description="eq. (4) weight of the extractor's confidence")
    centrality: Literal["degree", "pagerank"] = "degree"
    w_cooccur: float = Field(1.0, ge=0, description="edge weight: facts of the same document")
    w_entity: float = Field(1.0, ge=0, description="edge weight: facts sharing an entity")
    triples_per_document: int = Field(8, ge=1, le=50)
    consistency_threshold: float | None = Field(
        0.7, ge=0, le=1, description="drop triples whose confidence is below it (paper: 0.7); null keeps all")
    top_facts: int = Field(10, ge=1, le=100, description="facts linearised into the prompt")
    low_coverage_facts: int = Field(5, ge=0, le=100, description="meta-note when the graph has fewer facts; 0 = never")


class P003System(System):
    Options: ClassVar[type[RAGOptions]] = RAGOptions

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(self.Options, options, f"system {self.name!r}")

    def retrieve(self, env: Environment, question: Question, trace: Trace) -> list[Document]:
        o = self.options
        return retrieve_documents(env.view, question, o.k_retrieve, o.sentence_pool, o.max_document_chars, trace)

    def chat(self, env: Environment, trace: Trace, messages: list[dict], schema: dict, purpose: str) -> Any | None:
        from provbench.llm import LLMError

        try:
            return env.llm.chat(messages, schema=schema, max_tokens=self.options.max_tokens,
                                temperature=self.options.temperature, seed=env.seed, purpose=purpose, trace=trace)
        except LLMError as err:
            fail(trace, f"LLM call failed ({purpose}): {err}")
            return None

    def generate(self, env: Environment, trace: Trace, question: Question, heading: str,
                 lines: list[str]) -> dict | None:
        """The label call; returns the reply with ``cited`` as valid 1-based line numbers."""
        user = P.USER.format(heading=heading, lines="\n".join(lines) or P.EMPTY, claim=question.question,
                             idk=P.IDK_LINE if self.options.allow_idk else "")
        resp = self.chat(env, trace, [{"role": "system", "content": P.SYSTEM}, {"role": "user", "content": user}],
                         P.answer_schema(len(lines), self.options.allow_idk), "answer")
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


class VanillaRAG(P003System):
    """Paper 003's baseline: the top-k documents' sentences as numbered passages, one label call."""

    name = "vanilla-rag"  # not "rag": paper 000's suites name its rag by the short name

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        units = [unit for doc in self.retrieve(env, question, trace) for unit in doc.units]
        lines = [P.PASSAGE_LINE.format(n=n, text=unit.text) for n, unit in enumerate(units, 1)]
        reply = self.generate(env, trace, question, "Retrieved passages", lines)
        if reply is not None:
            cite_units(trace, env.view, [units[n - 1].id for n in reply["cited"]])
        return trace


class GARAG(P003System):
    """Paper 003's GA-RAG: per-document triples, local graph, eqs. (2)-(4), linearised facts."""

    name = "ga-rag"
    Options = GARAGOptions

    @property
    def expected_llm_calls(self) -> float:
        return self.options.k_retrieve + 1.0  # one extraction per page, then the label call

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        nodes = self.extract(env, trace, self.retrieve(env, question, trace))
        if trace.outcome == "failed":
            return trace
        o = self.options
        scored = score_facts(nodes, alpha=o.alpha, beta=o.beta, gamma=o.gamma, iterations=o.iterations,
                             lambdas=(o.lambda1, o.lambda2, o.lambda3), centrality_kind=o.centrality,
                             w_cooccur=o.w_cooccur, w_entity=o.w_entity)
        shown = scored.ranked[: o.top_facts]
        trace.facts = [Fact(id=n.id, subject=n.subject, relation=n.relation, object=n.object,
                            confidence=n.confidence, source_ids=list(n.sources)) for n in nodes]
        trace.artifacts["graph"] = graph_artifact(scored, o)
        trace.artifacts["shown"] = [n.id for n in shown]
        lines = [P.FACT_LINE.format(n=k, subject=n.subject, relation=n.relation, object=n.object,
                                    confidence=n.confidence) for k, n in enumerate(shown, 1)]
        reply = self.generate(env, trace, question, "Graph facts", lines)
        if reply is not None:
            cited = [shown[k - 1] for k in reply["cited"]]
            trace.citations.facts = [n.id for n in cited]
            cite_units(trace, env.view, [s for n in cited for s in n.sources])
            self.meta_note(trace, len(nodes))
        return trace

    def meta_note(self, trace: Trace, facts: int) -> None:
        """Section IX.C's note before the explanation when the local graph is small."""
        if facts < self.options.low_coverage_facts:
            note = f"[Graph coverage low ({facts} facts)]"
            trace.artifacts["meta_note"] = note
            trace.artifacts["explanation"] = f"{note} {trace.artifacts.get('explanation', '')}".strip()

    def extract(self, env: Environment, trace: Trace, documents: list[Document]) -> list[FactNode]:
        """Triples of each document (one call each), those under the threshold set aside."""
        from provbench.llm import LLMError

        nodes: list[FactNode] = []
        filtered: list[dict] = []
        threshold = self.options.consistency_threshold
        for doc in documents:
            try:
                triples, dropped = extract_triples(env.llm, doc.text, limit=self.options.triples_per_document,
                                                   seed=env.seed, purpose="triples", trace=trace)
            except LLMError as err:
                fail(trace, f"LLM call failed (triples of {doc.id}): {err}")
                return []
            kept = [t for t in triples if threshold is None or t.confidence >= threshold]
            filtered += [{"document": doc.id, **t.model_dump()} for t in triples if t not in kept]
            trace.add_step("tool_call", tool="extract_triples", arguments={"document": doc.id},
                           result={"triples": len(triples), "dropped": dropped, "below_threshold": len(triples) - len(kept)})
            nodes += [FactNode(id=f"f{len(nodes) + k + 1}", subject=t.subject, relation=t.relation, object=t.object,
                               confidence=t.confidence, document=doc.id, rank=doc.rank, similarity=doc.similarity,
                               sources=(source_sentence(t, doc),))
                      for k, t in enumerate(kept)]
        trace.artifacts["filtered"] = filtered
        return nodes


def source_sentence(triple: Triple, doc: Document) -> str:
    """The document's sentence sharing most content words with the triple; ties go to a
    retrieved sentence, then to the earlier one."""
    words = set(content_tokens(f"{triple.subject} {triple.relation} {triple.object}"))
    hits = {h.id for h in doc.hits}
    best = max(enumerate(doc.units), key=lambda iu: (len(words & set(content_tokens(doc.sentence_text(iu[1])))),
                                                     iu[1].id in hits, -iu[0]))
    return best[1].id


def graph_artifact(scored: Any, options: GARAGOptions) -> dict:
    nodes = [{"id": n.id, "document": n.document, "sources": list(n.sources),
              "evidence": [evidence_of(s) for s in n.sources], "rank": n.rank,
              "sim": n.similarity, "s0": scored.s0[n.id], "sT": scored.sT[n.id],
              "centrality": scored.centrality.get(n.id, 0.0), "conf": n.confidence, "final": scored.final[n.id]}
             for n in scored.ranked]
    edges = [[a, b, w] for a, b, w in scored.graph.edges(data="weight")]
    params = options.model_dump(include={"alpha", "beta", "gamma", "iterations", "lambda1", "lambda2", "lambda3",
                                         "centrality", "w_cooccur", "w_entity", "top_facts", "k_retrieve",
                                         "consistency_threshold"})
    return {"nodes": nodes, "edges": edges, "params": params, "propagation": options.gamma > 0 and options.iterations > 0}
