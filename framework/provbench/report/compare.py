"""``provbench compare``: N runs side by side, each tested against the first (the reference).

First what each run was made with (dataset and questions, knowledge base, model, judge,
provbench and plugin versions, suite settings), with a warning for every difference
(:mod:`provbench.report.comparability`). Means, deltas and tests use the questions every run
answered; each cell says how many of its run's questions that left out.

Per run, its certification (:mod:`provbench.results.validity`); a number of a run never
validated, or of a cell no certified claim covers, is marked † as in the run's own report.

Per system: baseline accuracy with its bootstrap interval in every run, and each later run's
change against the reference with an exact McNemar test on the questions both answered; every
continuous per-record score both runs have (F1, RAGAS faithfulness, ...) with a paired
permutation test; every intervention's output-changed and accuracy per run. Each table's
p-values are Benjamini-Hochberg adjusted over that table's tests
(:mod:`provbench.results.significance`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import UserError
from ..results.data import RunData, load_run
from .comparability import comparability
from .render import environment, header, share_cell
from .sections import Cell
from ..model import BASELINE
from ..results.rules import not_measurable
from ..results.validity import NOT_VALIDATED, UNCERTIFIED, Validity, cell_mark, certify_command, read_validity
from .validity_section import headline
from ..results.significance import BH_NOTE, PAIRED_NOTE, adjust_bh, continuous_scores, paired_scores, with_adjusted
from ..results.stats import MCNEMAR_NOTE, mcnemar, per_question, select, share


def write_comparison(
    runs: Sequence[str | Path], out: str | Path | None = None, warn: Callable[[str], None] | None = None
) -> Path:
    """Compare two or more runs (the first is the reference); returns the HTML file written.
    ``warn`` receives a line for each way the runs are not comparable (also in the HTML)."""
    if len(runs) < 2:
        raise UserError("compare needs at least two run directories")
    loaded = [load_run(r) for r in runs]
    ref = loaded[0]
    labels = [_label(i) for i in range(len(loaded))]
    checked = comparability(loaded, labels)
    for line in checked.warnings:
        if warn is not None:
            warn(line)
    systems = list(dict.fromkeys(s for run in loaded for s in run.systems))
    validities = [read_validity(run.run_dir) for run in loaded]
    context = {
        "h": header(ref),
        "runs": [
            {"label": label, "dir": str(run.run_dir), "name": name, "validity": _validation(run, v), **header(run)}
            for label, run, name, v in zip(labels, loaded, run_names(loaded), validities)
        ],
        "labels": labels,
        "accuracy": _accuracy_rows(loaded, systems, validities),
        "scores": _score_rows(loaded, systems, validities),
        "conditions": _condition_rows(loaded, systems, validities),
        "marks": sorted(
            {NOT_VALIDATED for v in validities if v is None} | ({UNCERTIFIED} if any(validities) else set())
        ),
        "mcnemar_note": MCNEMAR_NOTE,
        "paired_note": PAIRED_NOTE,
        "comparability": checked,
    }
    for table in ("accuracy", "scores"):
        tests = context[table]["tests"]
        context[f"{table}_bh"] = BH_NOTE.format(n=tests) if tests else "No test, so no p-value to adjust"
    names = "-vs-".join(run.run_dir.name for run in loaded)[:120]
    target = Path(out) if out else ref.run_dir.parent / f"compare-{names}.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    env = environment()
    env.globals["ci_label"] = f"{100 * float(ref.report_option('confidence', 0.95)):g}% CI"
    target.write_text(env.get_template("compare.html.j2").render(**context), encoding="utf-8")
    return target


def _validation(run: RunData, validity: Validity | None) -> str:
    """A run's certification as its report's Suite validity section heads it."""
    if validity is None:
        return f"Not validated: its numbers are not certified (run {certify_command(run)})"
    return headline(validity)


def run_names(runs: list[RunData]) -> list[str]:
    """What the title calls each run: its suite's name, or its directory's when suites share a name."""
    suites = [run.manifest.suite_name for run in runs]
    if len(set(suites)) == len(suites):
        return suites
    return [run.run_dir.name for run in runs]


def _label(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def _accuracy_rows(runs: list[RunData], systems: list[str], validities: list[Validity | None]) -> dict[str, Any]:
    """Per system: each run's accuracy over the questions every run answered (the others dropped,
    and counted), and each later run's delta and McNemar test against the first on them."""
    rows, tests = [], []
    for system in systems:
        values = [per_question(select(run.records, system)) for run in runs]
        shared = shared_questions([v for v in values if v])  # a run without the system drops none
        shares = [share(v, shared, **run.stats_options()) for v, run in zip(values, runs)]
        against = []
        for i, (later, s) in enumerate(zip(values[1:], shares[1:]), start=1):
            test = mcnemar(values[0], later, shared) if shared and values[0] and later else None
            tests.append(test.p_value if test else None)
            delta = (
                "–" if shares[0].value is None or s.value is None else f"{100 * (s.value - shares[0].value):+.1f} pts"
            )
            against.append({"delta": delta, "test": test.describe() if test else _untested(values, i, system)})
        cells = [
            _accuracy_cell(s, v, shared).marked(cell_mark(validity, system, BASELINE) if v else "")
            for s, v, validity in zip(shares, values, validities)
        ]
        rows.append({"system": system, "cells": cells, "against": against})
    _adjust([a for row in rows for a in row["against"]], tests)
    return {"rows": rows, "tests": sum(p is not None for p in tests)}


def _score_rows(runs: list[RunData], systems: list[str], validities: list[Validity | None]) -> dict[str, Any]:
    """Per system and continuous score both the first and a later run have: means over the
    questions every run scored, paired permutation tests on them."""
    rows, tests = [], []
    for system in systems:
        for score in _continuous_scores(runs, system):
            values = [per_question(select(run.records, system), score) for run in runs]
            shared = shared_questions([v for v in values if v])
            against = []
            for i, later in enumerate(values[1:], start=1):
                test = paired_scores(values[0], later, shared) if later else None
                tests.append(test.p_value if test else None)
                against.append({"test": test.describe() if test else _untested(values, i, system)})
            means = [
                (f"{sum(v[q] for q in shared) / len(shared):.3f} (n={len(shared)})" if shared else "–")
                + (f"; {_dropped(v, shared)}" if _dropped(v, shared) else "")
                + (" †" if v and cell_mark(validity, system, BASELINE) else "")
                for v, validity in zip(values, validities)
            ]
            rows.append({"system": system, "score": score, "means": means, "against": against})
    _adjust([a for row in rows for a in row["against"]], tests)
    return {"rows": rows, "tests": sum(p is not None for p in tests)}


def shared_questions(values: list[dict[str, float]]) -> list[str]:
    """The questions every run has a value for, in the first run's order."""
    return [q for q in values[0] if all(q in v for v in values[1:])]


def _accuracy_cell(s: Any, values: dict[str, float], shared: list[str]) -> Cell:
    return share_cell(s, _dropped(values, shared)) if values else Cell(text="–", note="system not in this run")


def _untested(values: list[dict[str, float]], later: int, system: str) -> str:
    """Why a later run's accuracy has no test against the first: a run lacks the system, or no
    question is answered in every run that has it."""
    missing = [_label(i) for i in (0, later) if not values[i]]
    if missing:
        return f"{system} is not in run {' or '.join(missing)}"
    return "no shared questions"


def _dropped(values: dict[str, float], shared: list[str]) -> str:
    left_out = len(values) - len(shared)
    return f"{left_out} question(s) not in every run left out" if left_out else ""


def _continuous_scores(runs: list[RunData], system: str) -> list[str]:
    """Continuous scores of the system's baseline records in the first run and at least one other."""
    first = set(continuous_scores(select(runs[0].records, system)))
    shared = {name for run in runs[1:] for r in select(run.records, system) for name in r.scores}
    return sorted(first & shared)


def _condition_rows(runs: list[RunData], systems: list[str], validities: list[Validity | None]) -> list[dict[str, Any]]:
    """Each intervention x system any run has units of; a run whose units were all left out (leaked,
    no-op, ...) shows "not measurable" with why, as its report does, never a missing row."""
    conditions = list(dict.fromkeys(c for run in runs for c in run.conditions))
    rows = []
    for condition in conditions:
        for system in systems:
            if not any(run.select(system, condition, leaked=True) for run in runs):
                continue
            cells = [_condition_cells(run, system, condition) for run in runs]
            rows.append(
                {
                    "condition": condition,
                    "system": system,
                    "changed": [c.marked(cell_mark(v, system, condition)) for (c, _), v in zip(cells, validities)],
                    "accuracy": [a.marked(cell_mark(v, system, condition)) for (_, a), v in zip(cells, validities)],
                }
            )
    return rows


def _condition_cells(run: RunData, system: str, condition: str) -> tuple[Cell, Cell]:
    """One run's output-changed and accuracy cells of a condition x system."""
    reason = not_measurable(run.select(system, condition, leaked=True), run.include_leaked)
    if reason:
        why = reason.removeprefix("not measurable: ")  # the cell's text says it once
        return Cell(text="not measurable", note=why), Cell(text="not measurable", note=why)
    picked = run.select(system, condition)
    return (
        share_cell(share(per_question(picked, "output_changed"), run.analysed)),
        share_cell(share(per_question(picked), run.analysed)),
    )


def _adjust(cells: list[dict[str, Any]], p_values: list[float | None]) -> None:
    for cell, adjusted in zip(cells, adjust_bh(p_values)):
        cell["test"] = with_adjusted(cell["test"], adjusted)
