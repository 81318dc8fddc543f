"""Testing a claim without running anything: control runs made of records in memory."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..results.claims import ControlRuns
from ..model import Question, RunManifest, RunRecord
from ..results.data import RunData


def control_runs(
    records: dict[str, Iterable[RunRecord]],
    excluded: dict[str, set[str]] | None = None,
    questions: dict[str, Iterable[Question]] | None = None,
) -> ControlRuns:
    """:class:`~provbench.controls.ControlRuns` of records in memory: control -> its records; per
    control, the questions the exclusion step left out (none by default) and the run's questions
    (``RunData.questions``, with their gold evidence, for a claim that reads it; none by default)."""
    excluded, questions = excluded or {}, questions or {}
    return ControlRuns(
        {
            control: RunData(
                Path("."),
                RunManifest(run_id=control, suite_name="in-memory"),
                {q.id: q for q in questions.get(control, ())},
                list(rows),
                {"excluded": sorted(excluded.get(control, ()))},
            )
            for control, rows in records.items()
        }
    )
