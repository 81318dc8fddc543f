"""Run LlamaIndex pipelines on a provbench knowledge base, through a view, with their trace recorded.

    from provbench.integrations.llamaindex import capture_trace, llamaindex_llm, property_graph_index

    llm = llamaindex_llm(env.llm)                       # provbench's client: cached, counted, traced
    with capture_trace(trace):                          # the unit's provbench Trace
        index = property_graph_index(env.view, llm=llm)  # reads only what the view shows
        response = index.as_query_engine(llm=llm, include_text=True).query(question.question)

* :func:`property_graph_store` / :class:`ViewPropertyGraphStore`: a read-only LlamaIndex
  ``PropertyGraphStore`` over a :class:`~provbench.kb.GraphView` (:mod:`.store`)
* :func:`property_graph_index`, :func:`llamaindex_llm` (:class:`ProvbenchLLM`),
  :func:`llamaindex_embedding` (:class:`ProvbenchEmbedding`) (:mod:`.models`)
* :func:`capture_trace` (:class:`TraceCapture`): LlamaIndex's instrumentation events become the
  unit's trace, mapped back to provbench ids (:mod:`.capture`)

The built-in ``llamaindex`` system runs a user's factory (``module:function``) with all of these;
docs/integrations.md shows both ways. LlamaIndex is imported only when this module is.
"""

from __future__ import annotations

try:
    import llama_index.core  # noqa: F401 - only to fail early with a clear error
except ImportError as exc:  # pragma: no cover - it is a dependency of provbench today
    from ...errors import UserError

    raise UserError("provbench.integrations.llamaindex needs LlamaIndex: pip install llama-index-core") from exc

from .capture import Evidence, TraceCapture, capture_trace, current_capture
from .models import (
    ProvbenchEmbedding,
    ProvbenchLLM,
    as_dicts,
    llamaindex_embedding,
    llamaindex_llm,
    property_graph_index,
)
from .graph_store import ViewPropertyGraphStore, ViewStoreRefused, property_graph_store

__all__ = [
    "Evidence",
    "ProvbenchEmbedding",
    "ProvbenchLLM",
    "TraceCapture",
    "ViewPropertyGraphStore",
    "ViewStoreRefused",
    "as_dicts",
    "capture_trace",
    "current_capture",
    "llamaindex_embedding",
    "llamaindex_llm",
    "property_graph_index",
    "property_graph_store",
]
