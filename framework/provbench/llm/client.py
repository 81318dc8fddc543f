"""LLMClient: the one door every LLM call goes through.

It adds, around any backend: the on-disk response cache, retries with exponential backoff for
transient faults (tenacity), a concurrency limit, token/call/latency accounting, JSON parsing of
schema-constrained replies, an :class:`~provbench.model.LLMCall` on the caller's trace, and the
request's attribution to the unit that made it (:mod:`provbench.capture`, for the leak guard).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tenacity import RetryError, Retrying, retry_if_exception, stop_after_attempt, stop_before_delay, wait_exponential

from ..capture import UnitCapture, current_capture, request_hash
from ..costs import price_of
from ..deprecated import module_getattr
from ..errors import UserError
from ..model import LLMCall, Trace
from .cache import ResponseCache, cache_key
from .errors import InvalidJSONReply, LLMError, describe, is_transient, retry_after_s

GENERATION_DEFAULTS: dict[str, Any] = {
    "max_tokens": 512,
    "temperature": 0.0,
    "logprobs": False,
    "top_logprobs": 0,
    "seed": None,
}
# Generation parameters a suite sets that win over what a plugin passes to chat(): a suite's
# temperature is the experimenter's decision, not the plugin author's.
PINNABLE_PARAMS = ("temperature",)
DEFAULT_DEADLINE_S = 600.0  # one chat() call, retries and backoff included

log = logging.getLogger(__name__)


@dataclass
class ChatResponse:
    text: str
    data: Any = None  # parsed JSON when a schema was given; None when the text is not valid JSON
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    original_latency_s: float | None = None  # a cache hit: the first call's latency, when the entry kept it
    logprobs: list[dict[str, Any]] | None = None
    attempts: int = 1
    model: str = ""
    cost_usd: float | None = None  # the price of its tokens (provbench.costs); None: unknown
    cost_source: str = "unknown"


@dataclass
class LLMStats:
    """What a client did: backend calls, cache hits, tokens, latency, failures, and the dollars its
    answered requests cost (``unpriced``: answered requests whose price is unknown) (thread-safe)."""

    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    failures: int = 0
    retries: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            data = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        return {**data, "tokens": data["prompt_tokens"] + data["completion_tokens"]}


class LLMClient:
    """Chat completions through ``backend`` with caching, retries, accounting and a concurrency cap.

    ``max_attempts`` counts the first try; waits grow as ``backoff_s * 2**n`` up to ``max_backoff_s``;
    no retry starts after ``deadline_s`` (the whole call's budget). A reply that is not valid JSON
    when a schema was asked is never cached, and is re-asked with the parse error ``json_retries``
    times within ``max_attempts`` (:func:`make_llm`, which runs use, sets 1; plugins that handle
    malformed replies themselves see them unchanged with 0). ``default_params`` fill chat() arguments the caller leaves
    out; ``pinned_params`` (names) win over the caller's values. ``rate_limiter``: requests wait for
    room under a model's requests / tokens per minute. A transient fault whose response says
    ``Retry-After`` is retried no sooner than that (and not at all if that would pass the deadline).
    """

    def __init__(
        self,
        backend: Any,
        *,
        cache_dir: Path | str | None = None,
        max_concurrency: int = 2,
        max_attempts: int = 4,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        deadline_s: float = DEFAULT_DEADLINE_S,
        json_retries: int = 0,
        pinned_params: tuple[str, ...] = (),
        rate_limiter: Any = None,
        **default_params: Any,
    ) -> None:
        if max_concurrency < 1 or max_attempts < 1:
            raise UserError(f"max_concurrency and max_attempts must be >= 1 (got {max_concurrency}, {max_attempts})")
        self.backend = backend
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self.max_concurrency = max_concurrency
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.deadline_s = deadline_s
        self.json_retries = json_retries
        self.default_params = {**GENERATION_DEFAULTS, **default_params}
        self.pinned = {k: self.default_params[k] for k in pinned_params}
        self.rate_limiter = rate_limiter
        self.stats = LLMStats()
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._capture: UnitCapture | None = None  # set on a unit's copy by bound_to()

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    def __repr__(self) -> str:  # never shows backend params (they may hold an api_key)
        cache = str(self.cache.directory) if self.cache else None
        return f"LLMClient(model={self.model_id!r}, cache_dir={cache!r}, max_concurrency={self.max_concurrency})"

    # -- public API --------------------------------------------------------------------------------
    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: dict | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        logprobs: bool | None = None,
        top_logprobs: int | None = None,
        seed: int | None = None,
        purpose: str = "",
        trace: Trace | None = None,
        **extra: Any,
    ) -> ChatResponse:
        """One chat completion; arguments left as None take the client's defaults. ``extra``:
        backend-specific parameters (they join the cache key). Raises LLMError when it fails for good."""
        params = {
            "max_tokens": max_tokens,
            "temperature": temperature,
            "logprobs": logprobs,
            "top_logprobs": top_logprobs,
            "seed": seed,
            **extra,
        }
        request = self._request(messages, schema, params)
        capture = self._capture or current_capture()  # the unit this request belongs to
        sent = capture.tick() if capture is not None else 0
        try:
            resp = self._cached_or_fresh(request)
        except LLMError as err:
            self.stats.add(failures=1)
            call = self._record(trace, purpose, request, error=str(err), attempts=getattr(err, "attempts", 1))
            if capture is not None:
                capture.add_request(request["messages"], call, None, sent)
            raise
        call = self._record(trace, purpose, request, resp=resp)
        if capture is not None:
            capture.add_request(request["messages"], call, resp.text, sent)
        return resp

    def pinning(self, **params: Any) -> "LLMClient":
        """This client with ``params`` fixed in every request (a repeated system's seed), whatever
        a plugin passes; it shares the cache, backend, accounting and concurrency limit."""
        clone = copy.copy(self)
        clone.pinned = {**self.pinned, **params}
        return clone

    def bind_questions(self, questions: Any) -> None:
        """Hand the run's questions to a backend that reads them (its optional
        ``bind_questions(questions)``: the known-truth controls of :mod:`provbench.controls`)."""
        bind = getattr(self.backend, "bind_questions", None)
        if bind is not None:
            bind(list(questions))

    def bound_to(self, capture: "UnitCapture") -> "LLMClient":
        """This client (same backend, cache, accounting and concurrency cap) attributing every
        request to ``capture``, from whichever thread it is made (:mod:`provbench.capture`)."""
        bound = copy.copy(self)
        bound._capture = capture
        return bound

    async def achat(self, messages: list[dict[str, Any]], **kwargs: Any) -> ChatResponse:
        """Async twin of :meth:`chat` (runs it in a worker thread; the concurrency cap still holds)."""
        return await asyncio.to_thread(self.chat, messages, **kwargs)

    def recording(self, calls: list[LLMCall]) -> "RecordingClient":
        """This client, noting every call made without a trace on ``calls`` (a record's judge calls)."""
        return RecordingClient(self, calls)

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    # -- internals ---------------------------------------------------------------------------------
    def _request(self, messages: Any, schema: dict | None, params: dict[str, Any]) -> dict[str, Any]:
        check_messages(messages)
        if schema is not None and not isinstance(schema, dict):
            raise TypeError(f"schema must be a JSON schema dict, got {type(schema).__name__}")
        merged = {**self.default_params, **{k: v for k, v in params.items() if v is not None}, **self.pinned}
        return {"messages": [dict(m) for m in messages], "schema": schema, **merged}

    def _cached_or_fresh(self, request: dict[str, Any]) -> ChatResponse:
        key = None
        if self.cache is not None:
            started = time.perf_counter()
            key = cache_key(self.model_id, request["messages"], self._key_params(request))
            hit = self.cache.get(key)
            if hit is not None and _acceptable(hit, request):  # older caches may hold invalid JSON
                self.stats.add(cached=1)
                return self._response(hit, request, latency=time.perf_counter() - started, cached=True)
        started = time.perf_counter()
        reply, attempts = self._call_with_retries(request)
        latency = time.perf_counter() - started  # as the caller waited: retries and backoff included
        if key is not None and _acceptable(reply, request):  # a bad reply must not outlive the fault
            self.cache.put(key, {**reply, "latency_s": round(latency, 6)})  # what a hit saves, for timing
        resp = self._response(reply, request, latency=latency, cached=False, attempts=attempts)
        self.stats.add(cost_usd=resp.cost_usd or 0.0, unpriced=resp.cost_usd is None)
        return resp

    def _key_params(self, request: dict[str, Any]) -> dict[str, Any]:
        """What besides the messages makes a request another one. A backend whose greedy decoding
        never reads the seed (``greedy_ignores_seed``) gets the same reply at temperature 0 whatever
        the unit's seed, so the seed stays out of the key: an ablation that changes nothing in a
        prompt gets its baseline's reply instead of a re-generation that numerical noise can flip."""
        params = {k: v for k, v in request.items() if k != "messages"}
        if params.get("temperature") == 0 and getattr(self.backend, "greedy_ignores_seed", False):
            params.pop("seed", None)
        return {**params, "backend": self.backend.config()}

    def _call_with_retries(self, request: dict[str, Any]) -> tuple[dict[str, Any], int]:
        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts) | stop_before_delay(self.deadline_s),
            reraise=False,
            wait=self._wait,
            retry=retry_if_exception(is_transient),
        )
        attempts, reasks, current = 0, 0, request
        spent = {"prompt_tokens": 0, "completion_tokens": 0}  # every answered attempt's, re-asks included
        try:
            for attempt in retrying:
                with attempt:
                    attempts += 1
                    if attempts > 1:
                        self.stats.add(retries=1)
                    reply = self._call_backend(current)
                    spent = {name: spent[name] + reply[name] for name in spent}
                    problem = json_problem(reply["text"]) if request.get("schema") is not None else None
                    if problem and cut_off(request, reply):
                        log.warning(
                            "%s; not re-asked, since the same budget cuts it off again", cut_off(request, reply)
                        )
                    elif problem and reasks < self.json_retries and attempts < self.max_attempts:
                        reasks += 1
                        current = reask(request, reply["text"], problem)
                        raise InvalidJSONReply(problem)
                    return {**reply, **spent}, attempts  # the call costs what all its attempts cost
        except RetryError as err:  # every attempt failed with a transient fault, or the deadline passed
            cause = err.last_attempt.exception()
            raise self._failure(cause, attempts) from cause
        except Exception as exc:  # a final fault: no retry
            raise self._failure(exc, attempts) from exc
        raise AssertionError("unreachable")

    def _wait(self, state: Any) -> float:
        """Back off after a fault, at least as long as the server's Retry-After asks; re-ask an
        invalid JSON reply at once (the model answered)."""
        fault = state.outcome.exception() if state.outcome is not None else None
        if isinstance(fault, InvalidJSONReply):
            return 0.0
        backoff = wait_exponential(multiplier=self.backoff_s, max=self.max_backoff_s)(state)
        return max(backoff, retry_after_s(fault) or 0.0)

    def _call_backend(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.rate_limiter is not None:  # wait for room before taking a slot others could use
            self.rate_limiter.wait_for_room(request)
        with self._slots:
            self.stats.add(calls=1)  # counts every request sent, answered or not
            started = time.perf_counter()
            try:
                reply = self.backend.complete({**request, "messages": [dict(m) for m in request["messages"]]})
            finally:
                self.stats.add(latency_s=time.perf_counter() - started)
        self.stats.add(prompt_tokens=reply["prompt_tokens"], completion_tokens=reply["completion_tokens"])
        return reply

    def _failure(self, cause: BaseException, attempts: int) -> LLMError:
        plural = "attempt" if attempts == 1 else "attempts"
        err = LLMError(f"model {self.model_id!r} failed after {attempts} {plural}: {describe(cause)}")
        err.attempts = attempts
        return err

    def _response(
        self, reply: dict[str, Any], request: dict[str, Any], *, latency: float, cached: bool, attempts: int = 1
    ) -> ChatResponse:
        text = reply["text"]
        usd, source = price_of(self.backend, reply["prompt_tokens"], reply["completion_tokens"])
        return ChatResponse(
            text=text,
            data=parse_json(text) if request.get("schema") is not None else None,
            prompt_tokens=reply["prompt_tokens"],
            completion_tokens=reply["completion_tokens"],
            latency_s=latency,
            cached=cached,
            logprobs=reply.get("logprobs"),
            original_latency_s=reply.get("latency_s") if cached else None,
            attempts=attempts,
            model=self.model_id,
            cost_usd=usd,
            cost_source=source,
        )

    def _record(
        self,
        trace: Trace | None,
        purpose: str,
        request: dict[str, Any],
        *,
        resp: ChatResponse | None = None,
        error: str | None = None,
        attempts: int = 1,
    ) -> LLMCall:
        """The call's accounting, on ``trace`` when given."""
        hashed = request_hash(request["messages"], request.get("schema"))
        if resp is None:
            call = LLMCall(model=self.model_id, purpose=purpose, attempts=attempts, error=error, request_hash=hashed)
        else:
            call = LLMCall(
                model=self.model_id,
                purpose=purpose,
                prompt_tokens=resp.prompt_tokens,
                completion_tokens=resp.completion_tokens,
                latency_s=resp.latency_s,
                cached=resp.cached,
                original_latency_s=resp.original_latency_s,
                attempts=resp.attempts,
                request_hash=hashed,
                cost_usd=resp.cost_usd,
                cost_source=resp.cost_source,
            )
        if trace is not None:
            trace.llm_calls.append(call)
        return call


class RecordingClient:
    """An :class:`LLMClient` that notes the calls made without a trace on a list (the runner gives
    each record's metrics one, so a judge's calls and their cost stay with the record they scored)."""

    def __init__(self, client: LLMClient, calls: list[LLMCall]) -> None:
        self.client, self._sink = client, _CallSink(calls)

    def chat(self, messages: list[dict[str, Any]], *, trace: Trace | None = None, **kwargs: Any) -> ChatResponse:
        return self.client.chat(messages, trace=trace if trace is not None else self._sink, **kwargs)

    async def achat(self, messages: list[dict[str, Any]], **kwargs: Any) -> ChatResponse:
        return await asyncio.to_thread(self.chat, messages, **kwargs)

    def __getattr__(self, name: str) -> Any:  # model_id, stats, ... of the client
        return getattr(self.client, name)


@dataclass
class _CallSink:
    llm_calls: list[LLMCall]


def parse_json(text: str) -> Any:
    """The JSON value in ``text`` (surrounding whitespace or a ``` fence allowed); None if invalid."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.strip("`").removeprefix("json").strip()
    try:
        # strict=False accepts raw newlines inside strings: llama.cpp's grammar lets small models
        # emit them, and rejecting an otherwise well-formed reply for it helps nobody.
        return json.loads(stripped, strict=False)
    except ValueError:
        return None


def json_problem(text: str) -> str | None:
    """Why ``text`` is not a JSON value (the parser's message), or None when it is one."""
    if parse_json(text) is not None:
        return None
    try:
        json.loads(text.strip(), strict=False)
    except ValueError as exc:
        return str(exc)
    return "the reply is JSON null"


def cut_off(request: dict[str, Any], reply: dict[str, Any]) -> str | None:
    """Why a reply stopped short, when it used the request's whole ``max_tokens``: its JSON is then
    unfinished rather than malformed, and a re-ask (a longer prompt, the same budget) ends the same way
    (all 7 such re-asks of the embedded judge in the quickstart did, spending 27 % of its completion tokens)."""
    budget = request.get("max_tokens")
    if budget and reply.get("completion_tokens", 0) >= budget:
        return f"the reply was cut off at max_tokens={budget}"
    return None


def reask(request: dict[str, Any], bad_text: str, problem: str) -> dict[str, Any]:
    """The request again, with the invalid reply and the parse error appended for the model."""
    fix = (
        f"Your reply was not valid JSON ({problem}). Reply again with only a JSON value that "
        "follows the requested schema, with no other text."
    )
    messages = [
        *request["messages"],
        {"role": "assistant", "content": bad_text[:4000]},
        {"role": "user", "content": fix},
    ]
    return {**request, "messages": messages}


def _acceptable(reply: dict[str, Any], request: dict[str, Any]) -> bool:
    return request.get("schema") is None or json_problem(reply["text"]) is None


def check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise TypeError(f"messages must be a non-empty list of {{role, content}} dicts, got {messages!r:.200}")
    for i, message in enumerate(messages):
        if (
            not isinstance(message, dict)
            or not isinstance(message.get("role"), str)
            or not isinstance(message.get("content"), str)
        ):
            raise TypeError(f"messages[{i}] must be a dict with str 'role' and 'content', got {message!r:.200}")


# deprecated: moved above the plugin registry it consults
__getattr__ = module_getattr(__name__, {"make_llm": "provbench.llm_setup.make_llm"})
