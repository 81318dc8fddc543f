"""Systems for the leak-guard tests: one that reads around its view, one whose prompts ignore what it
reads, one whose prompts come from around its view in visible names only (no effect), ones that keep
their own store (filtered by ``env.hidden``, or not; with an empty trace and no model; of summaries
with ids of their own).

Registered under the ``leaky`` namespace by :func:`leaky_plugin`; they run beside the built-in systems.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from pydantic import BaseModel

from provbench import hookimpl
from provbench.model import Question, RetrievedItem, Trace
from provbench.plugin_api import Environment, System

PROVBENCH_NAMESPACE = "leaky"


class ReadsAroundTheView(System):
    """Word-overlap RAG over the Kùzu database behind its view, read directly with Cypher (a private
    attribute, as a pipeline over ``KnowledgeBase.property_graph_store`` reads the same database):
    it sees what every intervention hides. ``record_reads`` puts what it read in the trace."""

    name = "reads-around-the-view"

    class Options(BaseModel):
        record_reads: bool = False

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        kuzu = env.view._store  # the database behind every view: reading it directly is the leak under test
        wanted = set(question.question.lower().split())
        chunks = kuzu.rows("MATCH (c:Chunk) RETURN c.id, c.text ORDER BY c.id")
        top = sorted(chunks, key=lambda c: -len(wanted & set(c[1].lower().split())))[:3]
        if self.options.record_reads:
            trace.read_text_unit(*(cid for cid, _ in top))
        mentioned = kuzu.rows(
            "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) WHERE c.id IN $ids RETURN e.id ORDER BY e.id",
            {"ids": [cid for cid, _ in top]},
        )
        trace.citations.entities = [row[0] for row in mentioned][:2]
        context = "\n".join(f"- {text}" for _, text in top)
        reply = env.llm.chat(
            [{"role": "user", "content": f"{context}\n\nQuestion: {question.question}"}], purpose="answer"
        )  # no trace=: the runner's capture records the call
        trace.answer = reply.text
        return trace


class IgnoresWhatItReads(System):
    """Visits the entities most similar to the question through its view, then asks the model the
    bare question: whatever an intervention hides, its request stays the same (no effect)."""

    name = "ignores-what-it-reads"

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        hits = env.view.search_entities(question.question, k=3)
        trace.visit(*(h.id for h in hits))
        trace.citations.entities = [h.id for h in hits[:1]]
        trace.answer = env.llm.chat(
            [{"role": "user", "content": question.question}], purpose="answer", trace=trace
        ).text
        return trace


class RelationCache(System):
    """Retrieves through its view (the trace records what the view returned), but writes its prompt
    from relation lines it reads from the database behind the view: an invalidated edge still reaches
    the prompt, in names the view shows elsewhere, so only the "no effect" check can tell."""

    name = "relation-cache"

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        hits = env.view.search_entities(question.question, k=1)
        trace.visit(*(h.id for h in hits))
        trace.retrieved = [
            RetrievedItem(kind="relationship", id=n.relation.id) for h in hits for n in env.view.neighbors(h.id)
        ]
        rows = env.view._store.rows(  # around the view: the leak under test
            "MATCH (a:Entity)-[r:LINKS]->(b:Entity) WHERE a.id IN $ids OR b.id IN $ids "
            "RETURN a.name, r.label, b.name ORDER BY r.id",
            {"ids": [h.id for h in hits]},
        )
        lines = "\n".join(f"{a} {label.replace('_', ' ')} {b}." for a, label, b in rows)
        trace.answer = env.llm.chat(
            [{"role": "user", "content": f"{lines}\n\nQuestion: {question.question}"}], purpose="answer", trace=trace
        ).text
        return trace


class OwnStoreRAG(System):
    """Keeps a store of its own (the question's context paragraphs, as a service indexing the same
    corpus would) and retrieves from it by word overlap; ``filter`` drops what ``env.hidden`` hides."""

    name = "own-store-rag"
    trace_ids = "own"

    class Options(BaseModel):
        filter: bool = True

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        paragraphs = own_store(question)
        if self.options.filter and env.hidden is not None:
            paragraphs = env.hidden.keep(paragraphs, text=lambda p: p[1])
        wanted = set(question.question.lower().split())
        top = sorted(paragraphs, key=lambda p: -len(wanted & set(p[1].lower().split())))[:3]
        trace.retrieved = [RetrievedItem(kind="text_unit", id=pid) for pid, _ in top]
        context = "\n".join(f"[{pid}] {text}" for pid, text in top)
        trace.answer = env.llm.chat(
            [{"role": "user", "content": f"{context}\n\nQuestion: {question.question}"}], purpose="answer", trace=trace
        ).text
        return trace


class EmptyTraceOwnStore(System):
    """Answers from a store of its own (the database behind the view, read directly) with no model
    and an empty trace: it cites the knowledge base's ids of the paragraph it picked and answers with
    the name of the first entity that paragraph mentions beyond the question's words."""

    name = "empty-trace-own-store"

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        kuzu = env.view._store  # a store of its own: the leak under test
        wanted = set(question.question.lower().split())
        chunks = kuzu.rows("MATCH (c:Chunk) RETURN c.id, c.text ORDER BY c.id")
        chunk = max(chunks, key=lambda c: len(wanted & set(c[1].lower().split())))[0]
        named = kuzu.rows(
            "MATCH (c:Chunk {id: $id})-[:MENTIONS]->(e:Entity) RETURN e.id, e.name ORDER BY e.id", {"id": chunk}
        )
        picked = [(eid, name) for eid, name in named if name.lower() not in question.question.lower()] or named
        trace.citations.text_units = [chunk]
        trace.citations.entities = [eid for eid, _ in picked[:1]]
        trace.answer = picked[0][1] if picked else ""
        return trace


class OwnSummaryStore(System):
    """A store of per-paragraph summaries with ids of its own (``trace_ids = "own"``), filtered by
    ``env.hidden`` as docs/integrations.md advises: a summary quotes its paragraph's first sentence
    (``paraphrase: false``) or rewords every sentence (``true``: each loses its first word), which
    the leak guard's matching cannot see."""

    name = "own-summary-store"
    trace_ids = "own"

    class Options(BaseModel):
        paraphrase: bool = False
        filter: bool = True

    def run(self, question: Question, env: Environment) -> Trace:
        trace = Trace(question_id=question.id, system=self.name)
        summaries = [(f"sum:{pid}", self.summary(text)) for pid, text in own_store(question)]
        if self.options.filter and env.hidden is not None:
            summaries = env.hidden.keep(summaries, text=lambda s: s[1])
        trace.retrieved = [RetrievedItem(kind="text_unit", id=sid) for sid, _ in summaries]
        context = "\n".join(text for _, text in summaries)
        trace.answer = env.llm.chat(
            [{"role": "user", "content": f"{context}\n\nQuestion: {question.question}"}], purpose="answer", trace=trace
        ).text
        return trace

    def summary(self, text: str) -> str:
        title, _, body = text.partition(". ")
        sentences = [s for s in body.split(". ") if s]
        if not self.options.paraphrase:
            return f"{title}: {sentences[0] if sentences else ''}"
        return f"{title}: " + ". ".join(" ".join(s.split()[1:]) for s in sentences)


def own_store(question: Question) -> list[tuple[str, str]]:
    """(own id, text) of the question's 2WikiMultiHopQA context paragraphs."""
    raw: Any = question.metadata.get("context") or "[]"
    context = ast.literal_eval(raw) if isinstance(raw, str) else raw
    return [(f"own:{n}", f"{p['title']}. " + " ".join(p["sentences"])) for n, p in enumerate(context)]


@hookimpl
def provbench_register_systems():
    return {
        cls.name: cls
        for cls in (
            ReadsAroundTheView,
            IgnoresWhatItReads,
            RelationCache,
            OwnStoreRAG,
            EmptyTraceOwnStore,
            OwnSummaryStore,
        )
    }


def leaky_plugin() -> Any:
    return sys.modules[__name__]
