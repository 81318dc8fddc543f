"""Paper 000, *Why Neighborhoods Matter: Traversal Context and Provenance in Agentic GraphRAG*
(Terrenzi, von Zastrow, Ayvaz, 2026), as one plugin: its six systems (section 2.2), its six graph
ablations and the report sections of its Tables 1 and 2.

Systems: :mod:`.systems` (llm-only, rag, one-shot graphrag) and :mod:`.agentic` (the agent and
its visited-only and evidence-first variants); prompts in :mod:`.prompts`; ablations in
:mod:`.interventions`, on the labels, plans and text rule of :mod:`.hiding`; Tables 1 and 2 in
:mod:`.report`; the paper's claims as checks on known-truth controls in :mod:`.claims`.
"""

from __future__ import annotations

from provbench import hookimpl

from .interventions import ABLATIONS

PROVBENCH_NAMESPACE = "p000"  # registered as p000/llm-only, p000/cited-removal, ...


@hookimpl
def provbench_register_systems():
    from .agentic import AgenticEvidenceFirst, AgenticGraphRAG, AgenticVisitedOnly
    from .systems import RAG, GraphRAG, LLMOnly

    return {s.name: s for s in (LLMOnly, RAG, GraphRAG, AgenticGraphRAG, AgenticVisitedOnly, AgenticEvidenceFirst)}


@hookimpl
def provbench_register_interventions():
    return {cls.name: cls for cls in ABLATIONS}


@hookimpl
def provbench_register_claims():
    from .known_truth import CLAIMS

    return {claim.name: claim for claim in CLAIMS}


@hookimpl
def provbench_report_sections(run):
    from .report import sections

    return sections(run)
