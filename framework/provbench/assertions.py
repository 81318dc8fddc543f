"""What a suite declares beyond its plugins, checked when it loads: CI assertions (``assert:``) and
repeated systems (``repeats:`` on a system).

An assertion bounds one value of the finished run::

    assert:
      - {metric: accuracy, system: my-sys, min: 0.6}
      - {metric: provenance.citation_necessity, system: agentic-graphrag, min: 0.5}

:mod:`provbench.gates` evaluates them after the run (exit status 5 when one fails) and writes the
run's ``summary.json`` and ``junit.xml``. This module is below :mod:`provbench.suite` (which
imports it), so it knows suites only by their attributes.
"""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .errors import UserError
from .registry import unknown_name_message

BASELINE = "baseline"


class AssertionSpec(BaseModel):
    """One CI assertion: ``metric``'s value for ``system`` (default: every system that has one)
    under ``condition`` lies within [``min``, ``max``]."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(min_length=1, description="a metric value's name (metrics.json) or a record score's")
    system: str | None = Field(default=None, description="a system key of the suite; default: every system")
    condition: str | None = Field(
        default=None,
        description="baseline, an intervention key of the suite, or two "
        "joined by ' vs ' (a metric comparing them); default: the metric's only condition, "
        "else baseline",
    )
    min: float | None = None
    max: float | None = None
    name: str | None = Field(default=None, description="the test's name in junit.xml (default: made from the fields)")

    @model_validator(mode="after")
    def _bounded(self) -> "AssertionSpec":
        if self.min is None and self.max is None:
            raise ValueError("an assertion needs min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self

    def label(self, system: str | None = None, condition: str | None = None) -> str:
        if self.name:
            return self.name if system is None or self.system else f"{self.name} [{system}]"
        bounds = " and ".join(
            b
            for b in (
                f">= {self.min:g}" if self.min is not None else "",
                f"<= {self.max:g}" if self.max is not None else "",
            )
            if b
        )
        where = f"{system or self.system or 'every system'}, {condition or self.condition or BASELINE}"
        return f"{self.metric} {bounds} ({where})"


class SystemRef(BaseModel):
    """Mixin fields of a system reference: ``repeats`` runs each of its baseline units that many
    times, each with its own seed in the LLM requests (so each repeat is its own cache entry)."""

    repeats: int = Field(default=1, ge=1, le=100, description="baseline runs per question (needs temperature > 0)")


def check_declarations(suite: Any, where: Callable[[tuple], str], error: type[UserError] = UserError) -> None:
    """Assertions name the suite's systems and conditions; repeats come with a temperature above 0.
    ``where(loc)`` gives "file, line N, field 'x'" for a location in the suite file; a problem
    raises ``error`` (the suite's SuiteError)."""
    systems = [ref.key for ref in suite.systems]
    conditions = [BASELINE, *(ref.key for ref in suite.interventions)]
    by_name = {ref.name: ref.key for ref in suite.systems if ref.label is None}
    for i, spec in enumerate(suite.assertions):
        spec.system = by_name.get(spec.system, spec.system)
        if spec.system is not None and spec.system not in systems:
            raise error(
                f"{where(('assert', i, 'system'))}: "
                + unknown_name_message("system", spec.system, systems)
                + " (must be one of the suite's systems)"
            )
        for part in spec.condition.split(" vs ") if spec.condition is not None else []:
            if part not in conditions:
                raise error(
                    f"{where(('assert', i, 'condition'))}: " + unknown_name_message("condition", part, conditions)
                )
    temperature = float(suite.model.params.get("temperature") or 0.0)
    for i, ref in enumerate(suite.systems):
        if ref.repeats > 1 and temperature <= 0:
            raise error(
                f"{where(('systems', i, 'repeats'))}: repeats: {ref.repeats} needs sampling: set "
                f"model.params.temperature above 0 (it is {temperature:g}, so every repeat would "
                "give the same answer)"
            )
