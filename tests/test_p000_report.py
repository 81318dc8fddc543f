"""Paper 000's Tables 1 and 2 on hand-built records: the paper's order and names, "–" for columns a
system does not have, official EM and F1, forced and flagged answers, the text rule a run used and
the community reports its ablations hid (issue 22, items 1, 7 and 9)."""

from __future__ import annotations

from pathlib import Path

from provbench.model import BASELINE, Citations, Question, RunManifest, RunRecord, Trace, UnitKey
from provbench.report.data import RunData
from provbench_plugins.papers.p000_neighborhoods.report import table1_section, table2_section

SUITE_SYSTEMS = [
    "llm-only",
    "p000/rag",
    "graphrag",
    "agentic-graphrag",
    "agentic-visited-only",
    "agentic-evidence-first",
    {"name": "agentic-graphrag", "label": "agent-24"},
]
QUESTIONS = {q: Question(id=q, question="?", answer="Oslo") for q in ("q1", "q2")}


def record(
    system: str, qid: str, *, condition: str = BASELINE, em: float = 1.0, read=(), visited=(), artifacts=None
) -> RunRecord:
    trace = Trace(
        question_id=qid,
        system=system,
        answer="Oslo",
        read_text_units=list(read),
        visited_entities=list(visited),
        citations=Citations(text_units=list(read)[:1]),
        artifacts=dict(artifacts or {}),
    )
    return RunRecord(
        key=UnitKey(question_id=qid, system=system, condition=condition),
        trace=trace,
        scores={"accuracy": em, "em": em, "f1": em},
    )


def run_of(records, interventions=(), metrics=None, loader="2wiki") -> RunData:
    suite = {"systems": SUITE_SYSTEMS, "interventions": list(interventions), "dataset": {"loader": loader}}
    manifest = RunManifest(run_id="r", suite_name="s", suite=suite)
    return RunData(Path("."), manifest, QUESTIONS, records, metrics or {})


def baseline_records() -> list[RunRecord]:
    out = []
    for system in (
        "llm-only",
        "rag",
        "graphrag",
        "agentic-graphrag",
        "agentic-visited-only",
        "agentic-evidence-first",
        "agent-24",
    ):
        out.append(record(system, "q1", read=["tu:1"], visited=["ent:a"]))
        out.append(record(system, "q2", em=0.0, read=["tu:2"], visited=["ent:b"]))
    out[-3].trace.artifacts.update(forced_answer=True, flagged_evidence=[{"field": "entities"}])  # evidence-first q2
    out[8].trace.artifacts.update(flagged_citations=[{"field": "entities", "id": "ent:x", "reason": "not visited"}])
    return out


def rows_by_name(section) -> dict[str, list[str]]:
    return {row.cells[0].text: [c.text for c in row.cells[1:]] for row in section.blocks[-1].rows}


def test_table1_follows_the_papers_order_and_names():
    table = table1_section(run_of(baseline_records())).blocks[-1]
    # a labelled variant keeps its label and sits beside the system it runs
    assert [row.cells[0].text for row in table.rows] == [
        "Agentic GraphRAG",
        "agent-24",
        "Evidence-first",
        "Visited-only",
        "GraphRAG",
        "RAG",
        "LLM",
    ]
    assert table.columns[:6] == ["System", "Accuracy", "Accuracy (analysed)", "Paper's denominator", "EM", "F1"]


def test_table1_shows_a_dash_for_columns_a_system_does_not_have():
    rows = rows_by_name(table1_section(run_of(baseline_records())))
    # columns after System: Accuracy, Accuracy (analysed), Paper's denominator, EM, F1, Retrieved TUs, Cited TUs, Visited entities, Cited entities,
    # Forced answers, Flagged answers, Failed
    assert rows["LLM"][5:11] == ["–"] * 6  # reads, visits and cites nothing; no agent loop
    assert rows["RAG"][5:11] == ["1.0", "1.0", "–", "–", "–", "–"]  # 0.0 visited entities came from mean_footprint
    assert rows["GraphRAG"][5:11] == ["1.0", "1.0", "1.0", "0.0", "–", "–"]
    assert rows["Agentic GraphRAG"][5:9] == ["1.0", "1.0", "1.0", "0.0"]


def test_table1_counts_forced_and_flagged_answers_of_the_agents():
    rows = rows_by_name(table1_section(run_of(baseline_records())))
    assert rows["Evidence-first"][9:11] == ["1", "1"]
    assert rows["Visited-only"][9:11] == ["0", "1"]
    assert rows["Agentic GraphRAG"][9:11] == ["0", "0"]


def test_table1_shows_official_em_and_f1():
    run = run_of(baseline_records())
    row = next(r for r in table1_section(run).blocks[-1].rows if r.cells[0].text == "RAG")
    assert (row.cells[4].text, row.cells[4].counts) == ("50.0", "(1/2)")  # mean x 100 over both questions
    # a question with no record scores 0, as in the official evaluation
    row = next(
        r
        for r in table1_section(run_of([r for r in baseline_records() if r.key.question_id == "q1"])).blocks[-1].rows
        if r.cells[0].text == "RAG"
    )
    assert row.cells[4].text == "50.0" and row.cells[5].text == "50.0"
    stored = {
        "values": [
            {"metric": "em", "system": "rag", "condition": BASELINE, "value": 12.5, "numerator": 0.25, "denominator": 2}
        ]
    }
    row = next(
        r
        for r in table1_section(run_of(baseline_records(), metrics=stored)).blocks[-1].rows
        if r.cells[0].text == "RAG"
    )
    assert row.cells[4].text == "12.5"  # metrics.json is read when the run has it


def test_table1_shows_both_denominators_and_the_papers_per_row():
    """The paper's agentic and GraphRAG rows are shares of the 25 analysed questions, LLM and RAG of all 30."""
    run = run_of(baseline_records(), metrics={"excluded": ["q2"]})
    table = table1_section(run).blocks[-1]
    rows = {row.cells[0].text: row.cells for row in table.rows}
    assert (rows["RAG"][1].counts, rows["RAG"][2].counts) == ("(1/2)", "(1/1)")  # q2 (wrong) excluded
    assert (
        rows["Agentic GraphRAG"][3].text == "analysed: 76.0 % = 19/25" and rows["LLM"][3].text == "all: 16.7 % = 5/30"
    )
    assert rows["agent-24"][3].text == "–"  # a suite's own label is not a row of the paper
    assert "over the 1 analysed questions" in table.caption and "agentic and GraphRAG rows" in table.caption


def test_own_data_shows_neither_the_papers_figures_nor_its_alias_notes():
    """A run on another loader's data (the user's own questions) is not the paper's setting: no
    "Paper's denominator" column, no 25/30 questions, no 2WikiMultihopQA aliases in the caption."""
    table = table1_section(run_of(baseline_records(), loader="qa")).blocks[-1]
    assert "Paper's denominator" not in table.columns and len(table.rows[0].cells) == len(table.columns)
    assert not any("25" in c.text or "30" in c.text for row in table.rows for c in row.cells)
    assert "2WikiMultihopQA" not in table.caption and "aliases" not in table.caption and "25" not in table.caption
    assert "the dataset loader scores" in table.caption


def test_table2_describes_each_isolation_in_its_own_words():
    records = baseline_records() + [
        record("graphrag", q, condition=c) for q in ("q1", "q2") for c in ("full-isolation", "text-only-isolation")
    ]
    caption = table2_section(run_of(records, ["full-isolation", "text-only-isolation"])).blocks[0].caption
    full = caption.split("Full isolation: ")[1].split("Text-only isolation: ")[0]
    text_only = caption.split("Text-only isolation: ")[1].split(". Cited removal")[0]
    assert full.split("; text rule")[0] != text_only.split("; text rule")[0]
    assert "no entity is removed" in text_only and "is removed, with its text" in full


def test_the_em_caption_says_whether_aliases_were_used():
    caption = table1_section(run_of(baseline_records())).blocks[-1].caption
    assert "no aliases" in caption
    QUESTIONS["q1"].aliases = ["Kristiania"]
    try:
        caption = table1_section(run_of(baseline_records())).blocks[-1].caption
    finally:
        QUESTIONS["q1"].aliases = []
    assert "best over the answer and its aliases; 1 of 2 questions have aliases" in caption


def test_table2_names_the_text_rule_and_the_hidden_reports():
    records = baseline_records()
    for qid, hidden in (("q1", 7), ("q2", 5)):
        summary = {"entities": {"count": 2, "ids": []}, "communities": {"count": hidden, "ids": []}}
        records.append(
            record("agentic-graphrag", qid, condition="cited-removal", artifacts={"hidden_by_intervention": summary})
        )
        kept = {"keep_communities": {"count": 1, "ids": ["com:1"]}} if qid == "q1" else {}
        records.append(
            record("agentic-graphrag", qid, condition="full-isolation", artifacts={"hidden_by_intervention": kept})
        )
    run = run_of(records, ["cited-removal", {"name": "full-isolation", "options": {"shared_text": "hide"}}])
    section = table2_section(run)
    table = section.blocks[0]
    assert table.columns[2] == "Agentic GraphRAG"
    assert (
        "Full isolation: every entity but the baseline's cited ones is removed, with its text; text rule: a text unit linked to any non-cited entity is hidden"
        in table.caption
    )
    assert "shared_text: hide" in table.caption
    assert "Community reports hidden per unit" in section.blocks[1].text
    assert (
        "Cited ablation 6.0 (cited reports kept 0.0); Full isolation 0.0 (cited reports kept 0.5)"
        in section.blocks[1].text
    )
    default = table2_section(run_of(records, ["cited-removal", "full-isolation"])).blocks[0].caption
    assert "naming a cited one is hidden (shared_text: keep" in default


def test_table2_names_the_random_draw_and_the_entity_removal_reading():
    records = baseline_records() + [
        record(s, q, condition=c)
        for s in ("agentic-graphrag", "graphrag")
        for q in ("q1", "q2")
        for c in ("random-removal", "entity-removal")
    ]
    default = table2_section(run_of(records, ["random-removal", "entity-removal"])).blocks[0]
    assert (
        "Random ablation: drawn from the plausibly retrievable entities the baseline did not visit" in default.caption
    )
    assert "(draw: not-visited-first;" in default.caption
    assert "Entity removal: every text unit linked to a removed entity is hidden" in default.caption
    assert "as section 2.3 designs the pair (text: linked); the paper's Table 2 has the mask costing more" in (
        default.caption
    )
    assert "Simple GraphRAG" in default.columns and "Agentic GraphRAG" in default.columns  # the paper's Table 2 names
    chosen = [
        {"name": "random-removal", "options": {"draw": "uniform"}},
        {"name": "entity-removal", "options": {"text": "orphaned"}},
    ]
    caption = table2_section(run_of(records, chosen)).blocks[0].caption
    assert "visited-but-uncited ones included (draw: uniform; the paper's wording" in caption
    assert "only the text units no kept entity links are hidden" in caption and "(text: orphaned;" in caption
    assert "not-visited-first" not in caption and "text: linked" not in caption


def test_a_labelled_isolation_is_classified_by_its_intervention():
    """``shared_text: hide`` under a label of its own is still an isolation: its reading is in the
    caption and its rows sit under Isolation, not under "Other interventions"."""
    records = baseline_records()
    for condition in ("full-isolation", "isolation-hide"):
        records += [record("agentic-graphrag", qid, condition=condition) for qid in ("q1", "q2")]
    run = run_of(
        records,
        [
            "full-isolation",
            {"name": "p000/full-isolation", "label": "isolation-hide", "options": {"shared_text": "hide"}},
        ],
    )
    table = table2_section(run).blocks[0]
    assert (
        "Full isolation (isolation-hide): every entity but the baseline's cited ones is removed, with its text; "
        "text rule: a text unit linked to any non-cited entity is hidden, a cited entity's "
        "own included (shared_text: hide"
    ) in table.caption
    groups = [row.group for row in table.rows if row.group]
    assert groups == ["Baseline experiment", "Isolation"]
    titles = [row.cells[0].text for row in table.rows if not row.group and row.cells[1].text == "Output changed"]
    assert titles == ["Full isolation", "Full isolation (isolation-hide)"]


def test_the_title_names_the_model_a_run_used_and_the_mistral_suite_does_not_say_reproduced():
    import yaml

    from provbench.report.title import report_title

    run = run_of(baseline_records())
    run.manifest.suite["report"] = {"title": "provbench quickstart (embedded model: pipeline check, not a result)"}
    run.manifest.models = {"llm": "embedded", "suite_model": "embedded"}
    assert report_title(run) == "provbench quickstart (embedded model: pipeline check, not a result)"
    run.manifest.models = {"llm": "deepseek/deepseek-chat", "suite_model": "deepseek/deepseek-chat"}
    assert report_title(run) == "provbench quickstart (model deepseek/deepseek-chat)"
    mistral = yaml.safe_load((Path(__file__).parents[1] / "suites" / "2wiki-paper000-mistral.yaml").read_text())
    assert "reproduc" not in mistral["report"]["title"].replace("not a reproduction", "")
    assert "reproduced" not in mistral["description"]


def test_table2_leaves_out_no_op_units_and_pairs_arrows_with_the_baseline_of_the_same_questions():
    """Issue 32 item 5: a unit whose intervention hid nothing is counted in the note, not in the cell, and
    the arrow compares the measured questions with their own baseline (not the whole baseline)."""
    from provbench.model import LeakCheck

    records = baseline_records()
    graphrag = {r.key.question_id: r for r in records if r.key.system == "graphrag"}
    graphrag["q1"].scores["accuracy"], graphrag["q2"].scores["accuracy"] = 0.0, 1.0
    for qid, status in (("q1", "no-op"), ("q2", "clean")):
        unit = record("graphrag", qid, condition="cited-removal")
        unit.leak_check = LeakCheck(status=status)
        records.append(unit)
    records += [record("graphrag", qid, condition="full-isolation") for qid in ("q1", "q2")]
    for unit in records[-2:]:
        unit.leak_check = LeakCheck(status="no-op")
    table = table2_section(run_of(records, ["cited-removal", "full-isolation"])).blocks[0]
    column = table.columns.index("Simple GraphRAG")  # Table 2's name for the one-shot graph baseline
    rows, title = {}, ""
    for row in (r for r in table.rows if not r.group):
        title = row.cells[0].text or title
        rows[(title, row.cells[1].text)] = row.cells[column]
    changed, accuracy = rows[("Cited ablation", "Output changed")], rows[("Cited ablation", "Acc.")]
    assert changed.text == "0.0% †" and "left out (leak guard): 1 no-op" in changed.note  # † never validated
    assert changed.counts == "(stayed correct 1/1)"  # labelled: not the changed count beside the changed share
    assert accuracy.counts == "(1/1)" and accuracy.arrow == "→"  # q2 stayed right; q1 (wrong at baseline) is out
    isolation = rows[("Full isolation", "Output changed")]
    assert isolation.text == "not measurable †" and isolation.note.startswith("2 no-op (leak guard); ")  # said once


def test_a_fractional_score_sum_is_shown_rounded():
    """F1 sums partial scores: Table 1 shows (1.7/6), not (1.66667/6)."""
    stored = {
        "values": [
            {
                "metric": "f1",
                "system": "rag",
                "condition": BASELINE,
                "value": 27.8,
                "numerator": 5 / 3,
                "denominator": 6,
            }
        ]
    }
    row = next(
        r
        for r in table1_section(run_of(baseline_records(), metrics=stored)).blocks[-1].rows
        if r.cells[0].text == "RAG"
    )
    assert row.cells[5].counts == "(1.7/6)"
    from provbench.results.data import format_metric_value

    assert format_metric_value({"value": 0.27778, "numerator": 5 / 3, "denominator": 6}) == "0.278 (1.7/6)"


def test_table2_charts_show_the_tables_shares_with_intervals_and_mark_what_was_not_measured():
    """Issue 37 item 6: the bars are Table 2's cells; a cell the leak guard left unmeasured is marked
    n/m instead of standing as a 0 % bar beside measured ones."""
    from provbench.model import LeakCheck
    from provbench.report.render import section_view
    from provbench.report.sections import BarChart

    records = baseline_records()
    records += [record("graphrag", qid, condition="cited-removal") for qid in ("q1", "q2")]
    records += [record("graphrag", qid, condition="full-isolation") for qid in ("q1", "q2")]
    for unit in records[-2:]:
        unit.leak_check = LeakCheck(status="no-op")
    section = table2_section(run_of(records, ["cited-removal", "full-isolation"]))
    changed, accuracy = [b for b in section.blocks if isinstance(b, BarChart)]
    assert changed.categories == ["Cited ablation", "Full isolation"]
    assert changed.series["Simple GraphRAG"][0] == 0.0 and changed.series["Simple GraphRAG"][1] is None
    low, high = changed.intervals["Simple GraphRAG"][0]
    assert low is not None and high is not None and changed.intervals["Simple GraphRAG"][1] is None
    assert (
        accuracy.series["Simple GraphRAG"][0] is not None and accuracy.series["Simple GraphRAG"][2] is None
    )  # baseline, ..., n/m
    svgs = [b["svg"] for b in section_view(section)["blocks"] if b.get("svg")]
    assert len(svgs) == 2 and all(">n/m<" in svg for svg in svgs)


def test_the_header_names_one_model_once_when_the_judge_is_the_systems_model():
    """The suite said `embedded`; the header's model line shows what it resolved to, so the judge line does too."""
    from provbench.report.render import header

    run = run_of(baseline_records())
    run.manifest.models = {"llm": "llama-cpp:smollm2-135m-instruct", "suite_model": "embedded", "judge": "embedded"}
    assert header(run)["judge"] == "llama-cpp:smollm2-135m-instruct (the same model as the systems)"
    run.manifest.models["judge"] = "openai/gpt-4o-mini"
    assert header(run)["judge"] == "openai/gpt-4o-mini (a separate model)"
