"""The leak guard on a whole suite: every built-in system under paper 000's six ablations on the
2wiki mini knowledge base (schema-following LLM) shows no leak; a system that reads around its view
is flagged ``leaked`` (records, console, report); one whose requests ignore what it reads is clean
(the view binds it; it uses nothing); a system with its own store is clean when it filters by
``env.hidden`` and leaked when it does not. An outside plugin's (a) own-store system with an empty
trace and no model, (b) own-id summary store, (c) LlamaIndex fusion pipeline: no unit the guard
cannot vouch for is counted in any statistic, and (c) gets no false no-effect verdict. A unit whose
intervention hid nothing is a no-op, never silently counted. `provbench audit` reproduces every verdict.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from leak_helpers import leaky_plugin
from provbench.audit import view_of
from provbench.kb import KnowledgeBase
from provbench.registry import default_registry
from provbench.runner import run_suite
from provbench.run_store import RunStore
from provbench.testing import plugin_manager, schema_following_llm

REPO = Path(__file__).resolve().parents[1]
ABLATIONS = [
    "full-isolation",
    "text-only-isolation",
    "cited-removal",
    "random-removal",
    "entity-removal",
    "entity-text-mask",
]
LEAKY = [
    "reads-around-the-view",
    "ignores-what-it-reads",
    "own-store-rag",
    "own-store-unfiltered",
    "reads-and-records",
    "empty-trace-own-store",
    "own-summary-store",
    "own-summary-unfiltered",
    "li-fusion",
]
TEXT_ABLATIONS = ["text-only-isolation", "entity-text-mask"]  # they remove no entity
SUITE = """\
name: leak-guard
dataset: {{loader: 2wiki, path: "{dataset}", limit: 3}}
knowledge_base: {{builder: 2wiki-paper000, options: {{extract: false, summarize: false}}, directory: kb}}
model: {{id: schema-following}}
systems:
{systems}
  - leaky/reads-around-the-view
  - {{name: leaky/reads-around-the-view, label: reads-and-records, options: {{record_reads: true}}}}
  - leaky/ignores-what-it-reads
  - leaky/own-store-rag
  - {{name: leaky/own-store-rag, label: own-store-unfiltered, options: {{filter: false}}}}
  - leaky/empty-trace-own-store
  - {{name: leaky/own-summary-store, options: {{paraphrase: true}}}}
  - {{name: leaky/own-summary-store, label: own-summary-unfiltered, options: {{filter: false}}}}
  - {{name: llamaindex, label: li-fusion, options: {{factory: "li_pipeline:fusion_rag"}}}}
interventions:
{ablations}
metrics: [accuracy, output-changed, accuracy-delta, provenance]
concurrency: 2
report: {{bootstrap_resamples: 100, subgraph_pictures: false}}
"""


# built-in systems that need options: the llamaindex system runs the LlamaIndex pipeline of tests/third_party
SYSTEM_OPTIONS = {"llamaindex": '{factory: "li_pipeline:graph_rag"}'}


def builtin_systems() -> list[str]:
    """Every built-in system that runs live (the `recorded` system replays answers: no intervention applies)."""
    registry = default_registry()
    return [name for name in registry.names("system") if getattr(registry.get("system", name).factory, "live", True)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("leak-suite")
    ablations = "\n".join(
        f"  - {{name: p000/{a}, options: {{repeats: 1}}}}" if a == "random-removal" else f"  - p000/{a}"
        for a in ABLATIONS
    )
    systems = "\n".join(
        f"  - {{name: {name}, options: {SYSTEM_OPTIONS[name]}}}" if name in SYSTEM_OPTIONS else f"  - {name}"
        for name in builtin_systems()
    )
    (tmp / "suite.yaml").write_text(
        SUITE.format(dataset=REPO / "datasets" / "2wiki-mini" / "dev.json", systems=systems, ablations=ablations)
    )
    console_out = io.StringIO()
    sys.path.insert(0, str(REPO / "tests" / "third_party"))
    try:
        run_dir = run_suite(
            tmp / "suite.yaml",
            out=tmp / "run",
            console=Console(file=console_out, width=200),
            pm=plugin_manager(leaky_plugin(), builtins=True),
            llm=schema_following_llm(cache_dir=tmp / "llm"),
        )
    finally:
        sys.path.remove(str(REPO / "tests" / "third_party"))
        sys.modules.pop("li_pipeline", None)
    records = list(RunStore(run_dir).load_records().values())
    return run_dir, records, console_out.getvalue()


def statuses(records, system: str, condition: str | None = None) -> list[str]:
    return [
        r.leak_check.status
        for r in records
        if r.key.system == system
        and r.key.condition != "baseline"
        and (condition is None or r.key.condition == condition)
    ]


def test_builtin_systems_show_no_leak_under_the_six_ablations(run):
    _, records, console = run
    for name in builtin_systems():
        system = name.rsplit("/", 1)[-1]
        for condition in ABLATIONS:
            found = statuses(records, system, condition)
            assert found and set(found) <= {"clean", "no-op", "not-checkable"}, (system, condition, found)
        assert "clean" in statuses(records, system), system
    for r in records:  # not checkable: it asked no model and its trace holds no id (the planning loop found no seed)
        if r.leak_check is not None and r.leak_check.status == "not-checkable" and r.key.system == "planning-loop":
            assert r.leak_check.requests == 0 and not r.trace.visited_entities and not r.trace.retrieved
    assert all(r.leak_check is None for r in records if r.key.condition == "baseline")


def test_a_system_reading_around_its_view_is_flagged_leaked(run):
    run_dir, records, console = run
    # cited removal takes the text of the entities it cites: always among what it reads (under the other
    # ablations it leaks when what it read is hidden: checked against its recorded reads below)
    assert set(statuses(records, "reads-around-the-view", "cited-removal")) == {"leaked"}
    leaked = [
        r
        for r in records
        if r.key.system == "reads-around-the-view" and r.leak_check and r.leak_check.status == "leaked"
    ]
    assert all(
        r.leak_check.checks["request_text"] == "leaked" and r.leak_check.checks["no_effect"] == "clean" for r in leaked
    )
    evidence = leaked[0].leak_check.evidence[0]
    assert evidence.check == "request_text" and evidence.where == "request 1 (answer)" and evidence.snippet
    # recording what it read, the trace shows the hidden ids: leaked exactly when it read a hidden text unit
    for r in (
        r
        for r in records
        if r.key.system == "reads-and-records" and r.key.condition != "baseline" and r.leak_check.status != "no-op"
    ):
        hidden = set(r.trace.artifacts["hidden_by_intervention"].get("text_units", {}).get("ids", []))
        assert (r.leak_check.checks["trace_ids"] == "leaked") == bool(hidden & set(r.trace.read_text_units))
        assert r.leak_check.status == ("leaked" if hidden & set(r.trace.read_text_units) else "clean")
    assert "leaked: reads-around-the-view x cited-removal: 3 unit(s)" in console
    html = (run_dir / "report.html").read_text()
    assert 'id="leak-guard"' in html and "intervention unit(s) leaked" in html
    assert 'class="tag leak-leaked">leaked</span>' in html  # the question pages


def test_leaked_units_are_left_out_of_the_statistics(run):
    run_dir, records, _ = run
    metrics = json.loads((run_dir / "metrics.json").read_text())["values"]
    changed = next(
        v
        for v in metrics
        if v["metric"] == "output-changed"
        and v["system"] == "reads-around-the-view"
        and v["condition"] == "cited-removal"
    )
    assert changed["value"] is None and changed["detail"]["leaked"] == 3 and changed["denominator"] == 0
    assert changed["note"] == "not measurable: 3 leaked"
    partly = next(
        v
        for v in metrics
        if v["metric"] == "output-changed"
        and v["system"] == "reads-around-the-view"
        and v["condition"] == "full-isolation"
    )
    leaked = statuses(records, "reads-around-the-view", "full-isolation").count("leaked")
    assert partly["detail"].get("leaked", 0) == leaked and partly["denominator"] == 3 - leaked
    assert table2_cell(run_dir, "Cited ablation", "reads-around-the-view").startswith("not measurable")


def test_requests_that_ignore_what_the_view_hides_are_clean_and_counted(run):
    run_dir, records, _ = run
    # its prompts never showed what it visited: the view binds it, and it uses nothing (a true 0 %)
    assert set(statuses(records, "ignores-what-it-reads")) <= {"clean", "no-op"}
    assert "%" in table2_cell(run_dir, "Cited ablation", "ignores-what-it-reads")
    assert "%" in table2_cell(run_dir, "Cited ablation", "Simple GraphRAG")  # a measured cell keeps its number
    found = report_cell(run_dir, "systems", "graphrag", "Leak guard")
    assert found.startswith("18 clean") or found.endswith("no-op")


def table2_cell(run_dir: Path, condition: str, system: str) -> str:
    """The "Output changed" cell of Table 2 for a condition's row and a system's column."""
    return report_cell(run_dir, "table2", condition, system)


def report_cell(run_dir: Path, section: str, row_title: str, column: str) -> str:
    """A cell of the first table of a report section, by its row's first cell and its column's title."""
    table = (run_dir / "report.html").read_text().split(f'id="{section}"')[1].split("</table>")[0]
    rows = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)]
    row = next(r for r in rows if r[0] == row_title)
    return row[rows[0].index(column)]


def test_a_system_with_its_own_store_is_covered(run):
    _, records, _ = run
    assert set(statuses(records, "own-store-rag", "full-isolation")) == {"clean"}
    for condition in TEXT_ABLATIONS:  # nothing found is no evidence where no name can show the hidden text
        assert set(statuses(records, "own-store-rag", condition)) <= {"not-checkable", "no-op"}, condition
    assert {
        r.leak_check.checks["trace_ids"]
        for r in records
        if r.key.system == "own-store-rag" and r.leak_check and r.leak_check.status != "no-op"
    } == {"not-checkable"}
    assert set(statuses(records, "own-store-unfiltered", "full-isolation")) == {"leaked"}


def test_units_whose_intervention_hid_nothing_are_no_op_and_counted_apart(run):
    run_dir, records, _ = run
    # own-store-rag cites nothing: cited removal (and the random removal of as many) hides nothing
    for condition in ("cited-removal", "random-removal"):
        units = [r for r in records if r.key.system == "own-store-rag" and r.key.condition == condition]
        assert units and {r.leak_check.status for r in units} == {"no-op"}
        assert all(
            "baseline cited no known entity: no entity removed" in r.hidden.notes
            for r in units
            if condition == "cited-removal"
        )
    assert table2_cell(run_dir, "Cited ablation", "own-store-rag").startswith("not measurable")
    assert "3 no-op" in table2_cell(run_dir, "Cited ablation", "own-store-rag")
    # every unit whose view hid no id of the knowledge base is a no-op, and no other (a model's
    # citations may name nothing, and hiding those hides nothing)
    kb = KnowledgeBase.open(run_dir.parent / "kb", read_only=True)
    try:
        base = kb.view()
        known = {*base.entity_ids(), *base.text_unit_ids(), *base.relation_ids()}
        hid = {
            r.key.as_str(): {i for ids in view_of(r.hidden, base).hidden.as_dict().values() for i in ids}
            for r in records
            if r.leak_check is not None
        }
    finally:
        kb.close()
    for r in records:
        if r.leak_check is not None:
            assert (r.leak_check.status == "no-op") == (not hid[r.key.as_str()] & known), r.key.as_str()
    assert any(ids and not ids & known for ids in hid.values())  # the case occurs here


def test_outside_plugin_units_without_evidence_are_never_counted(run):
    from collections import Counter

    run_dir, records, _ = run
    # (a) an empty trace and no model: hidden citations or a removed name are leaks; otherwise no evidence
    a = [r for r in records if r.key.system == "empty-trace-own-store" and r.leak_check is not None]
    assert set(statuses(records, "empty-trace-own-store", "cited-removal")) == {"leaked"}
    assert {r.leak_check.status for r in a} <= {"leaked", "not-checkable", "no-op"}
    # (b) a summary store with ids of its own: quoting hidden text leaks; a paraphrase is not checkable
    assert set(statuses(records, "own-summary-unfiltered", "text-only-isolation")) == {"leaked"}
    for condition in TEXT_ABLATIONS:
        assert set(statuses(records, "own-summary-store", condition)) <= {"not-checkable", "no-op"}, condition
    assert "clean" not in statuses(records, "own-summary-store", "text-only-isolation")
    # (c) the fusion pipeline: what fusion dropped before the prompt is no "no effect"
    assert "no-effect" not in statuses(records, "li-fusion") and "clean" in statuses(records, "li-fusion")
    # no unit the pairing rule leaves out is in any statistic: each value's denominator and notes say so
    metrics = json.loads((run_dir / "metrics.json").read_text())["values"]
    for system in ("empty-trace-own-store", "own-summary-store", "own-summary-unfiltered", "li-fusion"):
        for condition in ABLATIONS:
            units = [r for r in records if r.key.system == system and r.key.condition == condition]
            counted = {r.key.question_id for r in units if r.leak_check.status in ("clean", "suspect")}
            left_out = Counter(r.leak_check.status for r in units if r.leak_check.status not in ("clean", "suspect"))
            for name in ("output-changed", "accuracy"):
                value = next(
                    v for v in metrics if (v["metric"], v["system"], v["condition"]) == (name, system, condition)
                )
                assert value["denominator"] == len(counted), (name, system, condition)
                assert all(
                    value["detail"].get(why) == n or value["detail"]["left_out"][why] == n
                    for why, n in left_out.items()
                ), (name, system, condition, value)
                assert (value["value"] is None) == (not counted)
                assert not left_out or ("left out (leak guard)" in value["note"] or "not measurable" in value["note"])
    necessity = next(
        v for v in metrics if v["metric"] == "provenance.citation_necessity" and v["system"] == "empty-trace-own-store"
    )
    assert necessity["value"] is None and necessity["note"].startswith("not measurable")


def test_audit_reproduces_the_runs_verdicts_and_catches_a_tampered_record(run, tmp_path):
    import shutil

    from click.testing import CliRunner

    from provbench.audit import audit_run
    from provbench.cli import main

    run_dir, records, _ = run
    audited = audit_run(run_dir)
    assert len(audited) == sum(r.leak_check is not None for r in records)
    assert [a for a in audited if not a.same] == []
    assert {a.audited for a in audited} >= {"clean", "leaked", "no-op", "not-checkable"}
    copy = tmp_path / "tampered"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("pages", "report.html", "cache", "llm"))
    lines = (copy / "records.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"status": "leaked"' in line or '"status":"leaked"' in line)
    lines[at] = (
        lines[at].replace('"status":"leaked"', '"status":"clean"').replace('"status": "leaked"', '"status": "clean"')
    )
    (copy / "records.jsonl").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["audit", str(copy)])
    assert result.exit_code == 7 and "1 differ from the records" in result.output
    assert CliRunner().invoke(main, ["audit", str(run_dir)]).exit_code == 0


def test_requests_are_stored_compressed_and_shown_on_question_pages(run):
    from provbench.audit import logged_requests

    run_dir, records, _ = run
    sentence = "is a novelist from"  # in the mini world's paragraphs, hence in every leaker's request
    assert any(sentence in e.snippet for r in records if r.leak_check for e in r.leak_check.evidence)
    stored = (run_dir / "records.jsonl").read_text()
    leaker = next(r for r in records if r.key.system == "reads-around-the-view" and r.key.condition != "baseline")
    prompt = logged_requests(leaker.requests)[0].messages[0][1]
    assert sentence in prompt and json.dumps(prompt)[1:-1] not in stored  # kept compressed, not in plain text
    assert leaker.requests.requests == len(leaker.trace.llm_calls) and leaker.requests.dropped == 0
    hashes = [c.request_hash for r in records if r.trace for c in r.trace.llm_calls]
    assert hashes and all(h and len(h) == 32 for h in hashes)
    html = (run_dir / "report.html").read_text()
    assert "What the model read (" in html and "Intervention notes" in html


def test_exports_summary_and_the_questions_table_carry_the_leak_check(run):
    import re

    from provbench.gates import write_ci_files
    from provbench.report.data import load_run

    run_dir, records, _ = run
    leaked = sum(bool(r.leak_check and r.leak_check.status == "leaked") for r in records)
    assert leaked
    rows = load_run(run_dir).rows()
    assert sum(row["leak_check"] == "leaked" for row in rows) == leaked
    assert {row["leak_check"] for row in rows if row["condition"] == "baseline"} == {""}
    assert write_ci_files(run_dir)["leak_guard"]["leaked"] == leaked
    html = (run_dir / "report.html").read_text()
    assert len(re.findall(r'data-flags="[^"]*\bleaked\b', html)) == leaked  # what the "leaked" filter shows
