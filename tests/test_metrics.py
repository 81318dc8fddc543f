"""Outcome metrics, the exclusion step and the provenance scores, on hand-built records.

The run below is small enough to compute every expected value by hand (worked out in the
comments next to each assertion). Questions q1..q5; q1 is answered correctly by llm-only,
so the analysed set is q2..q5. Baseline of "agentic": q2, q3 correct, q4 wrong, q5 failed.
"""

from __future__ import annotations

import pytest

from provbench.errors import UserError
from provbench.model import BASELINE, Citations, Question, RunRecord, Trace, UnitKey
from provbench.plugin_api import DatasetLoader, Results, answered_by_reference
from provbench.registry import build_registry
from provbench_plugins.metrics.outcomes import (
    Accuracy,
    AccuracyDelta,
    ExactMatch,
    Footprint,
    OutputChanged,
    TokenF1,
)
from provbench_plugins.metrics.provenance import ProvenanceMetric, citation_coverage, cited_unvisited_share

SYSTEM = "agentic"


def rec(
    condition: str,
    qid: str,
    answer: str | None,
    accuracy: float | None,
    *,
    repeat: int = 0,
    system: str = SYSTEM,
    status: str = "ok",
    visited=(),
    cited=(),
    read=(),
    cited_tus=(),
) -> RunRecord:
    if status == "failed":
        return RunRecord(
            key=UnitKey(question_id=qid, system=system, condition=condition, repeat=repeat),
            status="failed",
            error="boom",
        )
    trace = Trace(
        question_id=qid,
        system=system,
        answer=answer,
        visited_entities=list(visited),
        read_text_units=list(read),
        citations=Citations(entities=list(cited), text_units=list(cited_tus)),
    )
    scores = {} if accuracy is None else {"accuracy": accuracy}
    return RunRecord(
        key=UnitKey(question_id=qid, system=system, condition=condition, repeat=repeat), trace=trace, scores=scores
    )


def run_records() -> list[RunRecord]:
    records = [rec(BASELINE, "q1", "Paris", 1.0, system="llm-only")]
    records += [rec(BASELINE, q, "nope", 0.0, system="llm-only") for q in ("q2", "q3", "q4", "q5")]
    records += [
        rec(BASELINE, "q1", "Paris", 1.0, visited=["a", "b", "c"], cited=["a"], read=["t1", "t2"]),
        rec(BASELINE, "q2", "Oslo", 1.0, visited=["a", "b"], cited=["a", "z"], cited_tus=["t1"]),
        rec(BASELINE, "q3", "Rome", 1.0),
        rec(BASELINE, "q4", "Bern", 0.0, visited=["d"], cited=["d"]),
        rec(BASELINE, "q5", None, None, status="failed"),
        # cited removal
        rec("cited-removal", "q2", " oslo ", 1.0),
        rec("cited-removal", "q3", "Milan", 0.0),
        rec("cited-removal", "q4", "Vienna", 1.0),
        rec("cited-removal", "q5", "X", 0.0),
        # full isolation (q5 missing) and text-only isolation
        rec("full-isolation", "q2", "Oslo", 1.0),
        rec("full-isolation", "q3", "Paris", 0.0),
        rec("full-isolation", "q4", "Bern", 0.0),
        rec("text-only-isolation", "q2", "Oslo", 1.0),
        rec("text-only-isolation", "q3", "Rome", 1.0),
        rec("text-only-isolation", "q4", "Vienna", 1.0),
        rec("text-only-isolation", "q5", "Z", 0.0),
        # visited-but-uncited ablations
        rec("entity-removal", "q2", "Oslo", 1.0),
        rec("entity-removal", "q3", "Rome", 1.0),
        rec("entity-removal", "q4", "Bern", 0.0),
        rec("entity-removal", "q5", "Q", 0.0),
        rec("entity-text-mask", "q2", "Trondheim", 0.0),
        rec("entity-text-mask", "q3", "Rome", 1.0),
        rec("entity-text-mask", "q4", "Bern", 0.0),
        rec("entity-text-mask", "q5", None, None, status="failed"),
    ]
    random = {
        "q2": [("Oslo", 1.0), ("Bergen", 0.0), ("Oslo", 1.0)],
        "q3": [("Rome", 1.0)] * 3,
        "q4": [("Bern", 0.0), ("Bern", 0.0), None],
        "q5": [("Y", 0.0)] * 3,
    }
    for qid, repeats in random.items():
        for i, outcome in enumerate(repeats):
            records.append(
                rec("random-removal", qid, None, None, repeat=i, status="failed")
                if outcome is None
                else rec("random-removal", qid, outcome[0], outcome[1], repeat=i)
            )
    return records


@pytest.fixture()
def results() -> Results:
    records = run_records()
    questions = {q: Question(id=q, question=f"question {q}", answer="?") for q in ("q1", "q2", "q3", "q4", "q5")}
    return Results(records=records, questions=questions, excluded=answered_by_reference(records, "llm-only"))


def pick(values, metric: str, condition: str = BASELINE, system: str = SYSTEM):
    found = [v for v in values if v.metric == metric and v.condition == condition and v.system == system]
    assert len(found) == 1, (metric, condition, [(v.metric, v.condition) for v in values])
    return found[0]


# -- exclusion ---------------------------------------------------------------------------------


def test_exclusion_drops_what_the_reference_answered(results):
    assert results.excluded == {"q1"}
    assert answered_by_reference(run_records(), "agentic") == {"q1", "q2", "q3"}


def test_a_failed_reference_record_is_not_excluded():
    records = [
        rec(BASELINE, "q1", None, None, system="llm-only", status="failed"),
        rec(BASELINE, "q2", "x", 1.0, system="llm-only"),
    ]
    assert answered_by_reference(records, "llm-only") == {"q2"}


# -- accuracy, changed, delta, footprint ---------------------------------------------------------


def test_accuracy_counts_failed_as_wrong_and_averages_repeats(results):
    values = Accuracy().aggregate(results)
    base = pick(values, "accuracy")
    # analysed q2..q5: 1 + 1 + 0 + 0 (failed) = 2 of 4; all questions: q1 adds 1 -> 3 of 5
    assert (base.numerator, base.denominator, base.value) == (2, 4, 0.5)
    assert base.detail["failed"] == 1
    assert base.detail["all_questions"] | {} == {
        "numerator": 3,
        "denominator": 5,
        "failed": 1,
        "missing": 0,
        "unscored": 0,
        "value": 0.6,
    }
    random = pick(values, "accuracy", "random-removal")
    # q2: 2/3, q3: 1, q4: (0 + 0 + failed 0)/3 = 0, q5: 0  ->  5/3 of 4
    assert random.numerator == pytest.approx(5 / 3, abs=1e-6) and random.denominator == 4
    assert random.value == pytest.approx(5 / 12)
    assert random.detail["failed"] == 1
    full = pick(values, "accuracy", "full-isolation")
    assert (full.numerator, full.denominator, full.detail["missing"]) == (1, 3, 1)  # q5 has no record
    assert pick(values, "accuracy", system="llm-only").numerator == 0  # q1 is excluded


def test_em_and_f1_as_the_official_evaluation_counts_them():
    """Mean x 100 over every question; a missing prediction (no record, failed, no score) scores 0."""

    def scored(qid, em, f1, condition=BASELINE, **kw):
        record = rec(condition, qid, "x", 1.0, **kw)
        record.scores.update({"em": em, "f1": f1})
        return record

    records = [
        scored("q1", 1.0, 1.0),
        scored("q2", 0.0, 0.5),
        rec(BASELINE, "q3", "x", 1.0),  # q3: no em/f1
        rec(BASELINE, "q4", None, None, status="failed"),
        scored("q2", 1.0, 1.0, system="other", condition="cited-removal"),
    ]
    questions = {q: Question(id=q, question="?", answer="x") for q in ("q1", "q2", "q3", "q4", "q5")}  # q5: none
    results = Results(records=records, questions=questions, excluded={"q1"})
    em, f1 = pick(ExactMatch().aggregate(results), "em"), pick(TokenF1().aggregate(results), "f1")
    # EM: (1 + 0 + 0 + 0 + 0) / 5 x 100; F1: (1 + 0.5) / 5 x 100, over all five questions at baseline
    assert (em.value, em.numerator, em.denominator) == (20.0, 1.0, 5)
    assert (f1.value, f1.numerator, f1.denominator) == (30.0, 1.5, 5)
    assert em.detail | {} == {
        "numerator": 1.0,
        "denominator": 5,
        "failed": 1,
        "missing": 1,
        "unscored": 1,
        "scale": "percent",
    }
    # an intervention condition counts over the analysed questions (q2..q5): 1 / 4
    assert pick(ExactMatch().aggregate(results), "em", "cited-removal", "other").value == 25.0


def test_unscored_records_are_reported_not_counted():
    records = [rec(BASELINE, "q1", "a", None), rec(BASELINE, "q2", "b", 1.0)]
    value = pick(Accuracy().aggregate(Results(records=records, questions={})), "accuracy")
    assert (value.numerator, value.denominator, value.detail["unscored"]) == (1, 1, 1)


def test_output_changed_uses_normalised_answers(results):
    values = OutputChanged().aggregate(results)
    cited = pick(values, "output-changed", "cited-removal")
    # compared q2 (" oslo " == "Oslo" after normalising), q3 changed, q4 changed; q5's baseline failed
    assert (cited.numerator, cited.denominator, cited.detail["failed"]) == (2, 3, 1)
    assert (cited.detail["stayed_correct"], cited.detail["originally_correct"]) == (1, 2)
    stayed = pick(values, "stayed-correct", "cited-removal")
    assert (stayed.numerator, stayed.denominator, stayed.value) == (1, 2, 0.5)
    random = pick(values, "output-changed", "random-removal")
    # q2 changed in 1 of 3 repeats, q3 never, q4 in 1 of 3 (its failed repeat gave no answer: changed)
    assert random.numerator == pytest.approx(2 / 3, abs=1e-6) and random.denominator == 3
    assert random.detail["failed"] == 2  # q4's failed repeat and q5's failed baseline
    assert pick(values, "stayed-correct", "random-removal").numerator == pytest.approx(5 / 3, abs=1e-6)
    assert not [v for v in values if v.condition == BASELINE]


class ArticleLoader(DatasetLoader):
    name = "articles"

    def load(self, source, **options):
        return []

    def normalize(self, text: str) -> str:
        return " ".join(w for w in text.lower().split() if w not in {"the", "a"})


def test_changed_follows_the_dataset_loader():
    records = [rec(BASELINE, "q1", "The Hague", 1.0), rec("cited-removal", "q1", "hague", 1.0)]
    with_loader = Results(records=records, questions={}, loader=ArticleLoader())
    assert pick(OutputChanged().aggregate(with_loader), "output-changed", "cited-removal").value == 0.0
    plain = Results(records=records, questions={})
    assert pick(OutputChanged().aggregate(plain), "output-changed", "cited-removal").value == 1.0


def test_accuracy_delta_and_arrow(results):
    values = AccuracyDelta().aggregate(results)
    cited = pick(values, "accuracy-delta", "cited-removal")
    assert (cited.value, cited.detail["arrow"], cited.denominator) == (0.0, "→", 4)
    random = pick(values, "accuracy-delta", "random-removal")
    # baseline 2 of 4, random 5/3 of 4  ->  (5/3 - 2) / 4 = -1/12
    assert random.value == pytest.approx(-1 / 12) and random.detail["arrow"] == "↓"
    text_only = pick(values, "accuracy-delta", "text-only-isolation")
    assert text_only.value == pytest.approx(1 / 4) and text_only.detail["arrow"] == "↑"  # 3 of 4 vs 2 of 4
    full = pick(values, "accuracy-delta", "full-isolation")
    assert (full.denominator, full.detail["baseline_correct"], full.detail["condition_correct"]) == (3, 2, 1)


def test_footprint_means_over_traced_records(results):
    values = Footprint().aggregate(results)
    visited = pick(values, "footprint.visited_entities")
    assert (visited.numerator, visited.denominator, visited.value, visited.detail["failed"]) == (6, 4, 1.5, 1)
    assert pick(values, "footprint.cited_entities").value == 1.0  # {a} + {a, z} + {} + {d}
    assert pick(values, "footprint.retrieved_text_units").value == 0.5
    assert pick(values, "footprint.cited_text_units").value == 0.25


# -- provenance --------------------------------------------------------------------------------


def test_per_trace_coverage():
    trace = Trace(
        question_id="q", system="s", visited_entities=["a", "b", "c", "d"], citations=Citations(entities=["a", "x"])
    )
    assert citation_coverage(trace) == 0.25 and cited_unvisited_share(trace) == 0.5
    empty = Trace(question_id="q", system="s")
    assert citation_coverage(empty) is None and cited_unvisited_share(empty) is None


def test_provenance_scores_by_hand(results):
    values = ProvenanceMetric().aggregate(results)
    score = lambda name: [v for v in values if v.metric == f"provenance.{name}" and v.system == SYSTEM][0]  # noqa: E731

    necessity = score("citation_necessity")  # paired q2..q4: changed 2 (cited) vs 2/3 (random)
    assert necessity.value == pytest.approx(4 / 9) and necessity.denominator == 3
    assert necessity.detail["changed_cited_removal"] == 2
    assert necessity.condition == "cited-removal vs random-removal"
    necessity_acc = score("citation_necessity_accuracy")  # q2..q5: 5/3 correct (random) - 2 (cited)
    assert necessity_acc.value == pytest.approx(-1 / 12) and necessity_acc.denominator == 4

    sufficiency = score("citation_sufficiency")  # originally correct q2, q3; only q2 stays correct
    assert (sufficiency.numerator, sufficiency.denominator) == (1, 2)
    unchanged = score("citation_sufficiency_unchanged")  # q2, q4 unchanged of q2..q4
    assert (unchanged.numerator, unchanged.denominator) == (2, 3)

    structure = score("structure_reliance")  # paired q2..q4: 3 correct (text-only) - 1 (full)
    assert structure.value == pytest.approx(2 / 3) and structure.denominator == 3
    stability = score("structure_reliance_stability")  # unchanged 2 (text-only: q4 changed) - 2 (full)
    assert stability.value == 0.0

    removal = score("uncited_reliance_removal")
    assert (removal.numerator, removal.denominator, removal.detail["accuracy_drop"]) == (0, 3, 0)
    mask = score("uncited_reliance_text_mask")  # q2 changed of q2..q4 (q5 failed); drop (2 - 1) / 4
    assert (mask.numerator, mask.denominator) == (1, 3)
    assert mask.detail["accuracy_drop"] == 0.25 and mask.detail["accuracy_drop_questions"] == 4

    coverage = score("citation_coverage")  # |cited ∩ visited| 1+1+0+1 over |visited| 3+2+0+1
    assert (coverage.numerator, coverage.denominator) == (3, 6)
    unvisited = score("cited_unvisited")  # z was cited unvisited, of 4 cited
    assert (unvisited.numerator, unvisited.denominator) == (1, 4)


def test_provenance_reports_absent_conditions(results):
    results.records = [r for r in results.records if r.key.condition != "random-removal"]
    values = ProvenanceMetric().aggregate(results)
    necessity = [v for v in values if v.metric == "provenance.citation_necessity" and v.system == SYSTEM][0]
    assert necessity.value is None and "random-removal" in necessity.note


def test_provenance_condition_roles_can_be_renamed(results):
    for r in results.records:
        if r.key.condition == "full-isolation":
            r.key = r.key.model_copy(update={"condition": "iso"})
    values = ProvenanceMetric(conditions={"full_isolation": "iso"}).aggregate(results)
    assert [v for v in values if v.metric == "provenance.citation_sufficiency" and v.system == SYSTEM][0].numerator == 1
    with pytest.raises(UserError, match="unknown condition role"):
        ProvenanceMetric(conditions={"fulll_isolation": "iso"})


def test_provenance_per_record_scores():
    record = rec(BASELINE, "q", "x", 1.0, visited=["a", "b"], cited=["a"])
    assert ProvenanceMetric().score(record, None, None) == {"citation_coverage": 0.5, "cited_unvisited": 0.0}


def test_metrics_are_registered():
    import pluggy

    import provbench_plugins.metrics
    from provbench import hookspecs

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(provbench_plugins.metrics, name="provbench_plugins.metrics")
    registry = build_registry(pm)
    assert {
        "accuracy",
        "em",
        "f1",
        "output-changed",
        "accuracy-delta",
        "footprint",
        "provenance",
        "ragas-faithfulness",
    } <= set(registry.names("metric"))


def test_table2_and_the_metrics_apply_one_rule_to_failed_units():
    """A failed intervention unit on an originally correct question: changed, and not stayed correct,
    in metrics.json and in paper 000's Table 2 alike (which reads the metric values when present)."""
    from pathlib import Path

    from provbench.model import RunManifest
    from provbench.report.data import RunData
    from provbench_plugins.papers.p000_neighborhoods.report import table2_section

    records = [rec(BASELINE, q, "Oslo", 1.0) for q in ("q1", "q2")]
    records += [rec("cited-removal", "q1", "oslo", 1.0), rec("cited-removal", "q2", None, None, status="failed")]
    values = OutputChanged().aggregate(Results(records=records, questions={}))
    changed, stayed = pick(values, "output-changed", "cited-removal"), pick(values, "stayed-correct", "cited-removal")
    assert (changed.numerator, changed.denominator, changed.detail["failed"]) == (1, 2, 1)
    assert (stayed.numerator, stayed.denominator) == (1, 2)

    def cited_cell(metrics):
        manifest = RunManifest(
            run_id="r", suite_name="s", suite={"systems": [SYSTEM], "interventions": ["cited-removal"]}
        )
        run = RunData(run_dir=Path("."), manifest=manifest, questions={}, records=records, metrics=metrics)
        rows = table2_section(run).blocks[0].rows
        return next(r for r in rows if r.cells and r.cells[0].text == "Cited ablation").cells[2]

    computed = cited_cell({})
    # never validated: every cell carries the mark (results.validity.cell_mark)
    assert (computed.text, computed.counts) == ("50.0% †", "(stayed correct 1/2)")
    read = cited_cell({"values": [v.model_dump(mode="json") for v in values]})
    assert (read.text, read.counts) == (computed.text, computed.counts)
    tampered = [
        v.model_dump(mode="json") | ({"numerator": 0.0} if v.metric == "output-changed" else {}) for v in values
    ]
    assert cited_cell({"values": tampered}).text == "0.0% †"  # the report shows the metric's value


def test_paper000_report_notes_a_selection_shortfall():
    from pathlib import Path

    from provbench.model import RunManifest
    from provbench.report.data import RunData
    from provbench_plugins.papers.p000_neighborhoods.report import sections

    short = {"local-path": {"quota": 12, "selected": 3}}
    questions = {"q1": Question(id="q1", question="?", answer="x", metadata={"selection_shortfall": short})}
    manifest = RunManifest(run_id="r", suite_name="s", suite={"systems": ["graphrag"]})
    found = sections(RunData(Path("."), manifest, questions, [rec(BASELINE, "q1", "x", 1.0, system="graphrag")], {}))
    assert "Selection shortfall" in found[0].blocks[0].text and "local-path: 3 of 12" in found[0].blocks[0].text
    questions["q1"] = Question(id="q1", question="?", answer="x")
    found = sections(RunData(Path("."), manifest, questions, [rec(BASELINE, "q1", "x", 1.0, system="graphrag")], {}))
    assert not any("shortfall" in getattr(b, "text", "") for b in found[0].blocks)


def test_aggregate_gets_only_the_units_the_pairing_rule_keeps():
    """``Results.paired`` (what the runner gives ``aggregate``): a metric looping over ``records``
    never counts a leaked unit; ``select(leaked=True)``, systems and conditions still see it."""
    from provbench.model import LeakCheck

    def unit(qid: str, condition: str, status: str | None) -> RunRecord:
        key = UnitKey(question_id=qid, system="s", condition=condition)
        return RunRecord(key=key, leak_check=LeakCheck(status=status) if status else None)

    every = [unit("q1", BASELINE, None), unit("q1", "x", "clean"), unit("q2", "x", "leaked"), unit("q1", "y", "no-op")]
    paired = Results(records=every, questions={}).paired()
    assert [(r.key.question_id, r.key.condition) for r in paired.records] == [("q1", BASELINE), ("q1", "x")]
    assert len(paired.select("s", "x", leaked=True)) == 2 and paired.conditions == [BASELINE, "x", "y"]
    assert len(Results(records=every, questions={}, include_leaked=True).paired().records) == 3
