"""provbench's LLM layer: one interface over llama.cpp (embedded), litellm, scripted and
schema-following (offline, no model) backends; every request is attributed to its unit (provbench.capture).

    llm = make_llm("embedded", cache_dir=path)  # provbench.llm_setup.make_llm
    resp = llm.chat([{"role": "user", "content": "..."}], schema={...}, purpose="...", trace=trace)
"""

from ..deprecated import module_getattr
from .backends import LiteLLMBackend, LlamaCppBackend, ScriptedBackend, embedded_model_path
from .client import ChatResponse, LLMClient, LLMStats, parse_json
from .errors import LLMError, is_transient

# make_llm / make_backend consult the plugin registry, so they live above it (provbench.llm_setup)
__getattr__ = module_getattr(
    __name__, {"make_llm": "provbench.llm_setup.make_llm", "make_backend": "provbench.llm_setup.make_backend"}
)

__all__ = [
    "ChatResponse",
    "LLMClient",
    "LLMError",
    "LLMStats",
    "LiteLLMBackend",
    "LlamaCppBackend",
    "ScriptedBackend",
    "embedded_model_path",
    "is_transient",
    "parse_json",
]
