"""Per-unit capture: every LLM request a unit makes, attributed to that unit from any thread.

The runner opens one :class:`UnitCapture` around each unit's system run. A request finds it two ways:

* **the unit's client**: ``env.llm`` is the run's client bound to the capture
  (:meth:`provbench.llm.LLMClient.bound_to`), so every request through it is attributed to the unit,
  whichever thread makes it (a thread pool the system starts, a library's worker thread);
* **the context**: while the system runs, :func:`current_capture` returns the unit's capture in the
  runner's thread and wherever that context is copied (asyncio tasks, ``asyncio.to_thread``,
  :func:`propagate`), so requests through another :class:`~provbench.llm.LLMClient` are attributed
  too, and an integration (e.g. LlamaIndex instrumentation) can find the unit it works for.
  Threads do not inherit context: wrap what a thread runs with :func:`propagate`.

A captured request keeps its messages and the model's reply for the leak guard
(:mod:`provbench.leakguard`); records get an :class:`~provbench.model.LLMCall` with the request's
hash (:func:`request_hash`) and the requests themselves, redacted and compressed
(:func:`provbench.audit.request_log`). When the system returns, the runner adds to its trace the calls it
did not record itself (made without ``trace=``) and what integrations :meth:`~UnitCapture.observe`-d.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import itertools
import json
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterator, TypeVar

from .model import LLMCall, Trace

T = TypeVar("T")
_CURRENT: contextvars.ContextVar["UnitCapture | None"] = contextvars.ContextVar("provbench_unit", default=None)


def request_hash(messages: list[dict[str, Any]], schema: dict[str, Any] | None = None) -> str:
    """A stable hash of what a model is shown: the messages and the reply schema (not sampling
    parameters such as the seed, which differ between a unit and its baseline)."""
    text = json.dumps({"messages": messages, "schema": schema}, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class CapturedRequest:
    """One request of a unit: ``sent`` and ``replied`` order it among the unit's other requests
    and replies (a reply with ``replied < other.sent`` came back before ``other`` was sent)."""

    messages: tuple[tuple[str, str], ...]  # (role, content)
    call: LLMCall
    reply: str | None
    sent: int
    replied: int


class UnitCapture:
    """What one unit asked its LLMs, and what integrations observed it read (thread-safe)."""

    def __init__(self, key: str = "") -> None:
        self.key = key
        self._lock = threading.Lock()
        self._clock = itertools.count()
        self._requests: list[CapturedRequest] = []
        self._observed = Trace(question_id="", system="")
        # the unit's system's fixed prompt text (System.instructions), for the leak guard
        self.instructions: tuple[str, ...] = ()

    # -- requests (called by LLMClient) -----------------------------------------------------------
    def tick(self) -> int:
        """A point in the unit's order of events: take one when a request is sent."""
        with self._lock:
            return next(self._clock)

    def add_request(self, messages: list[dict[str, Any]], call: LLMCall, reply: str | None, sent: int) -> None:
        kept = tuple((str(m.get("role", "")), str(m.get("content", ""))) for m in messages)
        with self._lock:
            self._requests.append(CapturedRequest(kept, call, reply, sent, next(self._clock)))

    @property
    def requests(self) -> list[CapturedRequest]:
        """The unit's requests in the order they were sent."""
        with self._lock:
            return sorted(self._requests, key=lambda r: r.sent)

    # -- integrations ------------------------------------------------------------------------------
    def observe(self, update: Callable[[Trace], Any]) -> None:
        """Record what an integration saw the unit retrieve or read, in knowledge-base ids:
        ``update(trace)`` runs under the capture's lock on a trace of observations, which the
        runner adds to the trace the system returns (steps, retrieved items, visited entities,
        read text units and communities), e.g. ``capture.observe(lambda t: t.read_text_unit(tid))``."""
        with self._lock:
            update(self._observed)

    # -- the unit's context ------------------------------------------------------------------------
    @contextlib.contextmanager
    def active(self) -> Iterator["UnitCapture"]:
        """Make this the current capture in this context (the runner does it around a system's run;
        an integration does it in a thread it starts for the unit)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    def complete(self, trace: Trace) -> Trace:
        """Add to the system's ``trace`` the unit's LLM calls it did not record and the observations."""
        recorded = Counter(call.request_hash for call in trace.llm_calls)  # a copied trace still counts
        adopted = []
        for request in self.requests:
            if recorded[request.call.request_hash] > 0:
                recorded[request.call.request_hash] -= 1
            else:
                adopted.append(request.call)
        with self._lock:
            observed = self._observed.model_copy(deep=True)
        trace.llm_calls.extend(adopted)
        for step in observed.steps:
            trace.add_step(step.kind, **step.model_dump(exclude={"index", "kind"}))
        seen = {(item.kind, item.id) for item in trace.retrieved}
        trace.retrieved.extend(item for item in observed.retrieved if (item.kind, item.id) not in seen)
        trace.visit(*observed.visited_entities)
        trace.read_text_unit(*observed.read_text_units)
        trace.read_community(*observed.read_communities)
        return trace


def current_capture() -> UnitCapture | None:
    """The capture of the unit running in this context, or None outside a unit."""
    return _CURRENT.get()


def propagate(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` bound to a copy of the calling context, to hand to a thread: the thread then runs in
    the same unit (``pool.submit(propagate(work), item)``)."""
    context = contextvars.copy_context()

    @functools.wraps(fn)
    def run_in_context(*args: Any, **kwargs: Any) -> T:
        return context.copy().run(fn, *args, **kwargs)

    return run_in_context
