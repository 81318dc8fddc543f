"""GA-RAG's per-document triple extraction at question time (section III.2), as local-graph
nodes: one call per retrieved document, each fact tied to the sentence it restates (or to none:
an unsourced fact is credited with no evidence sentence or page), triples under
``triple_confidence_threshold`` set aside (``trace.artifacts["filtered"]``), and every document
whose reply held no triple list (not JSON, cut at the token budget) recorded in
``trace.artifacts["extraction_failures"]`` with its problem: a claim whose extraction failed is
never mistaken for one whose pages hold no fact.

A page's extraction is a function of the page: its calls use the fixed ``extraction_seed``, not
the unit's seed, so every setting of a sweep, every claim and every ablation that reads a page
gets the same triples from the LLM cache (the authors cache triples per document), and settings
differ only in what they do with one graph.
"""

from __future__ import annotations

from typing import Any

from provbench.model import Trace

from provbench_plugins.kb_builders.fever.triples import Triple, extract_triples

from .graph import FactNode
from .retrieval import Document
from .tokens import content_tokens


def kept_by(threshold: float | None, triple: Triple) -> bool:
    """The triple filter: a confidence at the threshold is kept (the authors' ``>=``)."""
    return threshold is None or triple.confidence >= threshold


def extract_facts(env: Any, trace: Trace, documents: list[Document], options: Any) -> list[FactNode]:
    """Facts of every document (one LLM call each); raises LLMError when a call fails for good."""
    nodes: list[FactNode] = []
    filtered: list[dict] = []
    failures: list[dict] = []
    threshold = options.triple_confidence_threshold
    for doc in documents:
        found = extract_triples(
            env.llm,
            doc.text,
            limit=options.triples_per_document,
            max_tokens=options.triples_max_tokens,
            seed=options.extraction_seed,
            purpose="triples",
            trace=trace,
        )
        kept = [t for t in found.triples if kept_by(threshold, t)]
        filtered += [{"document": doc.id, **t.model_dump()} for t in found.triples if not kept_by(threshold, t)]
        if found.problem:
            failures.append({"document": doc.id, "problem": found.problem})
        trace.add_step(
            "tool_call",
            tool="extract_triples",
            arguments={"document": doc.id},
            result={
                "triples": len(found.triples),
                "dropped": found.dropped,
                "below_threshold": len(found.triples) - len(kept),
            },
            error=found.problem,
        )
        nodes += [
            FactNode(
                id=f"f{len(nodes) + k + 1}",
                subject=t.subject,
                relation=t.relation,
                object=t.object,
                confidence=t.confidence,
                document=doc.id,
                rank=doc.rank,
                similarity=doc.similarity,
                sources=sources_of(t, doc, options.min_source_overlap),
            )
            for k, t in enumerate(kept)
        ]
    trace.artifacts["filtered"] = filtered
    trace.artifacts["extraction_failures"] = failures
    return nodes


def sources_of(triple: Triple, doc: Document, min_overlap: int) -> tuple[str, ...]:
    source = source_sentence(triple, doc, min_overlap)
    return (source,) if source else ()


def source_sentence(triple: Triple, doc: Document, min_overlap: int = 1) -> str | None:
    """The document's sentence the triple restates, or None (unsourced) when no sentence does.

    A sentence qualifies when it holds at least ``min_overlap`` content words of the triple's
    relation and object that are not words of its subject (the subject alone, the page's topic,
    is in most sentences of its page), and, when the subject has content words, one of them is in
    the sentence or the page title (sentences name their page's topic by pronoun). Among those,
    the one sharing most content words wins; ties go to a retrieved sentence, then the earlier one.
    """
    subject = set(content_tokens(triple.subject))
    stated = set(content_tokens(f"{triple.relation} {triple.object}")) - subject
    title = set(content_tokens(doc.title))
    hits = {h.id for h in doc.hits}
    best: tuple[tuple[int, bool, int], str] | None = None
    for index, unit in enumerate(doc.units):
        words = set(content_tokens(doc.sentence_text(unit)))
        if len(stated & words) < min_overlap or (subject and not subject & (words | title)):
            continue
        rank = (len((subject | stated) & words), unit.id in hits, -index)
        if best is None or rank > best[0]:
            best = (rank, unit.id)
    return best[1] if best else None
