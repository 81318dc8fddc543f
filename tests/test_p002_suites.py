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
    table = next(b for b in planning_section(load_run(run_dir)).blocks if b.kind == "table")
    settings = {row.cells[0].text: (row.cells[1].text, row.cells[2].text) for row in table.rows}
    assert settings["bar 0.6 cap 6"] == ("0.60", "6") and settings["bar 0.9 cap 24"] == ("0.90", "24")


def planning_section(run):
    from provbench_plugins.papers.p002_planning.report import sections

    return next(s for s in sections(run) if s.id == "p002-planning")


def loop_records(system, outcomes):
    """Baseline records of one system: (outcome, graded accuracy) per question."""
    from provbench.model import RunRecord, Trace, UnitKey

    return [RunRecord(key=UnitKey(question_id=f"q{i}", system=system), scores={"accuracy": accuracy},
                      trace=Trace(question_id=f"q{i}", system=system, outcome=outcome,
                                  answer="x" if outcome == "answered" else None))
            for i, (outcome, accuracy) in enumerate(outcomes)]


def in_memory_run(systems, records):
    from provbench.model import RunManifest
    from provbench.report.data import RunData

    return RunData(Path("."), RunManifest(run_id="r", suite_name="s", suite={"systems": systems}), {}, records, {})


def test_report_reads_the_options_of_an_unlabelled_configuration():
    # {name: p002/planning-loop} without a label has the record key "planning-loop" (the suite's rule)
    systems = [{"name": "p002/planning-loop", "options": {"confidence_bar": 0.9, "frontier_cap": 24}},
               {"name": "planning-loop", "label": "loose", "options": {"confidence_bar": 0.6}}]
    records = loop_records("planning-loop", [("answered", 1.0)]) + loop_records("loose", [("answered", 0.0)])
    table = planning_section(in_memory_run(systems, records)).blocks[0]
    settings = {row.cells[0].text: (row.cells[1].text, row.cells[2].text) for row in table.rows}
    assert settings == {"planning-loop": ("0.90", "24"), "loose": ("0.60", "12")}


def test_tradeoff_chart_credits_a_right_abstention():
    # curriculum-mini's unanswerable questions: abstaining is right (accuracy 1), answering is wrong
    systems = [{"name": "planning-loop", "label": "strict", "options": {"confidence_bar": 0.9}},
               {"name": "planning-loop", "label": "loose", "options": {"confidence_bar": 0.6}}]
    records = (loop_records("strict", [("abstained", 1.0), ("abstained", 1.0)])
               + loop_records("loose", [("answered", 0.0), ("answered", 1.0)]))
    section = planning_section(in_memory_run(systems, records))
    charts = [b for b in section.blocks if b.kind == "line_chart"]
    main = charts[0]
    assert main.title == "Accuracy against coverage" and "abstention" in main.ylabel
    assert main.series == {"cap 12": [(1.0, 0.5), (0.0, 1.0)]}  # the bar-0.9 point: all abstained, all right
    strict = next(c for c in charts if "abstain = wrong" in c.title)
    assert strict.series == {"cap 12": [(1.0, 0.5), (0.0, 0.0)]}


@pytest.mark.parametrize("suite", ["2wiki-provenance.yaml", "fever-garag.yaml", "medmcqa-kgragex.yaml"])
def test_planning_loop_joins_the_other_papers_suites(suite):
    assert "planning-loop" in load_suite(SUITES / suite).suite.system_names  # record key, however it is named


def test_the_loop_reads_page_text_on_fever():
    # fever-wiki's entities are pages described by their first sentence; the evidence lies in the text
    loop = next(s for s in load_suite(SUITES / "fever-garag.yaml").suite.systems if s.key == "planning-loop")
    assert loop.options["text_units_per_concept"] >= 2


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
