"""Paper 003's report says what ran and what its numbers mean: the paper's column only where the
definitions match ("not comparable" elsewhere), every row defined, the delta formula's own
figure, the corpus, few claims, FEVER's padded evidence, which ranking, filter and answer source
ran, and a warning when most local graphs are empty (also in the metric and the run log)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from provbench.model import BASELINE, Fact, Question, RunManifest, RunRecord, Trace, UnitKey
from provbench.plugin_api import Results
from provbench.report.data import RunData

SUITE = {
    "systems": ["p003/vanilla-rag", {"name": "p003/ga-rag", "label": "ga"}],
    "knowledge_base": {"builder": "fever-wiki", "options": {"link_hops": 1}},
}


def ga_trace(question: str, facts: int, **params) -> Trace:
    trace = Trace(
        question_id=question,
        system="ga",
        answer="SUPPORTS",
        facts=[Fact(id=f"f{i}", subject="Ann", relation="r", object="B", confidence=0.5) for i in range(facts)],
    )
    source = params.pop("answer_source", "graph")
    trace.artifacts.update(
        {
            "shown": [f.id for f in trace.facts],
            "answer_source": source,
            "explanation": "x",
            "graph": {
                "params": {
                    "ranking": "equations",
                    "gamma": 0.5,
                    "iterations": 2,
                    "triple_confidence_threshold": None,
                    **params,
                }
            },
        }
    )
    return trace


def run_data(traces: list[Trace], tmp_path: Path | None = None, suite: dict | None = None) -> RunData:
    records = [RunRecord(key=UnitKey(question_id=t.question_id, system=t.system), trace=t) for t in traces]
    questions = {t.question_id: Question(id=t.question_id, question="c", answer="SUPPORTS") for t in traces}
    manifest = RunManifest(run_id="r", suite_name="s", suite=suite or SUITE)
    return RunData(tmp_path or Path("."), manifest, questions, records, {"values": []})


def test_paper_column_marks_other_quantities_not_comparable_and_defines_every_row():
    from provbench_plugins.papers.p003_ga_rag.report import table1_section
    from provbench_plugins.papers.p003_ga_rag.rows import ROWS

    section = table1_section(run_data([ga_trace("1", 3)]), [], ["ga"])
    table, definitions = [b for b in section.blocks if b.kind == "table"]
    paper = {row.cells[0].text: row.cells[-1] for row in table.rows}
    assert paper["Logical consistency"].text == "not comparable"
    assert (
        "0.500 → 1.000" in paper["Logical consistency"].note and "by construction" in paper["Logical consistency"].note
    )
    for title in (
        "Factual accuracy",
        "Response coherence",
        "Graph completeness",
        "Factual grounding",
        "Graph coverage",
        "Context precision",
    ):
        assert paper[title].text == "not comparable", title
    assert paper["Hallucination rate (provbench's tokens)"].text == "not comparable"
    time = paper["Avg response time (s)"]
    assert time.text == "1.769 → 12.442" and "same definition" not in time.note
    assert "close definition" in time.note and "full baseline query" in time.note
    assert 'answer_source is "baseline" on 20 of 20 claims' in time.note
    assert [r.cells[0].text for r in definitions.rows] == [r.title for r in ROWS]
    assert all(r.cells[1].text and r.cells[2].text for r in definitions.rows)


def test_the_hallucination_row_shows_the_authors_definition_when_asked_and_says_which():
    from provbench_plugins.papers.p003_ga_rag.report import table1_caption, table1_section

    trace = ga_trace("1", 3)
    suite = {**SUITE, "metrics": [{"name": "p003/table1", "options": {"hallucination_row": "authors"}}]}
    data = run_data([trace], suite=suite)
    table, definitions = [b for b in table1_section(data, [], ["ga"]).blocks if b.kind == "table"]
    paper = {row.cells[0].text: row.cells[-1] for row in table.rows}
    authors = paper["Hallucination rate (authors' definition)"]
    assert authors.text == "0.170 → 0.147" and "close definition" in authors.note
    assert "Hallucination rate (authors' definition)" in [r.cells[0].text for r in definitions.rows]
    assert "evaluate_hallucination_rate" in table1_caption(data)
    assert "another quantity than the paper's" in table1_caption(run_data([trace]))
    assert "The paper's GA-RAG column is the baseline's answer asked again" in table1_caption(data)


def test_table_one_pairs_each_rows_means_and_delta_over_the_same_claims():
    """The baseline scored claims 1-3, GA-RAG 1-2 (its claim 3 failed): both means, and the delta,
    are over claims 1 and 2."""
    from provbench_plugins.papers.p003_ga_rag.report import table1_row
    from provbench_plugins.papers.p003_ga_rag.rows import ROWS

    traces = [ga_trace(q, 3) for q in "123"] + [Trace(question_id=q, system="vanilla-rag") for q in "123"]
    data = run_data(traces)
    scores = {
        ("ga", "1"): 0.2,
        ("ga", "2"): 0.4,
        ("vanilla-rag", "1"): 0.4,
        ("vanilla-rag", "2"): 0.6,
        ("vanilla-rag", "3"): 1.0,
    }
    for r in data.records:
        value = scores.get((r.key.system, r.key.question_id))
        r.scores["hallucination_rate"] = value
    row = next(r for r in ROWS if r.key == "hallucination_rate")
    cells = table1_row(data, ["vanilla-rag"], ["ga"], row).cells
    assert [cells[1].text, cells[2].text] == ["0.500", "0.300"]
    assert cells[1].counts == cells[2].counts == "(n=2)" and "1 scored by only some left out" in cells[1].note
    assert cells[3].text == "+40.0%"  # (0.5 - 0.3) / 0.5, signed as an improvement


def test_captions_give_the_formulas_figure_the_corpus_few_claims_and_padded_evidence(tmp_path):
    from provbench_plugins.papers.p003_ga_rag.report import fever_section, table1_caption

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "build_info.json").write_text(json.dumps({"pages": 42}))
    suite = {**SUITE, "knowledge_base": {**SUITE["knowledge_base"], "directory": str(kb)}}
    caption = table1_caption(run_data([ga_trace("1", 3)], suite=suite))
    assert "+13.3% is this formula on the authors' means 0.16961 → 0.14700" in caption
    assert "13.5" not in caption and "prints" not in caption
    assert "42 pages whose titles occur in the claims and the pages they link to, not all of Wikipedia" in caption
    assert "With 1 claims these means have no statistical meaning" in caption
    many = run_data([ga_trace(str(i), 3) for i in range(30)], suite=suite)
    assert "no statistical meaning" not in table1_caption(many)
    fever = fever_section(run_data([ga_trace("1", 3)]), ["ga"])
    assert "padded with the other sentences it read" in next(b for b in fever.blocks if b.kind == "table").caption


def test_the_fever_section_sets_cited_evidence_beside_padded_when_the_suite_asks():
    from provbench_plugins.papers.p003_ga_rag.report import fever_section

    def value(name: str, v: float) -> dict:
        return {"metric": f"fever.{name}", "system": "ga", "condition": BASELINE, "value": v}

    padded = [value(n, 0.8) for n in ("fever_score", "evidence_precision", "evidence_recall", "evidence_f1")]
    cited = [value(f"{n}_cited", 0.2) for n in ("fever_score", "evidence_precision", "evidence_recall", "evidence_f1")]
    data = run_data([ga_trace("1", 3)])
    data.metrics["values"] = padded + cited
    tables = [b for b in fever_section(data, ["ga"]).blocks if b.kind == "table"]
    both = next(t for t in tables if "FEVER score (cited)" in t.columns)
    assert both.columns[1:3] == ["FEVER score (padded)", "FEVER score (cited)"] and len(both.columns) == 9
    assert [c.text for c in both.rows[0].cells] == ["ga", *["0.800", "0.200"] * 4]
    assert "as the official scorer scores a system's submitted evidence" in both.caption
    data.metrics["values"] = padded  # the default reading: no cited table
    assert not any("FEVER score (cited)" in t.columns for t in fever_section(data, ["ga"]).blocks if t.kind == "table")


def test_the_report_says_which_ranking_filter_and_answer_ran():
    from provbench_plugins.papers.p003_ga_rag.report import scoring_note

    plain = scoring_note(run_data([ga_trace("1", 3), ga_trace("2", 0)]), "ga")
    assert "eqs. (2)-(4), propagation with gamma = 0.5, T = 2" in plain and "triple filter off" in plain
    assert "GA-RAG's own answer always" in plain and "graphs empty for 1 of 2 claims" in plain
    gated = [
        ga_trace(
            "1",
            6,
            fallback_to_baseline=True,
            consistency_threshold=0.7,
            low_coverage_facts=5,
            grounding_threshold=0.2,
            triple_confidence_threshold=0.6,
        ),
        ga_trace("2", 2, answer_source="baseline", fallback_to_baseline=True),
    ]
    note = scoring_note(run_data(gated), "ga")
    assert "answered from the graph for 1 of 2 claims" in note and "triple filter confidence >= 0.6" in note
    authors = scoring_note(run_data([ga_trace("1", 3, ranking="authors")]), "ga")
    assert "the authors' released ranking" in authors and "eqs. (2)-(4)" not in authors.split("(")[0]
    assert "without propagation (gamma = 0" in scoring_note(run_data([ga_trace("1", 3, gamma=0.0)]), "ga")


def test_table_one_gives_the_gated_setting_its_own_column_named_in_caption_and_intro():
    """fever-garag's fourth GA-RAG setting runs the authors' gate, as the paper's column was built:
    Table I gives it a column and a delta like any setting, the intro counts its graph answers
    (none here: every claim fell back) and the caption names it as the paper's configuration."""
    from provbench_plugins.papers.p003_ga_rag.report import table1_caption, table1_section

    suite = {**SUITE, "systems": [*SUITE["systems"], {"name": "p003/ga-rag", "label": "gate"}]}
    traces = [ga_trace(q, 4) for q in "12"] + [Trace(question_id=q, system="vanilla-rag") for q in "12"]
    for q in "12":
        gated = ga_trace(q, 4, answer_source="baseline", fallback_to_baseline=True, consistency_threshold=0.7)
        traces.append(gated.model_copy(update={"system": "gate"}))
    data = run_data(traces, suite=suite)
    section = table1_section(data, ["vanilla-rag"], ["ga", "gate"])
    table = next(b for b in section.blocks if b.kind == "table")
    assert table.columns == [
        "Metric",
        "Baseline (vanilla-rag)",
        "GA-RAG (ga)",
        "Delta (%)",
        "GA-RAG (gate)",
        "Delta (%)",
        "Paper (baseline → GA-RAG)",
    ]
    assert all(len(row.cells) == len(table.columns) for row in table.rows)
    assert "gate: eqs. (2)-(4)" in section.intro and "answered from the graph for 0 of 2 claims" in section.intro
    assert "GA-RAG's own answer always" in section.intro.split("; gate:")[0]
    caption = table1_caption(data)
    assert "GA-RAG (gate): built as the paper's column was, the authors' gate on" in caption
    assert "GA-RAG (ga)" not in caption
    assert "built as the paper's column was" not in table1_caption(run_data(traces[:4]))


def test_the_report_says_what_eq_3_did_to_facts_without_an_edge():
    from provbench_plugins.papers.p003_ga_rag.report import scoring_note

    lone = ga_trace("1", 3)
    lone.artifacts["graph"]["isolated"] = ["f0"]
    note = scoring_note(run_data([lone, ga_trace("2", 3)]), "ga")
    assert "decays to (1 - gamma)^T = 0.25 of s(0)" in note and "facts without an edge in 1 graphs" in note
    kept = scoring_note(run_data([ga_trace("1", 3, isolated="keep")]), "ga")
    assert "keeping s(0) (isolated: keep)" in kept and "decays" not in kept


def test_mostly_empty_graphs_are_warned_about_in_the_report_metric_and_log(caplog):
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne
    from provbench_plugins.papers.p003_ga_rag.report import table1_section

    traces = [ga_trace("1", 0), ga_trace("2", 0), ga_trace("3", 4)]
    section = table1_section(run_data(traces), [], ["ga"])
    warning = section.blocks[0]
    assert warning.kind == "text" and warning.text.startswith("Warning: ga: the local graph is empty for 67% of 3")
    healthy = table1_section(run_data([ga_trace("1", 0), ga_trace("2", 4)]), [], ["ga"])
    assert healthy.blocks[0].kind == "table"  # half empty: no warning
    records = [
        RunRecord(
            key=UnitKey(question_id=t.question_id, system="ga"), trace=t, scores={"empty_graph": float(not t.facts)}
        )
        for t in traces
    ]
    with caplog.at_level(logging.WARNING):
        values = TableOne(judge=False, ragas=False).aggregate(Results(records=records, questions={}))
    empty = next(v for v in values if v.metric == "table1.empty_graph")
    assert empty.value == 2 / 3 and "empty for 67% of 3 claims" in empty.note and "empty for 67%" in caplog.text
    assert empty.condition == BASELINE


def test_intervention_units_the_pairing_rule_leaves_out_never_reach_table_one_and_are_counted_beside_its_metric():
    """Table I reads the baseline condition only; the table1 metric's values under an intervention
    leave out the units the pairing rule leaves out and say how many, or "not measurable"."""
    from provbench.model import LeakCheck
    from provbench.plugin_api import with_left_out_notes
    from provbench_plugins.papers.p003_ga_rag.metrics import TableOne
    from provbench_plugins.papers.p003_ga_rag.report import table1_row
    from provbench_plugins.papers.p003_ga_rag.rows import ROWS

    data = run_data([ga_trace(q, 3) for q in "123"])
    for r in data.records:
        r.scores["graph_completeness"] = 0.5
    units = {"1": "clean", "2": "leaked", "3": "no-op"}
    for q, status in units.items():  # under cited removal; a left-out unit would drag the mean to 0.0
        data.records.append(
            RunRecord(
                key=UnitKey(question_id=q, system="ga", condition="cited-removal"),
                trace=ga_trace(q, 3),
                leak_check=LeakCheck(status=status),
                scores={"graph_completeness": 1.0 if status == "clean" else 0.0},
            )
        )
    row = next(r for r in ROWS if r.key == "graph_completeness")
    assert table1_row(data, [], ["ga"], row).cells[1].text == "0.500"  # the baseline's claims alone
    results = Results(records=data.records, questions=data.questions)
    values = with_left_out_notes(TableOne(judge=False, ragas=False).aggregate(results), results)
    cited = next(v for v in values if v.metric == "table1.graph_completeness" and v.condition == "cited-removal")
    assert (cited.value, cited.denominator) == (1.0, 1) and cited.note == "left out (leak guard): 1 leaked, 1 no-op"
    data.records[3].leak_check = LeakCheck(status="not-checkable")  # nothing left to measure
    values = with_left_out_notes(TableOne(judge=False, ragas=False).aggregate(results), results)
    cited = [v for v in values if v.metric == "table1.graph_completeness" and v.condition == "cited-removal"]
    assert [(v.value, v.note) for v in cited] == [(None, "not measurable: 1 leaked, 1 no-op, 1 not-checkable")]


def test_the_fever_section_has_the_measures_then_a_confusion_matrix_per_system():
    from provbench_plugins.papers.p003_ga_rag.report import fever_section

    run = run_data([ga_trace("1", 3)])
    matrix = {"SUPPORTS": {"SUPPORTS": 2, "REFUTES": 1}, "REFUTES": {"REFUTES": 3}}
    run.metrics["values"] = [
        {"metric": "fever.label_accuracy", "system": "ga", "condition": "baseline", "value": 0.5},
        {"metric": "fever.confusion", "system": "ga", "condition": "baseline", "detail": {"matrix": matrix}},
    ]
    measures, confusion = fever_section(run, ["ga", "other"]).blocks  # "other" has no matrix: no table
    assert [row.cells[0].text for row in measures.rows] == ["ga", "other"]
    assert measures.rows[0].cells[1].text.startswith("0.5") and measures.rows[1].cells[1].text == "–"
    assert confusion.caption.startswith("Confusion matrix of ga") and len(confusion.rows) == 2
    assert [c.text for c in confusion.rows[0].cells[:3]] == ["SUPPORTS", "2", "1"]
