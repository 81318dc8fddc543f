"""A LlamaIndex pipeline's trace, from LlamaIndex's own instrumentation events.

Inside ``with capture_trace(trace):`` an unchanged pipeline's retrievals, syntheses and LLM calls
become the unit's :class:`~provbench.model.Trace`:

* every ``RetrievalEndEvent`` (each retriever, sub-retrievers included): a ``retrieval`` step
  (tool ``llamaindex:<retriever class>``, the query, the ids found) and ``trace.retrieved``
  (relations and text units, with the retriever's scores);
* ``trace.visited_entities`` / ``trace.read_text_units``: the entities of the relations and the
  text units in the nodes that reached the model: the source nodes of the pipeline's syntheses
  (``SynthesizeEndEvent``), or nodes marked with :meth:`TraceCapture.mark_reached`; when neither
  happened, every retrieved node;
* LLM calls: the LlamaIndex LLM of :mod:`.models` goes through provbench's ``LLMClient``, which
  records each call on the trace (cached, counted); any other LLM's calls bypass all of that,
  and their end events are counted in ``trace.artifacts["llamaindex"]["llm_events_outside_provbench"]``
  (events, not calls: a LlamaIndex LLM whose chat calls its own completion sends two).

Nodes are mapped back to provbench ids by the view stores created during the capture
(:meth:`ViewPropertyGraphStore.evidence_in`); nodes no store made are counted, not guessed.

Attribution. LlamaIndex's dispatcher is one per process, so one handler serves every unit and
finds the unit from a context variable set by :func:`capture_trace`. Context variables follow
LlamaIndex's own asyncio tasks and ``asyncio.to_thread``, and each runner thread has its own, so
units running at once never mix. A thread a pipeline starts itself without copying the context
(``threading.Thread``, a bare ``ThreadPoolExecutor``) has no unit: its events are counted as
``unattributed_events`` in every capture open at the time, and a warning is logged.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.llm import LLMChatEndEvent, LLMCompletionEndEvent
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.instrumentation.events.synthesis import SynthesizeEndEvent

if TYPE_CHECKING:
    from ...model import Trace
    from .graph_store import ViewPropertyGraphStore

log = logging.getLogger(__name__)

_current: contextvars.ContextVar["TraceCapture | None"] = contextvars.ContextVar(
    "provbench_llamaindex_capture", default=None
)
_open: set["TraceCapture"] = set()
_lock = threading.Lock()
_installed = False
WATCHED = (RetrievalEndEvent, SynthesizeEndEvent, LLMChatEndEvent, LLMCompletionEndEvent)


@dataclass
class Evidence:
    """provbench ids behind LlamaIndex nodes: text units, relations, and the relations' entities."""

    text_units: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)

    def add(self, other: "Evidence") -> None:
        for name in ("text_units", "relations", "entities"):
            mine = getattr(self, name)
            mine.extend(i for i in getattr(other, name) if i not in mine)

    def __bool__(self) -> bool:
        return bool(self.text_units or self.relations or self.entities)


class TraceCapture:
    """What one unit's pipeline did, as LlamaIndex reported it; written to ``trace`` on exit."""

    def __init__(self, trace: "Trace") -> None:
        self.trace = trace
        self.stores: list["ViewPropertyGraphStore"] = []
        self._lock = threading.Lock()
        self._retrieved: list[Evidence] = []
        self._reached: list[Evidence] | None = None  # None: nothing said what reached the model
        self._llm_events = 0
        self._provbench_calls = 0
        self._unmapped = 0
        self._unattributed = 0
        self._errors: list[str] = []

    # -- what the pipeline and the adapters report ----------------------------------------------------

    def add_store(self, store: "ViewPropertyGraphStore") -> None:
        with self._lock:
            self.stores.append(store)

    def evidence(self, nodes: Iterable[Any]) -> Evidence:
        """provbench ids behind LlamaIndex nodes (or ``NodeWithScore``\\ s), by this capture's stores."""
        found = Evidence()
        for node in nodes:
            found.add(self._evidence_of(node))
        return found

    def mark_reached(self, nodes: Iterable[Any]) -> None:
        """Say that these nodes reached the model (e.g. put in a prompt by the caller)."""
        evidence = self.evidence(nodes)
        with self._lock:
            self._reached = [*(self._reached or []), evidence]

    def count_provbench_call(self) -> None:
        with self._lock:
            self._provbench_calls += 1

    # -- events --------------------------------------------------------------------------------------

    def handle(self, event: Any) -> None:
        if isinstance(event, RetrievalEndEvent):
            self._on_retrieval(event)
        elif isinstance(event, SynthesizeEndEvent):
            self.mark_reached(getattr(event.response, "source_nodes", None) or [])
        elif isinstance(event, (LLMChatEndEvent, LLMCompletionEndEvent)):
            with self._lock:
                self._llm_events += 1

    def _on_retrieval(self, event: RetrievalEndEvent) -> None:
        query = event.str_or_query_bundle
        query = query if isinstance(query, str) else getattr(query, "query_str", str(query))
        found, results = [], []
        for node in event.nodes:
            evidence = self._evidence_of(node)
            found.append(evidence)
            for kind, ids in (("relationship", evidence.relations), ("text_unit", evidence.text_units)):
                results += [{"kind": kind, "id": i, "score": node.score} for i in ids]
        with self._lock:
            self._retrieved += found
            for item in results:
                self.trace.record_retrieved(item["kind"], item["id"], item["score"])
            self.trace.add_step(
                "retrieval",
                tool=f"llamaindex:{retriever_name(event.span_id)}",
                arguments={"query": query},
                result=results,
            )

    def _evidence_of(self, node: Any) -> Evidence:
        found = Evidence()
        for store in list(self.stores):
            found.add(store.evidence_in(node))
        if not found:
            with self._lock:
                self._unmapped += 1
        return found

    def note_unattributed(self) -> None:
        with self._lock:
            self._unattributed += 1

    def note_error(self, message: str) -> None:
        with self._lock:
            self._errors.append(message)

    # -- the trace -----------------------------------------------------------------------------------

    def finish(self) -> None:
        """Write what reached the model and the capture's counts to the trace."""
        with self._lock:
            reached = self._retrieved if self._reached is None else self._reached
            for evidence in reached:
                self.trace.visit(*evidence.entities)
                self.trace.read_text_unit(*evidence.text_units)
            notes = {
                "llm_events_outside_provbench": max(0, self._llm_events - self._provbench_calls),
                "unmapped_nodes": self._unmapped,
                "unattributed_events": self._unattributed,
                "capture_errors": list(self._errors),
            }
            notes = {key: value for key, value in notes.items() if value}
            if notes:
                self.trace.artifacts["llamaindex"] = notes


def retriever_name(span_id: str | None) -> str:
    """The retriever's class, from the span id LlamaIndex gives an event ("Class.method-uuid")."""
    return (span_id or "").partition("-")[0].rpartition(".")[0] or "retriever"


@contextlib.contextmanager
def capture_trace(trace: "Trace") -> Iterator[TraceCapture]:
    """Record the LlamaIndex pipeline run inside this block on ``trace`` (see the module docstring).
    Create the view store inside the block (``property_graph_index`` / ``property_graph_store``),
    or add it with :meth:`TraceCapture.add_store`, so nodes can be mapped back to ids."""
    install()
    capture = TraceCapture(trace)
    token = _current.set(capture)
    with _lock:
        _open.add(capture)
    try:
        yield capture
    finally:
        with _lock:
            _open.discard(capture)
        _current.reset(token)
        capture.finish()


def current_capture() -> TraceCapture | None:
    """The capture of the unit running in this context, if any."""
    return _current.get()


def register_store(store: "ViewPropertyGraphStore") -> None:
    """A view store created while a capture runs maps that capture's nodes."""
    capture = _current.get()
    if capture is not None:
        capture.add_store(store)


class _Router(BaseEventHandler):
    """The one handler on LlamaIndex's root dispatcher: hands each event to its unit's capture."""

    @classmethod
    def class_name(cls) -> str:
        return "ProvbenchTraceRouter"

    def handle(self, event: Any, **kwargs: Any) -> None:
        if not isinstance(event, WATCHED):
            return
        capture = _current.get()
        if capture is None:
            with _lock:
                waiting = list(_open)
            if waiting:  # a pipeline's own thread lost the context: say so rather than guess a unit
                log.warning(
                    "a LlamaIndex %s came from a thread without a unit's context; it is not in "
                    "any trace (start threads with contextvars.copy_context())",
                    type(event).__name__,
                )
                for other in waiting:
                    other.note_unattributed()
            return
        try:
            capture.handle(event)
        except Exception as exc:  # the dispatcher would swallow it silently
            log.exception("recording a LlamaIndex %s failed", type(event).__name__)
            capture.note_error(f"{type(event).__name__}: {type(exc).__name__}: {exc}"[:300])


def install() -> None:
    """Put the router on LlamaIndex's root dispatcher (once per process)."""
    global _installed
    with _lock:
        if not _installed:
            get_dispatcher().add_event_handler(_Router())
            _installed = True
