"""What the report says was certified (issue 32, a new user's findings 3 and 4): "Certified with
exceptions" names what was excused and the suite's cells no certified claim covers; a report of a
suite never validated says so, with the command that certifies it; Table 2's cells no certified
claim covers are marked, and every cell of a report never validated."""

from __future__ import annotations

from pathlib import Path

from provbench.model import RunManifest
from provbench.report.data import RunData
from provbench.report.validity_section import validity_section
from provbench.results.claims import Verdict
from provbench.results.validity import NOT_VALIDATED, UNCERTIFIED, PowerRow, Validity, write_validity
from provbench_plugins.papers.p000_neighborhoods.report import table2_section

from rich.console import Console

from provbench.cli_results import show_validity
from test_p000_report import QUESTIONS, SUITE_SYSTEMS, baseline_records, record, run_of

CELLS = ["agentic-graphrag x cited-removal", "graphrag x cited-removal", "graphrag x entity-removal"]


def verdict(claim: str, passed: bool = True, **extra) -> Verdict:
    return Verdict(claim=claim, control="oracle", expected="e", observed="o", passed=passed, **extra)


def validity(verdicts, power=()) -> Validity:
    return Validity(
        suite_name="s",
        suite_sha256="",
        verdicts=list(verdicts),
        power=list(power),
        covers={"cited": ["agentic-graphrag x cited-removal"], "other": ["graphrag x cited-removal"]},
        suite_cells=CELLS,
    )


def run_in(tmp_path: Path, found: Validity | None, records=(), controls=True) -> RunData:
    if found is not None:
        write_validity(found, tmp_path)
    suite = {"systems": SUITE_SYSTEMS, "interventions": ["cited-removal"], **({"controls": {}} if controls else {})}
    manifest = RunManifest(run_id="r", suite_name="s", suite_path="suites/s.yaml", suite=suite)
    return RunData(tmp_path, manifest, QUESTIONS, list(records), {})


def headline(run: RunData) -> str:
    return validity_section(run).blocks[0].text


def test_certified_means_every_cell_covered_and_nothing_excused(tmp_path):
    found = validity([verdict("cited"), verdict("other")])
    found.suite_cells = CELLS[:2]
    assert headline(run_in(tmp_path, found)).startswith("Certified: 2 of 2 verdicts")


def test_excused_power_and_uncovered_cells_make_it_certified_with_exceptions(tmp_path):
    excused = PowerRow(claim="other", sham="cited-removal hides nothing", status="no power", excused="awaiting repair")
    text = headline(run_in(tmp_path, validity([verdict("cited"), verdict("other")], [excused])))
    assert text.startswith("Certified with exceptions")
    assert "excused: other: no power against cited-removal hides nothing (excused: awaiting repair)" in text
    assert "no certified claim covers graphrag x cited-removal, graphrag x entity-removal" in text


def test_an_expected_unmeasurable_verdict_is_an_exception_not_a_certification(tmp_path):
    unmeasured = verdict("other", False, unmeasured="not measurable: 22 no-op", unmeasured_expected="cites nothing")
    text = headline(run_in(tmp_path, validity([verdict("cited"), unmeasured])))
    assert "excused: other on oracle: not measurable: 22 no-op (expected) (cites nothing)" in text
    assert "graphrag x cited-removal" in text  # the claim that measured nothing certifies no cell


def test_a_report_never_validated_says_so_where_the_verdicts_would_be(tmp_path):
    section = validity_section(run_in(tmp_path, None))
    text = section.blocks[0].text  # the command that certifies this run, into its own directory
    assert text.startswith(f"Not validated: run provbench validate suites/s.yaml --out {tmp_path} (or provbench run")
    bare = validity_section(run_in(tmp_path, None, controls=False))
    assert "declares no known-truth controls" in bare.blocks[0].text


def test_table2_marks_the_cells_no_certified_claim_covers(tmp_path):
    records = baseline_records() + [
        record(s, q, condition="cited-removal") for s in ("graphrag", "agentic-graphrag") for q in ("q1", "q2")
    ]
    table = table2_section(run_in(tmp_path, validity([verdict("cited")]), records)).blocks[0]
    row = next(r for r in table.rows if r.cells and r.cells[1].text == "Output changed")
    by_system = dict(zip(table.columns[2:], row.cells[2:]))
    assert by_system["Simple GraphRAG"].text.endswith("†") and "not certified" in by_system["Simple GraphRAG"].note
    assert not by_system["Agentic GraphRAG"].text.endswith("†")
    assert "† not certified" in table.caption
    unvalidated = table2_section(run_in(tmp_path / "none", None, records)).blocks[0]
    assert NOT_VALIDATED in unvalidated.caption and UNCERTIFIED not in unvalidated.caption
    numbers = [c for r in unvalidated.rows for c in r.cells[2:] if c.text != "–"]
    assert numbers and all(c.text.endswith("†") and NOT_VALIDATED in c.note for c in numbers)


def test_claims_about_systems_the_suite_does_not_run_are_warned(tmp_path):
    """init's controls kept reading agentic-graphrag after the user replaced the suite's systems:
    the headline and validate say the claims read a system the suite does not run, and which
    suite systems no claim reads."""
    found = Validity(
        suite_name="s",
        suite_sha256="",
        verdicts=[verdict("c")],
        covers={"c": ["agentic-graphrag x cited-removal"]},
        suite_cells=["rag x cited-removal", "sentence-picker x cited-removal", "sentence-picker x full-isolation"],
    )
    assert found.warnings() == [
        "the claims read systems this suite does not run: agentic-graphrag",
        "no claim reads the suite's systems rag, sentence-picker",
    ]
    text = headline(run_in(tmp_path, found))
    assert text.startswith("Certified with exceptions") and "does not run: agentic-graphrag" in text
    console, err = Console(record=True, width=300), Console(record=True, width=300)
    show_validity(found, console, err)
    assert "warning: no claim reads the suite's systems rag, sentence-picker" in err.export_text()


def test_a_failed_verdict_of_a_system_without_llm_calls_says_so():
    """A claim whose system is LLM-free (a sentence picker) fails on ignores-context with a note that
    it made no LLM call, so no control LLM could steer it."""
    from provbench.controls.validate import _noting_llm_free
    from provbench.model import LLMCall
    from provbench.results.claims import ControlRuns

    picker = [record("picker", q, condition="cited-removal") for q in ("q1", "q2")]
    agent = [record("agent", q, condition="cited-removal") for q in ("q1", "q2")]
    for r in agent:
        r.trace.llm_calls.append(LLMCall(model="control:ignores-context", prompt_tokens=1, completion_tokens=1))
    runs = ControlRuns({"ignores-context": run_of(picker + agent)})
    failed = verdict("c", passed=False).model_copy(update={"control": "ignores-context"})
    noted = _noting_llm_free(failed, ("picker",), runs).observed
    assert noted.endswith("; picker made no LLM call on this control, so no control LLM can steer it")
    assert _noting_llm_free(failed, ("agent",), runs).observed == "o"
    assert _noting_llm_free(failed.model_copy(update={"passed": True}), ("picker",), runs).observed == "o"
