"""provbench's LLM layer: one interface over llama.cpp (embedded), litellm, scripted and
schema-following (offline, no model) backends; every request is attributed to its unit (provbench.capture).

    llm = make_llm("embedded", cache_dir=path)
    resp = llm.chat([{"role": "user", "content": "..."}], schema={...}, purpose="...", trace=trace)
"""

from .backends import LiteLLMBackend, LlamaCppBackend, ScriptedBackend, embedded_model_path, make_backend
from .client import ChatResponse, LLMClient, LLMStats, make_llm, parse_json
from .errors import LLMError, is_transient

__all__ = ["ChatResponse", "LLMClient", "LLMError", "LLMStats", "LiteLLMBackend", "LlamaCppBackend",
           "ScriptedBackend", "embedded_model_path", "is_transient", "make_backend", "make_llm", "parse_json"]
