"""Testing a claim without running anything: control runs made of records in memory."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..controls.claims import ControlRuns
from ..model import RunManifest, RunRecord
from ..report.data import RunData


def control_runs(records: dict[str, Iterable[RunRecord]], excluded: dict[str, set[str]] | None = None) -> ControlRuns:
    """:class:`~provbench.controls.ControlRuns` of records in memory: control -> its records, and
    per control the questions the exclusion step left out (none by default)."""
    excluded = excluded or {}
    return ControlRuns({control: RunData(Path("."), RunManifest(run_id=control, suite_name="in-memory"), {}, list(rows),
                                         {"excluded": sorted(excluded.get(control, ()))})
                        for control, rows in records.items()})
