"""Paper 002's suites end to end on the schema-following LLM: records, report sections, cached re-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from provbench.llm import LLMClient, ScriptedBackend
from provbench.report.data import load_run
from provbench.runner import run_suite
from provbench.run_store import RunStore
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
    assert systems == {
        "planning-loop",
        "one-shot, same seeds",
        "one-shot, loop's budget",
        "one-shot, 4-hop neighbourhood",
        "never abstains",
        "graphrag",
        "graphrag, abstains below 0.80",
        "agentic-graphrag",
    }
    conditions = {r.key.condition for r in records}
    assert {
        "invalidate-used-edges",
        "invalidate-random-edges",
        "invalidate-gold-edge",
        "invalidate-off-chain-edge",
    } <= conditions
    loop = [r for r in records if r.key.system == "planning-loop" and r.key.condition == "baseline"]
    assert all(len(r.trace.llm_calls) <= 4 and len(r.trace.visited_entities) <= 48 for r in loop)
    one_round = [r for r in records if r.key.system == "one-shot, same seeds" and r.key.condition == "baseline"]
    assert all(len(r.trace.llm_calls) <= 1 for r in one_round)
    gold_variants = [r for r in records if r.key.condition == "invalidate-gold-edge"]
    assert gold_variants and all(r.variant.description.startswith("invalidate the gold edge") for r in gold_variants)
    assert all(r.trace.confidence is not None for r in records if r.key.system == "graphrag" and r.status == "ok")
    invalidated = [r for r in records if r.key.condition == "invalidate-used-edges" and r.trace]
    assert any(r.trace.artifacts["hidden_by_intervention"].get("invalidated") for r in invalidated)

    run = load_run(run_dir)
    metric_names = {v["metric"] for v in run.metric_values()}
    assert {
        "abstention.coverage",
        "calibration.ece",
        "calibration.aurc",
        "cost.llm_calls",
        "context_precision",
        "gold_chain_shown",
    } <= metric_names
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    for title in (
        "Abstention and cost",
        "Calibration",
        "Risk-coverage curves",
        "Reliability diagram",
        "Planning loop: rounds, cost",
        "Baseline accuracy per gold chain length",
        "McNemar p (deep)",
        "Edge invalidation: control sizes",
    ):
        assert title in html, title

    backend = ScriptedBackend([])  # any call would fail: the re-run must come from the cache
    run_suite(
        SUITES / "curriculum-planning.yaml",
        limit=4,
        out=out,
        llm=LLMClient(backend, cache_dir=out / "llm", max_attempts=1),
    )
    assert backend.calls == []


def test_sweep_suite_declares_the_grid_and_reports_the_tradeoff(tmp_path):
    loaded = load_suite(SUITES / "curriculum-planning-sweep.yaml")
    grid = {(s.options["confidence_bar"], s.options["frontier_cap"]) for s in loaded.suite.systems}
    assert grid == {(b, c) for b in (0.6, 0.7, 0.8, 0.9) for c in (6, 12, 24)}
    out = tmp_path / "sweep"
    run_dir = run_suite(
        SUITES / "curriculum-planning-sweep.yaml", limit=3, out=out, llm=schema_following_llm(cache_dir=out / "llm")
    )
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

    return [
        RunRecord(
            key=UnitKey(question_id=f"q{i}", system=system),
            scores={"accuracy": accuracy},
            trace=Trace(
                question_id=f"q{i}", system=system, outcome=outcome, answer="x" if outcome == "answered" else None
            ),
        )
        for i, (outcome, accuracy) in enumerate(outcomes)
    ]


def in_memory_run(systems, records):
    from provbench.model import RunManifest
    from provbench.report.data import RunData

    return RunData(Path("."), RunManifest(run_id="r", suite_name="s", suite={"systems": systems}), {}, records, {})


def test_report_reads_the_options_of_an_unlabelled_configuration():
    # {name: p002/planning-loop} without a label has the record key "planning-loop" (the suite's rule)
    systems = [
        {"name": "p002/planning-loop", "options": {"confidence_bar": 0.9, "frontier_cap": 24}},
        {"name": "planning-loop", "label": "loose", "options": {"confidence_bar": 0.6}},
    ]
    records = loop_records("planning-loop", [("answered", 1.0)]) + loop_records("loose", [("answered", 0.0)])
    table = planning_section(in_memory_run(systems, records)).blocks[0]
    settings = {row.cells[0].text: (row.cells[1].text, row.cells[2].text) for row in table.rows}
    assert settings == {"planning-loop": ("0.90", "24"), "loose": ("0.60", "12")}


def test_tradeoff_chart_credits_a_right_abstention():
    # curriculum-mini's unanswerable questions: abstaining is right (accuracy 1), answering is wrong
    systems = [
        {"name": "planning-loop", "label": "strict", "options": {"confidence_bar": 0.9}},
        {"name": "planning-loop", "label": "loose", "options": {"confidence_bar": 0.6}},
    ]
    records = loop_records("strict", [("abstained", 1.0), ("abstained", 1.0)]) + loop_records(
        "loose", [("answered", 0.0), ("answered", 1.0)]
    )
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


@pytest.mark.parametrize(
    "outcome,answer,expected",
    [
        ("abstained", None, 1.0),
        ("budget_exhausted", None, 0.0),
        ("failed", None, 0.0),
        ("answered", "Calibration", 0.0),
    ],
)
def test_only_a_deliberate_abstention_is_right_on_an_unanswerable_question(outcome, answer, expected):
    from types import SimpleNamespace

    from provbench.model import Question, RunRecord, Trace, UnitKey
    from provbench.units import _score
    from provbench_plugins.datasets.curriculum.loader import CurriculumLoader

    question = Question(id="q", question="?", answer="", metadata={"answerable": False})
    record = RunRecord(
        key=UnitKey(question_id="q", system="s"),
        trace=Trace(question_id="q", system="s", outcome=outcome, answer=answer),
    )
    _score(SimpleNamespace(loader=CurriculumLoader(), metrics=[], llm=None, view=None), record, question, None)
    assert record.scores["accuracy"] == expected


def test_the_suite_isolates_rounds_and_gate():
    systems = {s.key: s for s in load_suite(SUITES / "curriculum-planning.yaml").suite.systems}
    assert systems["one-shot, same seeds"].options == {"max_rounds": 1}  # same seeds, prompt and gate, one round
    assert systems["never abstains"].options == {"abstain": False}
    assert systems["one-shot, loop's budget"].options == {"max_rounds": 1, "hops_per_round": 4, "frontier_cap": 48}
    assert systems["one-shot, 4-hop neighbourhood"].options == {
        "max_rounds": 1,
        "hops_per_round": 4,
        "frontier_cap": 1000,
    }  # every concept within 4 hops
    assert systems["graphrag, abstains below 0.80"].options == {"ask_confidence": True, "confidence_bar": 0.8}
    assert "fallback_search_k" not in systems["planning-loop"].options  # the paper's loop: named seeds only


@pytest.mark.parametrize("suite", ["2wiki-provenance.yaml", "fever-garag.yaml", "medmcqa-kgragex.yaml"])
def test_suites_on_extracted_kbs_ask_for_similarity_seeds_explicitly(suite):
    loop = next(s for s in load_suite(SUITES / suite).suite.systems if s.key == "planning-loop")
    assert loop.options["fallback_search_k"] == 3


def questions_by_hops(hops):
    from provbench.model import Question

    return {
        f"q{i}": Question(
            id=f"q{i}",
            question="?",
            answer="x",
            category=f"{h}-hop" if h else "unanswerable",
            metadata={"hops": h, "answerable": bool(h)},
        )
        for i, h in enumerate(hops)
    }


def test_table_counts_every_record_as_the_abstention_metric_does():
    from provbench.model import RunRecord, UnitKey
    from provbench.plugin_api import Results
    from provbench_plugins.metrics.selective import Abstention

    systems = [{"name": "planning-loop", "options": {"exit_from_round": 3}}]
    records = loop_records("planning-loop", [("answered", 1.0), ("abstained", 1.0), ("answered", 0.0)])
    records[0].trace.artifacts["rounds"] = [{}, {}, {}]  # answered in round 3: by the exit round
    records.append(RunRecord(key=UnitKey(question_id="q3", system="planning-loop"), status="failed", error="boom"))
    run = in_memory_run(systems, records)
    run.questions.update(questions_by_hops([1, 0, 2, 3]))
    table = planning_section(run).blocks[0]
    cells = {c: row.cells[table.columns.index(c)].text for row in table.rows for c in table.columns}
    coverage = next(
        v
        for v in Abstention().aggregate(Results(records=records, questions=run.questions))
        if v.metric == "abstention.coverage"
    )
    assert cells["Questions"] == "4" and cells["Coverage"] == f"{coverage.value:.2f}" == "0.50"
    assert cells["Accuracy"] == "0.50" and cells["Accuracy (abstain = wrong)"] == "0.25"  # the failed run counts 0
    assert cells["Abstained on answerable"] == "0.00" and cells["Exit round"] == "3"
    assert cells["Answered by the exit round"] == "1.00"


def test_accuracy_per_hop_count_and_paired_test_between_systems():
    systems = [{"name": "planning-loop"}, {"name": "graphrag"}]
    loop = loop_records(
        "planning-loop",
        [("answered", 1.0), ("answered", 1.0), ("answered", 1.0), ("answered", 1.0), ("abstained", 1.0)],
    )
    one_shot = loop_records(
        "graphrag", [("answered", 1.0), ("answered", 0.0), ("answered", 0.0), ("answered", 0.0), ("answered", 0.0)]
    )
    run = in_memory_run(systems, loop + one_shot)
    run.questions.update(questions_by_hops([1, 3, 3, 4, 0]))
    blocks = planning_section(run).blocks
    by_hops = next(b for b in blocks if b.kind == "table" and "1-hop" in b.columns)
    assert by_hops.columns[:6] == ["System", "1-hop", "3-hop", "4-hop", "unanswerable", "All"]
    row = {r.cells[0].text: [c.text for c in r.cells[1:6]] for r in by_hops.rows}
    assert row == {"planning-loop": ["1.00"] * 5, "graphrag": ["1.00", "0.00", "0.00", "0.00", "0.20"]}
    paired = next(b for b in blocks if b.kind == "table" and "McNemar p" in b.columns)
    (cells,) = [[c.text for c in r.cells] for r in paired.rows]
    # 4 questions only the loop got right (the two 3-hop, the 4-hop, the unanswerable): p = 2 * 0.5^4
    assert cells[:5] == ["graphrag", "5", "4", "0", "0.125"] and cells[5] == "3" and cells[6] == "0.25"


def typed_questions(spec):
    """(type, gold chain length, answerable) per question -> questions q0, q1, ... as the curriculum loader makes them."""
    from provbench.gold import GoldEvidence, GoldTriple
    from provbench.model import Question

    def chain(n):
        return (
            GoldEvidence(
                triples=[GoldTriple(subject=f"c{i}", relation="r", object=f"c{i + 1}") for i in range(n)],
                entities=[f"c{i}" for i in range(n + 1)],
                ordered=True,
            )
            if n
            else None
        )

    return {
        f"q{i}": Question(
            id=f"q{i}",
            question="?",
            answer="x",
            type=kind,
            gold=chain(n),
            category=f"{min(n, 1)}-hop" if answerable else "unanswerable",
            metadata={"hops": min(n, 1), "answerable": answerable},
        )
        for i, (kind, n, answerable) in enumerate(spec)
    }


def test_groups_follow_the_gold_chain_and_keep_too_deep_and_stale_apart():
    from provbench_plugins.papers.p002_planning.comparison import deep_questions

    # q0: a 1-hop category with a 3-edge chain (two named concepts); q1 deep; q2 too deep; q3 stale; q4 none
    spec = [
        ("multi", 3, True),
        ("deep", 3, True),
        ("too-deep", 5, True),
        ("stale", 3, True),
        ("unanswerable", 0, False),
    ]
    systems = [{"name": "planning-loop"}]
    run = in_memory_run(systems, loop_records("planning-loop", [("answered", 1.0)] * 2 + [("abstained", 0.0)] * 3))
    run.questions.update(typed_questions(spec))
    blocks = planning_section(run).blocks
    by_chain = next(b for b in blocks if b.kind == "table" and "3-hop" in b.columns)
    assert by_chain.columns[1:6] == ["3-hop", "stale", "too-deep", "unanswerable", "All"]
    assert by_chain.rows[0].cells[1].counts == "(n=2)"
    assert deep_questions(run) == ["q0", "q1"]
    # abstaining on the too-deep question is intended: of the answerable q0, q1, q3 only the stale one abstained
    cells = {c: blocks[0].rows[0].cells[i].text for i, c in enumerate(blocks[0].columns)}
    assert cells["Abstained on answerable"] == "0.33"


def test_a_one_round_configuration_exits_in_its_only_round():
    systems = [{"name": "planning-loop", "label": "one round", "options": {"max_rounds": 1}}]
    records = loop_records("one round", [("answered", 1.0)])
    records[0].trace.artifacts["rounds"] = [{}]
    run = in_memory_run(systems, records)
    run.questions.update(questions_by_hops([1]))
    table = planning_section(run).blocks[0]
    cells = {c: table.rows[0].cells[i].text for i, c in enumerate(table.columns)}
    assert cells["Exit round"] == "1" and cells["Answered by the exit round"] == "1.00"
    assert "lower bound of 1 call" not in table.caption  # it may answer in its only round


def test_the_cost_caption_says_when_one_call_is_reachable_under_the_default_exit_round():
    """The paper's "roughly 1-4" calls: with the default exit round 2, an answered question costs 1
    call only when round 2 finds nothing new; the caption says so (review finding 5)."""
    records = loop_records("planning-loop", [("answered", 1.0)])
    records[0].trace.artifacts["rounds"] = [{}, {}]
    run = in_memory_run([{"name": "planning-loop"}], records)
    run.questions.update(questions_by_hops([1]))
    caption = planning_section(run).blocks[0].caption
    assert "lower bound of 1 call is not reachable for an answered question when the exit round is 2" in caption
    assert "except when round 2 finds nothing new to expand" in caption and "1 with exit_from_round: 1" in caption


def test_stale_answers_are_scored_by_the_concept_they_name(curriculum_mini):
    from provbench.model import RunRecord, Trace, UnitKey
    from provbench_plugins.papers.p002_planning.metrics import StaleAnswer

    questions, _ = curriculum_mini
    stale = next(q for q in questions if q.type == "stale")

    def scored(outcome, answer):
        trace = Trace(question_id=stale.id, system="s", outcome=outcome, answer=answer)
        return StaleAnswer().score(RunRecord(key=UnitKey(question_id=stale.id, system="s"), trace=trace), stale, None)

    assert scored("answered", stale.metadata["stale_answer"].upper()) == {"stale_answer": 1.0}
    assert scored("answered", stale.answer) == {"stale_answer": 0.0}
    assert scored("abstained", None) == {"stale_answer": 0.0}
    other = next(q for q in questions if q.type == "deep")
    assert (
        StaleAnswer().score(
            RunRecord(
                key=UnitKey(question_id=other.id, system="s"), trace=Trace(question_id=other.id, system="s", answer="x")
            ),
            other,
            None,
        )
        == {}
    )


def test_control_sizes_flag_unmatched_pairs():
    from provbench.model import RunRecord, Trace, UnitKey
    from provbench_plugins.interventions.report import control_size_sections

    def hidden(qid, condition, count):
        trace = Trace(
            question_id=qid,
            system="planning-loop",
            artifacts={"hidden_by_intervention": {"invalidated": {"count": count, "ids": []}}},
        )
        return RunRecord(key=UnitKey(question_id=qid, system="planning-loop", condition=condition), trace=trace)

    records = [
        hidden("q1", "invalidate-used-edges", 5),
        hidden("q1", "invalidate-random-edges", 5),
        hidden("q2", "invalidate-used-edges", 43),
        hidden("q2", "invalidate-random-edges", 0),
    ]
    run = in_memory_run(["planning-loop"], records)
    run.manifest.suite["interventions"] = ["invalidate-used-edges", "invalidate-random-edges"]
    (section,) = control_size_sections(run)
    (row,) = section.blocks[0].rows
    assert [c.text for c in row.cells] == ["planning-loop", "2", "1", "q2 (0/43)"]


def test_table2_arrows_compare_a_condition_with_the_baseline_of_the_same_questions():
    """invalidate-gold-edge runs on the answerable questions only: its accuracy is compared with the
    baseline's on those, not with the baseline over every question (unanswerable ones included)."""
    from provbench.model import RunRecord, Trace, UnitKey
    from provbench_plugins.papers.p000_neighborhoods.report import table2_section

    baseline = loop_records("planning-loop", [("answered", 1.0), ("answered", 0.0)])  # q1: unanswerable, answered
    gold = RunRecord(
        key=UnitKey(question_id="q0", system="planning-loop", condition="invalidate-gold-edge"),
        scores={"accuracy": 1.0},
        trace=Trace(question_id="q0", system="planning-loop", answer="x"),
    )
    run = in_memory_run([{"name": "planning-loop"}], [*baseline, gold])
    run.questions.update(questions_by_hops([1, 0]))
    rows = [r for r in table2_section(run).blocks[0].rows if r.cells]
    assert rows[0].cells[2].text == "50.0% †"  # the baseline row: both questions († never validated)
    assert rows[-1].cells[1].text == "Acc." and rows[-1].cells[2].text == "100.0% †"
    assert rows[-1].cells[2].arrow == "→"  # 1/1 against the baseline's 1/1 on q0, not its 1/2 on both
