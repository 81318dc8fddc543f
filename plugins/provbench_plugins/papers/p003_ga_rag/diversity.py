"""``p003/prompt-diversity``: do a sweep's settings show the model different facts?

A sweep of gamma, T, the lambdas or the ranking measures nothing when every setting shows the
model the same facts. Settings that show the same facts in another order count as the same: the
fact-verification reader sees one set of evidence either way, and a sweep that only reorders a
graph shown whole is not a sweep of what reaches the model. This metric compares the facts each
setting showed (``trace.artifacts["shown"]``, as (subject, relation, object), order ignored)
across the settings (by default every system whose traces hold a local graph), at baseline:

* ``prompts.distinct_share`` per pair of settings ("a vs b"): the share of the claims both
  answered whose sets of facts shown differ;
* ``prompts.identical_claims``: the share of claims for which *all* settings showed one set of
  facts (small graphs may legitimately coincide; a claim whose graphs are all empty is one);
* ``prompts.check``: 1 (passed) or 0 (failed) — failed when identical claims make up at least
  ``fail_share`` (0.5) of the claims; a claim whose graphs are all empty counts as identical, so
  the check fails when every graph is empty, even where the prompts differ (gated settings send
  the baseline's prompt, which other options may change); a failure is logged as a warning and
  shown in the report.

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


Shown = tuple[tuple[str, str, str], ...]  # the facts a unit showed, sorted: a multiset


@dataclass
class Diversity:
    systems: list[str]
    pairs: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (distinct, compared)
    identical: list[str] = field(default_factory=list)  # claims where every setting showed one set of facts
    claims: int = 0  # claims every setting answered
    empty: int = 0  # of those, claims where no setting showed a fact
    fail_share: float = 0.5

    @property
    def identical_share(self) -> float | None:
        return len(self.identical) / self.claims if self.claims else None

    @property
    def passed(self) -> bool | None:
        """Claims whose graphs are all empty count as identical, so all-empty graphs always fail."""
        share = self.identical_share
        return None if share is None else share < self.fail_share

    def verdict(self) -> str:
        if self.passed is None:
            return "not checked: no claim was answered by every setting"
        if self.empty == self.claims:
            return (
                f"FAILED: every local graph was empty, so none of the {len(self.systems)} settings showed a "
                f"fact on any of {self.claims} claims"
            )
        counts = f"{len(self.identical)} of {self.claims} claims"
        if self.passed:
            return (
                f"passed: the {len(self.systems)} settings showed one identical set of facts for {counts} only "
                f"(it fails at {self.fail_share:.0%})"
            )
        return (
            f"FAILED: all {len(self.systems)} settings showed one identical set of facts for {counts} (at "
            f"least {self.fail_share:.0%}), so the sweep cannot show what its parameters change"
        )


def facts_shown(record: RunRecord) -> Shown | None:
    """The facts a GA-RAG unit showed the model, order ignored; None for a unit without a graph."""
    shown = record.trace.artifacts.get("shown") if record.trace is not None else None
    if not isinstance(shown, list):
        return None
    facts = {f.id: f for f in record.trace.facts}
    return tuple(sorted((facts[i].subject, facts[i].relation, facts[i].object) for i in shown if i in facts))


def shown_by_setting(records: Iterable[RunRecord]) -> dict[str, dict[str, Shown]]:
    """system -> claim -> the facts shown (baseline, recorded runs with a local graph only)."""
    found: dict[str, dict[str, Shown]] = {}
    for r in records:
        shown = facts_shown(r) if r.key.condition == BASELINE and r.status == "ok" else None
        if shown is not None:
            found.setdefault(r.key.system, {})[r.key.question_id] = shown
    return found


def diversity(records: Iterable[RunRecord], systems: list[str], fail_share: float = 0.5) -> Diversity:
    shown = shown_by_setting(records)
    result = Diversity(systems=list(systems), fail_share=fail_share)
    for a, b in combinations(systems, 2):
        common = set(shown.get(a, {})) & set(shown.get(b, {}))
        result.pairs[(a, b)] = (sum(shown[a][q] != shown[b][q] for q in common), len(common))
    answered = set.intersection(*(set(shown.get(s, {})) for s in systems)) if systems else set()
    result.claims = len(answered)
    result.identical = sorted(q for q in answered if len({shown[s][q] for s in systems}) == 1)
    result.empty = sum(1 for q in answered if not any(shown[s][q] for s in systems))
    return result


def graph_systems(records: Iterable[RunRecord]) -> list[str]:
    """Systems whose baseline traces hold a local graph (GA-RAG settings), in record order."""
    return list(
        dict.fromkeys(
            r.key.system
            for r in records
            if r.key.condition == BASELINE and r.trace is not None and isinstance(r.trace.artifacts.get("shown"), list)
        )
    )


class DiversityOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    systems: list[str] | None = Field(
        None, description="settings (record keys) to compare; default: every system with a local graph"
    )
    fail_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description="the check fails when all settings showed one set of facts for at least this share of the claims",
    )


class PromptDiversity(Metric):
    """Whether a sweep's settings change the facts shown: distinct shares per pair and a check."""

    name = "prompt-diversity"

    def __init__(self, **options: Any) -> None:
        self.options = parse_options(DiversityOptions, options, f"metric {self.name!r}")

    def aggregate(self, results: Results, context: MetricContext | None = None) -> list[MetricValue]:
        systems = self.options.systems or graph_systems(results.records)
        if len(systems) < 2:
            return [
                MetricValue(
                    metric="prompts.check",
                    system=ALL,
                    value=None,
                    note="fewer than two settings with a local graph to compare",
                )
            ]
        found = diversity(results.records, systems, self.options.fail_share)
        values = [
            MetricValue(
                metric="prompts.distinct_share",
                system=f"{a} vs {b}",
                value=(distinct / compared) if compared else None,
                numerator=distinct,
                denominator=compared,
            )
            for (a, b), (distinct, compared) in found.pairs.items()
        ]
        values.append(
            MetricValue(
                metric="prompts.identical_claims",
                system=ALL,
                value=found.identical_share,
                numerator=len(found.identical),
                denominator=found.claims,
                detail={"claims": found.identical, "systems": systems},
            )
        )
        passed = found.passed
        values.append(
            MetricValue(
                metric="prompts.check",
                system=ALL,
                value=None if passed is None else float(passed),
                note=found.verdict(),
            )
        )
        if passed is False:
            log.warning("prompt diversity check %s", found.verdict())
        return values


METRICS = (PromptDiversity,)
