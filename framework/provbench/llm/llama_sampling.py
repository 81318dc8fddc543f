"""Greedy sampling under a grammar at the cost of one check per token.

llama-cpp-python puts a JSON schema's grammar in its sampler chain, so every generated token runs
the grammar over the whole vocabulary (49,152 tokens for SmolLM2) before the greedy pick; with the
schemas' bounded strings and enumerations that cost several times the model's own forward pass
per token (docs/performance.md). llama.cpp's own sampler (``common/sampling.cpp``) first takes the
token the chain picks without the grammar and asks the grammar about that one token; only when the
grammar refuses it does it run the grammar over the vocabulary and pick again. For greedy decoding
both give the same token: the best token is the grammar's best whenever the grammar allows it.

:func:`check_grammar_first` gives a ``Llama`` that sampler for greedy calls with a grammar (the
calls every provbench request makes: temperature 0); other calls keep the library's chain.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])  # llama_token_data


class GrammarFirstSampler:
    """The library's chain without the grammar (``rest``: repetition penalties, then greedy), and
    the grammar alone, asked about the chain's pick before it is applied to the vocabulary."""

    def __init__(self, model: Any, grammar: Any, rest: Any) -> None:
        from llama_cpp._internals import LlamaSampler

        self.rest = rest
        self.grammar = LlamaSampler()
        self.grammar.add_grammar(model._model, grammar)
        self.candidates = np.zeros(model.n_vocab(), dtype=TOKEN_DATA)
        self.candidates["id"] = np.arange(len(self.candidates), dtype=np.int32)
        self.one = np.zeros(1, dtype=TOKEN_DATA)
        self.full_passes = 0  # tokens the grammar refused at first: picked again over the vocabulary

    def sample(self, ctx: Any, idx: int = -1) -> int:
        token = self._pick(ctx, idx, self.rest)
        if not self._allows(token):
            self.full_passes += 1
            token = self._pick(ctx, idx, self.grammar, self.rest)
        self.grammar.accept(token)
        self.rest.accept(token)
        return token

    def _pick(self, ctx: Any, idx: int, *samplers: Any) -> int:
        import llama_cpp

        logits = llama_cpp.llama_get_logits_ith(ctx.ctx, idx)
        self.candidates["logit"] = np.ctypeslib.as_array(logits, shape=(len(self.candidates),))
        self.candidates["p"] = 0.0
        chosen = _apply(self.candidates, samplers)
        return int(chosen.data[chosen.selected].id)

    def _allows(self, token: int) -> bool:
        self.one[0] = (token, 0.0, 0.0)
        _apply(self.one, [self.grammar])
        return bool(np.isfinite(self.one[0]["logit"]))

    def close(self) -> None:
        self.grammar.close()
        self.rest.close()


def _apply(candidates: np.ndarray, samplers: Any) -> Any:
    """Run ``samplers`` over ``candidates`` in place, as ``llama_sampler_sample`` does over the logits."""
    import llama_cpp

    array = llama_cpp.llama_token_data_array(
        data=candidates.ctypes.data_as(llama_cpp.llama_token_data_p), size=len(candidates), selected=-1, sorted=False
    )
    for sampler in samplers:
        llama_cpp.llama_sampler_apply(sampler.sampler, ctypes.byref(array))
    return array


def check_grammar_first(model: Any) -> None:
    """Make ``model`` sample greedy calls with a grammar through :class:`GrammarFirstSampler`."""
    library_sampler = model._init_sampler

    def init_sampler(**settings: Any) -> Any:
        grammar = settings.get("grammar")
        if grammar is None or settings.get("temp") != 0.0 or settings.get("logits_processor") is not None:
            return library_sampler(**settings)
        return GrammarFirstSampler(model, grammar, library_sampler(**{**settings, "grammar": None}))

    model._init_sampler = init_sampler
