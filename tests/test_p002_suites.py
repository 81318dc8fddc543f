"""Paper 002's suites end to end on the schema-following LLM: records, report sections, cached re-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from provbench.llm import LLMClient, ScriptedBackend
from provbench.report.data import load_run
from provbench.runner import run_suite
from provbench.store import RunStore
from provbench.suite import load_suite
from provbench.testing import schema_following_llm

REPO = Path(__file__).resolve().parents[1]
SUITES = REPO / "suites"


def test_curriculum_planning_suite_runs_and_reports_abstention_and_calibration(tmp_path):
    out = tmp_path / "run"
    llm = schema_following_llm(cache_dir=out / "llm")
    run_dir = run_suite(SUITES / "curriculum-planning.yaml", limit=4, out=out, llm=llm)
    records = RunStore(run_dir).load_records().values()
    systems = {r.key.system for r in records}
    assert systems == {"planning-loop", "graphrag", "agentic-graphrag"}
    conditions = {r.key.condition for r in records}
    assert {"invalidate-used-edges", "invalidate-random-edges"} <= conditions
    loop = [r for r in records if r.key.system == "planning-loop" and r.key.condition == "baseline"]
    assert all(1 <= len(r.trace.llm_calls) <= 4 and len(r.trace.visited_entities) <= 48 for r in loop)
    assert all(r.trace.confidence is not None for r in records if r.key.system == "graphrag" and r.status == "ok")
    invalidated = [r for r in records if r.key.condition == "invalidate-used-edges" and r.trace]
    assert any(r.trace.artifacts["hidden_by_intervention"].get("invalidated") for r in invalidated)

    run = load_run(run_dir)
    metric_names = {v["metric"] for v in run.metric_values()}
    assert {"abstention.coverage", "calibration.ece", "calibration.aurc", "cost.llm_calls"} <= metric_names
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    for title in ("Abstention and cost", "Calibration", "Risk-coverage curves", "Reliability diagram",
                  "Planning loop: rounds, cost"):
        assert title in html, title

    backend = ScriptedBackend([])  # any call would fail: the re-run must come from the cache
    run_suite(SUITES / "curriculum-planning.yaml", limit=4, out=out,
              llm=LLMClient(backend, cache_dir=out / "llm", max_attempts=1))
    assert backend.calls == []


def test_sweep_suite_declares_the_grid_and_reports_the_tradeoff(tmp_path):
    loaded = load_suite(SUITES / "curriculum-planning-sweep.yaml")
    grid = {(s.options["confidence_bar"], s.options["frontier_cap"]) for s in loaded.suite.systems}
    assert grid == {(b, c) for b in (0.6, 0.7, 0.8, 0.9) for c in (6, 12, 24)}
    out = tmp_path / "sweep"
    run_dir = run_suite(SUITES / "curriculum-planning-sweep.yaml", limit=3, out=out,
                        llm=schema_following_llm(cache_dir=out / "llm"))
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "Accuracy against coverage" in html and "bar 0.9 cap 24" in html


@pytest.mark.parametrize("suite", ["2wiki-provenance.yaml", "fever-garag.yaml", "medmcqa-kgragex.yaml"])
def test_planning_loop_joins_the_other_papers_suites(suite):
    assert "planning-loop" in load_suite(SUITES / suite).suite.system_names  # record key, however it is named


@pytest.mark.parametrize("outcome,answer,expected", [("abstained", None, 1.0), ("budget_exhausted", None, 0.0),
                                                     ("failed", None, 0.0), ("answered", "Calibration", 0.0)])
def test_only_a_deliberate_abstention_is_right_on_an_unanswerable_question(outcome, answer, expected):
    from types import SimpleNamespace

    from provbench.model import Question, RunRecord, Trace, UnitKey
    from provbench.units import _score
    from provbench_plugins.datasets.curriculum.loader import CurriculumLoader

    question = Question(id="q", question="?", answer="", metadata={"answerable": False})
    record = RunRecord(key=UnitKey(question_id="q", system="s"),
                       trace=Trace(question_id="q", system="s", outcome=outcome, answer=answer))
    _score(SimpleNamespace(loader=CurriculumLoader(), metrics=[], llm=None, view=None), record, question, None)
    assert record.scores["accuracy"] == expected
