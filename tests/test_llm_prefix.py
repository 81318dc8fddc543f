"""The embedded model keeps a bounded cache of earlier calls' contexts (issue 37 item 8).

The first tests load the real GGUF (a few seconds, no generation); the last one generates and is
marked integration.
"""

from __future__ import annotations

import pytest

from provbench.errors import UserError
from provbench.llm import backends
from provbench.llm.llama_prefix import CACHE_ENV, DEFAULT_CACHE_MB


@pytest.fixture
def fresh(monkeypatch):
    """Models loaded inside a test are that test's own (and freed after it)."""
    monkeypatch.setattr(backends, "_LLAMAS", {})
    monkeypatch.delenv(CACHE_ENV, raising=False)
    return backends.LlamaCppBackend(backends.EMBEDDED_NAME, n_ctx=2048, n_threads=1, logprobs_n_ctx=512)


def load(backend, logits_all=False):
    n_ctx = backend.logprobs_n_ctx if logits_all else backend.n_ctx
    return backends._shared_llama(backend.path, n_ctx, backend.n_threads, logits_all)[0]


def test_the_embedded_model_keeps_a_bounded_cache_of_contexts(fresh):
    model = load(fresh)
    assert model.cache is not None and model.cache.capacity_bytes == DEFAULT_CACHE_MB << 20
    # a saved context copies `scores`; one row keeps a save about the context's own bytes
    assert model.scores.shape == (1, model.n_vocab())


def test_the_cache_is_off_with_zero_and_for_the_logprobs_instance(fresh, monkeypatch):
    assert load(fresh, logits_all=True).cache is None  # its scores are the logprobs: not trimmed
    monkeypatch.setenv(CACHE_ENV, "0")
    model = load(fresh)
    assert model.cache is None and model.scores.shape[0] > 1


@pytest.mark.parametrize("value", ["lots", "-5"])
def test_a_bad_cache_size_names_the_variable(fresh, monkeypatch, value):
    monkeypatch.setenv(CACHE_ENV, value)
    with pytest.raises(UserError, match=CACHE_ENV):
        load(fresh)


@pytest.mark.integration
@pytest.mark.parametrize("capacity_mb", ["0", "64"])
def test_an_interleaved_conversation_resumes_from_its_saved_context(fresh, monkeypatch, capacity_mb):
    """A's second turn after B's call: with the cache only A's new turn is evaluated, and A's
    reply is the one the model gives without the cache."""
    monkeypatch.setenv(CACHE_ENV, capacity_mb)
    model = load(fresh)
    evaluated = []
    original = model.eval
    model.eval = lambda tokens: (evaluated.append(len(tokens)), original(tokens))[1]
    rules = {"role": "system", "content": "You are a terse assistant. " * 20}
    first = [rules, {"role": "user", "content": "Name a colour."}]
    ask = {"max_tokens": 6, "temperature": 0.0, "seed": 0}
    said = fresh.complete({**ask, "messages": first})["text"]
    fresh.complete({**ask, "messages": [{"role": "user", "content": "Count to three."}]})
    evaluated.clear()
    second = fresh.complete(
        {
            **ask,
            "messages": first + [{"role": "assistant", "content": said}, {"role": "user", "content": "Another one."}],
        }
    )
    prompt_evaluated = evaluated[0]  # the first eval of a call is its prompt's
    assert (prompt_evaluated < 30) == (capacity_mb != "0"), prompt_evaluated
    assert second["text"] == _expected_second(fresh, first, said, ask)


def _expected_second(backend, first, said, ask):
    """A's second turn on a model that saw nothing before."""
    backends._LLAMAS.clear()
    messages = first + [{"role": "assistant", "content": said}, {"role": "user", "content": "Another one."}]
    return backend.complete({**ask, "messages": messages})["text"]
