"""Report sections of the abstention, calibration and cost metrics (definitions in :mod:`.selective`):
a table per system, risk-coverage curves and a reliability diagram."""

from __future__ import annotations

from provbench.model import BASELINE
from provbench.results.data import RunData, format_metric_value
from provbench.report.sections import Cell, LineChart, Section, Table

ABSTENTION_COLUMNS = (
    ("abstention.coverage", "Coverage"),
    ("abstention.rate", "Abstention rate"),
    ("abstention.selective_accuracy", "Selective accuracy"),
    ("abstention.accuracy_abstain_wrong", "Accuracy (abstain = wrong)"),
    ("abstention.correct_abstention", "Correct abstention (unanswerable)"),
    ("abstention.answerable_abstained", "Abstained on answerable"),
    ("cost.llm_calls", "LLM calls / question"),
    ("cost.concepts_examined", "Concepts examined / question"),
)


def _by_system(run: RunData, metric: str) -> dict[str, dict]:
    return {v["system"]: v for v in run.metric_values(metric) if v.get("condition", BASELINE) == BASELINE}


def abstention_sections(run: RunData) -> list[Section]:
    return _abstention(run) + _calibration(run)


def _abstention(run: RunData) -> list[Section]:
    columns = {metric: _by_system(run, metric) for metric, _ in ABSTENTION_COLUMNS}
    if not columns["abstention.coverage"]:
        return []
    rows = [
        [system, *(_cell(columns[metric].get(system)) for metric, _ in ABSTENTION_COLUMNS)]
        for system in run.systems
        if system in columns["abstention.coverage"]
    ]
    table = Table(
        columns=["System", *(title for _, title in ABSTENTION_COLUMNS)],
        rows=rows,
        css_class="abstention",
        caption="Baseline records. Coverage = answered share; selective accuracy = accuracy on answered "
        "questions; correct abstention = share of the questions the dataset marks unanswerable on "
        "which the system abstained; abstained on answerable = share of the other questions on "
        "which it abstained (over-abstention). Cost columns are means per question (cost metric).",
    )
    return [
        Section(
            id="abstention",
            title="Abstention and cost",
            blocks=[table],
            order=55,
            intro="An abstention is a deliberate non-answer (outcome 'abstained'), never an empty answer.",
        )
    ]


def _calibration(run: RunData) -> list[Section]:
    ece, area = _by_system(run, "calibration.ece"), _by_system(run, "calibration.aurc")
    if not ece:
        return []
    systems = [s for s in run.systems if s in ece]
    rows = [
        [
            s,
            _cell(ece[s]),
            str(ece[s]["detail"].get("bins", "")),
            _cell(area.get(s)),
            f"{ece[s]['detail'].get('with_confidence', 0)}/{ece[s]['detail'].get('records', 0)}",
        ]
        for s in systems
    ]
    table = Table(
        columns=["System", "ECE", "Bins", "AURC", "Records with a confidence"],
        rows=rows,
        css_class="calibration",
        caption="ECE: expected calibration error over equal-width confidence bins. AURC: area under the "
        "risk-coverage curve (lower is better). Abstentions count with the answer they held back.",
    )
    curves = {s: [(c, r) for c, r in area[s]["detail"].get("curve", [])] for s in systems if s in area}
    reliability = {
        s: [(b["confidence"], b["accuracy"]) for b in ece[s]["detail"].get("reliability", []) if b["n"]]
        for s in systems
    }
    risk = _chart(
        curves,
        title="Risk-coverage curves",
        xlabel="coverage",
        ylabel="risk (1 - accuracy)",
        caption="Answers ranked by stated confidence, most confident first.",
    )
    diagram = _chart(
        reliability,
        title="Reliability diagram",
        xlabel="mean stated confidence",
        ylabel="accuracy",
        diagonal=True,
        caption="One point per non-empty confidence bin; the diagonal is perfect calibration.",
    )
    return [
        Section(
            id="calibration",
            title="Calibration",
            blocks=[table, *risk, *diagram],
            order=56,
            intro="Computed from the confidences systems state with their answers.",
        )
    ]


def _chart(points: dict[str, list], **labels) -> list[LineChart]:
    """A line chart of the systems that have points; none when no system has any."""
    series = {s: p for s, p in points.items() if p}
    return [LineChart(series=series, **labels)] if series else []


def _cell(value: dict | None) -> Cell:
    if value is None:
        return Cell(text="–", note="not measured for this system")
    return Cell(text=format_metric_value(value, with_note=False), note=value.get("note", ""))
