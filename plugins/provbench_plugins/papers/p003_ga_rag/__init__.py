"""Paper 003, *Graph-Augmented Retrieval-Augmented Generation for Fact Verification* (GA-RAG on
FEVER), as one plugin: the systems ``p003/ga-rag`` and ``p003/vanilla-rag`` (:mod:`.systems`, scoring in
:mod:`.graph`, the authors' gate in :mod:`.gate`), Table I's metrics (:mod:`.metrics`), the sweep's
prompt check (:mod:`.diversity`), the report sections (:mod:`.report`) and the paper's claims as checks
on known-truth controls (:mod:`.claims`).
Definitions: docs/papers/p003.md.
"""

from __future__ import annotations

from provbench import hookimpl

PROVBENCH_NAMESPACE = "p003"  # p003/ga-rag, p003/vanilla-rag, p003/table1, p003/prompt-diversity, p003/<claim>


@hookimpl
def provbench_register_systems():
    from .systems import GARAG, VanillaRAG

    return {s.name: s for s in (GARAG, VanillaRAG)}


@hookimpl
def provbench_register_metrics():
    from .diversity import METRICS as DIVERSITY
    from .metrics import METRICS

    return {m.name: m for m in (*METRICS, *DIVERSITY)}


@hookimpl
def provbench_register_claims():
    from .known_truth import CLAIMS

    return {claim.name: claim for claim in CLAIMS}


@hookimpl
def provbench_report_sections(run):
    from .report import sections

    return sections(run)
