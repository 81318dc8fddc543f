"""Paper 001, *KGRAG-Ex: Explainable Retrieval-Augmented Generation with Knowledge Graph-based
Perturbations* (Balanos et al.), as one plugin: the KGRAG-Ex system (:mod:`.system`), node / edge /
sub-path removal as enumerated interventions (:mod:`.interventions`, definitions in
:mod:`.paths`), the RAG-Ex 5-word-window baseline on p001's own RAG-Ex target ``vector-rag``
(the authors' one chunk of at most 600 characters: :mod:`.ragex`), the paper's claims as checks
on known-truth controls (:mod:`.claims`), and
the report sections of Tables 2, 4 and 5 and the position / label / centrality analyses
(:mod:`.report`, :mod:`.analysis`, :mod:`.explain`).
"""

from __future__ import annotations

from provbench import hookimpl

PROVBENCH_NAMESPACE = "p001"


@hookimpl
def provbench_register_systems():
    from .ragex import VectorRAG
    from .system import KGRAGEx

    return {KGRAGEx.name: KGRAGEx, VectorRAG.name: VectorRAG}


@hookimpl
def provbench_register_interventions():
    from .interventions import KG_INTERVENTIONS
    from .ragex import RagExWindow

    return {cls.name: cls for cls in (*KG_INTERVENTIONS, RagExWindow)}


@hookimpl
def provbench_register_claims():
    from .known_truth import CLAIMS

    return {claim.name: claim for claim in CLAIMS}


@hookimpl
def provbench_report_sections(run):
    from .report import sections

    return sections(run)
