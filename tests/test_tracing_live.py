"""Live spans for a LlamaIndex pipeline: run in a suite (two units at a time), a third-party
pipeline's retrievals, syntheses and LLM calls are kept as OpenInference spans with the times they
ran, and ``provbench traces`` sends them under the unit's root in place of the approximate mapping
(checked with the OpenTelemetry SDK's in-memory exporter); other systems keep the mapping."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
pytest.importorskip(
    "openinference.instrumentation.llama_index",
    reason="openinference-instrumentation-llama-index (otel extra) is not installed",
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from provbench.integrations.llamaindex import live_spans as live_module  # noqa: E402
from provbench.model import Question  # noqa: E402
from provbench.plugin_api import Environment  # noqa: E402
from provbench.registry import default_registry  # noqa: E402
from provbench.report.data import load_run  # noqa: E402
from provbench.testing import schema_following_llm  # noqa: E402
from provbench.tracing import emit_run  # noqa: E402

HERE = Path(__file__).resolve().parent
SUITE = """\
name: live
dataset: {loader: toy-json, path: questions.json}
knowledge_base: {builder: toy-tiny, directory: kb}
model: {id: schema-following}
systems:
  - llm-only
  - {name: llamaindex, label: li-pipeline, options: {factory: "li_pipeline:graph_rag"}}
metrics: [accuracy]
concurrency: 2
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    import json

    import provbench_plugins.systems
    from runner_helpers import QUESTIONS, builtin_plugin_manager

    from provbench.runner import run_suite

    folder = tmp_path_factory.mktemp("live")
    (folder / "questions.json").write_text(json.dumps(QUESTIONS[:3]))
    (folder / "suite.yaml").write_text(SUITE)
    sys.path.insert(0, str(HERE / "third_party"))
    try:
        pm = builtin_plugin_manager()  # the toy dataset and knowledge base, and the llamaindex system
        pm.register(provbench_plugins.systems, name=provbench_plugins.systems.__name__)
        return run_suite(
            folder / "suite.yaml",
            out=folder / "run",
            pm=pm,
            llm=schema_following_llm(cache_dir=folder / "llm"),
            write_report=False,
        )
    finally:
        sys.path.remove(str(HERE / "third_party"))


def pipeline_records(run):
    found = [r for r in run.records if r.key.system == "li-pipeline"]
    assert len(found) == 3 and all(r.status == "ok" for r in found)
    return found


def kind(span: dict) -> str:
    return span["attributes"].get("openinference.span.kind", "")


def test_each_pipeline_unit_keeps_its_own_live_spans_with_real_times(run_dir):
    run = load_run(run_dir)
    seen: set[str] = set()
    for record in pipeline_records(run):
        live = record.trace.artifacts["live_spans"]
        ids = {s["span_id"] for s in live}
        assert not ids & seen  # units ran two at a time: none got another's spans
        seen |= ids
        roots = [s for s in live if s["parent_id"] is None]
        assert [s["name"] for s in roots] == ["llamaindex pipeline"]
        assert all(s["parent_id"] in ids for s in live if s is not roots[0])  # one tree per unit
        root = roots[0]
        assert 0 < root["end_ns"] - root["start_ns"] <= record.trace.wall_time_s * 1e9
        assert all(root["start_ns"] <= s["start_ns"] <= s["end_ns"] <= root["end_ns"] for s in live)
        assert {"RETRIEVER", "LLM", "EMBEDDING"} <= {kind(s) for s in live}
        llm = [s for s in live if kind(s) == "LLM"]
        assert not any(k.startswith(live_module.PROMPT_ATTRIBUTES) for s in llm for k in s["attributes"])
        innermost = [s for s in llm if not any(c["parent_id"] == s["span_id"] and kind(c) == "LLM" for c in live)]
        assert len(innermost) == len(record.trace.llm_calls)
        for span, call in zip(innermost, record.trace.llm_calls):  # the live span wraps the client's call
            assert span["end_ns"] - span["start_ns"] >= call.latency_s * 1e9 * 0.99


def test_traces_sends_the_live_spans_with_their_times_and_the_calls_joined(run_dir):
    run = load_run(run_dir)
    exporter = InMemorySpanExporter()
    emit_run(run, [exporter])
    spans = exporter.get_finished_spans()
    for record in pipeline_records(run):
        live = record.trace.artifacts["live_spans"]
        root = next(
            s
            for s in spans
            if s.parent is None
            and s.attributes["provbench.question_id"] == record.key.question_id
            and s.attributes["provbench.system"] == "li-pipeline"
        )
        assert root.attributes["provbench.timing"] == "live"
        mine = [s for s in spans if s.context.trace_id == root.context.trace_id and s is not root]
        sent = {(s.name, s.start_time, s.end_time) for s in mine}
        assert {(s["name"], s["start_ns"], s["end_ns"]) for s in live} <= sent
        assert root.start_time == min(s["start_ns"] for s in live)
        joined = [
            s
            for s in mine
            if s.attributes.get("openinference.span.kind") == "LLM" and "provbench.cost_source" in s.attributes
        ]
        assert len(joined) == len(record.trace.llm_calls) and all(s.name.startswith("ProvbenchLLM.") for s in joined)
        assert not [s for s in mine if s.attributes.get("provbench.step.kind")]  # no approximate step spans
    other = next(s for s in spans if s.parent is None and s.attributes["provbench.system"] == "llm-only")
    assert other.attributes["provbench.timing"] == "approximate"


def test_without_the_instrumentor_or_with_the_option_off_no_live_spans(shared_tiny_kb, monkeypatch):
    sys.path.insert(0, str(HERE / "third_party"))
    try:
        question = Question(id="q1", question="Who is the mayor of Dunmere?", answer="Mara Holt")

        def run(**options):
            system = default_registry().create("system", "llamaindex", factory="li_pipeline:graph_rag", **options)
            return system.run(question, Environment(view=shared_tiny_kb.view(), llm=schema_following_llm()))

        assert run().artifacts["live_spans"]
        assert "live_spans" not in run(live_spans=False).artifacts
        monkeypatch.setattr(live_module, "_tracer", False)  # as when the package is not installed
        assert "live_spans" not in run().artifacts
        # LlamaIndex instrumented already when provbench first looks (here by provbench itself, above;
        # as by an application tracing to its own backend): those spans are not taken over
        monkeypatch.setattr(live_module, "_tracer", None)
        assert "live_spans" not in run().artifacts and live_module._tracer is False
    finally:
        sys.path.remove(str(HERE / "third_party"))
