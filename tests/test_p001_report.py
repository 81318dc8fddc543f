"""Paper 001's report sections read from records built in memory: Table 5 counts the sub-path
rule the run used, and Table 2's per-variant detail lists every variant with its perturbed path."""

from __future__ import annotations

from pathlib import Path

from provbench.model import LeakCheck, RunManifest, RunRecord, Trace, UnitKey, VariantInfo
from provbench.report.data import RunData
from provbench_plugins.papers.p001_kgrag_ex import analysis as A
from provbench_plugins.papers.p001_kgrag_ex import report as R
from p001_helpers import four_node_path, grouped, record

SUITE = {
    "systems": ["kgrag-ex", "vector-rag"],
    "interventions": [
        "kg-node-removal",
        "kg-edge-removal",
        {"name": "kg-subpath-removal", "options": {"rule": "authors"}},
        {"name": "ragex-window", "options": {"window": 5, "stride": 1}},
    ],
}


def authors_rule_run() -> RunData:
    """One question: KGRAG-Ex on a 4-node path with its sub-paths blanked (the authors' rule
    only, as suites/medmcqa-kgragex-authors.yaml runs them), and 12 RAG-Ex windows."""
    path = four_node_path()
    records = [
        RunRecord(
            key=UnitKey(question_id="q", system="kgrag-ex"),
            trace=Trace(
                question_id="q",
                system="kgrag-ex",
                answer="A",
                artifacts={"kgrag": {"paths": [path]}, "context_words": 20},
            ),
        ),
        RunRecord(
            key=UnitKey(question_id="q", system="vector-rag"),
            trace=Trace(question_id="q", system="vector-rag", answer="A", artifacts={"context_words": 16}),
        ),
    ]
    records += [record(kind, k, False, "A", path) for kind, n in (("node", 4), ("edge", 3)) for k in range(n)]
    for k in range(3):
        blanked = record("subpath", k, False, "A", path)
        blanked.variant.data["rule"] = "authors"
        records.append(blanked)
    records += [
        RunRecord(
            key=UnitKey(question_id="q", system="vector-rag", condition="ragex-window", variant=f"window:{i}"),
            trace=Trace(question_id="q", system="vector-rag", answer="A"),
            variant=VariantInfo(id=f"window:{i}", data={"kind": "window"}),
        )
        for i in range(12)
    ]
    return RunData(Path("."), RunManifest(run_id="r", suite_name="s", suite=SUITE), {}, records, {})


def cells(table) -> dict[str, list[str]]:
    return {row.cells[0].text: [c.text for c in row.cells[1:]] for row in table.rows}


def test_table5_counts_the_subpath_rule_the_run_used():
    """The authors' suite blanks sub-paths (rule authors) only: a KGRAG-Ex explanation is its 4
    node, 3 edge and 3 sub-path removals (10), not the 7 left when only the paper's rule counts."""
    run = authors_rule_run()
    assert A.subpath_rules(run.records, "kgrag-ex") == ["authors"]
    section = next(s for s in R.sections(run) if s.id == "p001-cost-kgrag-ex")
    authors = cells(section.blocks[1])
    assert authors["KGRAG-Ex"][:2] == ["1", "10.0"]  # questions, median calls: 1 per perturbation
    assert authors["KGRAG-Ex"][3] == "200.0"  # 10 perturbations x 20 context words
    assert authors["RAG-Ex (vector-rag, 5-word windows, stride 1)"][:2] == ["1", "12.0"]
    note = section.blocks[-1].text
    assert "node, edge and sub-path removals under the authors (blanked in place) rule" in note
    explanations = next(s for s in R.sections(run) if s.id == "p001-explanations-kgrag-ex")
    assert "authors (blanked in place)" in explanations.blocks[1].caption


def test_table5_with_both_rules_counts_the_papers_and_says_the_other_is_left_out():
    run = authors_rule_run()
    path = four_node_path()
    run.records += [record("subpath", k, False, "A", path) for k in range(3)]  # the paper's rule too
    section = R.cost_section(run, "kgrag-ex", "paper", ["paper", "authors"])
    assert cells(section.blocks[1])["KGRAG-Ex"][1] == "10.0"  # one sub-path set per explanation
    assert "authors (blanked in place) sub-paths are left out" in section.blocks[-1].text


def test_table2_detail_lists_changed_and_unchanged_variants_with_their_paths():
    changes = [("node", 1, True, "C"), ("node", 2, False, "A"), ("edge", 0, False, "A"), ("subpath", 1, True, "B")]
    groups = grouped(four_node_path(), *changes)
    section = R.explanations_section(groups, "kgrag-ex", None)
    (summary,) = [[c.text for c in row.cells] for row in section.blocks[0].rows]
    assert summary[:4] == ["q", "A", "Node: N1 -> C; Sub-path: N1 ->[R1]-> N2 -> B", "N1"]
    detail = [[c.text for c in row.cells] for row in section.blocks[1].rows]
    assert detail == [
        ["q", "Node", "N1", "N0 ->[R0]-> __ | __ ->[R1]-> N2 | N2 ->[R2]-> N3", "C", "yes"],
        ["q", "Node", "N2", "N0 ->[R0]-> N1 | N1 ->[R1]-> __ | __ ->[R2]-> N3", "A", "no"],
        ["q", "Edge", "R0", "N0 ->[__]-> N1 | N1 ->[R1]-> N2 | N2 ->[R2]-> N3", "A", "no"],
        ["q", "Sub-path", "N1 ->[R1]-> N2", "N0 ->[R0]-> N1 | N2 ->[R2]-> N3", "B", "yes"],
    ]


def left_out_run(*statuses: str | None) -> RunData:
    """authors_rule_run with its first node removals changing the answer, each under a leak-guard verdict."""
    run = authors_rule_run()
    nodes = [r for r in run.records if A.variant_kind(r) == "node"]
    for r, status in zip(nodes, statuses):
        r.scores["output_changed"], r.trace.answer = 1.0, "B"
        r.leak_check = LeakCheck(status=status) if status else None
    return run


def section(run: RunData, prefix: str):
    return next(s for s in R.sections(run) if s.id.startswith(prefix))


def test_kgrag_ex_tables_leave_out_the_units_the_pairing_rule_leaves_out_and_count_them():
    counted = section(left_out_run(None), "p001-table4")  # a counted change makes the question an example
    assert [c.text for c in counted.blocks[0].rows[0].cells[2:4]] == ["1", "1"]
    run = left_out_run("leaked", "no-op")
    (row,) = section(run, "p001-table4").blocks[0].rows
    assert [c.text for c in row.cells[2:]] == ["0", "0", "0", "0", "0"]  # neither change counts
    assert {c.note for c in row.cells[2:]} == {"left out (leak guard): 1 leaked, 1 no-op"}
    assert cells(section(run, "p001-table4").blocks[1])["Node"] == ["2", "0"]  # variants counted, changed
    note = "kgrag-ex: left out (leak guard): 1 leaked, 1 no-op (of 10 perturbation units)."
    for prefix in ("p001-positions", "p001-labels", "p001-centrality", "p001-path-lengths", "p001-explanations"):
        assert section(run, prefix).blocks[-1].text == note, prefix
    run.manifest.suite = {**run.manifest.suite, "leak_guard": {"include_leaked": True}}  # leaked units count
    (row,) = section(run, "p001-table4").blocks[0].rows
    assert row.cells[2].text == "1" and row.cells[2].note == "left out (leak guard): 1 no-op"


def test_a_kgrag_ex_table_with_nothing_measurable_says_so():
    run = authors_rule_run()
    for r in run.records:
        if A.variant_kind(r) in ("node", "edge", "subpath"):
            r.leak_check = LeakCheck(status="no-op")
    (row,) = section(run, "p001-table4").blocks[0].rows
    assert row.cells[2].text == "not measurable" and row.cells[2].note == "not measurable: 10 no-op"
    positions = section(run, "p001-positions")
    assert [b.text for b in positions.blocks] == ["kgrag-ex: not measurable: 10 no-op (of 10 perturbation units)."]


def test_the_position_histogram_is_drawn_from_the_tables_counts():
    """Issue 37 item 6: Fig. 3's histogram beside its table, the same counts in the same bins."""
    from provbench.report.render import section_view
    from provbench.report.sections import BarChart

    changes = [("node", 1, True, "C"), ("node", 2, False, "A"), ("subpath", 0, True, "B"), ("subpath", 1, True, "C")]
    groups = grouped(four_node_path(), *changes)
    section = R.positions_section(groups, "kgrag-ex")
    table, chart = section.blocks[0], next(b for b in section.blocks if isinstance(b, BarChart))
    assert chart.scale == "count" and chart.categories == table.columns[1:]
    assert {k: [float(c) for c in v] for k, v in cells(table).items()} == chart.series
    assert sum(chart.series[R.KIND_TITLES["subpath"]]) == 2.0
    assert "<svg" in next(b["svg"] for b in section_view(section)["blocks"] if b.get("svg"))
