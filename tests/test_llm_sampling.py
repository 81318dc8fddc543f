"""Greedy calls with a schema ask the grammar about the picked token first (issue 37 item 8).

The routing test needs no model; the flash-attention one loads the real GGUF (no generation); the
last one generates a few dozen tokens (marked integration).
"""

from __future__ import annotations

import pytest

from provbench.llm import backends
from provbench.llm.llama_prefix import CACHE_ENV
from provbench.llm.llama_sampling import GrammarFirstSampler, check_grammar_first


class _Model:
    """Only what `check_grammar_first` touches before a grammar-first sampler is made."""

    def _init_sampler(self, **settings):
        return ("library", settings.get("grammar"))


@pytest.mark.parametrize(
    "settings",
    [
        {"temp": 0.0, "grammar": None},
        {"temp": 0.7, "grammar": "g"},
        {"temp": 0.0, "grammar": "g", "logits_processor": [1]},
    ],
)
def test_calls_not_greedy_with_a_grammar_keep_the_librarys_sampler(settings):
    model = _Model()
    check_grammar_first(model)
    assert model._init_sampler(**settings) == ("library", settings["grammar"])


@pytest.mark.parametrize("logits_all", [False, True])
def test_the_embedded_model_runs_flash_attention(monkeypatch, logits_all):
    """About 40 % less CPU per prompt token on SmolLM2 (docs/performance.md)."""
    import llama_cpp

    monkeypatch.setattr(backends, "_LLAMAS", {})
    backend = backends.LlamaCppBackend(backends.EMBEDDED_NAME, n_ctx=512, n_threads=1)
    model = backends._shared_llama(backend.path, backend.n_ctx, backend.n_threads, logits_all)[0]
    assert model.context_params.flash_attn_type == llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED


SCHEMA = {
    "type": "object",
    "properties": {"colour": {"type": "string", "enum": ["zebra-7", "quartz-9"]}, "why": {"type": "string"}},
    "required": ["colour", "why"],
}


@pytest.mark.integration
def test_grammar_first_gives_the_librarys_replies(monkeypatch):
    """The same greedy reply as llama-cpp-python's own chain, with the grammar run over the whole
    vocabulary only for the tokens it refused."""
    from llama_cpp import Llama

    monkeypatch.setattr(backends, "_LLAMAS", {})
    monkeypatch.setenv(CACHE_ENV, "0")
    backend = backends.LlamaCppBackend(backends.EMBEDDED_NAME, n_ctx=1024, n_threads=1)
    library = Llama(model_path=str(backend.path), n_ctx=1024, n_threads=1, flash_attn=True, verbose=False)
    for question in ("Name a colour and say why you like it.", "What colour is the sky?"):
        request = {"messages": [{"role": "user", "content": question}], "max_tokens": 40, "temperature": 0.0}
        ours = backend.complete({**request, "schema": SCHEMA})
        theirs = library.create_chat_completion(**request, response_format={"type": "json_object", "schema": SCHEMA})
        assert ours["text"] == theirs["choices"][0]["message"]["content"]
        sampler = backends._LLAMAS[next(iter(backends._LLAMAS))][0]._sampler
        assert isinstance(sampler, GrammarFirstSampler)
        assert 0 < sampler.full_passes < ours["completion_tokens"], (sampler.full_passes, ours["text"])
