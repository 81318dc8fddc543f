"""suites/medmcqa-kgragex.yaml end to end on the schema-following LLM: every system and
intervention runs, the report holds paper 001's sections, and a re-run makes no LLM call."""

from __future__ import annotations

import json
import statistics
from collections import Counter

from conftest import REPO
from provbench.report.data import load_run
from provbench_plugins.papers.p001_kgrag_ex import report as p001_report
from provbench.runner import run_suite
from provbench.testing import schema_following_llm

SUITE = REPO / "suites" / "medmcqa-kgragex.yaml"


def test_suite_runs_end_to_end_and_reruns_from_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the builder finds the bundled corpus from any folder
    out = tmp_path / "run"
    llm = schema_following_llm(cache_dir=out / "llm")
    run_dir = run_suite(SUITE, out=out, llm=llm)
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    by_unit = Counter((r["key"]["system"], r["key"]["condition"]) for r in records)
    assert {by_unit[(s, "baseline")] for s in ("llm-only", "vector-rag", "kgrag-ex")} == {4}
    for condition in ("kg-node-removal", "kg-edge-removal", "kg-subpath-removal", "kg-subpath-blanked"):
        assert by_unit[("kgrag-ex", condition)] > 0 and by_unit[("vector-rag", condition)] == 0
    assert by_unit[("vector-rag", "ragex-window")] > 0 and by_unit[("kgrag-ex", "ragex-window")] == 0
    assert all(r["status"] == "ok" for r in records)
    kg = [r for r in records if r["key"]["system"] == "kgrag-ex"]
    nodes = sum(r["key"]["condition"] == "kg-node-removal" for r in kg)
    edges = sum(r["key"]["condition"] == "kg-edge-removal" for r in kg)
    assert edges == nodes - sum(1 for r in kg if r["key"]["condition"] == "baseline" and r["trace"]["paths"])
    baseline = next(r for r in kg if r["key"]["condition"] == "baseline" and r["trace"]["paths"])
    assert baseline["trace"]["answer"] in "ABCD" and baseline["trace"]["artifacts"]["kgrag"]["grounding"]
    resumed = next(r for r in kg if r["key"]["condition"] != "baseline")
    purposes = {c["purpose"] for c in resumed["trace"]["llm_calls"]}
    assert "triplets" not in purposes and "answer" in purposes  # only the stages after path retrieval

    report = (run_dir / "report.html").read_text()
    for title in (
        "Table 4: impact of perturbation methods",
        "critical changes by position on the path",
        "critical changes by node label",
        "sub-path score (eq. 1)",
        "Table 5: cost of an explanation",
        "Table 2: explanations per question",
        "accuracy by choice type",
        "lengths of the kept paths",
    ):
        assert title in report, title
    assert "Section from provbench_plugins.papers.p001_kgrag_ex failed" not in report
    check_table_figures(run_dir, records)

    calls = len(llm.backend.calls)
    again = schema_following_llm(cache_dir=out / "llm")
    run_suite(SUITE, out=out, llm=again)
    assert len(again.backend.calls) == 0 and calls > 0


def cells(section, block: int = 0) -> list[list[str]]:
    return [[cell.text for cell in row.cells] for row in section.blocks[block].rows]


def check_table_figures(run_dir, records: list[dict]) -> None:
    """Tables 3, 4 and 5 of the report hold the figures the records and the KB imply."""
    sections = {s.id: s for s in p001_report.sections(load_run(run_dir))}
    table3 = {row[0]: row[1:] for row in cells(sections["p001-table3"])}
    corpus = [
        json.loads(line) for line in (REPO / "datasets" / "medical-mini" / "corpus.jsonl").read_text().splitlines()
    ]
    documents = Counter(c["source"] for c in corpus)
    assert table3["documents"] == [str(len(documents)), "9,552"]
    assert table3["text chunks"] == [str(len(corpus)), "445,454"]
    assert table3["chunks per document: max"] == [str(max(documents.values())), "556"]
    triples = (REPO / "datasets" / "medical-mini" / "kg_triples.csv").read_text().strip().splitlines()
    assert table3["edges"] == [str(len(triples) - 1), "133,287"]

    kg = [r for r in records if r["key"]["system"] == "kgrag-ex" and r["key"]["condition"].startswith("kg-")]
    table4 = cells(sections["p001-table4-kgrag-ex"])
    mini = "MedMCQA form: medical-mini/dev.jsonl"
    assert [row[:2] for row in table4] == [[mini, "paper (line dropped)"], [mini, "authors (blanked in place)"]]
    for row, blanked in zip(table4, ("kg-subpath-removal", "kg-subpath-blanked")):
        run = [
            r
            for r in kg
            if r["key"]["condition"]
            != ("kg-subpath-blanked" if blanked == "kg-subpath-removal" else "kg-subpath-removal")
        ]
        changed_questions = {r["key"]["question_id"] for r in run if r["scores"].get("output_changed") == 1.0}
        examples, node, edge, subpath, tied = map(int, row[2:])
        assert examples == len(changed_questions) and node + edge + subpath == examples and 0 <= tied <= examples
    variants = {row[0]: list(map(int, row[1:])) for row in cells(sections["p001-table4-kgrag-ex"], 1)}
    for title, condition in (
        ("Node", "kg-node-removal"),
        ("Edge", "kg-edge-removal"),
        ("Sub-path, paper (line dropped)", "kg-subpath-removal"),
        ("Sub-path, authors (blanked in place)", "kg-subpath-blanked"),
    ):
        run = [r for r in kg if r["key"]["condition"] == condition]
        assert variants[title] == [len(run), sum(r["scores"].get("output_changed") == 1.0 for r in run)]

    cost = sections["p001-cost-kgrag-ex"]
    ragex = [r for r in records if r["key"]["condition"] == "ragex-window"]
    kg_paper = [r for r in kg if r["key"]["condition"] != "kg-subpath-blanked"]
    shared = sorted({r["key"]["question_id"] for r in ragex} & {r["key"]["question_id"] for r in kg_paper})
    assert shared

    def median_calls(recs):
        per = [sum(len(r["trace"]["llm_calls"]) for r in recs if r["key"]["question_id"] == q) for q in shared]
        return f"{statistics.median(per):.1f}"

    provbench, authors = ({row[0]: row[1:] for row in cells(cost, i)} for i in (0, 1))
    label = "RAG-Ex (vector-rag, 5-word windows, stride 5)"
    assert provbench[label][:2] == [str(len(shared)), median_calls(ragex)]
    assert provbench["KGRAG-Ex"][:2] == [str(len(shared)), median_calls(kg_paper)]
    perturbations = [sum(r["key"]["question_id"] == q for r in ragex) for q in shared]
    assert authors[label][1] == f"{statistics.median(perturbations):.1f}"  # 1 call per perturbation
    assert "window by 5 words" in cost.blocks[2].text and "not comparable" in cost.blocks[2].text


def test_the_authors_suite_runs_every_part_on_its_authors_preset(tmp_path, monkeypatch):
    """The authors' suite end to end on the oracle control (schema-following replies would parse no
    pair): their entity pairs, directed chains, in-place blanking, capitalised RAG-Ex chunks, and
    Tables 4 and 5 with figures, not empty rows."""
    from provbench.suite import load_suite

    suite = REPO / "suites" / "medmcqa-kgragex-authors.yaml"
    assert load_suite(suite).suite.model.id == "ollama/llama3.2:3b-instruct-fp16"
    monkeypatch.chdir(tmp_path)
    run_dir = run_suite(suite, model="control:oracle", out=tmp_path / "run")
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    assert records and all(r["status"] == "ok" for r in records)
    kg = [r for r in records if r["key"]["system"] == "kgrag-ex"]
    baselines = [r for r in kg if r["key"]["condition"] == "baseline"]
    # a bridge question (mm-b), like a path-position control (mm-e: a symptom and a complication's body part),
    # names no gold entity: the oracle lists no pair, and the authors add none from the text
    unnamed = ("mm-b", "mm-e")
    assert all(
        bool(r["trace"]["artifacts"]["query_pairs"]) != r["key"]["question_id"].startswith(unnamed) for r in baselines
    )
    assert all(
        bool(r["trace"]["artifacts"]["kgrag"]["paths"]) != r["key"]["question_id"].startswith(unnamed)
        for r in baselines
    )  # each pair's directed path
    blanked = [r for r in kg if r["key"]["condition"] == "kg-subpath-removal"]
    assert blanked and all(r["variant"]["data"]["rule"] == "authors" for r in blanked)
    after = [line for r in blanked for line in r["variant"]["data"]["path_after"]]
    assert after and all("->[" in line and " ->[" not in line for line in after)  # the authors' chain format
    assert any(r["variant"]["data"]["blanked"]["nodes"] for r in blanked)
    assert any(r["scores"].get("output_changed") == 1.0 for r in blanked)  # blanking a gold triple changes it
    passages = [
        r["trace"]["artifacts"]["passages"][0]["text"]
        for r in records
        if r["key"]["system"] == "vector-rag" and r["key"]["condition"] == "baseline"
    ]
    assert passages and all(p == p.capitalize() for p in passages)

    sections = {s.id: s for s in p001_report.sections(load_run(run_dir))}
    (row,) = cells(sections["p001-table4-kgrag-ex"])
    assert (
        row[:2] == ["MedMCQA form: medical-mini/dev.jsonl", "authors (blanked in place)"] and int(row[2]) > 0
    )  # questions with a change
    cost = sections["p001-cost-kgrag-ex"]
    authors = {r[0]: r[1:] for r in cells(cost, 1)}
    label = "RAG-Ex (vector-rag, 5-word windows, stride 1, over the 'Chunk 0' labels too)"
    assert float(authors["KGRAG-Ex"][1]) > 0 and float(authors[label][1]) > float(authors["KGRAG-Ex"][1])
    assert "sub-path removals under the authors (blanked in place) rule" in cost.blocks[-1].text
