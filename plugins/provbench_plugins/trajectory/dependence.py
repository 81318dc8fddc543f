"""Which steps mattered, read from the leave-one-step-out records of a run.

A variant record (``step:<k>``) whose answer changed (``scores["output_changed"] == 1``) makes step
``k`` *critical* for its question. Failed units are counted and left out (a re-run that failed says
nothing about the step); units the leak guard found leaked are left out by the caller's selection.
``gold.left_out.gold_items`` (set by the ``gold-trajectory`` metric) says whether the items the step
first showed held gold.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from provbench.model import RunRecord
from provbench.trajectory import left_out_step


GOLD_ITEMS = "gold.left_out.gold_items"


@dataclass
class StepDependence:
    """One system under one leave-one-step-out condition."""

    critical: dict[str, set[int]] = field(default_factory=dict)  # question -> its critical steps
    steps: dict[str, set[int]] = field(default_factory=dict)  # question -> every step left out (ok units)
    failed: int = 0
    with_gold: Counter = field(default_factory=Counter)  # (held gold, changed) -> units

    @property
    def questions(self) -> int:
        return len(self.steps)

    @property
    def dependent(self) -> int:
        """Questions whose answer changes when some single step is left out."""
        return sum(bool(steps) for steps in self.critical.values())

    @property
    def units(self) -> int:
        return sum(map(len, self.steps.values()))

    @property
    def changed(self) -> int:
        return sum(map(len, self.critical.values()))

    def most_critical(self) -> tuple[int, int] | None:
        """(step index, questions) of the step most often critical; ties go to the earlier step."""
        counts = Counter(step for steps in self.critical.values() for step in steps)
        if not counts:
            return None
        return min(counts.items(), key=lambda item: (-item[1], item[0]))

    def position_counts(self) -> dict[int, int]:
        return dict(sorted(Counter(s for steps in self.critical.values() for s in steps).items()))


def step_dependence(records: Iterable[RunRecord]) -> StepDependence:
    """The dependence of one system under one condition, from its (already selected) records."""
    found = StepDependence()
    for record in records:
        step = left_out_step(record)
        if step is None:
            continue
        if record.status != "ok":
            found.failed += 1
            continue
        qid = record.key.question_id
        found.steps.setdefault(qid, set()).add(step)
        found.critical.setdefault(qid, set())
        changed = record.scores.get("output_changed") == 1.0
        if changed:
            found.critical[qid].add(step)
        gold = record.scores.get(GOLD_ITEMS)
        if gold is not None:
            found.with_gold[(gold > 0, changed)] += 1
    return found


def step_conditions(records: Iterable[RunRecord]) -> list[tuple[str, str]]:
    """(system, condition) pairs holding leave-one-step-out records, in first-seen order."""
    return list(dict.fromkeys((r.key.system, r.key.condition) for r in records if left_out_step(r) is not None))
