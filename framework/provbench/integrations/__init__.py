"""Bridges from other frameworks to provbench's knowledge base, LLM layer and traces.

* :mod:`provbench.integrations.llamaindex`: a LlamaIndex ``PropertyGraphStore`` / ``PropertyGraphIndex``
  that read through a :class:`~provbench.kb.GraphView`, LlamaIndex adapters of provbench's LLM client
  and embedding model, and the capture of a LlamaIndex pipeline's trace (docs/integrations.md).

Nothing here is imported by the core: a framework is imported only when its integration is.
"""
