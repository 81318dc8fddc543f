"""``p003/prompt-diversity``: do a sweep's settings send the model different prompts?

A sweep of gamma, T, the lambdas or the ranking measures nothing when every setting shows the
model the same facts in the same order. Both paper-003 systems record a digest of each answer
prompt (``trace.artifacts["prompt_digests"]``); this metric compares them across the settings
(by default every system whose traces hold a local graph), at baseline:

* ``prompts.distinct_share`` per pair of settings ("a vs b"): the share of the claims both
  answered whose prompts differ;
* ``prompts.identical_claims``: the share of claims for which *all* settings sent one identical
  prompt (small graphs may legitimately coincide);
* ``prompts.check``: 1 (passed) or 0 (failed) — failed when identical claims make up at least
  ``fail_share`` (0.5) of the claims; a failure is logged as a warning and shown in the report.

:func:`diversity` is the same computation on any records, for tests and the known-truth controls.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from provbench.model import BASELINE, RunRecord
from provbench.plugin_api import Metric, MetricContext, MetricValue, Results, parse_options

log = logging.getLogger(__name__)

ALL = "all settings"


@dataclass
class Diversity:
    systems: list[str]
    pairs: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (distinct, compared)
    identical: list[str] = field(default_factory=list)  # claims where every setting sent one prompt
    claims: int = 0                                     # claims every setting answered
    fail_share: float = 0.5

    @property
    def identical_share(self) -> float | None:
        return len(self.identical) / self.claims if self.claims else None

    @property
    def passed(self) -> bool | None:
        share = self.identical_share
        return None if share is None else share < self.fail_share

    def verdict(self) -> str:
        if self.passed is None:
            return "not checked: no claim was answered by every setting"
        counts = f"{len(self.identical)} of {self.claims} claims"
        if self.passed:
            return (f"passed: the {len(self.systems)} settings sent one identical prompt for {counts} only "
                    f"(it fails at {self.fail_share:.0%})")
        return (f"FAILED: all {len(self.systems)} settings sent one identical prompt for {counts} (at least "
                f"{self.fail_share:.0%}), so the sweep cannot show what its parameters change")


def prompts_of(records: Iterable[RunRecord]) -> dict[str, dict[str, tuple[str, ...]]]:
    """system -> claim -> the digests of its answer prompts (baseline, recorded runs only)."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for r in records:
        digests = (r.trace.artifacts.get("prompt_digests") if r.trace is not None else None) or []
        if r.key.condition == BASELINE and r.status == "ok" and digests:
            found.setdefault(r.key.system, {})[r.key.question_id] = tuple(digests)
    return found


def diversity(records: Iterable[RunRecord], systems: list[str], fail_share: float = 0.5) -> Diversity:
    prompts = prompts_of(records)
    result = Diversity(systems=list(systems), fail_share=fail_share)
    for a, b in combinations(systems, 2):
        common = set(prompts.get(a, {})) & set(prompts.get(b, {}))
        result.pairs[(a, b)] = (sum(prompts[a][q] != prompts[b][q] for q in common), len(common))
    answered = set.intersection(*(set(prompts.get(s, {})) for s in systems)) if systems else set()
    result.claims = len(answered)
    result.identical = sorted(q for q in answered if len({prompts[s][q] for s in systems}) == 1)
    return result


def graph_systems(records: Iterable[RunRecord]) -> list[str]:
    """Systems whose baseline traces hold a local graph (GA-RAG settings), in record order."""
    return list(dict.fromkeys(r.key.system for r in records if r.key.condition == BASELINE and r.trace is not None
                              and isinstance(r.trace.artifacts.get("shown"), list)))


class DiversityOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    systems: list[str] | None = Field(None, description="settings (record keys) to compare; default: every "
                                                         "system with a local graph")
    fail_share: float = Field(0.5, gt=0, le=1, description="the check fails when all settings sent one prompt "
                                                            "for at least this share of the claims")


class PromptDiversity(Metric):
    """Whether a sweep's settings change the prompt: distinct shares per pair and a check."""

    name = "prompt-diversity"

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(DiversityOptions, options, f"metric {self.name!r}")

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        systems = self.options.systems or graph_systems(results.records)
        if len(systems) < 2:
            return [MetricValue(metric="prompts.check", system=ALL, value=None,
                                note="fewer than two settings with a local graph to compare")]
        found = diversity(results.records, systems, self.options.fail_share)
        values = [MetricValue(metric="prompts.distinct_share", system=f"{a} vs {b}",
                              value=(distinct / compared) if compared else None,
                              numerator=distinct, denominator=compared)
                  for (a, b), (distinct, compared) in found.pairs.items()]
        values.append(MetricValue(metric="prompts.identical_claims", system=ALL, value=found.identical_share,
                                  numerator=len(found.identical), denominator=found.claims,
                                  detail={"claims": found.identical, "systems": systems}))
        passed = found.passed
        values.append(MetricValue(metric="prompts.check", system=ALL, value=None if passed is None else float(passed),
                                  note=found.verdict()))
        if passed is False:
            log.warning("prompt diversity check %s", found.verdict())
        return values


METRICS = (PromptDiversity,)
