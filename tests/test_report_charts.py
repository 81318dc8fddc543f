"""Charts beside the paper tables (issue 37 item 6): bars of counts keep their scale, a missing
value is marked rather than drawn as zero, and paper 002's accuracy per gold chain length is
drawn from the same numbers as its table."""

from __future__ import annotations

import re
from pathlib import Path

from provbench.gold import GoldEvidence, GoldTriple
from provbench.model import Question, RunManifest, RunRecord, Trace, UnitKey
from provbench.report import charts
from provbench.report.data import RunData
from provbench.report.sections import BarChart


def tick_values(svg: str) -> list[float]:
    """The y axis's tick labels (matplotlib writes each as a text element under ytick_*)."""
    found = re.findall(r'<g id="ytick_\d+">.*?<text[^>]*>([\d.]+)</text>', svg, flags=re.S)
    return [float(v) for v in found]


def test_a_histogram_of_counts_keeps_its_scale():
    svg = charts.grouped_chart(["0–0.5", "0.5–1"], {"node": [150.0, 20.0]}, "changes", "t", scale="count")
    assert max(tick_values(svg)) >= 120  # not cut at 105 as a share chart is
    few = charts.grouped_chart(["a", "b"], {"node": [1.0, 0.0]}, "changes", "t", scale="count")
    assert all(v == int(v) for v in tick_values(few)) and len(tick_values(few)) >= 2  # no 0.2 of a change


def test_shares_are_percentages_with_error_bars_and_a_missing_value_is_marked():
    plain = charts.grouped_chart(["a", "b"], {"s": [0.5, None]}, "y", "t")
    with_bars = charts.grouped_chart(["a", "b"], {"s": [0.5, None]}, "y", "t", intervals={"s": [(0.3, 0.7), None]})
    assert max(tick_values(plain)) == 100 and ">n/m<" in plain
    assert with_bars.count("<path") > plain.count("<path")  # the error bar's line and caps


def chain(n: int) -> GoldEvidence:
    return GoldEvidence(triples=[GoldTriple(subject=f"e{i}", relation="r", object=f"e{i + 1}") for i in range(n)])


def p002_run() -> RunData:
    """Three questions (two 1-hop, one 2-hop), the loop and a one-shot system."""
    questions = {
        f"q{i}": Question(id=f"q{i}", question="?", answer="a", gold=chain(hops)) for i, hops in enumerate((1, 1, 2))
    }
    records = [
        RunRecord(
            key=UnitKey(question_id=q, system=system),
            scores={"accuracy": score},
            trace=Trace(question_id=q, system=system, answer="a", outcome="answered"),
        )
        for system, scores in (("planning-loop", (1.0, 0.0, 1.0)), ("one-shot", (1.0, 1.0, 0.0)))
        for q, score in zip(questions, scores)
    ]
    return RunData(
        Path("."),
        RunManifest(run_id="r", suite_name="s", suite={"systems": ["planning-loop", "one-shot"]}),
        questions,
        records,
        {},
    )


def test_paper_002s_accuracy_per_chain_length_is_charted_from_its_table():
    from provbench_plugins.papers.p002_planning.report import sections

    section = next(s for s in sections(p002_run()) if s.id == "p002-planning")
    chart = next(b for b in section.blocks if isinstance(b, BarChart))
    assert chart.categories == ["1-hop (n=2)", "2-hop (n=1)", "All (n=3)"]
    assert chart.series == {"planning-loop": [0.5, 1.0, 2 / 3], "one-shot": [1.0, 0.0, 2 / 3]}
    table = next(b for b in section.blocks if b.kind == "table" and "All" in b.columns)
    shown = {row.cells[0].text: [c.text for c in row.cells[1:4]] for row in table.rows}
    assert shown == {s: [f"{v:.2f}" for v in values] for s, values in chart.series.items()}
