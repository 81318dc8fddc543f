"""Report section of the general metrics: RAGAS faithfulness next to the trajectory-provenance scores."""

from __future__ import annotations

from provbench.results.data import RunData, format_metric_value
from provbench.report.sections import Cell, Row, Section, Table

PREFIXES = ("ragas-faithfulness.", "provenance.")
TITLES = {True: "Faithfulness and trajectory provenance", False: "Trajectory provenance"}


def faithfulness_section(run: RunData) -> list[Section]:
    """One row per (score, condition), one column per system; empty rows are left out and counted."""
    cells: dict[tuple[str, str], dict[str, Cell]] = {}
    for v in run.metric_values():
        if v["metric"].startswith(PREFIXES):
            cells.setdefault((v["metric"], v["condition"]), {})[v["system"]] = Cell(
                text=format_metric_value(v, with_note=False), note=v.get("note", "")
            )
    if not cells:
        return []
    blank = Cell(text="–", note="no value for this system")
    ordered = sorted(cells, key=lambda k: (not k[0].startswith("ragas"), k[0], k[1]))
    rows = [
        Row(cells=[metric, condition, *(cells[(metric, condition)].get(s, blank) for s in run.systems)])
        for metric, condition in ordered
    ]
    shown = [row for row in rows if any(c.text != "–" for c in row.cells[2:])]
    hidden = len(rows) - len(shown)
    ragas = any(metric.startswith("ragas") for metric, _ in cells)  # titled by what ran (init's suites run none)
    caption = (
        "RAGAS faithfulness of each answer judged against its cited evidence and against everything its "
        "trajectory read, next to the trajectory-provenance scores"
        if ragas
        else "Trajectory-provenance scores (the suite ran no ragas-faithfulness metric)"
    ) + " (see docs/provenance.md). Values with (numerator/denominator); a cell's note says why a value is missing."
    if hidden:
        caption += f" {hidden} score(s) with no value in this run are listed under “All metric values”."
    table = Table(
        columns=["Score", "Condition", *run.systems],
        rows=shown,
        numeric_from=2,
        css_class="faithfulness",
        caption=caption,
    )
    return [Section(id="faithfulness", title=TITLES[ragas], blocks=[table], order=60)]
