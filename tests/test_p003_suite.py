"""Paper 003 end to end: suites/fever-garag.yaml on a schema-following LLM (its GA-RAG graphs are
not empty), the report's Table I, a re-run from the LLM cache, the fever-wiki KB, and Table I's
metric definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO
from provbench.llm.client import LLMClient
from provbench.model import BASELINE, Fact, Question, RunRecord, Trace, UnitKey
from provbench.plugin_api import MetricContext
from provbench.testing import scripted_llm
from provbench.testing.llms import SchemaFollowingBackend

SUITE = REPO / "suites" / "fever-garag.yaml"
MINI = REPO / "datasets" / "fever-mini" / "dev.jsonl"


def schema_llm(cache: Path) -> tuple[LLMClient, SchemaFollowingBackend]:
    backend = SchemaFollowingBackend()
    return LLMClient(backend, cache_dir=cache, max_attempts=1), backend


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    from provbench.runner import run_suite

    root = tmp_path_factory.mktemp("p003")
    llm, backend = schema_llm(root / "llm")
    run_dir = run_suite(SUITE, limit=3, out=root / "runs" / "first", llm=llm)
    return root, run_dir, backend


def test_suite_runs_every_unit_and_reports_table1(suite_run):
    from provbench.run_store import RunStore

    _, run_dir, backend = suite_run
    records = RunStore(run_dir).load_records().values()
    systems = {r.key.system for r in records}
    assert systems == {
        "vanilla-rag",
        "ga-rag",
        "ga-rag-gamma0",
        "ga-rag-authors",
        "ga-rag-authors-gate",
        "planning-loop",
    }  # record keys
    conditions = {(r.key.system, r.key.condition) for r in records}
    for system in ("vanilla-rag", "ga-rag"):
        assert {(system, c) for c in ("cited-removal", "random-removal", "full-isolation")} <= conditions
    assert all(r.status == "ok" for r in records), [r.error for r in records if r.status != "ok"]
    graph = next(r for r in records if r.key.system == "ga-rag" and r.key.condition == BASELINE).trace
    node = graph.artifacts["graph"]["nodes"][0]
    assert {"s0", "sT", "final", "centrality", "conf"} <= set(node)
    assert set(graph.citations.facts) <= set(graph.artifacts["shown"]) <= {f.id for f in graph.facts}
    html = (run_dir / "report.html").read_text()
    assert "Paper 003, Table I" in html and "Hallucination rate" in html and "Confusion matrix" in html
    assert "without propagation (gamma = 0" in html and "propagation with gamma = 0.5" in html
    assert "the authors&#39; released ranking" in html and "triple filter off" in html
    assert "not comparable" in html and "In the paper (the authors&#39; released evaluation)" in html
    assert "Aggregate comparison (Fig. 2)" in html and "(b) Hallucination rate (provbench" in html
    assert "no local graph (paper: 0.000)" in html and "signed as an improvement" in html
    # the paper's configuration: 4 facts shown, 5 needed, so the gated column answers from no graph
    assert "GA-RAG (ga-rag-authors-gate)" in html and "answered from the graph for 0 of 3 claims" in html
    gated = [r for r in records if r.key.system == "ga-rag-authors-gate" and r.key.condition == BASELINE]
    assert [r.trace.artifacts["answer_source"] for r in gated] == ["baseline"] * 3
    base = [r for r in records if r.key.system == "vanilla-rag" and r.key.condition == BASELINE]
    assert all(r.scores.get("graph_coverage") is None and r.scores.get("response_time") is not None for r in base)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert not metrics["errors"]
    assert "FEVER score (cited)" in html  # the suite asks for the cited reading beside the padded one
    assert {
        "fever.fever_score",
        "fever.fever_score_cited",
        "table1.graph_coverage",
        "provenance.citation_coverage",
    } <= {v["metric"] for v in metrics["values"]}
    assert backend.calls


def test_the_shipped_suite_runs_ga_rag_on_a_graph(suite_run):
    """With the suite's triple filter off, most claims' local graphs hold facts (the 0.7 filter of
    old left them all empty with a low-confidence model), and the prompt shows them."""
    from provbench.run_store import RunStore

    _, run_dir, _ = suite_run
    records = [
        r
        for r in RunStore(run_dir).load_records().values()
        if r.key.system.startswith("ga-rag") and r.key.condition == BASELINE
    ]
    assert len(records) == 12
    with_facts = [r for r in records if r.trace.facts and r.trace.artifacts["shown"]]
    assert len(with_facts) > len(records) / 2
    assert all(r.trace.artifacts["graph"]["params"]["triple_confidence_threshold"] is None for r in records)
    assert all(r.scores["empty_graph"] == float(not r.trace.facts) for r in records)
    metrics = {
        (v["metric"], v["system"]): v
        for v in json.loads((run_dir / "metrics.json").read_text())["values"]
        if v.get("condition") in (BASELINE, None)
    }  # full isolation may leave no page to build on
    assert metrics[("table1.empty_graph", "ga-rag")]["value"] < 0.5
    assert not metrics[("table1.empty_graph", "ga-rag")]["note"]
    assert metrics[("prompts.check", "all settings")]["value"] is not None


def test_rerun_from_the_cache_makes_no_llm_call(suite_run):
    from provbench.runner import run_suite
    from provbench.run_store import RunStore

    root, first, _ = suite_run
    llm, backend = schema_llm(root / "llm")
    second = run_suite(SUITE, limit=3, out=root / "runs" / "second", llm=llm)
    assert backend.calls == []
    timed = [r for r in RunStore(second).load_records().values() if r.key.system in ("vanilla-rag", "ga-rag")]
    assert all(c.cached and c.original_latency_s is not None for r in timed for c in r.trace.llm_calls)
    assert all(r.scores["response_time"] is not None for r in timed if r.key.condition == BASELINE)
    answers = lambda d: {k: (r.trace.answer if r.trace else None) for k, r in RunStore(d).load_records().items()}  # noqa: E731
    assert answers(second) == answers(first)


def test_kb_has_sentences_pages_links_and_is_reused(tmp_path):
    from provbench_plugins.datasets.fever.loader import FeverLoader
    from provbench_plugins.kb_builders.fever.builder import FeverWikiBuilder, read_facts

    questions = FeverLoader().load(MINI, limit=6, sample=True)
    llm, backend = schema_llm(tmp_path / "llm")
    kb = FeverWikiBuilder(triples=True, max_triples=3, link_hops=1).build(questions, tmp_path / "kb", llm)
    view, info = kb.view(), kb.build_info
    needed = {p for q in questions for p in q.metadata["evidence_pages"]}
    assert needed and info["missing_evidence_page_count"] == 0
    for page in needed:
        entity = view.entity(f"p:{page}")
        assert entity is not None and all(t.startswith(f"s:{page}:") for t in entity.text_unit_ids)
        assert entity.own_text_unit_ids == entity.text_unit_ids  # its sentences: what isolation keeps of it
    assert info["links"] > 0 and info["pages"] >= len(needed)
    facts = read_facts(tmp_path / "kb")
    assert facts and all(0 <= f["confidence"] <= 1 and f["source_ids"] for f in facts)
    assert info["cost"]["llm_calls"] == len(info["cost_per_page"]) == info["pages"]
    kb.close()
    calls = len(backend.calls)
    again = FeverWikiBuilder(triples=True, max_triples=3, link_hops=1).build(questions, tmp_path / "kb", llm)
    assert len(backend.calls) == calls and again.build_info == info
    again.close()


def test_kb_triples_failures_are_counted_and_a_dead_model_stops_the_build(tmp_path):
    from provbench.errors import UserError
    from provbench.kb import KnowledgeBase
    from provbench_plugins.datasets.fever.loader import FeverLoader
    from provbench_plugins.kb_builders.fever.builder import FeverWikiBuilder, read_facts

    questions = FeverLoader().load(MINI, limit=2)
    good = json.dumps({"triplets": [{"subject": "A", "relation": "is", "object": "B", "confidence": 0.9}]})
    builder = FeverWikiBuilder(triples=True, candidates=False, include_gold_pages=True, max_workers=1)
    kb = builder.build(questions, tmp_path / "kb", scripted_llm([ConnectionError("down"), "no json"] + [good] * 20))
    try:
        info = kb.build_info
        assert (info["extraction"]["failed_calls"], info["extraction"]["invalid_outputs"]) == (1, 1)
        assert info["cost"]["failed_pages"] == 1 and len(read_facts(tmp_path / "kb")) == info["pages"] - 2
        assert any("1 extraction call failed" in p for p in info["problems"])
    finally:
        kb.close()
    with pytest.raises(UserError, match="every LLM call to .* failed"):
        builder.build(questions, tmp_path / "dead", scripted_llm([ConnectionError("down")] * 20))
    assert not KnowledgeBase.is_complete(tmp_path / "dead")


def record_with(trace: Trace, condition: str = BASELINE) -> RunRecord:
    return RunRecord(key=UnitKey(question_id=trace.question_id, system=trace.system, condition=condition), trace=trace)


def claim() -> Question:
    return Question(
        id="1",
        question="Ann was born in a town of Vallonia.",
        answer="SUPPORTS",
        metadata={"evidence": [[["Ann", 1], ["Veel", 0]]], "evidence_pages": ["Ann", "Veel"]},
    )


def graph_trace() -> Trace:
    trace = Trace(
        question_id="1",
        system="ga-rag",
        answer="SUPPORTS",
        wall_time_s=2.5,
        read_text_units=["s:Ann:1", "s:Veel:0", "s:Bob:0"],
        facts=[
            Fact(id="f1", subject="Ann", relation="born in", object="Veel", confidence=0.9, source_ids=["s:Ann:1"]),
            Fact(id="f2", subject="Veel", relation="in", object="Vallonia", confidence=0.8, source_ids=["s:Veel:0"]),
            Fact(id="f3", subject="Bob", relation="plays", object="harp", confidence=0.5, source_ids=["s:Bob:0"]),
        ],
    )
    trace.artifacts.update({"shown": ["f1", "f3"], "explanation": "Ann was born in Veel, a town in Vallonia."})
    return trace


def test_table1_structure_definitions():
    from provbench_plugins.papers.p003_ga_rag.metrics import structure_scores

    scores = structure_scores(graph_trace(), claim())
    assert scores == {
        "response_time": 2.5,
        "wall_time": 2.5,
        "graph_coverage": 1.0,
        "graph_completeness": 1.0,
        "context_precision": 0.5,
        "graph_facts": 3.0,
        "empty_graph": 0.0,
        "extraction_failures": 0.0,
    }
    partial = graph_trace()
    partial.facts = partial.facts[:1]
    assert structure_scores(partial, claim())["graph_completeness"] == 0.0
    assert structure_scores(partial, claim())["graph_coverage"] == 0.5
    nei = claim().model_copy(update={"answer": "NOT ENOUGH INFO", "metadata": {"evidence": [], "evidence_pages": []}})
    assert structure_scores(graph_trace(), nei)["graph_coverage"] is None


@pytest.mark.parametrize("judged, consistent", [(0.5, 1.0), (0.49, 0.0), (0.7, 1.0)])
def test_logical_consistency_uses_the_judges_own_cutoff(judged, consistent):
    from provbench.errors import UserError
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne

    metric = TableOne(ragas=False)
    llm = scripted_llm([json.dumps({"consistency": judged, "coherence": 0.4})])
    scores = metric.score(record_with(graph_trace()), claim(), MetricContext(llm=llm))
    assert scores["logical_consistency"] == consistent and scores["coherence"] == 0.4
    other = metric.score(record_with(graph_trace(), "cited-removal"), claim(), MetricContext(llm=llm))
    assert "logical_consistency" not in other and other["graph_coverage"] == 1.0
    strict = TableOne(ragas=False, judge_cutoff=0.8).score(
        record_with(graph_trace()),
        claim(),
        MetricContext(llm=scripted_llm([json.dumps({"consistency": 0.7, "coherence": 0.4})])),
    )
    assert strict["logical_consistency"] == 0.0
    with pytest.raises(UserError, match="judge_cutoff"):  # the old name, "threshold", is gone
        TableOne(threshold=0.7)


def test_grounding_is_ragas_faithfulness_of_the_explanation():
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne

    statements = json.dumps({"statements": ["Ann was born in Veel.", "Veel is in Vallonia."]})
    verdicts = json.dumps(
        {
            "statements": [
                {"statement": "Ann was born in Veel.", "reason": "fact 1", "verdict": 1},
                {"statement": "Veel is in Vallonia.", "reason": "not shown", "verdict": 0},
            ]
        }
    )
    llm = scripted_llm([statements, verdicts])
    scores = TableOne(judge=False).score(record_with(graph_trace()), claim(), MetricContext(llm=llm))
    assert scores["factual_grounding"] == 0.5
    assert scores["hallucination_rate_shown"] == 0.0  # token-level: every content word is in the facts or the claim


@pytest.mark.parametrize("name", ["fever-garag.yaml", "fever-garag-sweep.yaml"])
def test_suites_validate_with_every_option(name):
    from provbench.suite import load_suite

    loaded = load_suite(REPO / "suites" / name)
    assert "p003/ga-rag" in {s.name for s in loaded.suite.systems}


def test_bad_system_option_is_named(tmp_path):
    from provbench.suite import SuiteError, load_suite

    text = (REPO / "suites" / "fever-garag.yaml").read_text().replace("gamma: 0.0", "gamma: 1.5")
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace("../datasets", str(REPO / "datasets")))
    with pytest.raises(SuiteError, match=r"gamma"):
        load_suite(path)
