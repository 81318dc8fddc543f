"""Requests and tokens per minute for one model, with PyrateLimiter (``pip install 'provbench[ratelimit]'``).

A suite caps what a model may be sent (``model: {rate_limit: {requests_per_minute: 60,
tokens_per_minute: 100000}}``, the same under ``judge``): before each request the client waits
until both leaky buckets have room. A request's tokens are counted before it is sent, as providers
count them against a tokens-per-minute limit: its prompt (about four characters a token) plus its
``max_tokens``.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError
from .spec import RateLimitSpec

__all__ = ["RateLimitSpec", "RateLimiter", "request_tokens"]


def request_tokens(request: dict[str, Any]) -> int:
    """What a request counts against a tokens-per-minute limit: prompt (estimated) plus max_tokens."""
    chars = sum(len(str(m.get("content", ""))) for m in request["messages"])
    return chars // 4 + 1 + int(request.get("max_tokens") or 0)


class RateLimiter:
    """Blocks each request until it fits the model's requests and tokens per minute (thread-safe)."""

    def __init__(self, spec: RateLimitSpec, window_s: float = 60.0) -> None:  # window_s: tests shorten the minute
        try:
            from pyrate_limiter import Limiter, Rate
        except ImportError:
            raise UserError("a model's rate_limit needs PyrateLimiter: pip install 'provbench[ratelimit]'") from None
        self.spec, self.window_s = spec, window_s
        window_ms = int(window_s * 1000)
        self._requests = Limiter(Rate(spec.requests_per_minute, window_ms)) if spec.requests_per_minute else None
        self._tokens = Limiter(Rate(spec.tokens_per_minute, window_ms)) if spec.tokens_per_minute else None

    def wait_for_room(self, request: dict[str, Any]) -> None:
        if self._requests is not None:
            self._requests.try_acquire("requests", 1)
        if self._tokens is not None:  # one request larger than the whole minute's allowance takes all of it
            self._tokens.try_acquire("tokens", min(request_tokens(request), self.spec.tokens_per_minute))

    def __getstate__(self) -> dict[str, Any]:  # to a worker process: the limits, not the buckets
        return {"spec": self.spec, "window_s": self.window_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["spec"], state["window_s"])
