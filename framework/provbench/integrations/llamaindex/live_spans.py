"""Live OpenTelemetry spans of a LlamaIndex pipeline, with the times they really ran.

``provbench traces`` maps a unit's trajectory to spans after the run, with approximate times
(records keep a unit's start and wall time, not when each step ran). For a LlamaIndex pipeline
OpenInference's instrumentor (``openinference-instrumentation-llama-index``, in the ``otel``
extra) reports every retrieval, synthesis and LLM call as it happens; inside
``with live_spans(trace):`` those spans are kept on the unit's trace as
``artifacts["live_spans"]``, and ``provbench traces`` sends them with their real times.

Without the instrumentor installed, or when the application instrumented LlamaIndex itself (its
own tracing then gets the spans), ``live_spans`` records nothing and the after-the-run mapping
stands. The instrumentor hooks LlamaIndex's one dispatcher per process, so it is installed once,
on a tracer provider of provbench's own (the application's global provider is left alone), and
each finished span goes to the unit whose root span it descends from (a context variable:
threads and asyncio tasks of one unit share it, units running at once never mix).

Kept per span: name, ids, parent, start and end (ns since the epoch), status and the OpenInference
attributes, each text clipped to :data:`MAX_TEXT` characters. Prompts are not kept (LLM input
messages, prompt templates and variables, an LLM span's input), as records keep no prompt anywhere.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from ...model import Trace

log = logging.getLogger(__name__)
ARTIFACT = "live_spans"
MAX_TEXT = 4000  # characters of one attribute's text kept (as provbench.tracing keeps of a step)
PROMPT_ATTRIBUTES = ("input.", "llm.input_messages", "llm.prompt_template", "llm.prompts")

_lock = threading.Lock()
_tracer: Any = None  # provbench's tracer once the instrumentor is installed; False when it cannot be
_collected: dict[int, list[Any]] = {}  # trace id -> finished spans, while its unit's root span is open


def available() -> bool:
    """Whether the OpenInference LlamaIndex instrumentor is installed (and hooked, on first call)."""
    return _install() is not False


@contextlib.contextmanager
def live_spans(trace: "Trace", name: str = "llamaindex pipeline") -> Iterator[None]:
    """Record the LlamaIndex spans of the block on ``trace.artifacts["live_spans"]`` (nothing
    without the instrumentor). The block's own root span is kept too: the pipeline's extent."""
    tracer = _install()
    if tracer is False:
        yield
        return
    from opentelemetry import context, trace as otel_trace

    root = tracer.start_span(name, attributes={"openinference.span.kind": "CHAIN"})
    trace_id = root.get_span_context().trace_id
    with _lock:
        _collected[trace_id] = []
    token = context.attach(otel_trace.set_span_in_context(root))
    try:
        yield
    finally:
        context.detach(token)
        root.end()
        with _lock:
            spans = _collected.pop(trace_id, [])
        trace.artifacts[ARTIFACT] = [span_record(span) for span in sorted(spans, key=lambda s: s.start_time)]


def _install() -> Any:
    global _tracer
    with _lock:
        if _tracer is None:
            _tracer = _instrumented_tracer()
        return _tracer


def _instrumented_tracer() -> Any:
    try:
        from openinference.instrumentation import TraceConfig
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
        from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    except ImportError:
        return False

    class ToTheUnit(SpanProcessor):
        """Hands each finished span to the open unit of its trace (a span of no unit is dropped)."""

        def on_end(self, span: Any) -> None:
            with _lock:
                found = _collected.get(span.context.trace_id)
                if found is not None:
                    found.append(span)

    instrumentor = LlamaIndexInstrumentor()  # one per process (OpenTelemetry's instrumentors are singletons)
    if instrumentor.is_instrumented_by_opentelemetry:
        log.info("LlamaIndex is instrumented already (by the application): its spans go there, none kept here")
        return False
    provider = TracerProvider()
    provider.add_span_processor(ToTheUnit())
    config = TraceConfig(hide_input_messages=True, hide_prompts=True, hide_embeddings_vectors=True)
    instrumentor.instrument(tracer_provider=provider, config=config)
    return provider.get_tracer("provbench.live")


def span_record(span: Any) -> dict[str, Any]:
    """One finished SDK span as plain JSON (what records.jsonl can hold)."""
    attributes = {key: _plain(value) for key, value in (span.attributes or {}).items()}
    if attributes.get("openinference.span.kind") == "LLM":  # its input is the prompt
        attributes = {k: v for k, v in attributes.items() if not k.startswith(PROMPT_ATTRIBUTES)}
    parent = span.parent.span_id if span.parent is not None else None
    return {
        "name": span.name,
        "span_id": format(span.context.span_id, "016x"),
        "parent_id": format(parent, "016x") if parent else None,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status": span.status.status_code.name,
        "status_message": span.status.description or "",
        "attributes": attributes,
    }


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + "…"
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value
