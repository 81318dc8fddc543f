"""Paper 003, *Graph-Augmented Retrieval-Augmented Generation for Fact Verification* (GA-RAG on
FEVER), as one plugin: the systems ``p003/ga-rag`` and ``p003/rag`` (:mod:`.systems`, scoring in
:mod:`.graph`), Table I's metrics (:mod:`.metrics`) and its report section (:mod:`.report`).
Definitions: docs/papers/p003.md.
"""

from __future__ import annotations

from provbench import hookimpl

PROVBENCH_NAMESPACE = "p003"  # registered as p003/ga-rag, p003/rag, ...


def _names(plugins: dict) -> dict:
    """Until the namespaced registry is on main, spell the namespace into the names (the current
    registry would reject a second "rag"); the namespaced registry adds it itself."""
    from provbench import registry

    if hasattr(registry, "plugin_origin"):
        return plugins
    return {f"{PROVBENCH_NAMESPACE}/{name}": factory for name, factory in plugins.items()}


@hookimpl
def provbench_register_systems():
    from .systems import GARAG, VanillaRAG

    return _names({s.name: s for s in (GARAG, VanillaRAG)})


@hookimpl
def provbench_register_metrics():
    from .metrics import METRICS

    return _names({m.name: m for m in METRICS})


@hookimpl
def provbench_report_sections(run):
    from .report import sections

    return sections(run)
