"""The LLM clients: a backend for a model id from the registered backends (:func:`make_backend`),
a client over it (:func:`make_llm`), and the run's clients: the systems' model and the judge of
LLM-judged metrics, checked against the run directory they resume (the same models, or a clear
refusal) and the suite's budget. Here, above the registry, because a model id's prefix names a
registered backend; :mod:`provbench.llm` itself knows no registry."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from .costs import check_priced
from .errors import UserError
from .llm.backends import backend_prefix
from .llm.client import GENERATION_DEFAULTS, PINNABLE_PARAMS, LLMClient
from .registry import check_instance, default_registry
from .run_store import RunStore
from .suite import LoadedSuite, ModelSpec, Suite


def check_same_models(store: RunStore, suite: Suite) -> None:
    """Resuming with another model or judge would mix two models' answers or grades in one run: refuse."""
    previous = store.read_manifest()
    used = previous.models.get("suite_model") if previous else None
    if used and used != suite.model.id:
        raise UserError(
            f"{store.run_dir} holds a run with model {used!r}, not {suite.model.id!r}; "
            "pass --out with a new directory to run another model"
        )
    judged = previous.models.get("judge", used) if previous else None  # older runs: the judge was the model
    judge = suite.judge.id if suite.judge else suite.model.id
    if judged and judged != judge:
        raise UserError(
            f"{store.run_dir} holds a run judged by {judged!r}, not {judge!r}; "
            "pass --out with a new directory to use another judge"
        )


def check_budget_prices(loaded: LoadedSuite, llm: Any) -> None:
    """A cost budget over a model without prices is refused before the run directory exists."""
    suite = loaded.suite
    if suite.budget is None or suite.budget.max_cost_usd is None:
        return
    system = llm if llm is not None else make_run_llm(suite.model, None, 1)
    judge = system if suite.judge is None else make_run_llm(suite.judge, None, 1)
    check_priced(
        suite.budget,
        {"systems'": getattr(system, "backend", None), "judge": getattr(judge, "backend", None)},
        str(loaded.path),
    )


def make_run_llm(spec: ModelSpec, cache_dir: Path | None, concurrency: int) -> Any:
    """A client for ``spec`` (its parameters and rate limits) with ``concurrency`` calls at once."""
    return make_llm(
        spec.id, cache_dir=cache_dir, max_concurrency=concurrency, rate_limit=spec.rate_limit, **spec.params
    )


def make_judge(suite: Suite, llm: Any, cache_dir: Path) -> Any:
    """The metrics' LLM: the systems' client unless the suite names another judge model."""
    if suite.judge is None or (
        suite.judge.id == getattr(llm, "model_id", None) and not suite.judge.params and suite.judge.rate_limit is None
    ):
        return llm
    return make_run_llm(suite.judge, cache_dir, suite.concurrency)


def make_backend(model_id: str, *, registry: Any = None, **backend_params: Any) -> Any:
    """``embedded`` | ``llama-cpp:<name or path.gguf>`` | ``scripted`` | ``schema-following`` | a plugin's
    prefix | any litellm id."""
    if not isinstance(model_id, str) or not model_id.strip():
        raise UserError(f"model id must be a non-empty string, got {model_id!r}")
    registry = registry or default_registry()
    prefix = backend_prefix(model_id, registry.names("llm_backend"))
    registration = registry.get("llm_backend", prefix)
    _check_params(registration, model_id, backend_params)
    backend = registration.factory(model_id, **backend_params)
    check_instance(registration, backend)
    return backend


def _check_params(registration: Any, model_id: str, params: dict[str, Any]) -> None:
    """The model's parameters fit its backend factory's signature, or an error lists the known ones."""
    try:
        signature = inspect.signature(registration.factory)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(model_id, **params)
    except TypeError as exc:
        named = [
            p.name
            for p in list(signature.parameters.values())[1:]
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        raise UserError(
            f"model {model_id!r} ({registration.label()}): unknown or missing parameters "
            f"{sorted(params)}: {exc} (known parameters: {', '.join(named) or 'none'})"
        ) from None


CLIENT_PARAMS = {"max_attempts", "backoff_s", "max_backoff_s", "deadline_s", "json_retries"}


def make_llm(
    model_id: str, cache_dir: Path | str | None = None, max_concurrency: int = 2, rate_limit: Any = None, **params: Any
) -> LLMClient:
    """An LLMClient for ``embedded`` | ``llama-cpp:<path.gguf>`` | ``scripted`` | ``schema-following`` (no
    model: replies follow the requested schema, :mod:`provbench.llm.offline`) | any litellm id.

    ``params``: generation defaults (max_tokens, temperature, seed, ...), client settings
    (max_attempts, backoff_s, max_backoff_s, deadline_s, json_retries), ``replies`` for scripted,
    llama.cpp settings (n_ctx, n_threads, logprobs_n_ctx), or anything else litellm accepts
    (api_base, timeout: seconds per request, input_cost_per_token, ...). A temperature given here
    wins over the one a plugin passes to chat(). ``rate_limit``: a
    :class:`~provbench.llm.ratelimit.RateLimitSpec` (requests and tokens per minute), or None.
    """
    client = {"json_retries": 1, **{k: params.pop(k) for k in list(params) if k in CLIENT_PARAMS}}
    generation = {k: params.pop(k) for k in list(params) if k in GENERATION_DEFAULTS}
    backend = make_backend(model_id, **params)  # the backend's factory checks what is left
    pinned = tuple(k for k in PINNABLE_PARAMS if k in generation)
    limiter = None
    if rate_limit is not None and (rate_limit.requests_per_minute or rate_limit.tokens_per_minute):
        from .llm.ratelimit import RateLimiter

        limiter = RateLimiter(rate_limit)
    return LLMClient(
        backend,
        cache_dir=cache_dir,
        max_concurrency=max_concurrency,
        pinned_params=pinned,
        rate_limiter=limiter,
        **client,
        **generation,
    )
