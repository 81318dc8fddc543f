"""Traces out: a run's units as OpenTelemetry spans under OpenInference's conventions, checked with
the OpenTelemetry SDK's in-memory exporter, as OTLP/JSON lines, and through a loopback OTLP/HTTP
receiver that decodes the protobuf requests with OpenTelemetry's own message types."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from provbench.cli import main  # noqa: E402
from provbench.report.data import load_run  # noqa: E402
from provbench.tracing import emit_run, project_name  # noqa: E402

KINDS = {k.value for k in OpenInferenceSpanKindValues}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    from runner_helpers import builtin_plugin_manager, builtin_reply, write_builtin_suite

    from provbench.llm import LLMClient, ScriptedBackend
    from provbench.runner import run_suite

    folder = tmp_path_factory.mktemp("tracing")
    llm = LLMClient(ScriptedBackend(replies=[builtin_reply] * 500))
    return run_suite(
        write_builtin_suite(folder / "suite"),
        out=folder / "run",
        pm=builtin_plugin_manager(),
        llm=llm,
        write_report=False,
    )


@pytest.fixture(scope="module")
def spans(run_dir):
    exporter = InMemorySpanExporter()
    count = emit_run(load_run(run_dir), [exporter])
    found = exporter.get_finished_spans()
    assert len(found) == count
    return found


def test_one_trace_per_unit_with_a_root_span(run_dir, spans):
    run = load_run(run_dir)
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == len(run.records) == len({s.context.trace_id for s in spans})
    for span in spans:  # every span's kind is an OpenInference span kind, and it sits in its unit's trace
        assert span.attributes[SpanAttributes.OPENINFERENCE_SPAN_KIND] in KINDS
        assert span.end_time >= span.start_time
    by_trace = {s.context.trace_id: s for s in roots}
    for span in spans:
        if span.parent is not None:
            assert span.parent.span_id == by_trace[span.context.trace_id].context.span_id


def test_the_agent_unit_carries_its_question_answer_scores_and_tools(run_dir, spans):
    root = next(
        s
        for s in spans
        if s.parent is None
        and s.attributes["provbench.system"] == "agentic-graphrag"
        and s.attributes["provbench.condition"] == "baseline"
        and s.attributes["provbench.question_id"] == "q1"
    )
    assert root.attributes[SpanAttributes.OPENINFERENCE_SPAN_KIND] == "AGENT"
    assert root.attributes[SpanAttributes.INPUT_VALUE] == "Who directed Glass Harbor?"
    run = load_run(run_dir)
    record = next(r for r in run.records if r.key.as_str() == "agentic-graphrag|baseline|0|q1")
    assert root.attributes[SpanAttributes.OUTPUT_VALUE] == record.trace.answer
    assert root.attributes[SpanAttributes.SESSION_ID] == run.manifest.run_id
    assert root.attributes["provbench.score.accuracy"] == record.scores["accuracy"]
    assert json.loads(root.attributes[SpanAttributes.METADATA])["system"] == "agentic-graphrag"
    children = [s for s in spans if s.parent is not None and s.context.trace_id == root.context.trace_id]
    tools = [s for s in children if s.attributes[SpanAttributes.OPENINFERENCE_SPAN_KIND] == "TOOL"]
    assert tools and all(s.attributes[SpanAttributes.TOOL_NAME] == s.name for s in tools)
    assert "submit_answer" in {s.name for s in tools}
    llm = [s for s in children if s.attributes[SpanAttributes.OPENINFERENCE_SPAN_KIND] == "LLM"]
    assert llm and all(s.attributes[SpanAttributes.LLM_MODEL_NAME] == "scripted" for s in llm)
    assert all(
        s.attributes[SpanAttributes.LLM_TOKEN_COUNT_TOTAL]
        == s.attributes[SpanAttributes.LLM_TOKEN_COUNT_PROMPT] + s.attributes[SpanAttributes.LLM_TOKEN_COUNT_COMPLETION]
        for s in llm
    )
    assert all(
        s.attributes[SpanAttributes.LLM_COST_TOTAL] == 0 and s.attributes["provbench.cost_source"] == "local"
        for s in llm
    )  # the scripted model runs here: priced 0, marked local


def test_retrieved_items_are_retrieval_documents(spans):
    retrievers = [s for s in spans if s.name == "retrieved items"]
    assert retrievers
    attributes = retrievers[0].attributes
    assert attributes[SpanAttributes.OPENINFERENCE_SPAN_KIND] == "RETRIEVER"
    assert attributes[f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.0.document.id"]
    assert json.loads(attributes[f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.0.document.metadata"])["kind"]
    scores = [v for s in retrievers for k, v in s.attributes.items() if k.endswith(".document.score")]
    assert scores and all(isinstance(v, float) for v in scores)  # a scored item carries its score


def test_ids_are_stable_across_exports(run_dir, spans):
    again = InMemorySpanExporter()
    emit_run(load_run(run_dir), [again])
    assert sorted((s.context.trace_id, s.context.span_id) for s in again.get_finished_spans()) == sorted(
        (s.context.trace_id, s.context.span_id) for s in spans
    )


def test_otlp_json_file_and_loopback_receiver_get_every_span(run_dir, spans, tmp_path):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    received: list[ExportTraceServiceRequest] = []

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            assert self.path == "/v1/traces" and self.headers["Content-Type"] == "application/x-protobuf"
            assert self.headers["x-team"] == "eval"
            received.append(ExportTraceServiceRequest.FromString(body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()
            self.wfile.write(b"")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        out = tmp_path / "spans.jsonl"
        result = CliRunner().invoke(
            main,
            ["traces", str(run_dir), "--out", str(out), "--endpoint", endpoint, "--header", "x-team=eval"],
            catch_exceptions=False,
        )
        assert result.exit_code == 0 and f"{len(spans)} span(s) exported" in result.output
    finally:
        server.shutdown()
        server.server_close()
    sent = [span for request in received for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    assert len(sent) == len(spans)
    resource = {a.key: a.value.string_value for a in received[0].resource_spans[0].resource.attributes}
    run = load_run(run_dir)  # one project per run: runs of a suite do not mix in Phoenix
    assert resource["service.name"] == "provbench"
    assert resource["openinference.project.name"] == f"builtin-{run.manifest.run_id}" == project_name(run)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    written = [
        span for line in lines for rs in line["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]
    ]
    assert len(written) == len(spans)
    assert all(len(s["traceId"]) == 32 and len(s["spanId"]) == 16 for s in written)  # OTLP/JSON: hex ids
    assert {s["traceId"] for s in written} == {format(s.context.trace_id, "032x") for s in spans}


def test_traces_needs_a_destination(run_dir):
    result = CliRunner().invoke(main, ["traces", str(run_dir)])
    assert result.exit_code == 2 and "--out FILE, --endpoint URL" in result.output


def test_a_project_named_on_the_command_line_holds_the_spans(run_dir, tmp_path):
    out = tmp_path / "spans.jsonl"
    result = CliRunner().invoke(main, ["traces", str(run_dir), "--out", str(out), "--project", "builtin"])
    assert result.exit_code == 0, result.output
    line = json.loads(out.read_text().splitlines()[0])
    resource = {a["key"]: a["value"]["stringValue"] for a in line["resourceSpans"][0]["resource"]["attributes"]}
    assert resource["openinference.project.name"] == "builtin"


def test_phoenix_and_endpoint_are_one_or_the_other(run_dir):
    result = CliRunner().invoke(
        main, ["traces", str(run_dir), "--endpoint", "http://127.0.0.1:9/v1/traces", "--phoenix", "http://127.0.0.1:9"]
    )
    assert result.exit_code == 2 and "not both" in result.output
