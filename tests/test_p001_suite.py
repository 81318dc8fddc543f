"""suites/medmcqa-kgragex.yaml end to end on the schema-following LLM: every system and
intervention runs, the report holds paper 001's sections, and a re-run makes no LLM call."""

from __future__ import annotations

import json
from collections import Counter

from conftest import REPO
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
    for condition in ("kg-node-removal", "kg-edge-removal", "kg-subpath-removal"):
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
    for title in ("Table 4: impact of perturbation methods", "critical changes by position on the path",
                  "critical changes by node label", "sub-path score (eq. 1)", "Table 5: cost of an explanation",
                  "Table 2: explanations per question", "accuracy by choice type"):
        assert title in report, title
    assert "Section from provbench_plugins.papers.p001_kgrag_ex failed" not in report

    calls = len(llm.backend.calls)
    again = schema_following_llm(cache_dir=out / "llm")
    run_suite(SUITE, out=out, llm=again)
    assert len(again.backend.calls) == 0 and calls > 0
