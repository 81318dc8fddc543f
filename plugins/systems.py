"""Built-in plugin: the six systems of paper 000 (section 2.2), by registry name.

The systems live in :mod:`provbench_plugins.baseline_systems` (llm-only, rag, graphrag) and
:mod:`provbench_plugins.agentic` (the agent loop and its variants); their prompts in
:mod:`provbench_plugins.prompts_000`. Each factory takes the options a suite gives, e.g.
``top_k`` (rag), ``entity_k`` (graphrag), ``max_steps`` / ``max_retries`` (agentic).
"""

from __future__ import annotations

from provbench import hookimpl

from .agentic import AgenticEvidenceFirst, AgenticGraphRAG, AgenticVisitedOnly
from .baseline_systems import RAG, GraphRAG, LLMOnly

SYSTEMS = (LLMOnly, RAG, GraphRAG, AgenticGraphRAG, AgenticVisitedOnly, AgenticEvidenceFirst)


@hookimpl
def provbench_register_systems():
    return {system.name: system for system in SYSTEMS}
