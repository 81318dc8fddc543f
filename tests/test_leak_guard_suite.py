"""The leak guard on a whole suite: every built-in system under paper 000's six ablations on the
2wiki mini knowledge base (schema-following LLM) shows no leak; a system that reads around its view
is flagged ``leaked`` (records, console, report); one whose requests ignore what it reads is flagged
``no-effect`` and its Table 2 cells read "not measurable"; a system with its own store is clean when
it filters by ``env.hidden`` and leaked when it does not.
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
from provbench.registry import default_registry
from provbench.runner import run_suite
from provbench.store import RunStore
from provbench.testing import plugin_manager, schema_following_llm

REPO = Path(__file__).resolve().parents[1]
ABLATIONS = ["full-isolation", "text-only-isolation", "cited-removal", "random-removal", "entity-removal",
             "entity-text-mask"]
LEAKY = ["reads-around-the-view", "ignores-what-it-reads", "own-store-rag", "own-store-unfiltered",
         "reads-and-records"]
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
interventions:
{ablations}
metrics: [accuracy, output-changed, accuracy-delta]
concurrency: 2
report: {{bootstrap_resamples: 100, subgraph_pictures: false}}
"""


# built-in systems that need options: the llamaindex system runs the LlamaIndex pipeline of tests/third_party
SYSTEM_OPTIONS = {"llamaindex": '{factory: "li_pipeline:graph_rag"}'}


def builtin_systems() -> list[str]:
    return default_registry().names("system")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("leak-suite")
    ablations = "\n".join(f"  - {{name: p000/{a}, options: {{repeats: 1}}}}" if a == "random-removal"
                          else f"  - p000/{a}" for a in ABLATIONS)
    systems = "\n".join(f"  - {{name: {name}, options: {SYSTEM_OPTIONS[name]}}}" if name in SYSTEM_OPTIONS
                        else f"  - {name}" for name in builtin_systems())
    (tmp / "suite.yaml").write_text(SUITE.format(dataset=REPO / "datasets" / "2wiki-mini" / "dev.json",
                                                 systems=systems, ablations=ablations))
    console_out = io.StringIO()
    sys.path.insert(0, str(REPO / "tests" / "third_party"))
    try:
        run_dir = run_suite(tmp / "suite.yaml", out=tmp / "run", console=Console(file=console_out, width=200),
                            pm=plugin_manager(leaky_plugin(), builtins=True),
                            llm=schema_following_llm(cache_dir=tmp / "llm"))
    finally:
        sys.path.remove(str(REPO / "tests" / "third_party"))
        sys.modules.pop("li_pipeline", None)
    records = list(RunStore(run_dir).load_records().values())
    return run_dir, records, console_out.getvalue()


def statuses(records, system: str, condition: str | None = None) -> list[str]:
    return [r.leak_check.status for r in records if r.key.system == system and r.key.condition != "baseline"
            and (condition is None or r.key.condition == condition)]


def test_builtin_systems_show_no_leak_under_the_six_ablations(run):
    _, records, console = run
    for name in builtin_systems():
        system = name.rsplit("/", 1)[-1]
        for condition in ABLATIONS:
            found = statuses(records, system, condition)
            assert found and set(found) == {"clean"}, (system, condition, found)
    assert all(r.leak_check is None for r in records if r.key.condition == "baseline")


def test_a_system_reading_around_its_view_is_flagged_leaked(run):
    run_dir, records, console = run
    # cited removal takes the text of the entities it cites: always among what it reads (under the other
    # ablations it leaks when what it read is hidden: checked against its recorded reads below)
    assert set(statuses(records, "reads-around-the-view", "cited-removal")) == {"leaked"}
    leaked = [r for r in records if r.key.system == "reads-around-the-view" and r.leak_check
              and r.leak_check.status == "leaked"]
    assert all(r.leak_check.checks == {"trace_ids": "clean", "request_text": "leaked", "no_effect": "clean"}
               for r in leaked)
    evidence = leaked[0].leak_check.evidence[0]
    assert evidence.check == "request_text" and evidence.where == "request 1 (answer)" and evidence.snippet
    # recording what it read, the trace shows the hidden ids: leaked exactly when it read a hidden text unit
    for r in (r for r in records if r.key.system == "reads-and-records" and r.key.condition != "baseline"):
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
    changed = next(v for v in metrics if v["metric"] == "output-changed" and v["system"] == "reads-around-the-view"
                   and v["condition"] == "cited-removal")
    assert changed["value"] is None and changed["detail"]["leaked"] == 3 and changed["denominator"] == 0
    assert changed["note"] == "not measurable: 3 leaked"
    partly = next(v for v in metrics if v["metric"] == "output-changed" and v["system"] == "reads-around-the-view"
                  and v["condition"] == "full-isolation")
    leaked = statuses(records, "reads-around-the-view", "full-isolation").count("leaked")
    assert partly["detail"].get("leaked", 0) == leaked and partly["denominator"] == 3 - leaked
    assert table2_cell(run_dir, "Cited ablation", "reads-around-the-view").startswith("not measurable")


def test_requests_that_ignore_the_intervention_are_flagged_no_effect(run):
    run_dir, records, _ = run
    for condition in ("full-isolation", "cited-removal"):
        assert set(statuses(records, "ignores-what-it-reads", condition)) == {"no-effect"}, condition
    # text-only isolation hides text units, which this system never read
    assert set(statuses(records, "ignores-what-it-reads", "text-only-isolation")) == {"clean"}
    metrics = json.loads((run_dir / "metrics.json").read_text())["values"]
    changed = next(v for v in metrics if v["metric"] == "output-changed" and v["system"] == "ignores-what-it-reads"
                   and v["condition"] == "cited-removal")
    assert changed["value"] is None and changed["note"] == "not measurable: 3 no-effect"
    assert table2_cell(run_dir, "Cited ablation", "ignores-what-it-reads") == \
        "not measurable<span class=\"note\">not measurable: 3 no-effect (leak guard)</span>"
    assert "%" in table2_cell(run_dir, "Cited ablation", "GraphRAG")  # a measured cell keeps its number
    assert report_cell(run_dir, "systems", "ignores-what-it-reads", "Leak guard") == "9 no-effect"
    assert report_cell(run_dir, "systems", "graphrag", "Leak guard") == "18 clean"
    assert report_cell(run_dir, "leak-guard", "ignores-what-it-reads", "No effect") == "3"


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
    filtered = [r for r in records if r.key.system == "own-store-rag" and r.key.condition != "baseline"]
    assert {r.leak_check.status for r in filtered} == {"clean"}
    assert {r.leak_check.checks["trace_ids"] for r in filtered} == {"not-checkable"}
    assert set(statuses(records, "own-store-unfiltered", "full-isolation")) == {"leaked"}


def test_request_texts_are_never_stored(run):
    run_dir, records, _ = run
    sentence = "is a novelist from"  # in the mini world's paragraphs, hence in every leaker's request
    assert any(sentence in e.snippet for r in records if r.leak_check for e in r.leak_check.evidence)
    stored = (run_dir / "records.jsonl").read_text()
    assert "Question: " + records[0].trace.question_id not in stored
    hashes = [c.request_hash for r in records if r.trace for c in r.trace.llm_calls]
    assert hashes and all(h and len(h) == 32 for h in hashes)


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
