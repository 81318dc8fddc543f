"""Trajectories out as OpenTelemetry spans, with OpenInference's semantic conventions, so Phoenix,
Langfuse or any OpenTelemetry backend shows a provbench run (``provbench traces``; the ``otel`` extra).

Each unit (record) becomes one trace:

* a root span (``AGENT`` when the system called tools, else ``CHAIN``) named "system · condition":
  the question as ``input.value``, the answer as ``output.value``, the run's id as ``session.id``,
  the unit key, status, seed, scores, citations, visited entities and the leak guard's verdict as
  ``provbench.*`` attributes (and ``metadata``); a failed unit's span has status ERROR;
* a ``RETRIEVER`` span with the trace's retrieved items as ``retrieval.documents`` (id, score, kind);
* one span per step in trajectory order: ``RETRIEVER`` for a retrieval, ``TOOL`` for a tool call
  (``tool.name``, ``tool.parameters``, arguments in, result out), ``CHAIN`` for a generation, and
  an ERROR status for a rejected model output or an error;
* one ``LLM`` span per LLM call: model, purpose, prompt and completion tokens, cached, attempts.

Times: provbench records a unit's start (to the second), its wall time and each LLM call's latency,
not when each step ran, so LLM spans follow one another from the unit's start with their own
latency and step spans are spread evenly over the unit in trajectory order
(``provbench.timing = approximate``). A unit that kept live spans (a LlamaIndex pipeline's,
``artifacts["live_spans"]``: :mod:`provbench.integrations.llamaindex.live_spans`) sends those, with
the times they ran, in place of its step spans, provbench's LLM calls joined to them
(``provbench.timing = live``). The project is the run's own (:func:`project_name`) unless named. Trace and span ids derive from the run id and the unit key,
so exporting a run twice sends the same ids. Prompts are not exported: records never store them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .errors import UserError
from .model import LLMCall, RunRecord, Step
from .results.data import RunData, load_run
from .run_store import leak_status

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

EXTRA_HINT = "pip install 'provbench[otel]'"
MAX_TEXT = 4000  # characters of a step's arguments or result kept on its span
LIVE_SPANS = "live_spans"  # a trace's artifact: live spans, with real times (integrations.llamaindex.live_spans)


def export_traces(
    run_dir: str | Path,
    *,
    out: str | Path | None = None,
    endpoint: str | None = None,
    headers: dict[str, str] | None = None,
    project: str | None = None,
) -> int:
    """Send every unit of the run as spans to ``out`` (OTLP JSON lines) and/or an OTLP/HTTP
    ``endpoint`` (e.g. http://127.0.0.1:6006/v1/traces), in ``project`` (by default the run's own:
    :func:`project_name`); returns the number of spans."""
    if out is None and endpoint is None:
        raise UserError("traces: give --out FILE, --endpoint URL, --phoenix URL, or more than one")
    run = load_run(run_dir)
    exporters = []
    if out is not None:
        exporters.append(OtlpJsonFileExporter(Path(out)))
    if endpoint is not None:
        exporter_class = _otel("opentelemetry.exporter.otlp.proto.http.trace_exporter").OTLPSpanExporter
        exporters.append(exporter_class(endpoint=endpoint, headers=headers or {}))
    return emit_run(run, exporters, project=project)


def project_name(run: RunData) -> str:
    """The run's own project (Phoenix groups traces by it): suite name and run id, so runs of one
    suite do not mix."""
    return f"{run.manifest.suite_name}-{run.manifest.run_id}"


def emit_run(run: RunData, exporters: Sequence[Any], project: str | None = None) -> int:
    """Emit the run's spans to OpenTelemetry span exporters; returns the number of spans."""
    sdk = _otel("opentelemetry.sdk.trace")
    export = _otel("opentelemetry.sdk.trace.export")
    resources = _otel("opentelemetry.sdk.resources")
    ids = UnitIds(run.manifest.run_id)
    provider = sdk.TracerProvider(
        id_generator=ids,
        resource=resources.Resource.create(
            {
                "service.name": "provbench",
                "openinference.project.name": project or project_name(run),
                "provbench.run_id": run.manifest.run_id,
                "provbench.suite": run.manifest.suite_name,
            }
        ),
    )
    checked = [CheckedExporter(exporter) for exporter in exporters]
    for exporter in checked:
        provider.add_span_processor(export.BatchSpanProcessor(exporter, max_queue_size=1 << 16))
    spans = 0
    try:
        for number, record in enumerate(run.records, start=1):
            ids.unit(record.key.as_str())
            spans += unit_spans(provider, run, record)
            if number % 200 == 0:
                provider.force_flush()
    finally:
        provider.shutdown()  # flushes what is queued
    failures = [f"{e.lost} of {spans} span(s) to {e.name} ({e.problem})" for e in checked if e.lost]
    if failures:
        raise UserError("traces: not exported: " + "; ".join(failures))
    return spans


class CheckedExporter:
    """A span exporter that counts the spans its inner exporter failed to send (the SDK only logs
    it, so an export to a closed port or a 401 would otherwise look like success)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = str(getattr(inner, "_endpoint", None) or getattr(inner, "path", None) or type(inner).__name__)
        self.lost = 0
        self.problem = ""

    def export(self, spans: Sequence[Any]) -> Any:
        result_type = _otel("opentelemetry.sdk.trace.export").SpanExportResult
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # noqa: BLE001 - an exporter's own bug or I/O error: counted, the export goes on
            result, self.problem = result_type.FAILURE, f"{type(exc).__name__}: {exc}"
        if result != result_type.SUCCESS:
            self.lost += len(spans)
            self.problem = self.problem or "the exporter reported a failure; see the log above"
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        flush = getattr(self.inner, "force_flush", None)
        return flush(timeout_millis) if flush is not None else True


def unit_spans(provider: "TracerProvider", run: RunData, record: RunRecord) -> int:
    """One record's spans (root, retrieved items, steps, LLM calls); returns how many."""
    from opentelemetry.trace import set_span_in_context

    tracer = provider.get_tracer("provbench")
    trace = record.trace
    live = (trace.artifacts.get(LIVE_SPANS) or []) if trace is not None else []
    start = min(span["start_ns"] for span in live) if live else _ns(record.started_at)  # the latter to the second
    wall = int(1e9 * ((trace.wall_time_s if trace and trace.wall_time_s is not None else 0.0) or 0.001))
    root = tracer.start_span(
        f"{record.key.system} · {record.key.condition}", start_time=start, attributes=root_attributes(run, record)
    )
    if record.status == "failed":
        _fail(root, record.error or "failed")
    context, count = set_span_in_context(root), 1
    if trace is not None:
        if trace.retrieved:
            tracer.start_span(
                "retrieved items",
                context=context,
                start_time=start,
                attributes={"openinference.span.kind": "RETRIEVER", **_retrieval_attributes(trace.retrieved)},
            ).end(start)
            count += 1
        steps = [] if live else trace.steps  # a live unit's steps are its live spans
        calls = live_llm_calls(tracer, context, live, trace.llm_calls) if live else trace.llm_calls
        _step_spans(tracer, context, steps, start, wall)
        offset = _call_spans(tracer, context, calls, start)
        count += len(steps) + len(calls) + len(live)
    root.end(max(start + wall, offset if trace else start, *(span["end_ns"] for span in live)))
    return count


def _fail(span: Any, error: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, error[:500]))


def _retrieval_attributes(retrieved: list[Any]) -> dict[str, Any]:
    """OpenInference's attributes of the retrieved items: id, kind and score of each."""
    documents: dict[str, Any] = {}
    for i, item in enumerate(retrieved):
        documents[f"retrieval.documents.{i}.document.id"] = item.id
        documents[f"retrieval.documents.{i}.document.metadata"] = json.dumps({"kind": item.kind})
        if item.score is not None:
            documents[f"retrieval.documents.{i}.document.score"] = item.score
    return documents


def _step_spans(tracer: Any, context: Any, steps: list[Any], start: int, wall: int) -> None:
    """One instant span a step, spread evenly over the unit's wall time (steps record no times)."""
    for i, step in enumerate(steps):
        at = start + wall * (i + 1) // (len(steps) + 1)
        span = tracer.start_span(
            step.tool or step.kind, context=context, start_time=at, attributes=step_attributes(step)
        )
        if step.kind in ("rejection", "error") or step.error:
            _fail(span, step.error or step.kind)
        span.end(at)


def _call_spans(tracer: Any, context: Any, calls: list[LLMCall], start: int) -> int:
    """One span an LLM call, laid end to end from ``start`` by their latencies; returns the last end."""
    offset = start
    for call in calls:
        end = offset + max(1, int(1e9 * call.latency_s))
        span = tracer.start_span(
            call.purpose or "llm",
            context=context,
            start_time=offset,
            attributes={"openinference.span.kind": "LLM", **llm_call_attributes(call)},
        )
        if call.error:
            _fail(span, call.error)
        span.end(end)
        offset = end
    return offset


def llm_call_attributes(call: LLMCall) -> dict[str, Any]:
    """What provbench knows of an LLM call: model, tokens, cost, whether cached, attempts."""
    attributes: dict[str, Any] = {
        "llm.model_name": call.model,
        "llm.token_count.prompt": call.prompt_tokens,
        "llm.token_count.completion": call.completion_tokens,
        "llm.token_count.total": call.prompt_tokens + call.completion_tokens,
        "provbench.purpose": call.purpose,
        "provbench.cached": call.cached,
        "provbench.attempts": call.attempts,
        "provbench.cost_source": call.cost_source,
    }
    if call.cost_usd is not None:  # an unknown price is left out, never sent as 0
        attributes["llm.cost.total"] = call.cost_usd
    return attributes


def live_llm_calls(tracer: Any, context: Any, live: list[dict[str, Any]], calls: list[LLMCall]) -> list[LLMCall]:
    """Send a unit's live spans (a LlamaIndex pipeline's, with their own times) under its root.
    provbench's LLM calls join the innermost live LLM spans, in order, when they are as many
    (LlamaIndex nests one LLM span in another: predict over chat); the calls returned did not
    join and are sent as their own spans."""
    from opentelemetry.trace import Status, StatusCode, set_span_in_context

    known = {span["span_id"] for span in live}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for span in live:
        children.setdefault(span["parent_id"] if span["parent_id"] in known else None, []).append(span)
    innermost = [
        s
        for s in live
        if s["attributes"].get("openinference.span.kind") == "LLM"
        and not any(c["attributes"].get("openinference.span.kind") == "LLM" for c in children.get(s["span_id"], []))
    ]
    joined = dict(zip((s["span_id"] for s in innermost), calls)) if len(innermost) == len(calls) else {}

    def send(span: dict[str, Any], parent: Any) -> None:
        attributes = {k: v for k, v in span["attributes"].items() if v is not None}
        if span["span_id"] in joined:
            attributes.update(llm_call_attributes(joined[span["span_id"]]))
        sent = tracer.start_span(span["name"], context=parent, start_time=span["start_ns"], attributes=attributes)
        if span["status"] == "ERROR":
            sent.set_status(Status(StatusCode.ERROR, span["status_message"][:500]))
        for child in children.get(span["span_id"], []):
            send(child, set_span_in_context(sent))
        sent.end(span["end_ns"])

    for top in children.get(None, []):
        send(top, context)
    return [] if joined else calls


def root_attributes(run: RunData, record: RunRecord) -> dict[str, Any]:
    trace, key = record.trace, record.key
    question = run.questions.get(key.question_id)
    kind = "AGENT" if trace and any(s.kind == "tool_call" for s in trace.steps) else "CHAIN"
    attributes: dict[str, Any] = {
        "openinference.span.kind": kind,
        "session.id": run.manifest.run_id,
        "input.value": question.question if question else key.question_id,
        "output.value": trace.answer if trace and trace.answer is not None else "",
        "tag.tags": [key.system, key.condition],
        "provbench.timing": "live" if trace and trace.artifacts.get(LIVE_SPANS) else "approximate",
        "provbench.question_id": key.question_id,
        "provbench.system": key.system,
        "provbench.condition": key.condition,
        "provbench.repeat": key.repeat,
        "provbench.variant": key.variant,
        "provbench.status": record.status,
        "provbench.gold": record.gold,
        "provbench.leak_check": leak_status(record) or "",
        **{f"provbench.score.{name}": value for name, value in record.scores.items() if value is not None},
    }
    if record.seed is not None:
        attributes["provbench.seed"] = record.seed
    if trace is not None:
        attributes.update(
            {
                "provbench.outcome": trace.outcome,
                "provbench.visited_entities": trace.visited_entities,
                "provbench.read_text_units": trace.read_text_units,
                **{f"provbench.cited.{kind}": ids for kind, ids in trace.citations.model_dump().items() if ids},
            }
        )
        if trace.confidence is not None:
            attributes["provbench.confidence"] = trace.confidence
    attributes["metadata"] = json.dumps(
        {k.removeprefix("provbench."): v for k, v in attributes.items() if k.startswith("provbench.")},
        ensure_ascii=False,
        default=str,
    )
    return attributes


def step_attributes(step: Step) -> dict[str, Any]:
    arguments = _text(step.arguments) if step.arguments else ""
    result = _text(step.result) if step.result is not None else ""
    kind = {"retrieval": "RETRIEVER", "tool_call": "TOOL"}.get(step.kind, "CHAIN")
    attributes: dict[str, Any] = {
        "openinference.span.kind": kind,
        "input.value": arguments,
        "output.value": result,
        "provbench.step.index": step.index,
        "provbench.step.kind": step.kind,
    }
    if kind == "TOOL":
        attributes.update({"tool.name": step.tool or "", "tool.parameters": arguments})
    if step.thought:
        attributes["provbench.step.thought"] = step.thought[:MAX_TEXT]
    return attributes


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def _ns(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1e9)


def _otel(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(f"exporting traces needs OpenTelemetry: {EXTRA_HINT}") from None


class UnitIds:
    """Trace ids from the run id and the unit key, span ids from a generator seeded by them: the
    same run exported twice gets the same ids (an OpenTelemetry ``IdGenerator``)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.unit("")

    def unit(self, key: str) -> None:
        digest = self._digest(key)
        self._trace_id = int.from_bytes(digest[:16], "big") or 1
        self._spans = random.Random(digest)

    def root_span_id(self, key: str) -> int:
        """The id of the unit's root span: the first its generator gives (``unit_spans`` starts there)."""
        return random.Random(self._digest(key)).getrandbits(64) or 1

    def _digest(self, key: str) -> bytes:
        return hashlib.sha256(f"{self.run_id}|{key}".encode()).digest()

    def generate_trace_id(self) -> int:
        return self._trace_id

    def generate_span_id(self) -> int:
        return self._spans.getrandbits(64) or 1

    def is_trace_id_random(self) -> bool:
        return False  # derived from the unit, not drawn (W3C's "random" trace flag stays off)


class OtlpJsonFileExporter:
    """An OpenTelemetry span exporter writing OTLP/JSON, one ExportTraceServiceRequest per line
    (the file format of the OpenTelemetry Collector's file exporter and ``otlpjsonfile`` receiver):
    spans encoded by OpenTelemetry's own OTLP encoder, trace and span ids as hex strings."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")

    def export(self, spans: Sequence[Any]) -> Any:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        data = MessageToDict(encode_spans(spans))
        for resource_spans in data.get("resourceSpans", []):
            for scope_spans in resource_spans.get("scopeSpans", []):
                for span in scope_spans.get("spans", []):
                    for field in ("traceId", "spanId", "parentSpanId"):
                        if field in span:
                            span[field] = base64.b64decode(span[field]).hex()
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(data, ensure_ascii=False) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
