"""`provbench compare` says when runs are not comparable (issue 37 item 3): three runs, one with
another judge, one with fewer questions and a smaller knowledge base; a warning per difference,
and means, deltas and tests over the questions every run answered."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from runner_helpers import run_toy, write_toy_suite

from provbench.cli import main
from provbench.kb import KnowledgeBase
from provbench.report import write_comparison
from provbench.testing.kb import TINY_ENTITIES, TINY_RELATIONS, TINY_TEXT_UNITS


def smaller_kb(path):
    """The tiny KB with six of its ten entities (and the text units about them only): the toy
    builder reuses a finished KB."""
    kept = TINY_ENTITIES[:6]
    ids = {e.id for e in kept}
    kb = KnowledgeBase.create(path)
    kb.add_text_units([t for t in TINY_TEXT_UNITS if set(t.entity_ids) <= ids])
    kb.add_entities(kept)
    kb.add_relations([r for r in TINY_RELATIONS if r.source in ids and r.target in ids])
    kb.finalize({"builder": "a smaller graph", "version": 1})
    kb.close()


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    a = run_toy(write_toy_suite(root / "a", kb=True), root / "runs" / "a", write_report=False)
    b = run_toy(write_toy_suite(root / "b", kb=True), root / "runs" / "b", write_report=False, judge="scripted:judge")
    smaller_kb(root / "c" / "kb")
    c = run_toy(write_toy_suite(root / "c", kb=True), root / "runs" / "c", write_report=False, limit=4)
    return a, b, c


def test_each_difference_is_a_warning_and_a_table_row(three_runs, tmp_path):
    warnings = []
    out = write_comparison(three_runs, tmp_path / "cmp.html", warnings.append)
    assert any(w.startswith("B differs from A in judge: scripted vs scripted:judge") for w in warnings)
    assert any(
        w.startswith("C differs from A in knowledge base counts:") and "entities 10" in w and "entities 6" in w
        for w in warnings
    ), warnings
    assert any(w.startswith("C differs from A in knowledge base fingerprint") for w in warnings)
    assert any(w.startswith("C differs from A in questions: 7:") and "vs 4:" in w for w in warnings)
    assert any(w.startswith("C differs from A in dataset") and "limit=4" in w for w in warnings)
    assert not any(w.startswith("B differs from A in knowledge base") for w in warnings)  # same KB, same questions
    text = out.read_text()
    assert text.count('class="warning"') == len(warnings) and "Comparability" in text
    assert text.count('class="differs"') >= 5


def test_means_and_deltas_use_the_questions_every_run_answered(three_runs, tmp_path):
    text = write_comparison(three_runs, tmp_path / "cmp.html").read_text()
    table = text.split('class="compare-accuracy"', 1)[1].split("</table>", 1)[0]
    row = next(r for r in table.split("<tr>") if r.startswith("<th>toy-graph</th>"))
    counts = re.findall(r'<span class="counts">\(([\d.]+)/(\d+)\)</span>', row)
    assert len(counts) == 3 and len({den for _, den in counts}) == 1, counts  # one denominator for all three
    assert int(counts[0][1]) <= 4
    assert row.count("not in every run left out") == 2  # A and B dropped the questions C did not take


def test_the_command_prints_the_warnings(three_runs, tmp_path):
    result = CliRunner().invoke(main, ["compare", *map(str, three_runs), "--out", str(tmp_path / "c.html")])
    assert result.exit_code == 0, result.output
    output = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert "warning: B differs from A in judge" in output and "warning: C differs from A in knowledge base" in output


def test_a_cell_with_every_unit_left_out_shows_not_measurable_and_runs_are_named_by_directory(three_runs, tmp_path):
    """A condition whose units all leaked in one run is a row saying so, not a dropped row; runs of
    one suite are told apart by their directories; a table without tests adjusts nothing."""
    import json
    import shutil

    leaky = tmp_path / "leaky"
    shutil.copytree(three_runs[0], leaky)
    records = [json.loads(line) for line in (leaky / "records.jsonl").read_text().splitlines() if line.strip()]
    condition = next(r["key"]["condition"] for r in records if r["key"]["condition"] != "baseline")
    for r in records:
        if r["key"]["condition"] == condition:
            r["leak_check"] = {"status": "leaked"}
    (leaky / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    text = write_comparison([leaky, leaky], tmp_path / "cmp.html").read_text()
    table = text.split('class="compare-conditions"', 1)[1].split("</table>", 1)[0]
    assert f"<td>{condition}</td>" in table and "not measurable" in table and "leaked" in table
    assert 'class="note">not measurable' not in table  # said once, then why: "not measurable not measurable"
    assert "<title>compare leaky vs leaky</title>" in text or "compare leaky vs leaky" in text
    names = write_comparison(three_runs[:2], tmp_path / "ab.html").read_text()
    assert "A = a (suite " in names and "B = b (suite " in names
    assert "adjusted for the 0 tests" not in text + names


def test_a_system_in_one_run_only_is_named_missing_not_its_questions(three_runs, tmp_path):
    """A new user's system, in run B only, read "13 question(s) not in every run left out ... no
    shared questions": the questions are shared, the system is missing."""
    import json
    import shutil

    fewer = tmp_path / "fewer"
    shutil.copytree(three_runs[0], fewer)
    lines = (fewer / "records.jsonl").read_text().splitlines()
    kept = [line for line in lines if line.strip() and json.loads(line)["key"]["system"] != "toy-graph"]
    assert len(kept) < len(lines)
    (fewer / "records.jsonl").write_text("".join(line + "\n" for line in kept))
    text = write_comparison([fewer, three_runs[0]], tmp_path / "cmp.html").read_text()
    table = text.split('class="compare-accuracy"', 1)[1].split("</table>", 1)[0]
    row = next(r for r in table.split("<tr>") if r.startswith("<th>toy-graph</th>"))
    assert "toy-graph is not in run A" in row and "system not in this run" in row
    assert "not in every run left out" not in row and "no shared questions" not in row
    assert "(" in row.split("system not in this run", 1)[1]  # B's cell still counts its questions
