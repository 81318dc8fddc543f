"""The builder's LLM calls: run them concurrently, in a fixed order, and account for them.

Every call a builder makes goes through :meth:`LLMTally.chat` (a failing call is counted and
recorded instead of ending the build), usually inside :func:`run_calls` (results in input order,
so the knowledge base never depends on timing; a progress bar on a terminal). A build whose
every call failed is a broken model, not bad luck: :meth:`LLMTally.raise_if_all_failed`.
The tally goes into ``build_info["llm"]``, where ``kb info`` and the report show it. Error texts
are redacted before they are kept or raised: a provider's error may quote the key it was sent.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from provbench.errors import UserError
from provbench.secrets import redact

from .progress import progress_bar

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

MAX_ERRORS_KEPT = 5


@dataclass
class LLMTally:
    """What the builder's LLM calls cost and how often the model misbehaved."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    salvaged: int = 0  # replies cut off by max_tokens whose complete items were kept
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    by_purpose: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, resp: Any, purpose: str = "") -> None:
        with self._lock:
            self.calls += 1
            self.by_purpose[purpose] = self.by_purpose.get(purpose, 0) + 1
            self.cached += bool(getattr(resp, "cached", False))
            self.prompt_tokens += getattr(resp, "prompt_tokens", 0) or 0
            self.completion_tokens += getattr(resp, "completion_tokens", 0) or 0

    def note_salvaged(self) -> None:
        with self._lock:
            self.salvaged += 1

    def fail(self, purpose: str, exc: Exception, llm: Any = None) -> None:
        """Count a failed call; its error text is kept redacted (``llm``'s own key included)."""
        text = redact(f"{purpose}: {type(exc).__name__}: {exc}", _backend_params(llm))[:300]
        with self._lock:
            self.calls += 1
            self.failed += 1
            self.by_purpose[purpose] = self.by_purpose.get(purpose, 0) + 1
            if len(self.errors) < MAX_ERRORS_KEPT:
                self.errors.append(text)

    def chat(self, llm: Any, messages: list[dict[str, str]], purpose: str, **params: Any) -> Any:
        """``llm.chat(...)`` counted under ``purpose``: the response, or None when the call failed for good."""
        try:
            resp = llm.chat(messages, purpose=purpose, **params)
        except Exception as exc:  # noqa: BLE001 - a failing call must not end the build; it is counted
            self.fail(purpose, exc, llm)
            return None
        self.record(resp, purpose)
        return resp

    def raise_if_all_failed(self, builder: str, model_id: str, closing: Any = None) -> None:
        """Every call failed: the model is broken, so the KB (``closing``, closed first) must not
        be marked complete."""
        if self.calls and self.failed == self.calls:
            if closing is not None:
                closing.close()
            raise UserError(f"kb builder {builder!r}: every LLM call to {model_id!r} failed; first: {self.errors[0]}")

    def as_info(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cache_hits": self.cached,
            "failed": self.failed,
            "truncated_salvaged": self.salvaged,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "by_purpose": dict(self.by_purpose),
            "errors": list(self.errors),
        }


def _backend_params(llm: Any) -> dict[str, Any]:
    """The settings ``llm`` sends its provider (an ``api_key`` among them): secrets to redact."""
    params = getattr(getattr(llm, "backend", None), "params", None)
    return params if isinstance(params, dict) else {}


def effective_workers(asked: int | None, llm: Any) -> int:
    """Concurrent calls: as asked, else the client's cap. Asking for more than the client allows
    is logged (its semaphore would hold the extra threads back)."""
    cap = getattr(llm, "max_concurrency", None) or 1
    workers = asked or cap
    if workers > cap:
        log.warning(
            "kb builder: max_workers=%d but the LLM client allows %d concurrent calls; "
            "raise the client's concurrency (suite 'concurrency', or kb build --concurrency)",
            workers,
            cap,
        )
    return workers


def run_calls(fn: Callable[[T], R], items: Sequence[T], workers: int, description: str) -> list[R]:
    """``fn`` over ``items`` on ``workers`` threads; results in input order."""
    if not items:
        return []
    with progress_bar(description, len(items)) as advance:

        def step(item: T) -> R:
            try:
                return fn(item)
            finally:
                advance(1)

        if workers <= 1:
            return [step(item) for item in items]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kb-llm") as pool:
            return list(pool.map(step, items))
