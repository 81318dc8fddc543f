"""Paper 000's ``hides-own-text`` claim: the text rule, read from what each unit's view hid.

The control LLMs answer from relation lines, so a condition that removed entities but left their
paragraphs readable would change no control's answer: only what the run hid shows the text rule.
Each intervention record keeps its view's ``hidden_by_intervention`` summary; the claim opens the
controls' knowledge base (read-only) for the targeted entities' own text units
(``Entity.own_text_unit_ids``) and counts those the record did not hide, bar the cited evidence
the condition keeps. Target: none, over at least one such text unit. Text-only isolation must
hide the very text units full isolation hides for the same question (the same text rule), id for
id, read from the full hidden set each record keeps.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from provbench.controls import Claim, ClaimNeeds, ControlRuns, Verdict, unmeasured_over
from provbench.model import RunRecord, Trace

from .hiding import label_entities

Targets = Literal["visited-uncited", "cited", "removed"]


class HidesOwnTextOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = "agentic-graphrag"
    controls: list[str] = Field(default_factory=lambda: ["oracle", "uses-uncited"], min_length=1)
    targets: dict[str, Targets] = Field(
        default_factory=lambda: {
            "entity-removal": "visited-uncited",
            "entity-text-mask": "visited-uncited",
            "cited-removal": "cited",
            "random-removal": "removed",
        },
        description="condition -> whose own text it must hide: the baseline's visited-but-uncited "
        "or cited entities, or the entities the unit's view removed",
    )
    same_text: list[str] = Field(
        default_factory=lambda: ["text-only-isolation", "full-isolation"],
        description="two conditions that must hide the same text units per question",
    )


class HidesOwnText(Claim):
    """Every condition that removes or masks entities hides their own text, and text-only isolation
    hides the text full isolation hides."""

    name = "hides-own-text"
    description = (
        "Removed or masked entities' own text is hidden (bar the cited evidence kept), and text-only "
        "isolation hides as much text as full isolation."
    )
    Options = HidesOwnTextOptions

    def needs(self) -> ClaimNeeds:
        o = self.options
        return ClaimNeeds(
            controls=tuple(o.controls), systems=(o.system,), conditions=tuple(dict.fromkeys([*o.targets, *o.same_text]))
        )

    def check(self, runs: ControlRuns) -> list[Verdict]:
        from provbench.kb import KnowledgeBase

        verdicts = []
        for control in self.options.controls:
            run = runs.run(control)
            kb = KnowledgeBase.open(run.suite["knowledge_base"]["directory"], read_only=True)
            try:
                view = kb.view()
                verdicts += [self.own_text_verdict(control, run, view, c, t) for c, t in self.options.targets.items()]
            finally:
                kb.close()
            verdicts.append(self.same_text_verdict(control, run))
        return verdicts

    def own_text_verdict(self, control: str, run, view, condition: str, targets: Targets) -> Verdict:
        baselines = {r.key.question_id: r.trace for r in run.select(self.options.system) if r.trace is not None}
        own = left = unknown = 0
        measured = set()  # questions with target text to check
        for record in run.select(self.options.system, condition):
            baseline, hidden = baselines.get(record.key.question_id), _summary(record)
            if baseline is None or hidden is None:
                continue
            units = _ids(hidden, "text_units")
            if units is None:  # more hidden than the record lists: cannot be checked
                unknown += 1
                continue
            target_units = {t for e in _targets(targets, baseline, hidden) for t in _own_text(view, e)}
            own += len(target_units)
            left += len(target_units - units - _kept(view, baseline, condition, targets))
            if target_units:
                measured.add(record.key.question_id)
        extra = f"; {unknown} unit(s) listed too few ids to check" if unknown else ""
        why_not = unmeasured_over(len(measured), f"no {targets} entity with text of its own under {condition}")
        return Verdict(
            claim=self.name,
            control=control,
            p_value=None,
            expected=f"{condition} hides its {targets} entities' own text (0 readable)",
            observed=f"{left} of {own} own text unit(s) readable over {len(measured)} question(s){extra}",
            passed=not why_not and left == 0,
            unmeasured=why_not,
        )

    def same_text_verdict(self, control: str, run) -> Verdict:
        first, second = self.options.same_text
        texts = [
            {r.key.question_id: _hidden_text_units(r) for r in run.select(self.options.system, c)}
            for c in (first, second)
        ]
        common = [q for q in texts[0].keys() & texts[1].keys() if None not in (texts[0][q], texts[1][q])]
        differ = sum(texts[0][q] != texts[1][q] for q in common)
        why_not = unmeasured_over(len(common), "no question under both (a unit whose view hid nothing is left out)")
        return Verdict(
            claim=self.name,
            control=control,
            p_value=None,
            expected=f"{first} hides the same text units as {second}, question by question",
            observed=f"{differ} of {len(common)} question(s) differ" if common else why_not,
            passed=not why_not and differ == 0 and any(texts[1][q] for q in common),
            unmeasured=why_not,
        )


def _hidden_text_units(record: RunRecord) -> frozenset[str] | None:
    """The text units a record's view hid, every one (None: the record keeps no hidden set)."""
    from provbench.audit import hidden_ids

    ids = hidden_ids(record.hidden)
    return None if ids is None else frozenset(i for i in ids if i.startswith("text_units:"))


def _summary(record: RunRecord) -> dict | None:
    return record.trace.artifacts.get("hidden_by_intervention") if record.trace is not None else None


def _ids(summary: dict, field: str) -> set[str] | None:
    """The ids a summary lists for ``field`` (empty when none); None when it lists fewer than it hid."""
    entry = summary.get(field) or {"count": 0, "ids": []}
    return set(entry["ids"]) if len(entry["ids"]) == entry["count"] else None


def _targets(targets: Targets, baseline: Trace, summary: dict) -> set[str]:
    labels = label_entities(baseline)
    if targets == "visited-uncited":
        return set(labels.visited_uncited)
    if targets == "cited":
        return set(labels.cited)
    return _ids(summary, "entities") or set()


def _own_text(view, entity_id: str) -> tuple[str, ...]:
    entity = view.entity(entity_id)
    return () if entity is None else tuple(entity.own_text_unit_ids)


def _kept(view, baseline: Trace, condition: str, targets: Targets) -> set[str]:
    """The cited evidence a condition keeps readable: none under cited removal."""
    if targets == "cited":
        return set()
    return set(baseline.citations.text_units) | {t for e in baseline.citations.entities for t in _own_text(view, e)}


__all__ = ["HidesOwnText"]
