"""Errors of the LLM layer and the rule that tells a transient fault from a final one."""

from __future__ import annotations


class LLMError(RuntimeError):
    """An LLM call failed for good (after any retries). Systems catch it and record a failed step."""


class InvalidJSONReply(ValueError):
    """A reply to a schema-constrained request was not valid JSON: the client re-asks."""


# HTTP statuses worth another try: request timeout, conflict/lock, rate limit, server faults.
_TRANSIENT_STATUS = {408, 409, 425, 429}
# Exception class names (litellm, openai, httpx) that mean "try again", whatever their status says.
_TRANSIENT_NAMES = {
    "Timeout",
    "APITimeoutError",
    "TimeoutException",
    "ReadTimeout",
    "ConnectTimeout",
    "APIConnectionError",
    "ConnectError",
    "RemoteProtocolError",
    "RateLimitError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "InternalServerError",
}
# Errors that are never worth a retry even if they carry a 5xx-looking status.
_FINAL_NAMES = {
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ContextWindowExceededError",
    "UnprocessableEntityError",
}


def is_transient(exc: BaseException) -> bool:
    """True for faults a retry can cure: timeouts, connection errors, rate limits (429), 5xx."""
    if isinstance(exc, InvalidJSONReply):
        return True
    if isinstance(exc, LLMError):
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & _FINAL_NAMES:
        return False
    if isinstance(exc, (TimeoutError, ConnectionError)) or names & _TRANSIENT_NAMES:
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in _TRANSIENT_STATUS or 500 <= status < 600)


def describe(exc: BaseException) -> str:
    """``ClassName: message`` on one line, short enough for a log or a trace."""
    message = " ".join(str(exc).split())
    if len(message) > 500:
        message = message[:497] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def retry_after_s(exc: BaseException | None) -> float | None:
    """How long the server asked us to wait before trying again (``Retry-After``, in seconds or
    as an HTTP date, or ``retry-after-ms``), from the error's HTTP response headers (litellm keeps
    the provider's as ``litellm_response_headers``); None if it did not say."""
    headers = (
        getattr(exc, "litellm_response_headers", None)
        or getattr(getattr(exc, "response", None), "headers", None)
        or getattr(exc, "headers", None)
        or {}
    )
    if isinstance(headers, dict):  # httpx's headers ignore case already
        headers = {str(k).lower(): v for k, v in headers.items()}
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from datetime import datetime, timezone
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
