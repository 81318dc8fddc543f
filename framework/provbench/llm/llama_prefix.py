"""Prefix reuse for the embedded model: several saved contexts instead of only the last one.

A ``Llama`` keeps the tokens of its last call and evaluates only what a new prompt adds to them.
A run's calls interleave (units run concurrently, and an agent's next step resends its growing
conversation after other units' calls), so that alone re-evaluates most prompts. llama-cpp-python's
``LlamaRAMCache`` (``Llama.set_cache``) saves the context after every call and, before the next,
restores the saved one sharing the longest prefix with the prompt; its capacity bounds the bytes
kept, least recently used dropped first.

A saved context also copies ``Llama.scores``, one row of vocabulary logits per token up to
``n_batch`` rows (100 MB a save with SmolLM2's 49k vocabulary), which the cache does not count.
Without ``logits_all`` llama-cpp-python never writes those rows (sampling reads llama.cpp's own
logits), so the instance gets a one-row array: a save then costs about the context's tokens
(about 23 KB a token for SmolLM2-135M) and the capacity bounds the memory actually held.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError

CACHE_ENV = "PROVBENCH_LLAMA_PREFIX_CACHE_MB"
DEFAULT_CACHE_MB = 512


def prefix_cache_mb(environ: Any) -> int:
    """The cache's capacity in MB from ``PROVBENCH_LLAMA_PREFIX_CACHE_MB`` (0 turns it off)."""
    value = environ.get(CACHE_ENV, "").strip()
    if not value:
        return DEFAULT_CACHE_MB
    try:
        megabytes = int(value)
    except ValueError:
        raise UserError(
            f"environment variable {CACHE_ENV} must be a whole number of MB (0: off), got {value!r}"
        ) from None
    if megabytes < 0:
        raise UserError(f"environment variable {CACHE_ENV} must be 0 (off) or more, got {megabytes}")
    return megabytes


def keep_prefixes(model: Any, megabytes: int) -> None:
    """Give ``model``, loaded without ``logits_all``, a bounded cache of saved contexts; 0 MB: none."""
    if megabytes <= 0:
        return
    from llama_cpp import LlamaRAMCache

    model.scores = model.scores[:1].copy()  # never written without logits_all: see the module's note
    model.set_cache(LlamaRAMCache(capacity_bytes=megabytes << 20))
