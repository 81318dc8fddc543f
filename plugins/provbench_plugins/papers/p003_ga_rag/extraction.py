"""GA-RAG's per-document triple extraction at question time (section III.2), as local-graph
nodes: one call per retrieved document, triples under ``triple_confidence_threshold`` set aside
(``trace.artifacts["filtered"]``), and every document whose reply held no triple list (not JSON,
cut at the token budget) recorded in ``trace.artifacts["extraction_failures"]`` with its problem:
a claim whose extraction failed is never mistaken for one whose pages hold no fact.

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
        found = extract_triples(env.llm, doc.text, limit=options.triples_per_document,
                                max_tokens=options.triples_max_tokens, seed=options.extraction_seed, purpose="triples",
                                trace=trace)
        kept = [t for t in found.triples if kept_by(threshold, t)]
        filtered += [{"document": doc.id, **t.model_dump()} for t in found.triples if not kept_by(threshold, t)]
        if found.problem:
            failures.append({"document": doc.id, "problem": found.problem})
        trace.add_step("tool_call", tool="extract_triples", arguments={"document": doc.id},
                       result={"triples": len(found.triples), "dropped": found.dropped,
                               "below_threshold": len(found.triples) - len(kept)},
                       error=found.problem)
        nodes += [FactNode(id=f"f{len(nodes) + k + 1}", subject=t.subject, relation=t.relation, object=t.object,
                           confidence=t.confidence, document=doc.id, rank=doc.rank, similarity=doc.similarity,
                           sources=(source_sentence(t, doc),))
                  for k, t in enumerate(kept)]
    trace.artifacts["filtered"] = filtered
    trace.artifacts["extraction_failures"] = failures
    return nodes


def source_sentence(triple: Triple, doc: Document) -> str:
    """The document's sentence sharing most content words with the triple; ties go to a
    retrieved sentence, then to the earlier one."""
    words = set(content_tokens(f"{triple.subject} {triple.relation} {triple.object}"))
    hits = {h.id for h in doc.hits}
    best = max(enumerate(doc.units), key=lambda iu: (len(words & set(content_tokens(doc.sentence_text(iu[1])))),
                                                     iu[1].id in hits, -iu[0]))
    return best[1].id
